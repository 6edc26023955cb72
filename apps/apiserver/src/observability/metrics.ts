/**
 * Prometheus metrics (/metrics), named as kube-apiserver names them so existing dashboards work.
 */
import { activeDiskFaults, storageDisk } from '@app/level';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** The server's metric registry and instruments. */
export class ApiMetrics {
  readonly registry = new Registry();
  readonly requests = new Counter({
    name: 'apiserver_request_total',
    help: 'Counter of apiserver requests broken out for each verb, group, version, resource, subresource, scope and HTTP response code.',
    labelNames: ['verb', 'group', 'version', 'resource', 'subresource', 'scope', 'code'] as const,
    registers: [this.registry],
  });
  readonly duration = new Histogram({
    name: 'apiserver_request_duration_seconds',
    help: 'Response latency distribution in seconds for each verb, group, version, resource, subresource and scope.',
    labelNames: ['verb', 'group', 'version', 'resource', 'subresource', 'scope'] as const,
    buckets: [0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60],
    registers: [this.registry],
  });

  /** 1 for each deprecated API that has been requested (conventions.md "Versioning"). */
  readonly deprecatedApis = new Gauge({
    name: 'apiserver_requested_deprecated_apis',
    help: 'Gauge of deprecated APIs that have been requested, broken out by API group, version, resource, subresource, and removed_release.',
    labelNames: ['group', 'version', 'resource', 'subresource', 'removed_release'] as const,
    registers: [this.registry],
  });

  /** Where aggregator_unavailable_apiservice reads the APIServices (set by the aggregation layer). */
  apiServicesSource: (() => Iterable<{ name: string; available: boolean }>) | undefined;
  /** 1 for each APIService whose Available condition is not True, 0 for the others (kube-aggregator's gauge). */
  /** Audit events written (kube's apiserver_audit_event_total). */
  readonly auditEvents = new Counter({
    name: 'apiserver_audit_event_total',
    help: 'Audit events handed to the audit log.',
    registers: [this.registry],
  });
  /** Audit events that could not be written or were dropped (kube's apiserver_audit_error_total). */
  readonly auditErrors = new Counter({
    name: 'apiserver_audit_error_total',
    help: 'Audit events lost: not written, or dropped from a full batch buffer, by backend (plugin).',
    labelNames: ['plugin'] as const,
    registers: [this.registry],
  });
  readonly unavailableApiServices = new Gauge({
    name: 'aggregator_unavailable_apiservice',
    help: 'Whether each APIService is marked unavailable (1) or available (0), by APIService name.',
    labelNames: ['name'] as const,
    registers: [this.registry],
    collect: () => {
      this.unavailableApiServices.reset();
      for (const a of this.apiServicesSource?.() ?? []) this.unavailableApiServices.set({ name: a.name }, a.available ? 0 : 1);
    },
  });

  /** Where apiserver_current_inflight_requests reads its values (set by the server). */
  inflightSource: ((kind: 'readOnly' | 'mutating') => number) | undefined;
  readonly inflight = new Gauge({
    name: 'apiserver_current_inflight_requests',
    help: 'API requests being served now under the in-flight limits, per request kind (readOnly, mutating).',
    labelNames: ['request_kind'] as const,
    registers: [this.registry],
    collect: () => {
      const src = this.inflightSource;
      if (!src) return;
      for (const kind of ['readOnly', 'mutating'] as const) this.inflight.set({ request_kind: kind }, src(kind));
    },
  });
  readonly dropped = new Counter({
    name: 'apiserver_dropped_requests_total',
    help: 'API requests refused with 429 TooManyRequests because an in-flight limit was reached, per request kind.',
    labelNames: ['request_kind'] as const,
    registers: [this.registry],
  });

  /** Requests an admission webhook refused or could not be called for (conventions.md "Metrics"). */
  readonly webhookRejections = new Counter({
    name: 'apiserver_admission_webhook_rejection_count',
    help: 'Admission webhook rejections, by webhook name, operation, admission type (admit or validating), error type and HTTP code of the rejection.',
    labelNames: ['name', 'operation', 'type', 'error_type', 'rejection_code'] as const,
    registers: [this.registry],
  });

  /** The garbage collector running on this node, if any (controllers/builtin.controllers.ts). */
  garbageCollectorSource: (() => { readonly processedRevision: number; readonly itemsProcessed: number } | undefined) | undefined;
  readonly gcProcessedRevision = new Gauge({
    name: 'kapi_garbage_collector_processed_revision',
    help: 'Storage revision up to which the garbage collector on this node has applied every event and finished the work it caused (0 where it does not run).',
    registers: [this.registry],
    collect: () => {
      this.gcProcessedRevision.set(this.garbageCollectorSource?.()?.processedRevision ?? 0);
    },
  });
  readonly gcItems = new Counter({
    name: 'kapi_garbage_collector_items_processed_total',
    help: 'Work items (attempts, retries included) the garbage collector on this node has handled since it started leading.',
    registers: [this.registry],
    collect: () => {
      this.gcItems.reset();
      this.gcItems.inc(this.garbageCollectorSource?.()?.itemsProcessed ?? 0);
    },
  });

  /** 1 while a storage write waits for space (docs/disk-faults.md "Full disk"). */
  readonly diskFull = new Gauge({
    name: 'kapi_storage_disk_full',
    help: 'Whether a storage write of this node is waiting for disk space (1) or not (0).',
    registers: [this.registry],
    collect: () => {
      this.diskFull.set(storageDisk.full ? 1 : 0);
    },
  });
  readonly diskFullRetries = new Counter({
    name: 'kapi_storage_disk_full_retries_total',
    help: 'Storage writes tried again after the disk refused them for lack of space.',
    registers: [this.registry],
    collect: () => {
      this.diskFullRetries.reset();
      this.diskFullRetries.inc(storageDisk.retries);
    },
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
    const faults = activeDiskFaults();
    // Test mode only (--test-disk-faults): what the switch injected, so a test sees its fault hit.
    if (faults) {
      const injected = new Counter({
        name: 'kapi_test_disk_faults_injected_total',
        help: 'Disk faults injected by the test-only --test-disk-faults switch, per kind.',
        labelNames: ['fault'] as const,
        registers: [this.registry],
        collect: () => {
          injected.reset();
          for (const [fault, n] of faults.injected) injected.inc({ fault }, n);
        },
      });
    }
  }
}
