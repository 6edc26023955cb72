/**
 * The AUDIT_SINK provider: the policy of `--audit-policy-file`, and the backends its events go
 * to: the log of `--audit-log-path` and the webhook of `--audit-webhook-config-file`. As in
 * kube-apiserver, a policy and at least one backend are needed for anything to be recorded: a
 * backend without a policy records nothing (a warning at start says so). The log is opened at
 * start (a path that cannot be opened stops the start); both are flushed and closed at shutdown.
 */
import type { OnApplicationShutdown } from '@nestjs/common';
import { parseGoDuration } from '@app/apimachinery';
import { httpsJson } from '@app/auth';
import type { ServerConfig } from '../config/flags.js';
import type { ApiMetrics } from '../observability/metrics.js';
import { flagStartError, webhookTargetOf } from '../pipeline/authentication-method.js';
import { NO_AUDIT, type AuditAttributes, type AuditEvent, type AuditRequestConfig, type AuditSink } from '../pipeline/audit.port.js';
import { AuditLogWriter, AUDIT_LOG_FORMATS, AUDIT_LOG_MODES, type AuditLogOptions } from './audit.log.js';
import { evaluateAuditPolicy, loadAuditPolicy, type AuditPolicy } from './audit.policy.js';
import { AuditWebhookBackend, type AuditWebhookMode } from './audit.webhook.js';

/** kube-apiserver's defaults of the audit webhook's batch settings. */
export const AUDIT_WEBHOOK_DEFAULTS = { maxBatchSize: 400, maxWait: '30s', bufferSize: 10_000, initialBackoff: '10s' } as const;

/** The webhook backend of `--audit-webhook-config-file` (checked by config/flags.ts), or undefined. */
export function auditWebhookFor(cfg: ServerConfig, metrics?: ApiMetrics): AuditWebhookBackend | undefined {
  const raw = cfg.raw;
  const target = webhookTargetOf(cfg, 'audit-webhook-config-file');
  if (!target) return undefined;
  const { server, caPem, certPem, keyPem } = target;
  const ms = (flag: string, dflt: string) => parseGoDuration(raw[flag] ?? dflt) / 1e6;
  return new AuditWebhookBackend({
    mode: (raw['audit-webhook-mode'] ?? 'batch') as AuditWebhookMode,
    maxBatchSize: Number(raw['audit-webhook-batch-max-size'] ?? AUDIT_WEBHOOK_DEFAULTS.maxBatchSize),
    maxWaitMs: ms('audit-webhook-batch-max-wait', AUDIT_WEBHOOK_DEFAULTS.maxWait),
    bufferSize: Number(raw['audit-webhook-batch-buffer-size'] ?? AUDIT_WEBHOOK_DEFAULTS.bufferSize),
    initialBackoffMs: ms('audit-webhook-initial-backoff', AUDIT_WEBHOOK_DEFAULTS.initialBackoff),
    post: (list) => httpsJson(server, { method: 'POST', body: list, ca: caPem, cert: certPem, key: keyPem }),
    lost: (n, why) => {
      metrics?.auditErrors.inc({ plugin: 'webhook' }, n);
      process.stderr.write(`audit: ${n} event(s) lost: ${why}\n`);
    },
  });
}

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

/** Audit events to a log file and a webhook under a policy. */
export class PolicyAuditSink implements AuditSink, OnApplicationShutdown {
  readonly enabled = true;
  private readonly strict: boolean;
  private readonly webhookStrict: boolean;

  constructor(
    private readonly policy: AuditPolicy,
    private readonly log: AuditLogWriter | undefined,
    private readonly metrics?: ApiMetrics,
    private readonly webhook?: AuditWebhookBackend,
  ) {
    this.strict = log?.opts.mode === 'blocking-strict';
    this.webhookStrict = webhook?.mode === 'blocking-strict';
  }

  configFor(attrs: AuditAttributes): AuditRequestConfig {
    return evaluateAuditPolicy(this.policy, attrs);
  }

  record(event: AuditEvent): Promise<void> | undefined {
    this.metrics?.auditEvents.inc();
    let waiting: Promise<void> | undefined;
    if (this.webhook?.blocking) {
      // A blocking webhook holds the request until its arrival is recorded; blocking-strict fails
      // the request when it cannot be. The caller of a later stage may wait for it too (a whole
      // answer waits for its ResponseComplete event), but it never fails the request.
      const sent = this.webhook.send(event);
      waiting = event.stage === 'RequestReceived' && this.webhookStrict ? sent : sent.catch(() => undefined);
    } else this.webhook?.write(event);
    if (!this.log) return waiting;
    const dropped = this.log.dropped;
    try {
      this.log.write(event);
    } catch (e) {
      this.metrics?.auditErrors.inc({ plugin: 'log' });
      process.stderr.write(`audit: cannot write to ${this.log.opts.path}: ${(e as Error).message}\n`);
      // blocking-strict: a request whose arrival cannot be recorded is not served.
      if (this.strict && event.stage === 'RequestReceived') throw e;
      return waiting;
    }
    if (this.log.dropped !== dropped) this.metrics?.auditErrors.inc({ plugin: 'log' });
    return waiting;
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all([this.log?.close(), this.webhook?.close()]);
  }
}

/** The sink the flags ask for: NO_AUDIT unless a policy and a backend (log, webhook) are given. */
export function auditSinkFor(cfg: ServerConfig, metrics?: ApiMetrics): AuditSink {
  const file = cfg.raw['audit-policy-file'];
  const opts = auditLogOptions(cfg);
  const hasWebhook = !!cfg.raw['audit-webhook-config-file'];
  if (!file) {
    if (opts || hasWebhook) process.stderr.write(`${cfg.name}: an audit backend is configured without --audit-policy-file: no audit events are recorded\n`);
    return NO_AUDIT;
  }
  let policy: AuditPolicy;
  try {
    policy = loadAuditPolicy(file);
  } catch (e) {
    throw flagStartError(cfg, 'audit-policy-file', e);
  }
  if (!opts && !hasWebhook) return NO_AUDIT;
  let log: AuditLogWriter | undefined;
  if (opts) {
    log = new AuditLogWriter(opts);
    try {
      log.open();
    } catch (e) {
      throw flagStartError(cfg, 'audit-log-path', e);
    }
  }
  return new PolicyAuditSink(policy, log, metrics, auditWebhookFor(cfg, metrics));
}
