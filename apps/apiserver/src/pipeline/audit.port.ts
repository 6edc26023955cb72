/**
 * The audit port of the request pipeline. The audit filter gives every request an audit ID
 * (answered in the `Audit-Id` header, as kube-apiserver does), asks the sink's policy how much
 * of the request to record, and hands the sink audit.k8s.io/v1 Events at the stages the policy
 * keeps (pipeline/audit.record.ts builds them). Without `--audit-policy-file` and
 * `--audit-log-path` the sink is NO_AUDIT and the filter builds nothing.
 */
import type { UserInfo } from '@app/auth';

/** How much of a request is recorded, in increasing order. */
export const AUDIT_LEVELS = ['None', 'Metadata', 'Request', 'RequestResponse'] as const;
export type AuditLevel = (typeof AUDIT_LEVELS)[number];

/** The stages an event is recorded at. */
export const AUDIT_STAGES = ['RequestReceived', 'ResponseStarted', 'ResponseComplete', 'Panic'] as const;
export type AuditStage = (typeof AUDIT_STAGES)[number];

/** Whether `level` records at least what `min` does. */
export function levelAtLeast(level: AuditLevel, min: AuditLevel): boolean {
  return AUDIT_LEVELS.indexOf(level) >= AUDIT_LEVELS.indexOf(min);
}

/** The user of an event (authentication.k8s.io/v1 UserInfo; empty for a request that failed authentication). */
export interface AuditUser {
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

/** An audit.k8s.io/v1 Event. */
export interface AuditEvent {
  kind: 'Event';
  apiVersion: 'audit.k8s.io/v1';
  level: AuditLevel;
  auditID: string;
  stage: AuditStage;
  requestURI: string;
  verb: string;
  user: AuditUser;
  impersonatedUser?: AuditUser;
  sourceIPs: string[];
  userAgent?: string;
  objectRef?: {
    resource?: string;
    namespace?: string;
    name?: string;
    uid?: string;
    apiGroup?: string;
    apiVersion?: string;
    resourceVersion?: string;
    subresource?: string;
  };
  responseStatus?: { metadata: Record<string, never>; status?: string; reason?: string; code: number };
  requestObject?: unknown;
  responseObject?: unknown;
  requestReceivedTimestamp: string;
  stageTimestamp: string;
  annotations?: Record<string, string>;
}

/** What the policy is asked about: the request's authorization attributes (user absent when authentication failed). */
export interface AuditAttributes {
  user?: UserInfo;
  verb: string;
  isResourceRequest: boolean;
  path: string;
  apiGroup: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
}

/** The policy's answer for one request. */
export interface AuditRequestConfig {
  level: AuditLevel;
  omitStages: ReadonlySet<AuditStage>;
  omitManagedFields: boolean;
}

/** Where audit events go. */
export interface AuditSink {
  /** False when nothing is recorded: the filter then builds no events at all. */
  readonly enabled: boolean;
  /** The level and the stages the policy records for a request. */
  configFor(attrs: AuditAttributes): AuditRequestConfig;
  /**
   * Writes one event. Never blocks the event loop; throws only where the sink is strict and the
   * event could not be written (the filter then fails the request). A sink that must hear back
   * before the request goes on (a blocking audit webhook) returns a promise: the filter waits
   * for RequestReceived's, where a rejection fails the request like a throw, and a whole answer
   * waits for its ResponseComplete's before it leaves (which never rejects).
   */
  record(event: AuditEvent): Promise<void> | void;
}

/** Injection token of the audit sink. */
export const AUDIT_SINK = Symbol.for('kapi.AuditSink');

const NOTHING: AuditRequestConfig = Object.freeze({ level: 'None', omitStages: new Set<AuditStage>(), omitManagedFields: false });

/** The sink of a server without audit logging. */
export const NO_AUDIT: AuditSink = { enabled: false, configFor: () => NOTHING, record: () => undefined };
