/**
 * apiextensions.k8s.io/v1 CustomResourceDefinition: its declaration. Served as JSON only (no
 * protobuf message: kubectl and client libraries send definitions as JSON).
 */
import type { KindDeclaration } from '@app/registry';
import { CRDSchema } from './crd.schema.js';
import { crdStatusStrategy, crdStrategy } from './crd.strategy.js';

/** The CustomResourceDefinition declaration. */
export const customResourceDefinitionKind: KindDeclaration = {
  group: 'apiextensions.k8s.io',
  version: 'v1',
  kind: 'CustomResourceDefinition',
  plural: 'customresourcedefinitions',
  singular: 'customresourcedefinition',
  shortNames: ['crd', 'crds'],
  categories: ['api-extensions'],
  namespaced: false,
  genericObjectMeta: true,
  schema: CRDSchema,
  strategy: crdStrategy,
  subresources: { status: { verbs: ['get', 'patch', 'update'], strategy: crdStatusStrategy } },
};
