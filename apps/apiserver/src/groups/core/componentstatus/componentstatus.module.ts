/**
 * Provides core/v1 componentstatuses as its own module, because its answers need this node's
 * storage health (the storage backend's readiness checks: the store is open and, for the built-in
 * store, a Raft leader is heard; for external etcd, etcd answers) while the core group's other
 * kinds are plain data. The kind is
 * a plain value (the registry collects kinds while the storage may still be opening), reading
 * the health through a reference the module fills in once the node exists.
 */
import { Inject, Injectable, Module, type OnModuleInit } from '@nestjs/common';
import { ApiKinds } from '../../api-group.js';
import type { StorageBackend } from '../../../storage/storage.backend.js';
import { STORAGE_BACKEND } from '../../../tokens.js';
import { componentStatusKind } from './componentstatus.kind.js';

/** Where componentstatuses reads the storage health; 'storage not open' until the node is known. */
const health: { check: () => string | undefined } = { check: () => 'storage not open' };

/** Points the health reference at the node's storage check. */
@Injectable()
export class ComponentStatusHealth implements OnModuleInit {
  constructor(@Inject(STORAGE_BACKEND) private readonly backend: StorageBackend) {}

  onModuleInit(): void {
    health.check = () => {
      for (const c of this.backend.readyz) {
        const why = c.check();
        if (why !== undefined) return why;
      }
      return undefined;
    };
  }
}

/** The componentstatuses kind of the core group. */
@Module({
  providers: [
    { provide: Symbol('kapi.ApiKinds:core/componentstatuses'), useValue: new ApiKinds('', [componentStatusKind(() => health.check())]) },
    ComponentStatusHealth,
  ],
})
export class ComponentStatusModule {}
