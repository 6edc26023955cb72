/**
 * The LeaseLock of controller election on this server's own Lease store (docs/cluster.md
 * "Controller election"): the elector reads and writes coordination.k8s.io/v1 Lease
 * kube-system/kube-controller-manager through the same registry path as any client, so every
 * write is a Raft write with a resourceVersion precondition and reads are Most Recent.
 */
import { PRIVILEGED_GROUP } from '@app/auth';
import type { LeaseLock, LeaseRecord } from '@app/controllers';
import type { GenericStore } from '@app/registry';
import type { KubeObject } from '@app/apimachinery';

const ctx = () => ({
  user: { username: 'system:kube-controller-manager', groups: [PRIVILEGED_GROUP] },
  dryRun: false,
  warnings: [] as string[],
  now: () => new Date(),
});

/** A LeaseLock on Lease `ns/name` of `store` (the leases store). */
export function leaseLockFor(store: GenericStore, ns: string, name: string): LeaseLock {
  const object = (record: LeaseRecord, resourceVersion?: string): KubeObject => ({
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name, namespace: ns, ...(resourceVersion ? { resourceVersion } : {}) },
    spec: { ...record },
  });
  return {
    async get() {
      let o: KubeObject;
      try {
        o = await store.get(ns, name);
      } catch (e) {
        if ((e as { code?: number }).code === 404) return undefined;
        throw e;
      }
      const s = (o.spec ?? {}) as Partial<LeaseRecord>;
      return {
        record: {
          holderIdentity: s.holderIdentity ?? '',
          leaseDurationSeconds: s.leaseDurationSeconds ?? 0,
          acquireTime: s.acquireTime ?? '',
          renewTime: s.renewTime ?? '',
          leaseTransitions: s.leaseTransitions ?? 0,
        },
        resourceVersion: String(o.metadata.resourceVersion ?? ''),
      };
    },
    async create(record) {
      await store.create(ns, object(record), { ctx: ctx(), fieldValidation: 'Strict', fieldManager: 'kube-controller-manager' });
    },
    async update(record, resourceVersion) {
      await store.update(ns, name, object(record, resourceVersion), { ctx: ctx(), fieldValidation: 'Strict', fieldManager: 'kube-controller-manager' });
    },
  };
}
