/**
 * First start: every served kind's `initialObjects` (the system namespaces, the built-in
 * PriorityClasses, ...) are created unless they exist. In a cluster this needs a quorum, so an
 * unavailable store is retried until the peers are up; any node may create an object, the
 * others then get 409 and move on.
 */
import { StatusError, type KubeObject } from '@app/apimachinery';
import { PRIVILEGED_GROUP } from '@app/auth';
import { objectKey, type KindDeclaration, type RequestContext } from '@app/registry';
import { StorageError, type Storage } from '@app/storage';

/** What creating the initial objects needs from the node. */
export interface InitialObjectsDeps {
  /** The served kinds, in registration order (namespaces before namespaced objects). */
  kinds: readonly KindDeclaration[];
  storage: Pick<Storage, 'get'>;
  /** Creates through the kind's store (strategy, defaults, validation, admission). */
  create(decl: KindDeclaration, namespace: string, obj: KubeObject, opts: { ctx: RequestContext; fieldValidation: 'Strict' }): Promise<unknown>;
  /** Updates through the kind's store, for a kind that reconciles its existing initial objects. */
  update?(decl: KindDeclaration, namespace: string, obj: KubeObject, opts: { ctx: RequestContext; fieldValidation: 'Strict' }): Promise<unknown>;
  /**
   * Deletes through the kind's store, only the version read (preconditions on uid and
   * resourceVersion), for an initial object its kind recreates.
   */
  remove?(decl: KindDeclaration, namespace: string, existing: KubeObject, opts: { ctx: RequestContext }): Promise<unknown>;
  /** Pause between attempts while the store is unavailable. Default 500 ms. */
  retryDelayMs?: number;
  /** Progress lines while waiting (default: stderr, every tenth attempt). */
  log?(line: string): void;
}

function unavailable(e: unknown): boolean {
  return (
    (e instanceof StatusError && (e.code === 429 || e.code === 503 || e.code === 504)) ||
    (e instanceof StorageError && (e.code === 'Unavailable' || e.code === 'TooManyRequests'))
  );
}

/** How many objects of one kind are created at once. */
const INITIAL_PARALLEL = 16;

/**
 * Creates each declaration's initialObjects that does not exist yet, kind by kind in declaration
 * order. Resolves once all exist; rethrows any error other than 409 (already created elsewhere)
 * and an unavailable store (retried).
 */
export async function createInitialObjects(deps: InitialObjectsDeps): Promise<void> {
  const delay = deps.retryDelayMs ?? 500;
  const log = deps.log ?? ((line: string) => process.stderr.write(line + '\n'));
  for (const decl of deps.kinds) {
    const apiVersion = decl.group ? `${decl.group}/${decl.version}` : decl.version;
    const createOne = async (initial: KubeObject): Promise<void> => {
      const name = initial.metadata.name ?? '';
      const namespace = decl.namespaced ? (initial.metadata.namespace ?? 'default') : '';
      for (let attempt = 0; ; attempt++) {
        try {
          const existing = await deps.storage.get(objectKey(decl, namespace, name), { mode: 'MostRecent' });
          // A fresh copy each attempt: the store fills in metadata on the object it is given.
          const obj = { ...structuredClone(initial), apiVersion, kind: decl.kind };
          const opts = {
            ctx: { user: { username: 'system:apiserver', groups: [PRIVILEGED_GROUP] }, dryRun: false, warnings: [], now: () => new Date() },
            fieldValidation: 'Strict' as const,
          };
          if (existing) {
            const next = decl.reconcileInitial?.(existing, obj);
            if (!next) return;
            try {
              if ('update' in next) {
                if (!deps.update) return;
                await deps.update(decl, namespace, next.update, opts);
                log(`reconciled ${decl.plural} ${name} with this version's initial object`);
                return;
              }
              if (!deps.remove) return;
              await deps.remove(decl, namespace, existing, opts);
              await deps.create(decl, namespace, { ...next.recreate, apiVersion, kind: decl.kind }, opts);
              log(`recreated ${decl.plural} ${name} as this version's initial object`);
              return;
            } catch (e) {
              // Changed meanwhile (another node, a user): read it again. A 409 of the create
              // after the delete is another node's copy of the same object, read again too.
              if (e instanceof StatusError && (e.code === 409 || e.code === 404)) continue;
              throw e;
            }
          }
          await deps.create(decl, namespace, obj, opts);
          return;
        } catch (e) {
          if (e instanceof StatusError && e.code === 409) return;
          if (!unavailable(e)) throw e;
          if (attempt % 10 === 0) log(`waiting for a Raft quorum to create ${decl.plural} ${name}: ${(e as Error).message}`);
          await new Promise((r) => setTimeout(r, delay));
        }
      }
    };
    // The objects of one kind do not depend on each other: they are written a few at a time, so
    // the bootstrap policy's hundred-odd objects cost a few Raft rounds, not one each.
    const initial = decl.initialObjects ?? [];
    for (let i = 0; i < initial.length; i += INITIAL_PARALLEL) await Promise.all(initial.slice(i, i + INITIAL_PARALLEL).map(createOne));
  }
}
