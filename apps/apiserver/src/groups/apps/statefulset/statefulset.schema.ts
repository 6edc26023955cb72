/**
 * Schema of apps/v1 StatefulSet: spec and status derived from the protobuf messages with the
 * core and apps overlays (the pod template is core's PodTemplateSpec). The claim templates are
 * the PersistentVolumeClaim kind's own schema, as in Kubernetes' OpenAPI, so that one document
 * has one schema of that name.
 */
import { defineSchema, fieldOf, objectRootSchema, protoSchema, type JSONSchemaProps } from '@app/apimachinery';
import { CORE_OVERLAYS } from '../../core/core.overlays.js';
import { PersistentVolumeClaimSchema } from '../../core/persistentvolumeclaim/persistentvolumeclaim.schema.js';
import { APPS_OVERLAYS } from '../apps.overlays.js';

const message = (name: string): JSONSchemaProps => protoSchema(`k8s.io.api.apps.v1.${name}`, CORE_OVERLAYS, APPS_OVERLAYS);

const derivedSpec = message('StatefulSetSpec');

/** StatefulSetSpec with volumeClaimTemplates' items the PersistentVolumeClaim kind's schema. */
const StatefulSetSpecSchema: JSONSchemaProps = defineSchema('io.k8s.api.apps.v1.StatefulSetSpec', {
  ...derivedSpec,
  properties: {
    ...derivedSpec.properties,
    volumeClaimTemplates: { ...derivedSpec.properties?.volumeClaimTemplates, items: PersistentVolumeClaimSchema },
  },
});

/** apps/v1 StatefulSet (namespaced). */
export const StatefulSetSchema: JSONSchemaProps = defineSchema(
  'io.k8s.api.apps.v1.StatefulSet',
  objectRootSchema({ group: 'apps', version: 'v1', kind: 'StatefulSet' }, 'A set of pods with stable identities and storage.', {
    spec: fieldOf(StatefulSetSpecSchema, { description: 'The desired pods and their claims.' }),
    status: fieldOf(message('StatefulSetStatus'), { description: 'What the controller last observed; read-only.' }),
  }),
);
