/**
 * The autoscaling API group (`/apis/autoscaling/v1`).
 */
import { Module } from '@nestjs/common';
import type { KindDeclaration } from '@app/registry';
import { apiKinds } from '../api-group.js';
import { horizontalPodAutoscalerKind } from './horizontalpodautoscaler/horizontalpodautoscaler.kind.js';

/** The autoscaling kinds. */
export const AUTOSCALING_KINDS: readonly KindDeclaration[] = [horizontalPodAutoscalerKind];

/** Provides the autoscaling kinds. */
@Module({ providers: [apiKinds('autoscaling', AUTOSCALING_KINDS)] })
export class AutoscalingGroupModule {}
