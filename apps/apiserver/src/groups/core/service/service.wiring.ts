/**
 * The Service ranges of this server: the allocator the Service kind's store calls around its
 * writes, and the repair loop run by the controller manager (one node at a time).
 */
import { Inject, Injectable } from '@nestjs/common';
import type { KubeObject } from '@app/apimachinery';
import { collectionPrefix } from '@app/registry';
import type { Storage } from '@app/storage';
import type { ServerConfig } from '../../../config/flags.js';
import { envInt } from '../../../config/env.js';
import { ManagedController, type ControllerRunner } from '../../../controllers/controller.runner.js';
import { SERVER_CONFIG, STORAGE } from '../../../tokens.js';
import { heldValues, ServiceAllocator, serviceAllocatorPort } from './service.allocator.js';
import { serviceKind } from './service.kind.js';
import { parseIpRange, parsePortRange, type IpRange, type ValueRange } from './service.ranges.js';
import { NODE_PORT_RANGE_KEY, SERVICE_IP_RANGE_KEY, StorageRangeStore } from './service.range-store.js';
import { ServiceRangeRepair } from './service.repair.js';

const log = (line: string): void => {
  process.stderr.write(line + '\n');
};

/** The two ranges on the node's storage, the allocator over them, and their repair. */
@Injectable()
export class ServiceRanges {
  readonly ipRange: IpRange;
  readonly portRange: ValueRange<number>;
  readonly ips: StorageRangeStore<string>;
  readonly ports: StorageRangeStore<number>;
  readonly allocator: ServiceAllocator;

  constructor(
    @Inject(STORAGE) private readonly storage: Storage,
    @Inject(SERVER_CONFIG) cfg: ServerConfig,
  ) {
    this.ipRange = parseIpRange(cfg.serviceClusterIpRange);
    this.portRange = parsePortRange(cfg.serviceNodePortRange);
    this.ips = new StorageRangeStore(storage, SERVICE_IP_RANGE_KEY, this.ipRange, async () => (await this.services()).flatMap((s) => heldValues(s).ips));
    this.ports = new StorageRangeStore(storage, NODE_PORT_RANGE_KEY, this.portRange, async () => (await this.services()).flatMap((s) => heldValues(s).ports));
    this.allocator = new ServiceAllocator({ ips: { range: this.ipRange, store: this.ips }, ports: { range: this.portRange, store: this.ports }, log });
    serviceAllocatorPort.impl = this.allocator;
  }

  /** Every stored Service, at the latest revision. */
  async services(): Promise<KubeObject[]> {
    return (await this.storage.list(collectionPrefix(serviceKind, ''), { consistency: { mode: 'MostRecent' } })).items;
  }

  /** A repair of both ranges, with its own leak counts. */
  repair(): ServiceRangeRepair {
    return new ServiceRangeRepair({
      listServices: () => this.services(),
      ips: { range: this.ipRange, store: this.ips },
      ports: { range: this.portRange, store: this.ports },
      log,
    });
  }
}

/**
 * The repair loop of the ranges (kube-apiserver runs it on every server; here the controller
 * manager runs it on the node holding the controller Lease): a round soon after start, then every
 * minute (KAPI_SERVICE_REPAIR_INTERVAL_MS), and sooner again after a round that met a conflict.
 */
@ManagedController({ name: 'service-range-repair' })
@Injectable()
export class ServiceRangeRepairRunner implements ControllerRunner {
  private timer: NodeJS.Timeout | undefined;
  private running = false;

  constructor(private readonly ranges: ServiceRanges) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    const repair = this.ranges.repair();
    const interval = envInt('KAPI_SERVICE_REPAIR_INTERVAL_MS') ?? 60_000;
    const round = async (): Promise<void> => {
      let soon: boolean;
      try {
        const r = await repair.runOnce();
        soon = r.ips.conflict || r.ports.conflict;
      } catch (e) {
        log(`service range repair: ${(e as Error).message}`);
        soon = true;
      }
      if (this.running) this.timer = setTimeout(() => void round(), soon ? Math.min(interval, 5_000) : interval);
    };
    this.timer = setTimeout(() => void round(), Math.min(interval, 1_000));
  }

  stop(): void {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
