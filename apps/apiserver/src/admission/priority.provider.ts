/**
 * The Priority admission plugin (kube's plugin/pkg/admission/priority; resources.md
 * PriorityClass): a new Pod gets `spec.priority` and `spec.preemptionPolicy` from the
 * PriorityClass it names, or from the global default class when it names none (the one with the
 * smallest value when several are marked default), or priority 0 and PreemptLowerPriority when
 * there is no default. A pod naming a class that does not exist is refused, and so is one that
 * sets a priority or preemption policy other than its class's. An update keeps the priority and
 * policy the pod was created with when the new object leaves them out. A PriorityClass may be
 * marked globalDefault only while no other class is.
 */
import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { Errors, type KubeObject } from '@app/apimachinery';
import type { Admission, AdmissionAttributes } from '@app/registry';
import type { Storage } from '@app/storage';
import { asMap } from '../groups/core/core.helpers.js';
import { priorityClassKind } from '../groups/scheduling/priorityclass/priorityclass.kind.js';
import { STORAGE } from '../tokens.js';
import { AdmissionLister } from './admission.lister.js';
import { AdmissionPlugin } from './admission.plugin.js';

type Obj = Record<string, unknown>;

/** scheduling.DefaultPriorityWhenNoDefaultClassExists. */
const DEFAULT_PRIORITY = 0;
/** The preemption policy of a class that does not say (PriorityClass's default). */
const DEFAULT_PREEMPTION_POLICY = 'PreemptLowerPriority';

/** What a pod takes from its class: the class's name ('' for none), value and preemption policy. */
export interface ResolvedPriority {
  className: string;
  priority: number;
  preemptionPolicy: string;
}

/** Of the classes marked globalDefault, the one with the smallest value (kube's getDefaultPriorityClass). */
export function defaultPriorityClass(classes: readonly KubeObject[]): KubeObject | undefined {
  let found: KubeObject | undefined;
  for (const pc of classes) {
    if (pc.globalDefault !== true) continue;
    if (!found || Number(found.value) > Number(pc.value)) found = pc;
  }
  return found;
}

/** The priority a class (undefined: no default class) gives a pod. */
export function resolvedFrom(pc: KubeObject | undefined): ResolvedPriority {
  if (!pc) return { className: '', priority: DEFAULT_PRIORITY, preemptionPolicy: DEFAULT_PREEMPTION_POLICY };
  return {
    className: pc.metadata.name ?? '',
    priority: typeof pc.value === 'number' ? pc.value : DEFAULT_PRIORITY,
    preemptionPolicy: typeof pc.preemptionPolicy === 'string' ? pc.preemptionPolicy : DEFAULT_PREEMPTION_POLICY,
  };
}

/**
 * Sets a new pod's priority fields from `resolved`; `fromDefault` says the pod named no class
 * (it then takes the default class's name). Returns the reason for refusing the pod, if any.
 */
export function admitPodPriority(pod: KubeObject, resolved: ResolvedPriority, fromDefault: boolean): string | undefined {
  const spec = (pod.spec ??= {}) as Obj;
  if (fromDefault) {
    if (resolved.className) spec.priorityClassName = resolved.className;
    else delete spec.priorityClassName;
  }
  if (spec.priority !== undefined && spec.priority !== null && spec.priority !== resolved.priority) {
    return `the integer value of priority (${String(spec.priority)}) must not be provided in pod spec; priority admission controller computed ${resolved.priority} from the given PriorityClass name`;
  }
  spec.priority = resolved.priority;
  if (spec.preemptionPolicy !== undefined && spec.preemptionPolicy !== null && spec.preemptionPolicy !== resolved.preemptionPolicy) {
    return `the string value of PreemptionPolicy (${String(spec.preemptionPolicy)}) must not be provided in pod spec; priority admission controller computed ${resolved.preemptionPolicy} from the given PriorityClass name`;
  }
  spec.preemptionPolicy = resolved.preemptionPolicy;
  return undefined;
}

/** On an update, the priority and preemption policy the new object leaves out are the old one's. */
export function keepPodPriority(pod: KubeObject, old: KubeObject | undefined): void {
  const spec = (pod.spec ??= {}) as Obj;
  const oldSpec = asMap(old?.spec);
  if ((spec.priority === undefined || spec.priority === null) && oldSpec.priority !== undefined && oldSpec.priority !== null) spec.priority = oldSpec.priority;
  if ((spec.preemptionPolicy === undefined || spec.preemptionPolicy === null) && typeof oldSpec.preemptionPolicy === 'string') {
    spec.preemptionPolicy = oldSpec.preemptionPolicy;
  }
}

/** The plugin: mutating for pods, validating for PriorityClasses. */
@AdmissionPlugin({ name: 'Priority', order: 600 })
@Injectable()
export class PriorityPlugin implements Admission, OnApplicationBootstrap, OnApplicationShutdown {
  private readonly priorityClasses: AdmissionLister;

  constructor(@Inject(STORAGE) storage: Storage) {
    this.priorityClasses = new AdmissionLister(storage, priorityClassKind, 'priorityclasses for admission');
  }

  onApplicationBootstrap(): void {
    this.priorityClasses.start();
  }

  onApplicationShutdown(): void {
    this.priorityClasses.stop();
  }

  async admit(attrs: AdmissionAttributes): Promise<void> {
    if (attrs.subresource !== '' || attrs.decl.group !== '' || attrs.decl.kind !== 'Pod' || !attrs.object) return;
    if (attrs.operation === 'UPDATE') {
      keepPodPriority(attrs.object, attrs.oldObject);
      return;
    }
    if (attrs.operation !== 'CREATE') return;
    const named = asMap(attrs.object.spec).priorityClassName;
    let resolved: ResolvedPriority;
    if (typeof named === 'string' && named !== '') {
      const pc = await this.priorityClasses.get('', named);
      if (!pc) throw this.forbidden(attrs, `no PriorityClass with name ${named} was found`);
      resolved = resolvedFrom(pc);
    } else {
      resolved = resolvedFrom(defaultPriorityClass(await this.classes()));
    }
    const refused = admitPodPriority(attrs.object, resolved, !(typeof named === 'string' && named !== ''));
    if (refused) throw this.forbidden(attrs, refused);
  }

  async validate(attrs: AdmissionAttributes): Promise<void> {
    if (attrs.subresource !== '' || attrs.decl.group !== priorityClassKind.group || attrs.decl.kind !== priorityClassKind.kind || !attrs.object) return;
    if (attrs.operation !== 'CREATE' && attrs.operation !== 'UPDATE') return;
    if (attrs.object.globalDefault !== true) return;
    const current = defaultPriorityClass(await this.classes());
    if (!current) return;
    if (attrs.operation === 'CREATE' || current.metadata.name !== attrs.object.metadata.name) {
      throw Errors.forbidden(
        { group: priorityClassKind.group, resource: priorityClassKind.plural },
        attrs.name,
        `PriorityClass ${current.metadata.name ?? ''} is already marked as default. Only one default can exist`,
      );
    }
  }

  private classes(): Promise<KubeObject[]> {
    return this.priorityClasses.list('');
  }

  private forbidden(attrs: AdmissionAttributes, message: string): Error {
    return Errors.forbidden({ group: '', resource: 'pods' }, attrs.name, message);
  }
}
