/**
 * Min-priority queue of timed events ordered by (at, seq): events due at the same tick keep
 * insertion order, so a run is a pure function of the seed. Binary heap, O(log n) push/pop.
 */
export class EventQueue<T> {
  private readonly heap: { at: number; seq: number; value: T }[] = [];
  private seq = 0;

  push(at: number, value: T): void {
    const h = this.heap;
    h.push({ at, seq: this.seq++, value });
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.less(i, p)) break;
      [h[i], h[p]] = [h[p]!, h[i]!];
      i = p;
    }
  }

  /** Removes and returns the earliest event due at or before `now`, if any. */
  popDue(now: number): T | undefined {
    const h = this.heap;
    if (h.length === 0 || h[0]!.at > now) return undefined;
    const top = h[0]!;
    const last = h.pop()!;
    if (h.length > 0) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && this.less(l, m)) m = l;
        if (r < h.length && this.less(r, m)) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m]!, h[i]!];
        i = m;
      }
    }
    return top.value;
  }

  /** Time of the earliest event, if any. */
  peekAt(): number | undefined {
    return this.heap[0]?.at;
  }

  get size(): number {
    return this.heap.length;
  }

  private less(a: number, b: number): boolean {
    const x = this.heap[a]!;
    const y = this.heap[b]!;
    return x.at < y.at || (x.at === y.at && x.seq < y.seq);
  }
}
