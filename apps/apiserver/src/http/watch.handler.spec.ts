import { encodeEventLine } from './watch.handler.js';

describe('encodeEventLine', () => {
  it('encodes an (object, type, format) once and returns the same bytes to every watcher', () => {
    const obj = { metadata: { name: 'a', resourceVersion: '3' } };
    let builds = 0;
    const build = () => {
      builds++;
      return obj;
    };
    const first = encodeEventLine('ADDED', obj, 'json', build);
    const second = encodeEventLine('ADDED', obj, 'json', build);
    expect(second).toBe(first);
    expect(builds).toBe(1);
    expect(JSON.parse(first.toString())).toEqual({ type: 'ADDED', object: obj });
    expect(first.toString().endsWith('\n')).toBe(true);
    // Another type or format of the same object is its own encoding.
    const deleted = encodeEventLine('DELETED', obj, 'json', build);
    expect(JSON.parse(deleted.toString()).type).toBe('DELETED');
    encodeEventLine('ADDED', obj, 'partial/v1', () => ({ kind: 'PartialObjectMetadata' }));
    expect(builds).toBe(2);
  });
});

describe('encodeEventFrame', () => {
  it('encodes protobuf watch frames once per object and type, for objects, bookmarks and Status errors', async () => {
    const { decodeWatchEventFrames } = await import('@app/apimachinery');
    const { encodeEventFrame } = await import('./watch.handler.js');
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'n', resourceVersion: '5' }, data: { k: 'v' } };
    const message = 'k8s.io.api.core.v1.ConfigMap';
    const f1 = encodeEventFrame('ADDED', cm, message);
    expect(encodeEventFrame('ADDED', cm, message)).toBe(f1);
    const bookmark = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { resourceVersion: '9' } };
    const status = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'too old resource version: 1 (3)',
      reason: 'Expired',
      code: 410,
    };
    const all = Buffer.concat([f1, encodeEventFrame('BOOKMARK', bookmark, message), encodeEventFrame('ERROR', status, message)]);
    const kinds = {
      messageFor: (v: string, k: string) => (v === 'v1' && k === 'ConfigMap' ? message : undefined),
      servesGroupVersion: (v: string) => v === 'v1',
    };
    const { events, rest } = decodeWatchEventFrames(all, kinds);
    expect(rest.length).toBe(0);
    expect(events.map((e) => e.type)).toEqual(['ADDED', 'BOOKMARK', 'ERROR']);
    expect(events[0]!.object).toMatchObject({ kind: 'ConfigMap', metadata: { name: 'a', resourceVersion: '5' }, data: { k: 'v' } });
    expect(events[1]!.object).toMatchObject({ metadata: { resourceVersion: '9' } });
    expect(events[2]!.object).toMatchObject({ kind: 'Status', code: 410, reason: 'Expired' });
  });
});
