/**
 * The AUDIT_SINK provider: the policy of `--audit-policy-file` and the log of
 * `--audit-log-path`. As in kube-apiserver, both are needed for anything to be recorded: a log
 * without a policy records nothing (a warning at start says so), and a policy without a log has
 * nowhere to write. The log is opened at start (a path that cannot be opened stops the start)
 * and flushed and closed at shutdown.
 */
import type { OnApplicationShutdown } from '@nestjs/common';
import type { ServerConfig } from '../config/flags.js';
import type { ApiMetrics } from '../observability/metrics.js';
import { flagStartError } from '../pipeline/authentication-method.js';
import { NO_AUDIT, type AuditAttributes, type AuditEvent, type AuditRequestConfig, type AuditSink } from '../pipeline/audit.port.js';
import { AuditLogWriter, AUDIT_LOG_FORMATS, AUDIT_LOG_MODES, type AuditLogOptions } from './audit.log.js';
import { evaluateAuditPolicy, loadAuditPolicy, type AuditPolicy } from './audit.policy.js';

/** The log options of the `--audit-log-*` flags (checked by config/flags.ts). */
export function auditLogOptions(cfg: ServerConfig): AuditLogOptions | undefined {
  const raw = cfg.raw;
  const path = raw['audit-log-path'];
  if (path === undefined || path === '') return undefined;
  const int = (flag: string) => Number(raw[flag] ?? 0);
  return {
    path,
    format: (raw['audit-log-format'] ?? 'json') as (typeof AUDIT_LOG_FORMATS)[number],
    mode: (raw['audit-log-mode'] ?? 'blocking') as (typeof AUDIT_LOG_MODES)[number],
    maxAgeDays: int('audit-log-maxage'),
    maxBackups: int('audit-log-maxbackup'),
    maxSizeMB: int('audit-log-maxsize'),
    compress: raw['audit-log-compress'] === 'true',
  };
}

/** Audit events to a log file under a policy. */
export class PolicyAuditSink implements AuditSink, OnApplicationShutdown {
  readonly enabled = true;
  private readonly strict: boolean;

  constructor(
    private readonly policy: AuditPolicy,
    private readonly log: AuditLogWriter,
    private readonly metrics?: ApiMetrics,
  ) {
    this.strict = log.opts.mode === 'blocking-strict';
  }

  configFor(attrs: AuditAttributes): AuditRequestConfig {
    return evaluateAuditPolicy(this.policy, attrs);
  }

  record(event: AuditEvent): void {
    const dropped = this.log.dropped;
    try {
      this.log.write(event);
    } catch (e) {
      this.metrics?.auditErrors.inc({ plugin: 'log' });
      process.stderr.write(`audit: cannot write to ${this.log.opts.path}: ${(e as Error).message}\n`);
      // blocking-strict: a request whose arrival cannot be recorded is not served.
      if (this.strict && event.stage === 'RequestReceived') throw e;
      return;
    }
    if (this.log.dropped !== dropped) this.metrics?.auditErrors.inc({ plugin: 'log' });
    else this.metrics?.auditEvents.inc();
  }

  /** Waits until queued events are written (batch mode). */
  flush(): Promise<void> {
    return this.log.flush();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.log.close();
  }
}

/** The sink the flags ask for: NO_AUDIT unless both a policy and a log are given. */
export function auditSinkFor(cfg: ServerConfig, metrics?: ApiMetrics): AuditSink {
  const file = cfg.raw['audit-policy-file'];
  const opts = auditLogOptions(cfg);
  if (!file) {
    if (opts) process.stderr.write(`${cfg.name}: --audit-log-path is set without --audit-policy-file: no audit events are recorded\n`);
    return NO_AUDIT;
  }
  let policy: AuditPolicy;
  try {
    policy = loadAuditPolicy(file);
  } catch (e) {
    throw flagStartError(cfg, 'audit-policy-file', e);
  }
  if (!opts) return NO_AUDIT;
  const log = new AuditLogWriter(opts);
  try {
    log.open();
  } catch (e) {
    throw flagStartError(cfg, 'audit-log-path', e);
  }
  return new PolicyAuditSink(policy, log, metrics);
}
