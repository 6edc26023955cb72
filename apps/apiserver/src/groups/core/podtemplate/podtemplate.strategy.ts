/**
 * PodTemplate behaviour (pkg/registry/core/podtemplate): the template's container defaults, and
 * ValidatePodTemplate / ValidatePodTemplateUpdate (the template's labels, annotations and pod
 * spec at `template`). Generation starts at 1 (the declaration's `generation: 'create'`) and
 * grows by one with every update that changes the template.
 */
import { isDeepStrictEqual } from 'node:util';
import type { KubeObject } from '@app/apimachinery';
import type { Strategy } from '@app/registry';
import { defaultContainers } from '../pod/pod.strategy.js';
import { validatePodTemplateSpec } from '../replicationcontroller/replicationcontroller.validation.js';
import { withPodSpecWarnings } from '../pod/pod.warnings.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function defaultPodTemplate(pt: KubeObject): void {
  if (isObj(pt.template)) defaultContainers(pt.template);
}

/** The PodTemplate strategy. */
export const podTemplateStrategy: Strategy = withPodSpecWarnings(
  {
    prepareForCreate: defaultPodTemplate,
    prepareForUpdate(pt, old) {
      defaultPodTemplate(pt);
      if (!isDeepStrictEqual(pt.template, old.template)) pt.metadata.generation = ((old.metadata.generation as number | undefined) ?? 0) + 1;
    },
    validate: (pt) => validatePodTemplateSpec(pt.template, 'template'),
  },
  ['template', 'spec'],
  true,
);
