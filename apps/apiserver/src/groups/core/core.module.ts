/**
 * The core API group (`/api/v1`). A kind is one folder here (schema, strategy, declaration);
 * CORE_KINDS is the one list of the group's kinds.
 */
import { Module } from '@nestjs/common';
import type { KindDeclaration } from '@app/registry';
import { apiKinds } from '../api-group.js';
import { configMapKind } from './configmap/configmap.kind.js';
import { endpointsKind } from './endpoints/endpoints.kind.js';
import { eventKind } from './event/event.kind.js';
import { namespaceKind } from './namespace/namespace.kind.js';
import { nodeKind } from './node/node.kind.js';
import { secretKind } from './secret/secret.kind.js';
import { serviceAccountKind } from './serviceaccount/serviceaccount.kind.js';
import { serviceKind } from './service/service.kind.js';

/** The core/v1 kinds. */
export const CORE_KINDS: readonly KindDeclaration[] = [
  namespaceKind,
  configMapKind,
  secretKind,
  serviceAccountKind,
  eventKind,
  nodeKind,
  serviceKind,
  endpointsKind,
];

/** Provides the core/v1 kinds. */
@Module({ providers: [apiKinds('', CORE_KINDS)] })
export class CoreGroupModule {}
