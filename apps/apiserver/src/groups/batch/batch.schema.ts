/**
 * Schemas of batch/v1 Job and CronJob: spec and status derived from the protobuf messages with
 * the core and batch overlays (the pod template is core's PodTemplateSpec, so it gets a Pod's
 * defaults).
 */
import { defineSchema, fieldOf, objectRootSchema, protoSchema, type JSONSchemaProps } from '@app/apimachinery';
import { CORE_OVERLAYS } from '../core/core.overlays.js';
import { BATCH_OVERLAYS } from './batch.overlays.js';

const message = (name: string): JSONSchemaProps => protoSchema(`k8s.io.api.batch.v1.${name}`, CORE_OVERLAYS, BATCH_OVERLAYS);

/** batch/v1 Job (namespaced). */
export const JobSchema: JSONSchemaProps = defineSchema(
  'io.k8s.api.batch.v1.Job',
  objectRootSchema({ group: 'batch', version: 'v1', kind: 'Job' }, 'A run of pods to completion.', {
    spec: fieldOf(message('JobSpec'), { description: 'The pods to run and how many must succeed.' }),
    status: fieldOf(message('JobStatus'), { description: 'What the controller last observed; read-only.' }),
  }),
);

/** batch/v1 CronJob (namespaced). */
export const CronJobSchema: JSONSchemaProps = defineSchema(
  'io.k8s.api.batch.v1.CronJob',
  objectRootSchema({ group: 'batch', version: 'v1', kind: 'CronJob' }, 'A Job created on a repeating schedule.', {
    spec: fieldOf(message('CronJobSpec'), { description: 'The schedule and the Job to create.' }),
    status: fieldOf(message('CronJobStatus'), { description: 'What the controller last observed; read-only.' }),
  }),
);
