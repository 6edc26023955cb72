import { describe, expect, it } from '@jest/globals';
import { EnvError } from './env.js';
import { heapGrowthFlag } from './heap.js';

describe('heapGrowthFlag', () => {
  it('leaves V8 its heuristics by default', () => {
    expect(heapGrowthFlag({}, [])).toBeUndefined();
  });

  it('takes KAPI_HEAP_GROWTH_PERCENT, 0 leaving V8 its heuristics', () => {
    expect(heapGrowthFlag({ KAPI_HEAP_GROWTH_PERCENT: '250' }, [])).toBe('--heap-growing-percent=250');
    expect(heapGrowthFlag({ KAPI_HEAP_GROWTH_PERCENT: '0' }, [])).toBeUndefined();
    expect(() => heapGrowthFlag({ KAPI_HEAP_GROWTH_PERCENT: '1001' }, [])).toThrow(EnvError);
  });

  it("leaves an operator's own node flag alone, in either spelling and place", () => {
    expect(heapGrowthFlag({}, ['--heap-growing-percent=300'])).toBeUndefined();
    expect(heapGrowthFlag({}, ['--heap_growing_percent', '300'])).toBeUndefined();
    expect(heapGrowthFlag({ NODE_OPTIONS: '--max-old-space-size=4096 --heap-growing-percent=50' }, [])).toBeUndefined();
    expect(heapGrowthFlag({ KAPI_HEAP_GROWTH_PERCENT: '100', NODE_OPTIONS: '--heap-growing-percentage=50' }, [])).toBe('--heap-growing-percent=100');
  });
});
