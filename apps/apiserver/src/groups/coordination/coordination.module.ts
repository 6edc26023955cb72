/**
 * The coordination.k8s.io API group (`/apis/coordination.k8s.io/v1`): Lease.
 */
import { Module } from '@nestjs/common';
import { apiKinds } from '../api-group.js';
import { COORDINATION_KINDS } from './coordination.kinds.js';

/** Provides the coordination.k8s.io/v1 kinds. */
@Module({ providers: [apiKinds('coordination.k8s.io', COORDINATION_KINDS)] })
export class CoordinationGroupModule {}
