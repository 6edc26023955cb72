import { Errors, type KubeObject } from '@app/apimachinery';
import type { RequestContext } from '@app/registry';
import { ScalePorts, scaleSubresource } from './deployment.scale.js';

const ctx: RequestContext = { user: { username: 'u', groups: [] }, dryRun: false, warnings: [], now: () => new Date() };

/**
 * A workload store whose object a concurrent writer (a controller's status write) changes
 * `raced` times between the handler's read and its write: a write with a stale resourceVersion
 * is refused with the store's Conflict.
 */
function racingStore(raced: number) {
  let stored: KubeObject = {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name: 'r', namespace: 'ns', resourceVersion: '10' },
    spec: { replicas: 2, selector: { matchLabels: { app: 'r' } } },
  };
  let rv = 10;
  const writes: string[] = [];
  const ports = new ScalePorts();
  ports.deps = {
    get: () => Promise.resolve(structuredClone(stored)),
    update: (_ns, _name, obj) => {
      if (raced > 0) {
        raced--;
        stored = { ...stored, metadata: { ...stored.metadata, resourceVersion: String(++rv) }, status: { replicas: 2 - raced } };
      }
      if (obj.metadata.resourceVersion !== stored.metadata.resourceVersion) {
        writes.push(`conflict at ${obj.metadata.resourceVersion}`);
        return Promise.reject(Errors.conflict({ group: 'apps', resource: 'replicasets' }, 'r', 'the object has been modified'));
      }
      stored = { ...obj, metadata: { ...obj.metadata, resourceVersion: String(++rv) } };
      writes.push(`written at ${obj.metadata.resourceVersion}`);
      return Promise.resolve(structuredClone(stored));
    },
  };
  const rest = scaleSubresource(ports).rest!;
  return { rest, writes, stored: () => stored };
}

const scale = (replicas: number, resourceVersion?: string): KubeObject => ({
  apiVersion: 'autoscaling/v1',
  kind: 'Scale',
  metadata: { name: 'r', ...(resourceVersion ? { resourceVersion } : {}) },
  spec: { replicas },
});

describe('the scale subresource', () => {
  it('writes a Scale without a resourceVersion over concurrent writes, on the workload as it now is', async () => {
    const s = racingStore(2);
    const answer = await s.rest.update!('ns', 'r', scale(5), ctx);
    expect(answer.spec).toEqual({ replicas: 5 });
    expect(s.writes).toEqual(['conflict at 10', 'conflict at 11', 'written at 12']);
    // The concurrent writer's change is kept.
    expect(s.stored()).toMatchObject({ spec: { replicas: 5 }, status: { replicas: 2 } });
  });

  it("leaves a conflict with the Scale's own resourceVersion to the client", async () => {
    const s = racingStore(1);
    await expect(s.rest.update!('ns', 'r', scale(5, '10'), ctx)).rejects.toMatchObject({ code: 409, reason: 'Conflict' });
    expect(s.writes).toEqual(['conflict at 10']);
  });
});
