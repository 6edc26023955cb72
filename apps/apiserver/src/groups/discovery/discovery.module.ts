/**
 * The discovery.k8s.io API group (`/apis/discovery.k8s.io/v1`): EndpointSlice, stored, and
 * written for Services without a selector by the endpointslicemirroring controller.
 */
import { Module } from '@nestjs/common';
import type { KindDeclaration } from '@app/registry';
import { apiKinds } from '../api-group.js';
import { endpointSliceKind } from './endpointslice/endpointslice.kind.js';

/** The discovery.k8s.io/v1 kinds. */
export const DISCOVERY_KINDS: readonly KindDeclaration[] = [endpointSliceKind];

/** Provides the discovery.k8s.io/v1 kinds. */
@Module({ providers: [apiKinds('discovery.k8s.io', DISCOVERY_KINDS)] })
export class DiscoveryGroupModule {}
