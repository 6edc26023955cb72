import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Quantity, type KubeObject } from '@app/apimachinery';
import type { KindDeclaration, KindRegistry } from '@app/registry';
import { openLocalStorage, type MvccStorage } from '@app/storage';
import { sharedCopyHolders } from '../pipeline/collection-reader.js';
import type { StoreFactory } from '../tokens.js';
import { countedView, nextQuotaStatus, ResourceQuotaControllerRunner } from './resource-quota.controller.js';

const quota = (status?: Record<string, unknown>) => ({
  metadata: { name: 'q' },
  spec: { hard: { pods: '2', 'requests.cpu': '1' } },
  ...(status ? { status } : {}),
});
const used = (pods: number) =>
  new Map([
    ['pods', Quantity.fromInt(pods)],
    ['requests.cpu', Quantity.fromMilli(500)],
  ]);

describe('resourcequota controller status', () => {
  it('copies spec.hard and writes the computed usage of a new quota', () => {
    expect(nextQuotaStatus(quota(), used(1))).toEqual({ hard: { pods: '2', 'requests.cpu': '1' }, used: { pods: '1', 'requests.cpu': '500m' } });
    expect(nextQuotaStatus(quota({}), used(0))).toEqual({ hard: { pods: '2', 'requests.cpu': '1' }, used: { pods: '0', 'requests.cpu': '500m' } });
  });

  it('writes nothing when status already says it, and again when usage or hard changed', () => {
    const current = { hard: { pods: '2', 'requests.cpu': '1' }, used: { pods: '1', 'requests.cpu': '500m' } };
    expect(nextQuotaStatus(quota(current), used(1))).toBeUndefined();
    expect(nextQuotaStatus(quota(current), used(0))).toEqual({ hard: current.hard, used: { pods: '0', 'requests.cpu': '500m' } });
    expect(nextQuotaStatus(quota({ ...current, hard: { pods: '3', 'requests.cpu': '1' } }), used(1))).toEqual(current);
  });
});

describe('resourcequota controller copies', () => {
  const QUOTAS = { group: '', version: 'v1', plural: 'resourcequotas', namespaced: true } as KindDeclaration;
  const WIDGETS = { group: 'example.com', version: 'v1', plural: 'widgets', namespaced: true } as KindDeclaration;
  let dir: string;
  let storage: MvccStorage;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'quota-controller-'));
    storage = (await openLocalStorage({ dataDir: dir, compactionIntervalMs: 0 })).storage;
  });
  afterEach(async () => {
    await storage.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('counts a custom resource from a copy, and drops the copy once the resource is no longer served', async () => {
    const served = [QUOTAS, WIDGETS];
    const registry = {
      lookup: (group: string, _version: string, plural: string) => served.find((d) => d.group === group && d.plural === plural),
      all: () => served,
    } as unknown as KindRegistry;
    const quota = { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { namespace: 'ns', name: 'q' }, spec: { hard: { 'count/widgets.example.com': '5' } } };
    const written: KubeObject[] = [];
    const stores = {
      storeFor: () => ({
        get: async () => structuredClone(quota),
        update: async (_ns: string, _name: string, obj: KubeObject) => {
          written.push(obj);
          return obj;
        },
      }),
    } as unknown as StoreFactory;
    for (const n of ['w1', 'w2']) {
      await storage.create(`/registry/example.com/widgets/ns/${n}`, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { namespace: 'ns', name: n } });
    }
    const controller = new ResourceQuotaControllerRunner(registry, storage, stores);
    const recount = (controller as unknown as { process(key: string): Promise<void> }).process.bind(controller);
    controller.start();
    try {
      await recount('ns/q');
      expect(written.at(-1)?.status).toEqual({ hard: { 'count/widgets.example.com': '5' }, used: { 'count/widgets.example.com': '2' } });
      expect(sharedCopyHolders(storage, WIDGETS, countedView)).toBe(1);
      // The CRD goes: the next recount gives its copy back.
      served.splice(served.indexOf(WIDGETS), 1);
      await recount('ns/q');
      expect(sharedCopyHolders(storage, WIDGETS, countedView)).toBe(0);
      // Served again: a new copy counts it.
      served.push(WIDGETS);
      await storage.create('/registry/example.com/widgets/ns/w3', { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { namespace: 'ns', name: 'w3' } });
      await recount('ns/q');
      expect(written.at(-1)?.status).toEqual({ hard: { 'count/widgets.example.com': '5' }, used: { 'count/widgets.example.com': '3' } });
      expect(sharedCopyHolders(storage, WIDGETS, countedView)).toBe(1);
    } finally {
      controller.stop();
    }
    expect(sharedCopyHolders(storage, WIDGETS, countedView)).toBe(0);
  });
});
