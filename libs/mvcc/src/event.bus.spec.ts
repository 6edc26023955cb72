import { EventBus } from './event.bus.js';
import type { MvccEvent } from './mvcc.types.js';

const ev = (revision: number): MvccEvent => ({
  type: 'put',
  key: `/k/${revision}`,
  value: { key: `/k/${revision}`, value: new Uint8Array(), createRevision: revision, modRevision: revision, version: 1 },
  revision,
});

describe('EventBus', () => {
  it('delivers in order to every listener and isolates a throwing one', () => {
    const bus = new EventBus();
    const seen: number[] = [];
    bus.subscribe(() => {
      throw new Error('bad listener');
    });
    const off = bus.subscribe((e) => seen.push(e.revision));
    bus.emit([ev(1), ev(2)]);
    expect(seen).toEqual([1, 2]);
    expect(bus.listenerErrors).toBe(2);
    off();
    bus.emit([ev(3)]);
    expect(seen).toEqual([1, 2]);
    expect(bus.size).toBe(1);
  });

  it('tells reset listeners', () => {
    const bus = new EventBus();
    let resets = 0;
    const off = bus.onReset(() => resets++);
    bus.emitReset();
    off();
    bus.emitReset();
    expect(resets).toBe(1);
  });
});
