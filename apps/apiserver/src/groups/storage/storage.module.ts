/**
 * The storage.k8s.io API group (`/apis/storage.k8s.io/v1`). A kind is one folder here;
 * STORAGE_KINDS is the one list of the group's kinds. Schemas and rules shared by the kinds sit
 * in storage.schemas.ts and storage.validation.ts; the Volume source rules are core's
 * (core/volume), shared with PersistentVolume and Pod.
 */
import { Module } from '@nestjs/common';
import type { KindDeclaration } from '@app/registry';
import { apiKinds } from '../api-group.js';
import { csiDriverKind } from './csidriver/csidriver.kind.js';
import { csiNodeKind } from './csinode/csinode.kind.js';
import { csiStorageCapacityKind } from './csistoragecapacity/csistoragecapacity.kind.js';
import { storageClassKind } from './storageclass/storageclass.kind.js';
import { volumeAttachmentKind } from './volumeattachment/volumeattachment.kind.js';

/** The storage.k8s.io/v1 kinds. */
export const STORAGE_KINDS: readonly KindDeclaration[] = [storageClassKind, volumeAttachmentKind, csiDriverKind, csiNodeKind, csiStorageCapacityKind];

/** Provides the storage.k8s.io/v1 kinds. */
@Module({ providers: [apiKinds('storage.k8s.io', STORAGE_KINDS)] })
export class StorageGroupModule {}
