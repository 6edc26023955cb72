/**
 * The watch filter (Kubernetes' cacheWatcher.convertToWatchEvent): with a selector, an object
 * entering the selection is ADDED, one leaving it DELETED (with its last matching content at
 * the leaving revision), one staying MODIFIED; events of objects never selected are dropped.
 */
import { NO_ADMISSION } from './admission.port.js';
import { GenericStore } from './generic.store.js';
import type { KindDeclaration, RequestContext } from './kind.types.js';
import { FakeStorage, recordingMachinery } from './storage.fake.js';
import type { WatchEventOut } from './watch.filter.js';
import type { KubeObject } from '@app/apimachinery';

const DECL: KindDeclaration = {
  group: '',
  version: 'v1',
  kind: 'ConfigMap',
  plural: 'configmaps',
  singular: 'configmap',
  namespaced: true,
  schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } as KindDeclaration['schema'],
};
const ctx = (): RequestContext => ({ user: { username: 'u', groups: [] }, dryRun: false, warnings: [], now: () => new Date() });

it('turns label changes into ADDED, MODIFIED and DELETED for a selecting watcher', async () => {
  const log: string[] = [];
  const store = new GenericStore(DECL, { storage: new FakeStorage(log), machinery: recordingMachinery(log), admission: NO_ADMISSION });
  const events: WatchEventOut[] = [];
  const { predicate } = store.selectorPredicate({ labelSelector: 'team=a' });
  const handle = store.watch('ns', undefined, 0, predicate, {
    event: (e) => events.push(e),
    error: (e) => events.push({ type: 'ERROR', object: e.toStatus() as unknown as KubeObject, revision: 0 }),
  });
  const opts = { ctx: ctx(), fieldValidation: 'Strict' as const };
  const put = async (labels: Record<string, string>, data: string) => {
    const cur = await store.get('ns', 'x').catch(() => undefined);
    const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', labels }, data: { d: data } };
    return cur
      ? (await store.update('ns', 'x', { ...body, metadata: { ...body.metadata, resourceVersion: cur.metadata.resourceVersion } }, opts)).object
      : store.create('ns', body, opts);
  };
  await put({ team: 'b' }, '1'); // never selected: dropped
  await put({ team: 'a' }, '2'); // enters: ADDED
  await put({ team: 'a' }, '3'); // stays: MODIFIED
  const left = await put({ team: 'b' }, '4'); // leaves: DELETED with the last matching content
  await store.delete('ns', 'x', {}, ctx()); // already outside: dropped
  handle.stop();
  expect(events.map((e) => [e.type, (e.object as KubeObject).data])).toEqual([
    ['ADDED', { d: '2' }],
    ['MODIFIED', { d: '3' }],
    ['DELETED', { d: '3' }],
  ]);
  expect((events[2]!.object as KubeObject).metadata.resourceVersion).toBe(left.metadata.resourceVersion);
});
