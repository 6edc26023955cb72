/**
 * The API group modules this server serves. Adding a group is one line here; adding a kind to
 * a group is one line in its module.
 */
import { AuthenticationGroupModule } from './authentication/authentication.module.js';
import { AuthorizationGroupModule } from './authorization/authorization.module.js';
import { CoordinationGroupModule } from './coordination/coordination.module.js';
import { CoreGroupModule } from './core/core.module.js';
import { RbacGroupModule } from './rbac/rbac.module.js';
import { SchedulingGroupModule } from './scheduling/scheduling.module.js';
import { StorageGroupModule } from './storage/storage.module.js';

/** Every group module, in the order their groups are listed in discovery. */
export const API_GROUP_MODULES = [
  CoreGroupModule,
  CoordinationGroupModule,
  SchedulingGroupModule,
  StorageGroupModule,
  RbacGroupModule,
  AuthenticationGroupModule,
  AuthorizationGroupModule,
];
