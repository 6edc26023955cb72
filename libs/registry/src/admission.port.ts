/**
 * The admission chain as the generic store sees it (conventions item 10): mutating plugins run
 * after defaulting of the request, then schema and strategy validation, then validating plugins.
 * libs/admission implements it; a plugin that rejects throws a StatusError.
 */
import type { KindDeclaration, RequestContext } from './kind.types.js';
import type { KubeObject } from '@app/apimachinery';

/** What an admission plugin sees (Kubernetes admission.Attributes). */
export interface AdmissionAttributes {
  operation: 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';
  decl: KindDeclaration;
  namespace: string;
  name: string;
  subresource: string;
  object?: KubeObject;
  oldObject?: KubeObject;
  ctx: RequestContext;
  /**
   * The kind of `object` and `oldObject` when it is not `decl`'s: a subresource with a kind of
   * its own (pods/eviction: policy/v1 Eviction; deployments/scale: autoscaling/v1 Scale).
   */
  kind?: { group: string; version: string; kind: string };
}

/** Admission chain. */
export interface Admission {
  /** Mutating phase; may change `attrs.object` in place. */
  admit(attrs: AdmissionAttributes): Promise<void>;
  /** Validating phase; must not mutate. */
  validate(attrs: AdmissionAttributes): Promise<void>;
}

/** A chain that admits everything (tests, or admission disabled). */
export const NO_ADMISSION: Admission = {
  admit: async () => undefined,
  validate: async () => undefined,
};
