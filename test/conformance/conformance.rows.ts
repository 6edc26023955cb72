/** Every group of the conformance table, in the order docs/conformance.md lists them. */
import type { RowGroup } from './conformance.types.js';
import { ADMISSIONREGISTRATION } from './admissionregistration.rows.js';
import { APPLY_ROWS } from './apply.rows.js';
import { BATCH } from './batch.rows.js';
import { BINDING } from './binding.rows.js';
import { APPS_WORKLOADS } from './apps-workloads.rows.js';
import { CERTIFICATES } from './certificates.rows.js';
import { CORE_WORKLOADS } from './core-workloads.rows.js';
import { CUSTOM_RESOURCES } from './custom-resources.rows.js';
import { DELETES } from './delete.rows.js';
import { DISCOVERY } from './discovery.rows.js';
import { DEPLOYMENT } from './deployment.rows.js';
import { EVENT_RECORDER } from './event-recorder.rows.js';
import { EVENTS_V1 } from './events.rows.js';
import { FIXES } from './fixes.rows.js';
import { KINDS } from './kinds.rows.js';
import { KINDS_MISC } from './kinds-misc.rows.js';
import { NEGOTIATION } from './negotiation.rows.js';
import { NETWORKING } from './networking.rows.js';
import { OPTIONS } from './options.rows.js';
import { PATHS } from './paths.rows.js';
import { POLICY } from './policy.rows.js';
import { QUOTA } from './quota.rows.js';
import { READS } from './read.rows.js';
import { SERVICES } from './services.rows.js';
import { STORAGE } from './storage.rows.js';
import { WRITES } from './write.rows.js';

/** The groups. */
export const GROUPS: RowGroup[] = [
  FIXES,
  PATHS,
  OPTIONS,
  WRITES,
  READS,
  NEGOTIATION,
  APPLY_ROWS,
  DELETES,
  KINDS,
  KINDS_MISC,
  DEPLOYMENT,
  BATCH,
  NETWORKING,
  DISCOVERY,
  SERVICES,
  POLICY,
  BINDING,
  EVENT_RECORDER,
  EVENTS_V1,
  QUOTA,
  APPS_WORKLOADS,
  CORE_WORKLOADS,
  CERTIFICATES,
  STORAGE,
  ADMISSIONREGISTRATION,
  CUSTOM_RESOURCES,
];
