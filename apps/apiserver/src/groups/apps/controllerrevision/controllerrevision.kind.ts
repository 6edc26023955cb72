/**
 * apps/v1 ControllerRevision (namespaced), with kubectl's columns NAME CONTROLLER REVISION AGE
 * (pkg/printers/internalversion printControllerRevision).
 */
import type { KubeObject } from '@app/apimachinery';
import type { KindDeclaration } from '@app/registry';
import { ControllerRevisionSchema } from './controllerrevision.schema.js';
import { controllerRevisionStrategy } from './controllerrevision.strategy.js';

/** `<kind>.<group>/<name>` of the controlling owner, lower-cased as kubectl prints it; `<none>` without one. */
export function controllerOf(o: KubeObject): string {
  const refs = Array.isArray(o.metadata.ownerReferences) ? o.metadata.ownerReferences : [];
  const ref = refs.find((r) => r.controller === true);
  if (!ref) return '<none>';
  const slash = ref.apiVersion.indexOf('/');
  const group = slash >= 0 ? ref.apiVersion.slice(0, slash) : '';
  return `${(group ? `${ref.kind}.${group}` : ref.kind).toLowerCase()}/${ref.name}`;
}

/** The ControllerRevision declaration. */
export const controllerRevisionKind: KindDeclaration = {
  group: 'apps',
  version: 'v1',
  kind: 'ControllerRevision',
  plural: 'controllerrevisions',
  singular: 'controllerrevision',
  namespaced: true,
  schema: ControllerRevisionSchema,
  protobufMessage: 'k8s.io.api.apps.v1.ControllerRevision',
  strategy: controllerRevisionStrategy,
  generation: 'none',
  tableColumns: [
    { name: 'Controller', type: 'string', priority: 0, description: 'The controller owning the revision', cell: controllerOf },
    { name: 'Revision', type: 'integer', priority: 0, description: 'The revision number', cell: (o) => o.revision ?? 0 },
  ],
};
