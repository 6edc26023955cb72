/**
 * core/v1 ComponentStatus (cluster-scoped, deprecated in 1.19): computed on each request, never
 * stored, get and list only, as kube-apiserver's componentstatuses. This server has no
 * separate scheduler or controller manager to probe; it lists its own storage as `etcd-0`
 * (Healthy True with message `ok`, or False with the failure in `error`). kubectl's columns:
 * NAME STATUS MESSAGE ERROR.
 */
import { defineSchema, Errors, objectRootSchema, type JSONSchemaProps, type KubeObject } from '@app/apimachinery';
import type { KindDeclaration } from '@app/registry';
import { asMap } from '../core.helpers.js';
import { CORE, gvk, str } from '../core.schema.js';

/** core/v1 ComponentCondition. */
export const ComponentConditionSchema: JSONSchemaProps = defineSchema(`${CORE}.ComponentCondition`, {
  type: 'object',
  description: 'Information about the condition of a component.',
  required: ['type', 'status'],
  properties: {
    error: str('Error code of the condition; empty when healthy.'),
    message: str('Message about the condition, e.g. health check output.'),
    status: str('True, False or Unknown.'),
    type: str('The condition type; the only one is Healthy.'),
  },
});

/** core/v1 ComponentStatus. */
export const ComponentStatusSchema: JSONSchemaProps = defineSchema(
  `${CORE}.ComponentStatus`,
  objectRootSchema(gvk('ComponentStatus'), 'The status of a control-plane component (deprecated in 1.19+).', {
    conditions: {
      type: 'array',
      description: 'Conditions of the component.',
      items: ComponentConditionSchema,
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['type'],
      'x-kubernetes-patch-strategy': 'merge',
      'x-kubernetes-patch-merge-key': 'type',
    },
  }),
);

/** Storage health: undefined when healthy, else why not. */
export type StorageHealth = () => string | undefined;

/** The component statuses of this node: its storage as `etcd-0`. */
export function componentStatuses(storage: StorageHealth): KubeObject[] {
  const failure = storage();
  const condition =
    failure === undefined ? { type: 'Healthy', status: 'True', message: 'ok' } : { type: 'Healthy', status: 'False', message: '', error: failure };
  return [{ apiVersion: 'v1', kind: 'ComponentStatus', metadata: { name: 'etcd-0' }, conditions: [condition] }];
}

/** STATUS: Healthy when the Healthy condition is True, else Unhealthy (printComponentStatus). */
function statusCell(o: KubeObject): string {
  const conds = Array.isArray(o.conditions) ? o.conditions.map(asMap) : [];
  const c = conds.find((x) => x.type === 'Healthy');
  return c?.status === 'True' ? 'Healthy' : 'Unhealthy';
}

function conditionField(o: KubeObject, f: string): string {
  const conds = Array.isArray(o.conditions) ? o.conditions.map(asMap) : [];
  const c = conds.find((x) => x.type === 'Healthy');
  return c && typeof c[f] === 'string' ? (c[f] as string) : '';
}

/** The ComponentStatus declaration, answering from `storage`. */
export function componentStatusKind(storage: StorageHealth): KindDeclaration {
  return {
    group: '',
    version: 'v1',
    kind: 'ComponentStatus',
    plural: 'componentstatuses',
    singular: 'componentstatus',
    shortNames: ['cs'],
    namespaced: false,
    schema: ComponentStatusSchema,
    protobufMessage: 'k8s.io.api.core.v1.ComponentStatus',
    verbs: ['get', 'list'],
    deprecation: { deprecatedIn: '1.19' },
    ageColumn: false,
    computed: {
      list: async () => componentStatuses(storage),
      get: async (_ns, name) => {
        const found = componentStatuses(storage).find((o) => o.metadata.name === name);
        if (!found) throw Errors.notFound({ group: '', resource: 'componentstatuses' }, name);
        return found;
      },
    },
    tableColumns: [
      { name: 'Status', type: 'string', priority: 0, description: 'Whether the component is healthy', cell: statusCell },
      { name: 'Message', type: 'string', priority: 0, description: 'Health check output', cell: (o) => conditionField(o, 'message') },
      { name: 'Error', type: 'string', priority: 0, description: 'Why the component is unhealthy', cell: (o) => conditionField(o, 'error') },
    ],
  };
}
