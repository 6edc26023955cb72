import { EventLoopMonitor } from './eventloop.monitor.js';

describe('EventLoopMonitor', () => {
  let now = 0;
  let tick: (() => void) | undefined;
  const make = () =>
    new EventLoopMonitor({
      boundMs: 1000,
      intervalMs: 100,
      now: () => now,
      setInterval: (fn) => {
        tick = fn;
        return {};
      },
      clearInterval: () => (tick = undefined),
    });
  const fire = (at: number) => {
    now = at;
    tick!();
  };

  it('passes while the timer fires on time, and fails before it is started', () => {
    now = 0;
    const m = make();
    expect(m.check()).toBe('event loop monitor not running');
    m.start();
    fire(100);
    fire(205);
    expect(m.check()).toBeUndefined();
  });

  it('fails while a stall past the bound is under way, and right after it, then recovers', () => {
    now = 0;
    const m = make();
    m.start();
    fire(100);
    now = 1300; // no firing for 1.2 s: a stall of 1.1 s beyond the interval
    expect(m.check()).toBe('event loop blocked for 1100 ms (bound 1000 ms)');
    fire(1300);
    expect(m.check()).toBe('event loop blocked for 1100 ms (bound 1000 ms)');
    fire(1400);
    expect(m.check()).toBeUndefined();
    m.stop();
    expect(tick).toBeUndefined();
  });

  it('a stall within the bound passes', () => {
    now = 0;
    const m = make();
    m.start();
    fire(900);
    expect(m.check()).toBeUndefined();
  });
});
