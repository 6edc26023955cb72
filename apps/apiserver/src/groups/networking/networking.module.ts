/**
 * The networking.k8s.io API group (`/apis/networking.k8s.io/v1`): Ingress, IngressClass and
 * NetworkPolicy, stored only. No ingress controller or network plugin runs, so an Ingress's
 * status stays what /status writes and a NetworkPolicy is enforced by nobody. The
 * DefaultIngressClass admission plugin (admission/ingress-class.provider.ts) fills in a new
 * Ingress's class.
 */
import { Module } from '@nestjs/common';
import type { KindDeclaration } from '@app/registry';
import { apiKinds } from '../api-group.js';
import { ingressKind } from './ingress/ingress.kind.js';
import { ingressClassKind } from './ingressclass/ingressclass.kind.js';
import { networkPolicyKind } from './networkpolicy/networkpolicy.kind.js';

/** The networking.k8s.io/v1 kinds. */
export const NETWORKING_KINDS: readonly KindDeclaration[] = [ingressClassKind, ingressKind, networkPolicyKind];

/** Provides the networking.k8s.io/v1 kinds. */
@Module({ providers: [apiKinds('networking.k8s.io', NETWORKING_KINDS)] })
export class NetworkingGroupModule {}
