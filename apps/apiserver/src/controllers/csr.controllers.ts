/**
 * The certificate controllers of kube-controller-manager, run on the node holding the
 * controller Lease (so exactly one node of a cluster approves, signs and cleans):
 * - csrapproving: approves node-agent client requests (signer kube-apiserver-client-kubelet)
 *   whose requestor may create `certificatesigningrequests/selfnodeclient` (its own node name)
 *   or `.../nodeclient`, asked of the authorizer as a SubjectAccessReview would.
 * - csrsigning: signs approved requests of the four built-in signers with the cluster CA
 *   (--cluster-signing-cert-file/--cluster-signing-key-file, default the PKI's ca.crt/ca.key)
 *   for min(--cluster-signing-duration, expirationSeconds), or sets Failed.
 * - csrcleaner: deletes finished and stale requests (csr.logic.ts cleanupReason), every
 *   KAPI_CSR_CLEANER_INTERVAL_MS (an hour).
 * The decisions are csr.logic.ts; here are the watch, the writes and the timers.
 */
import { readFile } from 'node:fs/promises';
import * as path from 'node:path';
import { Inject, Injectable } from '@nestjs/common';
import type { KubeObject } from '@app/apimachinery';
import { AUTHORIZER, type Authorizer } from '@app/authz';
import { loadSigningAuthority, pkiPaths, type SigningAuthority } from '@app/pki';
import { KindRegistry, type GenericStore, type KindDeclaration, type RequestContext } from '@app/registry';
import type { WatchHandle } from '@app/storage';
import { WorkQueue } from '@app/controllers';
import { envInt } from '../config/env.js';
import { clusterSigningDurationMs, type ServerConfig } from '../config/flags.js';
import { SERVER_CONFIG, STORES, type StoreFactory } from '../tokens.js';
import { ManagedController, type ControllerRunner } from './controller.runner.js';
import { cleanupReason, decideSigning, nodeClientApprovalNeeds, SIGNER_VALIDATION_FAILURE } from './csr.logic.js';

/** Writes as the in-process controller manager (a loopback client, as the aggregation controller). */
const controllerCtx = (name: string): RequestContext => ({
  user: { username: `system:serviceaccount:kube-system:${name}`, groups: ['system:masters', 'system:authenticated'] },
  dryRun: false,
  warnings: [],
  now: () => new Date(),
});

const log = (name: string, message: string): void => {
  process.stderr.write(`${name}: ${message}\n`);
};

/**
 * Calls `handle` for every CSR at start and after each change (list, then watch from the
 * list's revision; a failed watch lists again after a second). Work is deduplicated by name;
 * a failed `handle` is retried after 1 s, doubling up to a minute while it keeps failing.
 */
class CsrLoop {
  private watch: WatchHandle | undefined;
  private retry: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly queue = new WorkQueue(() => this.drain());
  private draining = false;
  /** Consecutive failures per key: the retry delay doubles from 1 s up to a minute. */
  private readonly failures = new Map<string, number>();

  constructor(
    private readonly name: string,
    private readonly store: GenericStore,
    private readonly handle: (csr: KubeObject) => Promise<void>,
  ) {}

  start(): void {
    void this.resync();
  }

  stop(): void {
    this.stopped = true;
    this.watch?.stop();
    if (this.retry) clearTimeout(this.retry);
  }

  private async resync(): Promise<void> {
    if (this.stopped) return;
    try {
      const list = await this.store.list('', {});
      for (const o of list.items) this.queue.add(o.metadata.name ?? '');
      this.watch = this.store.watch('', undefined, Number(list.resourceVersion), undefined, {
        event: (e) => {
          if (e.type === 'ADDED' || e.type === 'MODIFIED') this.queue.add(String((e.object as KubeObject).metadata?.name ?? ''));
        },
        error: () => this.again(),
      });
    } catch (e) {
      log(this.name, `listing certificatesigningrequests: ${(e as Error).message}; retrying`);
      this.again();
    }
  }

  private again(): void {
    this.watch?.stop();
    this.watch = undefined;
    if (this.stopped) return;
    this.retry = setTimeout(() => void this.resync(), 1000);
    this.retry.unref();
  }

  private drain(): void {
    if (this.draining) return;
    this.draining = true;
    setImmediate(async () => {
      for (let key = this.queue.take(); key !== undefined && !this.stopped; key = this.queue.take()) {
        try {
          const csr = await this.store.get('', key).catch((e: { code?: number }) => {
            if (e.code === 404) return undefined;
            throw e;
          });
          if (csr) await this.handle(csr);
          this.failures.delete(key);
        } catch (e) {
          // A conflict with a concurrent write, or storage briefly unavailable: try again soon.
          const n = (this.failures.get(key) ?? 0) + 1;
          this.failures.set(key, n);
          const delay = Math.min(1000 * 2 ** (n - 1), 60_000);
          log(this.name, `${key}: ${(e as Error).message}; retrying in ${delay} ms`);
          const t = setTimeout(() => {
            if (!this.stopped) this.queue.add(key);
          }, delay);
          t.unref();
        } finally {
          this.queue.done(key);
        }
      }
      this.draining = false;
    });
  }
}

/** The CSR kind's store. */
function csrStore(registry: KindRegistry, stores: StoreFactory): GenericStore {
  return stores.storeFor(registry.lookup('certificates.k8s.io', 'v1', 'certificatesigningrequests') as KindDeclaration);
}

/** Appends a condition and writes it through `subresource` (approval or status). */
async function addCondition(store: GenericStore, csr: KubeObject, subresource: string, condition: Record<string, string>, manager: string): Promise<void> {
  const status = { ...((csr.status as Record<string, unknown> | undefined) ?? {}) };
  const conditions = Array.isArray(status.conditions) ? [...(status.conditions as object[])] : [];
  conditions.push(condition);
  const next: KubeObject = { ...csr, status: { ...status, conditions } };
  await store.update('', csr.metadata.name ?? '', next, { ctx: controllerCtx(manager), fieldValidation: 'Ignore', fieldManager: manager, subresource });
}

/** csrapproving: automatic approval of node-agent client requests. */
@ManagedController({ name: 'csrapproving' })
@Injectable()
export class CsrApprovingRunner implements ControllerRunner {
  private loop: CsrLoop | undefined;

  constructor(
    private readonly registry: KindRegistry,
    @Inject(STORES) private readonly stores: StoreFactory,
    @Inject(AUTHORIZER) private readonly authorizer: Authorizer,
  ) {}

  start(): void {
    const store = csrStore(this.registry, this.stores);
    this.loop = new CsrLoop('csrapproving', store, async (csr) => {
      const needs = await nodeClientApprovalNeeds(csr);
      if (!needs) return;
      const spec = csr.spec as { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
      const d = await this.authorizer.authorize({
        user: { username: spec.username ?? '', uid: spec.uid, groups: spec.groups ?? [], extra: spec.extra },
        verb: 'create',
        isResourceRequest: true,
        path: '',
        apiGroup: 'certificates.k8s.io',
        apiVersion: '*',
        resource: 'certificatesigningrequests',
        subresource: needs,
        namespace: '',
        name: '',
      });
      if (d.decision !== 'Allow') return;
      await addCondition(
        store,
        csr,
        'approval',
        { type: 'Approved', status: 'True', reason: 'AutoApproved', message: 'Auto approving kubelet client certificate after SubjectAccessReview.' },
        'csrapproving',
      );
    });
    this.loop.start();
  }

  stop(): void {
    this.loop?.stop();
    this.loop = undefined;
  }
}

/** csrsigning: the four built-in signers. */
@ManagedController({ name: 'csrsigning' })
@Injectable()
export class CsrSigningRunner implements ControllerRunner {
  private loop: CsrLoop | undefined;

  constructor(
    private readonly registry: KindRegistry,
    @Inject(STORES) private readonly stores: StoreFactory,
    @Inject(SERVER_CONFIG) private readonly cfg: ServerConfig,
  ) {}

  /** The signing CA of the flags, else the cluster CA of the node's PKI. */
  private async authority(): Promise<SigningAuthority> {
    const pki = pkiPaths(this.cfg.pkiDir ?? path.join(this.cfg.dataDir, 'pki'));
    const certFile = this.cfg.raw['cluster-signing-cert-file'] ?? pki.caCert;
    const keyFile = this.cfg.raw['cluster-signing-key-file'] ?? pki.caKey;
    return loadSigningAuthority(await readFile(certFile, 'utf8'), await readFile(keyFile, 'utf8'));
  }

  start(): void {
    const store = csrStore(this.registry, this.stores);
    const durationMs = clusterSigningDurationMs(this.cfg.raw);
    let ca: Promise<SigningAuthority> | undefined;
    this.loop = new CsrLoop('csrsigning', store, async (csr) => {
      // A CA that did not load (files not there yet) is read again on the next attempt.
      ca ??= this.authority().catch((e: Error) => {
        ca = undefined;
        throw new Error(`loading the signing CA: ${e.message}`);
      });
      const decision = await decideSigning(csr, await ca, durationMs, new Date());
      if (decision.action === 'skip') return;
      if (decision.action === 'fail') {
        await addCondition(
          store,
          csr,
          'status',
          { type: 'Failed', status: 'True', reason: SIGNER_VALIDATION_FAILURE, message: decision.message },
          'csrsigning',
        );
        log('csrsigning', `${csr.metadata.name ?? ''}: Failed: ${decision.message}`);
        return;
      }
      const next: KubeObject = {
        ...csr,
        status: { ...((csr.status as object | undefined) ?? {}), certificate: Buffer.from(decision.certificatePem).toString('base64') },
      };
      await store.update('', csr.metadata.name ?? '', next, {
        ctx: controllerCtx('csrsigning'),
        fieldValidation: 'Ignore',
        fieldManager: 'csrsigning',
        subresource: 'status',
      });
      log('csrsigning', `${csr.metadata.name ?? ''}: issued`);
    });
    this.loop.start();
  }

  stop(): void {
    this.loop?.stop();
    this.loop = undefined;
  }
}

/** csrcleaner: removes finished and stale requests. */
@ManagedController({ name: 'csrcleaner' })
@Injectable()
export class CsrCleanerRunner implements ControllerRunner {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly registry: KindRegistry,
    @Inject(STORES) private readonly stores: StoreFactory,
  ) {}

  start(): void {
    const store = csrStore(this.registry, this.stores);
    const pass = async (): Promise<void> => {
      const now = new Date();
      for (const csr of (await store.list('', {})).items) {
        const why = cleanupReason(csr, now);
        if (!why) continue;
        const name = csr.metadata.name ?? '';
        await store
          .delete('', name, { preconditions: { uid: csr.metadata.uid } }, controllerCtx('csrcleaner'))
          .then(() => log('csrcleaner', `deleted ${name}: ${why}`))
          .catch((e: Error) => log('csrcleaner', `deleting ${name}: ${e.message}`));
      }
    };
    const every = envInt('KAPI_CSR_CLEANER_INTERVAL_MS') ?? 3_600_000;
    const tick = (): void => {
      pass()
        .catch((e: Error) => log('csrcleaner', e.message))
        .finally(() => {
          if (this.timer !== undefined) {
            this.timer = setTimeout(tick, every);
            this.timer.unref();
          }
        });
    };
    this.timer = setTimeout(tick, 0);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
