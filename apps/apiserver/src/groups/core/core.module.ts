/**
 * The core API group (`/api/v1`). A kind is one folder here (schema, strategy, declaration);
 * CORE_KINDS is the one list of the group's kinds.
 */
import { Module } from '@nestjs/common';
import type { KindDeclaration } from '@app/registry';
import { apiKinds } from '../api-group.js';
import { configMapKind } from './configmap/configmap.kind.js';
import { eventKind } from './event/event.kind.js';
import { limitRangeKind } from './limitrange/limitrange.kind.js';
import { namespaceKind } from './namespace/namespace.kind.js';
import { podKind } from './pod/pod.kind.js';
import { persistentVolumeKind } from './persistentvolume/persistentvolume.kind.js';
import { persistentVolumeClaimKind } from './persistentvolumeclaim/persistentvolumeclaim.kind.js';
import { secretKind } from './secret/secret.kind.js';
import { serviceAccountKind } from './serviceaccount/serviceaccount.kind.js';

/** The core/v1 kinds. */
export const CORE_KINDS: readonly KindDeclaration[] = [
  namespaceKind,
  configMapKind,
  secretKind,
  serviceAccountKind,
  eventKind,
  persistentVolumeKind,
  persistentVolumeClaimKind,
  limitRangeKind,
  podKind,
];

/** Provides the core/v1 kinds. */
@Module({ providers: [apiKinds('', CORE_KINDS)] })
export class CoreGroupModule {}
