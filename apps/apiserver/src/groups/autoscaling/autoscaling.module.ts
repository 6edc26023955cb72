/**
 * The autoscaling API group (`/apis/autoscaling/v2` and `/v1`).
 */
import { Module } from '@nestjs/common';
import type { KindDeclaration } from '@app/registry';
import { apiKinds } from '../api-group.js';
import { horizontalPodAutoscalerKind, horizontalPodAutoscalerV2Kind } from './horizontalpodautoscaler/horizontalpodautoscaler.kind.js';

/** The autoscaling kinds: v2 preferred, then v1. */
export const AUTOSCALING_KINDS: readonly KindDeclaration[] = [horizontalPodAutoscalerV2Kind, horizontalPodAutoscalerKind];

/** Provides the autoscaling kinds. */
@Module({ providers: [apiKinds('autoscaling', AUTOSCALING_KINDS)] })
export class AutoscalingGroupModule {}
