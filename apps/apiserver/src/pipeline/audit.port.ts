/**
 * The audit port of the request pipeline. The audit filter gives every request an audit ID
 * (answered in the `Audit-Id` header, as kube-apiserver does) and hands the sink one event when
 * the request arrives and one when its answer is complete. No sink is configured in this build
 * (`--audit-*` flags are refused at start), so the events go nowhere; the filter's place in the
 * order is fixed here so a policy-driven sink can be added without moving anything.
 */
import type { UserInfo } from '@app/auth';

/** The parts of an audit.k8s.io/v1 Event the pipeline knows. */
export interface AuditEvent {
  auditID: string;
  stage: 'RequestReceived' | 'ResponseComplete';
  requestURI: string;
  verb: string;
  user: UserInfo;
  impersonatedUser?: UserInfo;
  sourceIPs: string[];
  userAgent?: string;
  objectRef?: { resource: string; namespace?: string; name?: string; apiGroup?: string; apiVersion?: string; subresource?: string };
  responseStatus?: { code: number };
  requestReceivedTimestamp: string;
  stageTimestamp: string;
}

/** Where audit events go. Must not throw and must not block the request. */
export interface AuditSink {
  /** False when nothing is recorded: the filter then builds no events at all. */
  readonly enabled: boolean;
  record(event: AuditEvent): void;
}

/** Injection token of the audit sink. */
export const AUDIT_SINK = Symbol.for('kapi.AuditSink');

/** The sink of a server without audit logging. */
export const NO_AUDIT: AuditSink = { enabled: false, record: () => undefined };
