/**
 * TaintNodesByCondition (conventions.md admission table; kube's plugin/pkg/admission/
 * nodetaint): a newly created Node gets the taint node.kubernetes.io/not-ready:NoSchedule, so
 * that nothing is scheduled to it before it reports its conditions (the node lifecycle
 * controller of a real cluster removes it once the node is Ready). Only creates of the main
 * resource are touched; a node that already carries the taint keeps it as it is.
 */
import { Injectable } from '@nestjs/common';
import type { Admission, AdmissionAttributes } from '@app/registry';
import { NOT_READY_TAINT } from '../groups/core/node/node.strategy.js';
import { AdmissionPlugin } from './admission.plugin.js';

/** Adds the not-ready taint to new Nodes (mutating). */
@AdmissionPlugin({ name: 'TaintNodesByCondition', order: 1_500 })
@Injectable()
export class TaintNodesByConditionPlugin implements Admission {
  async admit(a: AdmissionAttributes): Promise<void> {
    if (a.decl.group !== '' || a.decl.kind !== 'Node' || a.operation !== 'CREATE' || a.subresource !== '' || !a.object) return;
    const spec = (a.object.spec && typeof a.object.spec === 'object' ? a.object.spec : {}) as Record<string, unknown>;
    const taints = Array.isArray(spec.taints) ? [...(spec.taints as Array<Record<string, unknown>>)] : [];
    if (taints.some((t) => t.key === NOT_READY_TAINT.key && t.effect === NOT_READY_TAINT.effect)) return;
    taints.push({ ...NOT_READY_TAINT });
    a.object.spec = { ...spec, taints };
  }

  async validate(): Promise<void> {}
}
