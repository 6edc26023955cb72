/**
 * The core API group (`/api/v1`): Namespace, ConfigMap, Secret, ServiceAccount, Event.
 */
import { Module } from '@nestjs/common';
import { apiKinds } from '../api-group.js';
import { CORE_KINDS } from './core.kinds.js';

/** Provides the core/v1 kinds. */
@Module({ providers: [apiKinds('', CORE_KINDS)] })
export class CoreGroupModule {}
