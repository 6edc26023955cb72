import { StorageDiskState, isNoSpace, writeUntilSpace } from './level.disk-state.js';

const noSpace = () => Object.assign(new Error('IO error: /d/000005.log: No space left on device'), { code: 'LEVEL_IO_ERROR' });

describe('writeUntilSpace', () => {
  it('tells a full disk from other failures', () => {
    expect(isNoSpace(noSpace())).toBe(true);
    expect(isNoSpace(Object.assign(new Error('write failed'), { code: 'ENOSPC' }))).toBe(true);
    expect(isNoSpace(new Error('IO error: /d/000005.log: Input/output error'))).toBe(false);
    expect(isNoSpace('No space left on device')).toBe(false);
  });

  it('reopens and writes again while the disk is full, and reports the state meanwhile', async () => {
    const state = new StorageDiskState();
    const calls: string[] = [];
    let refusals = 3;
    const seen: boolean[] = [];
    await writeUntilSpace(
      async () => {
        calls.push('write');
        seen.push(state.full);
        if (refusals-- > 0) throw noSpace();
      },
      { reopen: async () => void calls.push('reopen'), closing: () => false, minDelayMs: 1, maxDelayMs: 2 },
      state,
    );
    expect(calls).toEqual(['write', 'reopen', 'write', 'reopen', 'write', 'reopen', 'write']);
    expect(seen).toEqual([false, true, true, true]);
    expect(state.full).toBe(false);
    expect(state.retries).toBe(3);
  });

  it('passes any other error on at once, and a refusal while closing', async () => {
    const state = new StorageDiskState();
    const eio = new Error('IO error: Input/output error');
    await expect(writeUntilSpace(() => Promise.reject(eio), { reopen: async () => undefined, closing: () => false }, state)).rejects.toBe(eio);
    expect(state.full).toBe(false);
    await expect(
      writeUntilSpace(() => Promise.reject(noSpace()), { reopen: async () => undefined, closing: () => true, minDelayMs: 1 }, state),
    ).rejects.toThrow(/closing while its disk is full/);
    let reopened = 0;
    await expect(
      writeUntilSpace(
        () => Promise.reject(noSpace()),
        {
          reopen: async () => {
            reopened++;
            throw eio;
          },
          closing: () => false,
          minDelayMs: 1,
        },
        state,
      ),
    ).rejects.toBe(eio);
    expect(reopened).toBe(1);
  });
});
