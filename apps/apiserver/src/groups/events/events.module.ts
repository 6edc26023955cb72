/**
 * The events.k8s.io API group (`/apis/events.k8s.io/v1`): Event, a view of the core/v1 Events
 * under the newer field names, which client-go's events recorder (kube-scheduler's, for one)
 * writes.
 */
import { Module } from '@nestjs/common';
import type { KindDeclaration } from '@app/registry';
import { apiKinds } from '../api-group.js';
import { eventsV1EventKind } from './event/event.kind.js';

/** The events.k8s.io kinds. */
export const EVENTS_KINDS: readonly KindDeclaration[] = [eventsV1EventKind];

/** Provides the events.k8s.io kinds. */
@Module({ providers: [apiKinds('events.k8s.io', EVENTS_KINDS)] })
export class EventsGroupModule {}
