/**
 * DefaultIngressClass, a default admission plugin of kube-apiserver
 * (plugin/pkg/admission/network/defaultingressclass): a new Ingress that names no class (no
 * `spec.ingressClassName`, no `kubernetes.io/ingress.class` annotation; an empty name is a
 * choice) gets the default IngressClass, the one annotated
 * `ingressclass.kubernetes.io/is-default-class: "true"`. When several are, the Ingress is
 * refused (403) until only one is.
 */
import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { Errors, type KubeObject } from '@app/apimachinery';
import type { Admission, AdmissionAttributes } from '@app/registry';
import type { Storage } from '@app/storage';
import { INGRESS_CLASS_ANNOTATION } from '../groups/networking/ingress/ingress.validation.js';
import { ingressClassKind, isDefaultIngressClass } from '../groups/networking/ingressclass/ingressclass.kind.js';
import { STORAGE } from '../tokens.js';
import { AdmissionLister } from './admission.lister.js';
import { AdmissionPlugin } from './admission.plugin.js';

type Obj = Record<string, unknown>;

const isIngressCreate = (attrs: AdmissionAttributes): boolean =>
  attrs.operation === 'CREATE' &&
  attrs.subresource === '' &&
  attrs.decl.group === 'networking.k8s.io' &&
  attrs.decl.kind === 'Ingress' &&
  attrs.object !== undefined;

/** Whether an Ingress chose its class, possibly none: ingressClassName set (even '') or the legacy annotation present. */
export function ingressHasClass(ing: KubeObject): boolean {
  const name = ((ing.spec ?? {}) as Obj).ingressClassName;
  return (name !== undefined && name !== null) || INGRESS_CLASS_ANNOTATION in ((ing.metadata.annotations ?? {}) as Obj);
}

/**
 * The default class among `classes` (getDefaultClass): undefined when none is marked; a
 * string error when more than one is.
 */
export function defaultIngressClass(classes: readonly KubeObject[]): KubeObject | undefined | { error: string } {
  const defaults = classes.filter(isDefaultIngressClass);
  if (defaults.length > 1) return { error: `${defaults.length} default IngressClasses were found, only 1 allowed` };
  return defaults[0];
}

/** DefaultIngressClass (mutating, on Ingress creation). */
@AdmissionPlugin({ name: 'DefaultIngressClass', order: 6_300 })
@Injectable()
export class DefaultIngressClassPlugin implements Admission, OnApplicationBootstrap, OnApplicationShutdown {
  private readonly classes: AdmissionLister;

  constructor(@Inject(STORAGE) storage: Storage) {
    this.classes = new AdmissionLister(storage, ingressClassKind, 'ingressclasses for admission');
  }

  onApplicationBootstrap(): void {
    this.classes.start();
  }

  onApplicationShutdown(): void {
    this.classes.stop();
  }

  async admit(attrs: AdmissionAttributes): Promise<void> {
    if (!isIngressCreate(attrs) || ingressHasClass(attrs.object!)) return;
    const def = defaultIngressClass(await this.classes.list(''));
    if (def === undefined) return;
    if ('error' in def) {
      throw Errors.forbidden({ group: 'networking.k8s.io', resource: 'ingresses' }, attrs.name, `Internal error occurred: ${def.error}`);
    }
    ((attrs.object!.spec ??= {}) as Obj).ingressClassName = def.metadata.name;
  }

  async validate(): Promise<void> {}
}
