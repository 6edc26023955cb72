/**
 * batch/v1 Job (+status) as a stored kind: no controller acts on it here, so no Pods follow and
 * status stays what /status writes. kubectl's columns (pkg/printers internalversion printJob):
 * NAME STATUS COMPLETIONS DURATION AGE, and CONTAINERS IMAGES SELECTOR with -o wide.
 */
import { ageOf, humanDuration, statusSubresource, type KindDeclaration } from '@app/registry';
import { labelSelectorFromStruct, type KubeObject, type LabelSelectorStruct } from '@app/apimachinery';
import { asMap } from '../../core/core.helpers.js';
import { JobSchema } from '../batch.schema.js';
import { jobStatusStrategy, jobStrategy } from './job.strategy.js';

const num = (v: unknown): number => (typeof v === 'number' ? v : 0);

/** The containers of a pod template. */
export const templateContainers = (template: unknown): Record<string, unknown>[] => {
  const cs = asMap(asMap(template).spec).containers;
  return Array.isArray(cs) ? cs.map(asMap) : [];
};

/** The names and images of a pod template's containers, comma-separated (layoutContainerCells). */
export const containerCells = (template: unknown): { names: string; images: string } => {
  const cs = templateContainers(template);
  return { names: cs.map((c) => String(c.name ?? '')).join(','), images: cs.map((c) => String(c.image ?? '')).join(',') };
};

/**
 * A label selector in the label selector string syntax; `empty` when it is unset or selects
 * everything, `<error>` when it does not parse (printJob prints nothing for none,
 * FormatLabelSelector `<none>`).
 */
export function selectorText(sel: unknown, empty: string): string {
  if (sel === undefined || sel === null) return empty;
  try {
    return labelSelectorFromStruct(sel as LabelSelectorStruct).toString() || empty;
  } catch {
    return '<error>';
  }
}

/** Whether the Job has a condition of `type` with status True. */
const hasCondition = (o: KubeObject, type: string): boolean => {
  const cs = asMap(o.status).conditions;
  return Array.isArray(cs) && cs.some((c) => asMap(c).type === type && asMap(c).status === 'True');
};

/** printJob's STATUS: the first of Complete, Failed, Terminating, Suspended, FailureTarget, SuccessCriteriaMet that holds, else Running. */
export function jobStatusCell(o: KubeObject): string {
  if (hasCondition(o, 'Complete')) return 'Complete';
  if (hasCondition(o, 'Failed')) return 'Failed';
  if (o.metadata.deletionTimestamp) return 'Terminating';
  if (hasCondition(o, 'Suspended')) return 'Suspended';
  if (hasCondition(o, 'FailureTarget')) return 'FailureTarget';
  if (hasCondition(o, 'SuccessCriteriaMet')) return 'SuccessCriteriaMet';
  return 'Running';
}

/** printJob's COMPLETIONS: `<succeeded>/<completions>`, or `/1` (`/1 of <parallelism>`) without completions. */
export function jobCompletionsCell(o: KubeObject): string {
  const spec = asMap(o.spec);
  const succeeded = num(asMap(o.status).succeeded);
  if (typeof spec.completions === 'number') return `${succeeded}/${spec.completions}`;
  const parallelism = num(spec.parallelism);
  return parallelism > 1 ? `${succeeded}/1 of ${parallelism}` : `${succeeded}/1`;
}

/** printJob's DURATION: empty before startTime, then up to completionTime or now. */
export function jobDurationCell(o: KubeObject, now: Date): string {
  const status = asMap(o.status);
  const start = typeof status.startTime === 'string' ? Date.parse(status.startTime) : NaN;
  if (Number.isNaN(start)) return '';
  const end = typeof status.completionTime === 'string' ? Date.parse(status.completionTime) : NaN;
  return humanDuration((Number.isNaN(end) ? now.getTime() : end) - start);
}

/** The Job declaration. */
export const jobKind: KindDeclaration = {
  group: 'batch',
  version: 'v1',
  kind: 'Job',
  plural: 'jobs',
  singular: 'job',
  categories: ['all'],
  namespaced: true,
  schema: JobSchema,
  protobufMessage: 'k8s.io.api.batch.v1.Job',
  strategy: jobStrategy,
  subresources: { status: { verbs: statusSubresource().verbs, strategy: jobStatusStrategy } },
  generation: 'spec',
  tableColumns: [
    { name: 'Status', type: 'string', priority: 0, description: 'Status of the job.', cell: jobStatusCell },
    { name: 'Completions', type: 'string', priority: 0, description: 'The number of pods which reached phase Succeeded.', cell: jobCompletionsCell },
    { name: 'Duration', type: 'string', priority: 0, description: 'Time required to complete the job.', cell: jobDurationCell },
    { name: 'Age', type: 'string', priority: 0, description: 'Time since creation', cell: (o, now) => ageOf(o, now) },
    {
      name: 'Containers',
      type: 'string',
      priority: 1,
      description: 'Container names of the template',
      cell: (o) => containerCells(asMap(o.spec).template).names,
    },
    {
      name: 'Images',
      type: 'string',
      priority: 1,
      description: 'Container images of the template',
      cell: (o) => containerCells(asMap(o.spec).template).images,
    },
    { name: 'Selector', type: 'string', priority: 1, description: 'The label selector of the pods', cell: (o) => selectorText(asMap(o.spec).selector, '') },
  ],
};
