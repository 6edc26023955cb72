/**
 * SecurityContextDeny (plugin/pkg/admission/securitycontext/scdeny; off by default, turned on
 * with --enable-admission-plugins): refuses a pod that sets supplemental groups, SELinux options,
 * a user or an fsGroup for the pod, or SELinux options or a user for any container. Meant for
 * clusters with no other policy enforcement.
 */
import { Injectable } from '@nestjs/common';
import { Errors } from '@app/apimachinery';
import type { Admission, AdmissionAttributes } from '@app/registry';
import { AdmissionPlugin } from './admission.plugin.js';

type Obj = Record<string, unknown>;
const set = (v: unknown): boolean => v !== undefined && v !== null;

/** Why kube's plugin refuses `spec`, or undefined when it does not. */
export function securityContextDenial(spec: Obj): string | undefined {
  const psc = (spec.securityContext ?? {}) as Obj;
  if (set(psc.supplementalGroups)) return 'pod.Spec.SecurityContext.SupplementalGroups is forbidden';
  if (set(psc.seLinuxOptions)) return 'pod.Spec.SecurityContext.SELinuxOptions is forbidden';
  if (set(psc.runAsUser)) return 'pod.Spec.SecurityContext.RunAsUser is forbidden';
  if (set(psc.fsGroup)) return 'pod.Spec.SecurityContext.FSGroup is forbidden';
  for (const key of ['initContainers', 'containers']) {
    for (const c of Array.isArray(spec[key]) ? (spec[key] as Obj[]) : []) {
      const sc = (c?.securityContext ?? {}) as Obj;
      if (set(sc.seLinuxOptions)) return 'SecurityContext.SELinuxOptions is forbidden';
      if (set(sc.runAsUser)) return 'SecurityContext.RunAsUser is forbidden';
    }
  }
  return undefined;
}

/** The plugin: validating, on pod create and update. */
@AdmissionPlugin({ name: 'SecurityContextDeny', order: 1100, defaultOff: true })
@Injectable()
export class SecurityContextDenyPlugin implements Admission {
  async admit(): Promise<void> {}

  async validate(attrs: AdmissionAttributes): Promise<void> {
    if (attrs.subresource !== '' || attrs.decl.group !== '' || attrs.decl.kind !== 'Pod' || !attrs.object) return;
    if (attrs.operation !== 'CREATE' && attrs.operation !== 'UPDATE') return;
    const why = securityContextDenial((attrs.object.spec ?? {}) as Obj);
    if (why) throw Errors.forbidden({ group: '', resource: 'pods' }, attrs.name, why);
  }
}
