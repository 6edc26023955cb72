/**
 * NamespaceLifecycle as a provider: the plugin of @app/admission reading namespaces through the
 * node's storage (a local read first, a Most Recent read to confirm a miss).
 */
import { Inject, Injectable } from '@nestjs/common';
import { NamespaceLifecycle } from '@app/admission';
import { KindRegistry, objectKey, type KindDeclaration } from '@app/registry';
import type { Storage } from '@app/storage';
import { STORAGE } from '../tokens.js';
import { AdmissionPlugin } from './admission.plugin.js';

/** The NamespaceLifecycle plugin, first in the chain. */
@AdmissionPlugin({ name: 'NamespaceLifecycle', order: 100 })
@Injectable()
export class NamespaceLifecyclePlugin extends NamespaceLifecycle {
  constructor(@Inject(STORAGE) storage: Storage, registry: KindRegistry) {
    const nsDecl = (): KindDeclaration => registry.lookup('', 'v1', 'namespaces') as KindDeclaration;
    super((name, fresh) => storage.get(objectKey(nsDecl(), '', name), fresh ? { mode: 'MostRecent' } : { mode: 'Any' }));
  }
}
