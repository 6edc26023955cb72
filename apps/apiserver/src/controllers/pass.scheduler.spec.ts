import { jest } from '@jest/globals';
import { PassScheduler } from './pass.scheduler.js';

const turn = () => new Promise<void>((r) => setImmediate(r));
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !cond(); i++) await sleep(2);
  expect(cond()).toBe(true);
}

/** A pass whose runs are counted and which can be held open. */
function counted(result: () => Promise<boolean | void> = async () => undefined) {
  const state = { runs: 0, concurrent: 0, maxConcurrent: 0 };
  const pass = async () => {
    state.runs++;
    state.concurrent++;
    state.maxConcurrent = Math.max(state.maxConcurrent, state.concurrent);
    try {
      return await result();
    } finally {
      state.concurrent--;
    }
  };
  return { state, pass };
}

describe('PassScheduler', () => {
  it('runs one pass for a burst of changes', async () => {
    const { state, pass } = counted();
    const s = new PassScheduler('t', pass);
    s.start();
    for (let i = 0; i < 10; i++) s.schedule();
    await turn();
    await turn();
    expect(state.runs).toBe(1);
    s.stop();
  });

  it('runs again once after changes that came during a pass, never two at once', async () => {
    let release: () => void = () => undefined;
    const { state, pass } = counted(() => new Promise<void>((r) => (release = r)));
    const s = new PassScheduler('t', pass);
    s.start();
    s.schedule();
    await turn();
    expect(state.runs).toBe(1);
    s.schedule();
    s.schedule();
    await turn();
    expect(state.runs).toBe(1);
    release();
    await turn();
    await turn();
    expect(state.runs).toBe(2);
    release();
    await turn();
    await turn();
    expect(state.runs).toBe(2);
    expect(state.maxConcurrent).toBe(1);
    s.stop();
  });

  it('retries a failed pass after retryMs, and a pass that reports work left', async () => {
    const write = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      let outcome: 'fail' | 'pending' | 'done' = 'fail';
      const { state, pass } = counted(async () => {
        if (outcome === 'fail') throw new Error('store unavailable');
        return outcome === 'pending';
      });
      const s = new PassScheduler('t', pass, 20);
      s.start();
      s.schedule();
      await turn();
      await turn();
      expect(state.runs).toBe(1);
      expect(write).toHaveBeenCalledWith('t: store unavailable; retrying\n');
      // The retry is 20 ms away: each outcome is set before the run that reads it.
      outcome = 'pending';
      await until(() => state.runs === 2);
      outcome = 'done';
      await until(() => state.runs === 3);
      await sleep(60);
      expect(state.runs).toBe(3);
      s.stop();
    } finally {
      write.mockRestore();
    }
  });

  it('starts nothing before start() or after stop(), and a stop cancels a retry', async () => {
    const { state, pass } = counted(async () => true);
    const s = new PassScheduler('t', pass, 20);
    s.schedule();
    await turn();
    expect(state.runs).toBe(0);
    s.start();
    s.schedule();
    await turn();
    await turn();
    expect(state.runs).toBe(1);
    s.stop();
    await sleep(60);
    s.schedule();
    await turn();
    expect(state.runs).toBe(1);
  });
});
