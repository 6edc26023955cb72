/**
 * The repair of the Service ranges (kube's ipallocator and portallocator controllers' Repair):
 * it compares each range's bitmap with what the stored Services hold and makes them agree.
 *
 * - A value a Service holds that the bitmap lacks is marked taken (a write that bypassed the
 *   allocator, for example through the etcd API).
 * - A value taken that no Service holds is a leak: an API server crashed between taking it and
 *   storing its Service, or a release failed. It is given back once it has been seen leaked in
 *   3 consecutive rounds, so a value taken for a create still under way is never given back.
 * - A value two Services hold, or one outside the range, is reported (the Services must be
 *   recreated; nothing can be given to either).
 *
 * Each round reads the bitmap first, then lists the Services, and writes only if the bitmap is
 * still the one it read: a value taken or given back meanwhile makes the round start over later.
 */
import type { KubeObject } from '@app/apimachinery';
import { StorageError } from '@app/storage';
import { heldValues } from './service.allocator.js';
import type { Bitmap, ValueRange } from './service.ranges.js';

/** A range as the repair sees it. */
export interface RepairableRange<V> {
  range: ValueRange<V>;
  store: {
    snapshot(): Promise<{ bits: Bitmap; version: string } | undefined>;
    replace(version: string, bits: Bitmap): Promise<void>;
  };
}

/** What one range's round found and did. */
export interface RangeRepairReport<V> {
  /** Values held by Services that were not marked taken, now marked. */
  marked: V[];
  /** Leaked values given back this round. */
  released: V[];
  /** Leaked values kept for now (seen fewer than 3 rounds). */
  leaked: V[];
  /** `written` false when the range was not written: unchanged, unused yet, or changed meanwhile. */
  written: boolean;
  conflict: boolean;
}

/** Rounds a value must be seen leaked in a row before it is given back (kube's numRepairsBeforeLeakCleanup). */
export const ROUNDS_BEFORE_RELEASE = 3;

/** The repair of both ranges. */
export class ServiceRangeRepair {
  private readonly leaks = { ips: new Map<number, number>(), ports: new Map<number, number>() };

  constructor(
    private readonly deps: {
      listServices(): Promise<KubeObject[]>;
      ips: RepairableRange<string>;
      ports: RepairableRange<number>;
      log(line: string): void;
    },
  ) {}

  /** One round over both ranges. */
  async runOnce(): Promise<{ ips: RangeRepairReport<string>; ports: RangeRepairReport<number> }> {
    const ipSnap = await this.deps.ips.store.snapshot();
    const portSnap = await this.deps.ports.store.snapshot();
    const services = await this.deps.listServices();
    const ipUse = new Map<number, string>();
    const portUse = new Map<number, string>();
    for (const svc of services) {
      const who = `${svc.metadata.namespace ?? ''}/${svc.metadata.name ?? ''}`;
      const held = heldValues(svc);
      for (const ip of held.ips) this.note(this.deps.ips.range, ip, who, ipUse, 'cluster IP');
      for (const port of held.ports) this.note(this.deps.ports.range, port, who, portUse, 'node port');
    }
    return {
      ips: await this.repair(this.deps.ips, ipSnap, ipUse, this.leaks.ips),
      ports: await this.repair(this.deps.ports, portSnap, portUse, this.leaks.ports),
    };
  }

  private note<V>(range: ValueRange<V>, value: V, who: string, use: Map<number, string>, what: string): void {
    const off = range.offsetOf(value);
    if (off === undefined) {
      this.deps.log(`service range repair: the ${what} ${String(value)} of Service ${who} is not within ${range.text}; recreate the Service`);
      return;
    }
    const other = use.get(off);
    if (other !== undefined && other !== who) {
      this.deps.log(`service range repair: the ${what} ${String(value)} is held by Services ${other} and ${who}; recreate one of them`);
      return;
    }
    use.set(off, who);
  }

  private async repair<V>(
    r: RepairableRange<V>,
    snap: { bits: Bitmap; version: string } | undefined,
    use: Map<number, string>,
    leaks: Map<number, number>,
  ): Promise<RangeRepairReport<V>> {
    const report: RangeRepairReport<V> = { marked: [], released: [], leaked: [], written: false, conflict: false };
    // Before the first allocation the bitmap does not exist; the first one builds it from the Services.
    if (!snap) return report;
    const bits = snap.bits;
    const seen = new Map<number, number>();
    for (const off of [...bits.taken()]) {
      if (use.has(off)) continue;
      const rounds = (leaks.get(off) ?? 0) + 1;
      if (rounds >= ROUNDS_BEFORE_RELEASE) {
        bits.clear(off);
        report.released.push(r.range.valueAt(off));
      } else {
        seen.set(off, rounds);
        report.leaked.push(r.range.valueAt(off));
      }
    }
    for (const off of use.keys()) {
      if (!bits.has(off)) {
        bits.set(off);
        report.marked.push(r.range.valueAt(off));
      }
    }
    if (report.marked.length === 0 && report.released.length === 0) {
      this.replaceLeaks(leaks, seen);
      return report;
    }
    try {
      await r.store.replace(snap.version, bits);
      report.written = true;
      this.replaceLeaks(leaks, seen);
      for (const v of report.marked) this.deps.log(`service range repair: ${String(v)} is held by a Service but was not taken; marked taken`);
      for (const v of report.released) this.deps.log(`service range repair: ${String(v)} was taken but no Service holds it; released`);
    } catch (e) {
      if (!(e instanceof StorageError && e.code === 'Conflict')) throw e;
      // Taken or given back meanwhile: the next round looks again (the leak counts stay).
      report.conflict = true;
    }
    return report;
  }

  private replaceLeaks(leaks: Map<number, number>, seen: Map<number, number>): void {
    leaks.clear();
    for (const [k, v] of seen) leaks.set(k, v);
  }
}
