/**
 * Schema of apps/v1 ControllerRevision (k8s.io/api/apps/v1 types.go).
 */
import { defineSchema, fieldOf, objectRootSchema, RawExtensionSchema, type JSONSchemaProps } from '@app/apimachinery';

/** apps/v1 ControllerRevision (namespaced). */
export const ControllerRevisionSchema: JSONSchemaProps = defineSchema(
  'io.k8s.api.apps.v1.ControllerRevision',
  objectRootSchema(
    { group: 'apps', version: 'v1', kind: 'ControllerRevision' },
    'An immutable snapshot of state data, used by controllers (DaemonSet, StatefulSet) to roll updates forward and back.',
    {
      data: fieldOf(RawExtensionSchema, { description: 'The serialized state; required and immutable.' }),
      revision: { type: 'integer', format: 'int64', description: 'Revision of the state in data; not negative.' },
    },
    { required: ['revision'] },
  ),
);
