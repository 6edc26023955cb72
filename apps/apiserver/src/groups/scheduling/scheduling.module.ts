/**
 * The scheduling.k8s.io API group (`/apis/scheduling.k8s.io/v1`). A kind is one folder here;
 * SCHEDULING_KINDS is the one list of the group's kinds.
 */
import { Module } from '@nestjs/common';
import type { KindDeclaration } from '@app/registry';
import { apiKinds } from '../api-group.js';
import { priorityClassKind } from './priorityclass/priorityclass.kind.js';

/** The scheduling.k8s.io/v1 kinds. */
export const SCHEDULING_KINDS: readonly KindDeclaration[] = [priorityClassKind];

/** Provides the scheduling.k8s.io/v1 kinds. */
@Module({ providers: [apiKinds('scheduling.k8s.io', SCHEDULING_KINDS)] })
export class SchedulingGroupModule {}
