/**
 * Seeded pseudo-random source for the simulation and for the core's injected randomness
 * (mulberry32: a 32-bit state, full period, fast; quality is ample for fault injection).
 * Same seed, same sequence, on every platform.
 */
export class SimRandom {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** Uniform float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Uniform integer in [lo, hi] (inclusive). */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  /** True with probability p. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  /** A random element of a non-empty array. */
  pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.next() * xs.length)]!;
  }

  /** A derived independent source (for per-node randomness). */
  fork(): SimRandom {
    return new SimRandom(Math.floor(this.next() * 4294967296) ^ 0x9e3779b9);
  }
}
