/**
 * The API group modules this server serves. Adding a group is one line here; adding a kind to
 * a group is one line in its module.
 */
import { ApiextensionsGroupModule } from './apiextensions/apiextensions.module.js';
import { AdmissionregistrationGroupModule } from './admissionregistration/admissionregistration.module.js';
import { ApiregistrationGroupModule } from './apiregistration/apiregistration.module.js';
import { AppsGroupModule } from './apps/apps.module.js';
import { AutoscalingGroupModule } from './autoscaling/autoscaling.module.js';
import { BatchGroupModule } from './batch/batch.module.js';
import { ComponentStatusModule } from './core/componentstatus/componentstatus.module.js';
import { DiscoveryGroupModule } from './discovery/discovery.module.js';
import { EventsGroupModule } from './events/events.module.js';
import { FlowcontrolGroupModule } from './flowcontrol/flowcontrol.module.js';
import { NetworkingGroupModule } from './networking/networking.module.js';
import { NodeGroupModule } from './node/node.module.js';
import { PolicyGroupModule } from './policy/policy.module.js';
import { AuthenticationGroupModule } from './authentication/authentication.module.js';
import { AuthorizationGroupModule } from './authorization/authorization.module.js';
import { CertificatesGroupModule } from './certificates/certificates.module.js';
import { CoordinationGroupModule } from './coordination/coordination.module.js';
import { CoreGroupModule } from './core/core.module.js';
import { RbacGroupModule } from './rbac/rbac.module.js';
import { SchedulingGroupModule } from './scheduling/scheduling.module.js';
import { StorageGroupModule } from './storage/storage.module.js';

/** Every group module, in the order their groups are listed in discovery. */
export const API_GROUP_MODULES = [
  CoreGroupModule,
  ComponentStatusModule,
  ApiregistrationGroupModule,
  ApiextensionsGroupModule,
  AppsGroupModule,
  EventsGroupModule,
  AdmissionregistrationGroupModule,
  CoordinationGroupModule,
  SchedulingGroupModule,
  StorageGroupModule,
  RbacGroupModule,
  AuthenticationGroupModule,
  AuthorizationGroupModule,
  AutoscalingGroupModule,
  BatchGroupModule,
  NetworkingGroupModule,
  PolicyGroupModule,
  NodeGroupModule,
  DiscoveryGroupModule,
  FlowcontrolGroupModule,
  CertificatesGroupModule,
];
