/**
 * batch/v1 CronJob (+status) as a stored kind: no controller acts on it here, so it never
 * creates Jobs and status stays what /status writes. kubectl's columns (pkg/printers
 * internalversion printCronJob): NAME SCHEDULE TIMEZONE SUSPEND ACTIVE LAST SCHEDULE AGE, and
 * CONTAINERS IMAGES SELECTOR with -o wide.
 */
import { ageOf, humanDuration, statusSubresource, type KindDeclaration } from '@app/registry';
import type { KubeObject } from '@app/apimachinery';
import { asMap } from '../../core/core.helpers.js';
import { CronJobSchema } from '../batch.schema.js';
import { containerCells, selectorText } from '../job/job.kind.js';
import { cronJobStatusStrategy, cronJobStrategy } from './cronjob.strategy.js';

const jobSpec = (o: KubeObject) => asMap(asMap(asMap(o.spec).jobTemplate).spec);

/** printBoolPtr: True, False or <unset>. */
const boolCell = (v: unknown): string => (v === true ? 'True' : v === false ? 'False' : '<unset>');

/** LAST SCHEDULE: time since status.lastScheduleTime, or <none>. */
function lastScheduleCell(o: KubeObject, now: Date): string {
  const t = asMap(o.status).lastScheduleTime;
  const ms = typeof t === 'string' ? Date.parse(t) : NaN;
  return Number.isNaN(ms) ? '<none>' : humanDuration(now.getTime() - ms);
}

/** The CronJob declaration. */
export const cronJobKind: KindDeclaration = {
  group: 'batch',
  version: 'v1',
  kind: 'CronJob',
  plural: 'cronjobs',
  singular: 'cronjob',
  shortNames: ['cj'],
  categories: ['all'],
  namespaced: true,
  schema: CronJobSchema,
  protobufMessage: 'k8s.io.api.batch.v1.CronJob',
  strategy: cronJobStrategy,
  subresources: { status: { verbs: statusSubresource().verbs, strategy: cronJobStatusStrategy } },
  generation: 'spec',
  tableColumns: [
    { name: 'Schedule', type: 'string', priority: 0, description: 'The schedule in cron format.', cell: (o) => String(asMap(o.spec).schedule ?? '') },
    {
      name: 'Timezone',
      type: 'string',
      priority: 0,
      description: 'The time zone of the schedule.',
      cell: (o) => (typeof asMap(o.spec).timeZone === 'string' ? String(asMap(o.spec).timeZone) : '<none>'),
    },
    { name: 'Suspend', type: 'boolean', priority: 0, description: 'Whether later runs are suspended.', cell: (o) => boolCell(asMap(o.spec).suspend) },
    {
      name: 'Active',
      type: 'integer',
      priority: 0,
      description: 'Jobs currently running.',
      cell: (o) => {
        const a = asMap(o.status).active;
        return Array.isArray(a) ? a.length : 0;
      },
    },
    { name: 'Last Schedule', type: 'date', priority: 0, description: 'When a Job was last scheduled.', cell: lastScheduleCell },
    { name: 'Age', type: 'string', priority: 0, description: 'Time since creation', cell: (o, now) => ageOf(o, now) },
    { name: 'Containers', type: 'string', priority: 1, description: 'Container names of the template', cell: (o) => containerCells(jobSpec(o).template).names },
    { name: 'Images', type: 'string', priority: 1, description: 'Container images of the template', cell: (o) => containerCells(jobSpec(o).template).images },
    { name: 'Selector', type: 'string', priority: 1, description: 'The label selector of the pods', cell: (o) => selectorText(jobSpec(o).selector, '<none>') },
  ],
};
