/**
 * The DefaultTolerationSeconds admission plugin (kube's
 * plugin/pkg/admission/defaulttolerationseconds): a pod that does not already tolerate the
 * node.kubernetes.io/not-ready or node.kubernetes.io/unreachable NoExecute taints gets a
 * toleration of each for `--default-not-ready-toleration-seconds` and
 * `--default-unreachable-toleration-seconds` (300 by default), so that a node going away evicts
 * its pods after that long rather than at once. A toleration with an empty key (any key) or an
 * empty effect (any effect) counts. Creates and updates of pods, not their subresources, as
 * kube's plugin.
 */
import { Inject, Injectable } from '@nestjs/common';
import type { KubeObject } from '@app/apimachinery';
import type { Admission, AdmissionAttributes } from '@app/registry';
import type { ServerConfig } from '../config/flags.js';
import { NOT_READY_TAINT } from '../groups/core/node/node.strategy.js';
import { SERVER_CONFIG } from '../tokens.js';
import { AdmissionPlugin } from './admission.plugin.js';

type Obj = Record<string, unknown>;

/** The taint a node gets while it is not ready (v1.TaintNodeNotReady). */
const NOT_READY_TAINT_KEY = NOT_READY_TAINT.key;
/** The taint a node gets while the node controller cannot reach it (v1.TaintNodeUnreachable). */
const UNREACHABLE_TAINT_KEY = 'node.kubernetes.io/unreachable';

/** Whether `tolerations` already tolerate the NoExecute taint `key` (any value). */
function tolerates(tolerations: readonly Obj[], key: string): boolean {
  return tolerations.some((t) => {
    const k = typeof t.key === 'string' ? t.key : '';
    const effect = typeof t.effect === 'string' ? t.effect : '';
    return (k === key || k === '') && (effect === 'NoExecute' || effect === '');
  });
}

/** Appends the default not-ready and unreachable tolerations `pod` lacks. */
export function addDefaultTolerations(pod: KubeObject, notReadySeconds: number, unreachableSeconds: number): void {
  const spec = (pod.spec ??= {}) as Obj;
  const tolerations = Array.isArray(spec.tolerations) ? (spec.tolerations as Obj[]) : [];
  const added: Obj[] = [];
  if (!tolerates(tolerations, NOT_READY_TAINT_KEY)) {
    added.push({ key: NOT_READY_TAINT_KEY, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: notReadySeconds });
  }
  if (!tolerates(tolerations, UNREACHABLE_TAINT_KEY)) {
    added.push({ key: UNREACHABLE_TAINT_KEY, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: unreachableSeconds });
  }
  if (added.length > 0) spec.tolerations = [...tolerations, ...added];
}

/** The plugin (mutating). */
@AdmissionPlugin({ name: 'DefaultTolerationSeconds', order: 700 })
@Injectable()
export class DefaultTolerationSecondsPlugin implements Admission {
  constructor(@Inject(SERVER_CONFIG) private readonly cfg: ServerConfig) {}

  async admit(attrs: AdmissionAttributes): Promise<void> {
    if (attrs.operation !== 'CREATE' && attrs.operation !== 'UPDATE') return;
    if (attrs.subresource !== '' || attrs.decl.group !== '' || attrs.decl.kind !== 'Pod' || !attrs.object) return;
    addDefaultTolerations(attrs.object, this.cfg.defaultNotReadyTolerationSeconds, this.cfg.defaultUnreachableTolerationSeconds);
  }

  async validate(): Promise<void> {}
}
