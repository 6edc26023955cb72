import type { KubeObject } from '@app/apimachinery';
import type { StorageError, StorageEvent } from '@app/storage';
import { kindCheckedStorage } from './kind-checked.storage.js';
import { FakeStorage } from './storage.fake.js';

const cm = (name: string, data: unknown): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'ns' }, data }) as KubeObject;

describe('kindCheckedStorage', () => {
  it("judges each watch event's object once for every watcher, and ends each watch on one its decoder refuses", async () => {
    const inner = new FakeStorage([]);
    let calls = 0;
    const storage = kindCheckedStorage(inner, {
      kind: 'ConfigMap',
      group: '',
      apiVersion: 'v1',
      decodeProblem: (o) => {
        calls++;
        return typeof o.data === 'object' ? undefined : 'json: cannot unmarshal number into Go struct field ConfigMap.data of type map[string]string';
      },
    });
    const seen: { events: StorageEvent[]; errors: StorageError[] }[] = [];
    for (let i = 0; i < 3; i++) {
      const w = { events: [] as StorageEvent[], errors: [] as StorageError[] };
      seen.push(w);
      storage.watch(
        { key: '/registry/core/configmaps/ns/', recursive: true, afterRevision: 0 },
        { event: (e) => w.events.push(e), error: (e) => w.errors.push(e as StorageError) },
      );
    }
    await inner.create('/registry/core/configmaps/ns/a', cm('a', { k: 'v' }));
    expect(seen.map((w) => w.events.length)).toEqual([1, 1, 1]);
    expect(calls).toBe(1);
    await inner.create('/registry/core/configmaps/ns/b', cm('b', 5));
    expect(calls).toBe(2);
    for (const w of seen) {
      expect(w.events).toHaveLength(1);
      expect(w.errors.map((e) => [e.code, e.message])).toEqual([
        ['CorruptObject', 'object not decodable: json: cannot unmarshal number into Go struct field ConfigMap.data of type map[string]string'],
      ]);
    }
  });
});
