/** Schema of core/v1 PodTemplate: a named pod template (metadata and pod spec), with a Pod's defaults. */
import { defineSchema, fieldOf, objectRootSchema, protoSchema, type JSONSchemaProps } from '@app/apimachinery';
import { CORE_OVERLAYS } from '../core.overlays.js';

/** core/v1 PodTemplate (namespaced). */
export const PodTemplateSchema: JSONSchemaProps = defineSchema(
  'io.k8s.api.core.v1.PodTemplate',
  objectRootSchema({ group: '', version: 'v1', kind: 'PodTemplate' }, 'A stored pod template, for controllers and tools that create pods from it.', {
    template: fieldOf(protoSchema('k8s.io.api.core.v1.PodTemplateSpec', CORE_OVERLAYS), { description: 'The pods this template describes.' }),
  }),
);
