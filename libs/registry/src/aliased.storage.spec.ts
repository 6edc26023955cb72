import type { KubeObject } from '@app/apimachinery';
import type { StorageEvent } from '@app/storage';
import { aliasedStorage } from './aliased.storage.js';
import { FakeStorage } from './storage.fake.js';

/** A toy alias: served objects carry `text`, stored ones `body`. */
const ALIAS = {
  servedPrefix: '/registry/new.example/notes/',
  storedPrefix: '/registry/core/notes/',
  toStored: ({ text, ...o }: KubeObject) => ({ ...o, apiVersion: 'v1', body: text }),
  toServed: ({ body, ...o }: KubeObject) => ({ ...o, apiVersion: 'new.example/v1', text: body }),
};
const note = (name: string, text: string): KubeObject => ({ apiVersion: 'new.example/v1', kind: 'Note', metadata: { name, namespace: 'ns' }, text });
const SERVED = '/registry/new.example/notes/ns/';
const STORED = '/registry/core/notes/ns/';

describe('aliasedStorage', () => {
  it('stores under the other resource, converted, and serves it back', async () => {
    const inner = new FakeStorage([]);
    const s = aliasedStorage(inner, ALIAS);
    const created = await s.create(`${SERVED}a`, note('a', 'hello'));
    expect(created).toMatchObject({ apiVersion: 'new.example/v1', text: 'hello' });
    expect(await inner.get(`${STORED}a`, { mode: 'MostRecent' })).toMatchObject({ apiVersion: 'v1', body: 'hello' });
    expect(await s.get(`${SERVED}a`, { mode: 'MostRecent' })).toMatchObject({ text: 'hello' });
    const updated = await s.guaranteedUpdate(`${SERVED}a`, (cur) => ({ ...cur, text: `${String(cur.text)}!` }));
    expect(updated.object).toMatchObject({ text: 'hello!' });
    expect(await inner.get(`${STORED}a`, { mode: 'MostRecent' })).toMatchObject({ body: 'hello!' });
    expect(s.storageKey!(`${SERVED}a`)).toBe(`${STORED}a`);
  });

  it('lists with the predicate on served objects and continue keys in the served range', async () => {
    const inner = new FakeStorage([]);
    const s = aliasedStorage(inner, ALIAS);
    for (const [n, t] of [
      ['a', 'x'],
      ['b', 'y'],
      ['c', 'x'],
    ] as const)
      await inner.create(`${STORED}${n}`, { apiVersion: 'v1', kind: 'Note', metadata: { name: n, namespace: 'ns' }, body: t });
    const page = await s.list(SERVED, { consistency: { mode: 'MostRecent' }, limit: 1, predicate: (o) => o.text === 'x' });
    expect(page.items.map((o) => o.metadata.name)).toEqual(['a']);
    expect(page.continueAfterKey).toBe(`${SERVED}a`);
    const next = await s.list(SERVED, { consistency: { mode: 'MostRecent' }, startAfterKey: page.continueAfterKey, predicate: (o) => o.text === 'x' });
    expect(next.items.map((o) => [o.metadata.name, o.text])).toEqual([['c', 'x']]);
    expect((await s.list(SERVED, { consistency: { mode: 'MostRecent' }, key: `${SERVED}b` })).items.map((o) => o.text)).toEqual(['y']);
  });

  it("watches the other resource's writes, with served keys and objects", async () => {
    const inner = new FakeStorage([]);
    const s = aliasedStorage(inner, ALIAS);
    const events: StorageEvent[] = [];
    s.watch({ key: SERVED, recursive: true, afterRevision: 0 }, { event: (e) => events.push(e), error: () => undefined });
    await inner.create(`${STORED}a`, { apiVersion: 'v1', kind: 'Note', metadata: { name: 'a', namespace: 'ns' }, body: 'from core' });
    await s.delete(`${SERVED}a`);
    expect(events.map((e) => [e.type, e.key, e.object.text])).toEqual([
      ['ADDED', `${SERVED}a`, 'from core'],
      ['DELETED', `${SERVED}a`, 'from core'],
    ]);
  });
});
