/**
 * The kinds and their stores: the KindRegistry (filled from every group module's `ApiKinds`
 * provider), the machinery and wire-codec ports, and one GenericStore per kind on the chosen
 * storage and admission chain.
 */
import { Global, Inject, Injectable, Module } from '@nestjs/common';
import { DiscoveryModule, DiscoveryService } from '@nestjs/core';
import { GenericStore, KindRegistry, type Admission, type KindDeclaration, type Machinery } from '@app/registry';
import type { Storage } from '@app/storage';
import { ApiKinds } from '../groups/api-group.js';
import { ADMISSION, MACHINERY, SERVER_CONFIG, STORAGE, STORES, WIRE_CODECS, type StoreFactory } from '../tokens.js';
import { FlagError, type ServerConfig } from '../config/flags.js';
import { parseRuntimeConfig, resourceEnabled, unknownRuntimeConfigKeys } from '../config/runtime-config.js';
import { createMachinery, createWireCodecs } from '../wiring/machinery.js';

/**
 * The registry of the kinds the imported group modules provide, in module order, keeping those
 * `--runtime-config` enables (config/runtime-config.ts): a kind left out is absent from
 * discovery, OpenAPI and the routes. A key naming no declared group-version or resource stops
 * the start, as in kube-apiserver.
 */
export function collectKinds(discovery: DiscoveryService, cfg?: ServerConfig): KindRegistry {
  const registry = new KindRegistry();
  const rc = parseRuntimeConfig(cfg?.raw['runtime-config']);
  const declared: KindDeclaration[] = [];
  for (const wrapper of discovery.getProviders()) {
    const v = wrapper.instance as unknown;
    if (v instanceof ApiKinds) declared.push(...v.kinds);
  }
  const unknown = unknownRuntimeConfigKeys(rc, declared);
  if (unknown.length) throw new FlagError(`--runtime-config: unknown api groups or resources ${unknown.join(',')}`);
  for (const k of declared) if (resourceEnabled(rc, k.group, k.version, k.plural)) registry.register(k);
  return registry;
}

/** One GenericStore per kind, created on first use and kept. */
@Injectable()
export class GenericStores implements StoreFactory {
  private readonly stores = new Map<KindDeclaration, GenericStore>();

  constructor(
    @Inject(STORAGE) private readonly storage: Storage,
    @Inject(MACHINERY) private readonly machinery: Machinery,
    @Inject(ADMISSION) private readonly admission: Admission,
  ) {}

  storeFor(decl: KindDeclaration): GenericStore {
    let s = this.stores.get(decl);
    if (!s) {
      s = new GenericStore(decl, { storage: this.storage, machinery: this.machinery, admission: this.admission });
      this.stores.set(decl, s);
    }
    return s;
  }
}

/** Global module of the registry, the ports of the generic store, and the stores. */
@Global()
@Module({
  imports: [DiscoveryModule],
  providers: [
    { provide: KindRegistry, useFactory: collectKinds, inject: [DiscoveryService, SERVER_CONFIG] },
    { provide: MACHINERY, useFactory: createMachinery },
    { provide: WIRE_CODECS, useFactory: createWireCodecs, inject: [KindRegistry] },
    { provide: STORES, useClass: GenericStores },
  ],
  exports: [KindRegistry, MACHINERY, WIRE_CODECS, STORES],
})
export class RegistryModule {}
