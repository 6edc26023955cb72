/**
 * DaemonSet behaviour as a stored kind (pkg/registry/apps/daemonset, no controller): the
 * defaults schema defaults cannot express (SetDefaults_DaemonSet's update strategy, the pod
 * template's containers), status emptied on create and written through /status only, and the
 * template generation kept, as apps/v1 does, in the deprecated.daemonset.template.generation
 * annotation: 1 on create, one more on each template change. Generation follows spec changes
 * (`generation: 'spec'`).
 */
import { isDeepStrictEqual } from 'node:util';
import type { KubeObject } from '@app/apimachinery';
import { STATUS_STRATEGY, type Strategy, type SubresourceStrategy } from '@app/registry';
import { defaultContainers } from '../../core/pod/pod.strategy.js';
import { validateDaemonSet, validateDaemonSetStatusUpdate, validateDaemonSetUpdate } from './daemonset.validation.js';
import { withPodSpecWarnings } from '../../core/pod/pod.warnings.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The annotation apps/v1 keeps a DaemonSet's template generation in. */
export const TEMPLATE_GENERATION_ANNOTATION = 'deprecated.daemonset.template.generation';

/**
 * SetDefaults_DaemonSet's conditional part: update strategy RollingUpdate, and for it
 * maxUnavailable 1 and maxSurge 0; plus the pod template's container defaults.
 * revisionHistoryLimit is a schema default.
 */
export function defaultDaemonSet(ds: KubeObject): void {
  if (!isObj(ds.spec)) return;
  const spec = ds.spec;
  if (!isObj(spec.updateStrategy)) spec.updateStrategy = {};
  const us = spec.updateStrategy as Obj;
  if (us.type === undefined || us.type === null || us.type === '') us.type = 'RollingUpdate';
  if (us.type === 'RollingUpdate') {
    if (!isObj(us.rollingUpdate)) us.rollingUpdate = {};
    const ru = us.rollingUpdate as Obj;
    ru.maxUnavailable ??= 1;
    ru.maxSurge ??= 0;
  }
  if (isObj(spec.template)) defaultContainers(spec.template);
}

const templateGeneration = (o: KubeObject): number => {
  const v = Number(asAnnotations(o)[TEMPLATE_GENERATION_ANNOTATION]);
  return Number.isInteger(v) && v > 0 ? v : 0;
};
const asAnnotations = (o: KubeObject): Record<string, string> => (isObj(o.metadata.annotations) ? (o.metadata.annotations as Record<string, string>) : {});
const setTemplateGeneration = (o: KubeObject, g: number): void => {
  o.metadata.annotations = { ...asAnnotations(o), [TEMPLATE_GENERATION_ANNOTATION]: String(g) };
};

/** The DaemonSet strategy. */
export const daemonSetStrategy: Strategy = withPodSpecWarnings(
  {
    prepareForCreate(ds) {
      defaultDaemonSet(ds);
      setTemplateGeneration(ds, 1);
      // The zero DaemonSetStatus: these four counts are not omitted when 0.
      ds.status = { currentNumberScheduled: 0, numberMisscheduled: 0, desiredNumberScheduled: 0, numberReady: 0 };
    },
    prepareForUpdate(ds, old) {
      defaultDaemonSet(ds);
      const changed = !isDeepStrictEqual(ds.spec && (ds.spec as Obj).template, old.spec && (old.spec as Obj).template);
      const base = templateGeneration(old);
      if (base > 0) setTemplateGeneration(ds, changed ? base + 1 : base);
    },
    validate: validateDaemonSet,
    validateUpdate: validateDaemonSetUpdate,
  },
  ['spec', 'template', 'spec'],
);

/** /status: only status (and labels, annotations) change, validated as a DaemonSetStatus. */
export const daemonSetStatusStrategy: SubresourceStrategy = {
  prepareForUpdate: STATUS_STRATEGY.prepareForUpdate,
  validateUpdate: validateDaemonSetStatusUpdate,
};
