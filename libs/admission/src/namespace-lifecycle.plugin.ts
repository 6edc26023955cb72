/**
 * NamespaceLifecycle admission (Kubernetes plugin of the same name): objects may be created in
 * a namespace only while it exists and is not terminating. Reads the namespace from the local
 * replica first (cheap, possibly stale) and confirms a miss with a Most Recent read, as
 * Kubernetes does with its informer cache and live lookup.
 */
import { Errors, StatusError, type KubeObject } from '@app/apimachinery';
import type { Admission, AdmissionAttributes } from '@app/registry';

/** Reads a namespace: `fresh` asks for a Most Recent read. */
export type NamespaceGetter = (name: string, fresh: boolean) => Promise<KubeObject | undefined>;

/** The NamespaceLifecycle validating plugin. */
export class NamespaceLifecycle implements Admission {
  constructor(private readonly getNamespace: NamespaceGetter) {}

  async validate(): Promise<void> {
    return undefined;
  }

  /** Runs in the mutating phase, before other plugins see an object for a dead namespace. */
  async admit(a: AdmissionAttributes): Promise<void> {
    if (a.operation !== 'CREATE' || !a.decl.namespaced || !a.namespace) return;
    let ns = await this.getNamespace(a.namespace, false);
    if (!ns) ns = await this.getNamespace(a.namespace, true);
    if (!ns) {
      throw new StatusError(404, 'NotFound', `namespaces "${a.namespace}" not found`, { name: a.namespace, kind: 'namespaces' });
    }
    if (ns.metadata.deletionTimestamp !== undefined || (ns.status as { phase?: string } | undefined)?.phase === 'Terminating') {
      throw Errors.forbidden(
        { group: a.decl.group, resource: a.decl.plural },
        a.name,
        `unable to create new content in namespace ${a.namespace} because it is being terminated`,
      );
    }
  }
}

/** Runs plugins in order: every admit, then (from the store) every validate. */
export class AdmissionChain implements Admission {
  constructor(private readonly plugins: Admission[]) {}

  async admit(a: AdmissionAttributes): Promise<void> {
    for (const p of this.plugins) await p.admit(a);
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    for (const p of this.plugins) await p.validate(a);
  }
}
