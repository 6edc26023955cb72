/**
 * The apps API group (`/apis/apps/v1`). Workload kinds other than ControllerRevision are not
 * served (nothing runs them).
 */
import { Module } from '@nestjs/common';
import type { KindDeclaration } from '@app/registry';
import { apiKinds } from '../api-group.js';
import { controllerRevisionKind } from './controllerrevision/controllerrevision.kind.js';

/** The apps/v1 kinds. */
export const APPS_KINDS: readonly KindDeclaration[] = [controllerRevisionKind];

/** Provides the apps/v1 kinds. */
@Module({ providers: [apiKinds('apps', APPS_KINDS)] })
export class AppsGroupModule {}
