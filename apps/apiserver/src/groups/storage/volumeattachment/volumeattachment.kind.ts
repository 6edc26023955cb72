/**
 * storage.k8s.io/v1 VolumeAttachment (cluster-scoped, +status): declaration and strategy.
 * kubectl's columns: NAME ATTACHER PV NODE ATTACHED AGE. DELETE answers with the object.
 * Status is the attacher's: cleared on create (attached false), written through /status.
 */
import { statusSubresource, type KindDeclaration, type Strategy } from '@app/registry';
import { VolumeAttachmentSchema } from '../storage.schemas.js';
import { validateVolumeAttachment, validateVolumeAttachmentUpdate } from '../storage.validation.js';

const spec = (o: Record<string, unknown>): Record<string, unknown> => (o.spec ?? {}) as Record<string, unknown>;

/** The VolumeAttachment strategy. */
export const volumeAttachmentStrategy: Strategy = {
  prepareForCreate(va) {
    va.status = { attached: false };
  },
  validate: (va) => validateVolumeAttachment(va),
  validateUpdate: (va, old) => validateVolumeAttachmentUpdate(va, old),
};

/** The VolumeAttachment declaration. */
export const volumeAttachmentKind: KindDeclaration = {
  group: 'storage.k8s.io',
  version: 'v1',
  kind: 'VolumeAttachment',
  plural: 'volumeattachments',
  singular: 'volumeattachment',
  namespaced: false,
  schema: VolumeAttachmentSchema,
  protobufMessage: 'k8s.io.api.storage.v1.VolumeAttachment',
  strategy: volumeAttachmentStrategy,
  subresources: { status: statusSubresource() },
  deleteReturnsObject: true,
  generation: 'none',
  tableColumns: [
    { name: 'Attacher', type: 'string', priority: 0, description: 'The driver attaching the volume', cell: (o) => String(spec(o).attacher ?? '') },
    {
      name: 'PV',
      type: 'string',
      priority: 0,
      description: 'The persistent volume attached',
      cell: (o) => String(((spec(o).source ?? {}) as Record<string, unknown>).persistentVolumeName ?? ''),
    },
    { name: 'Node', type: 'string', priority: 0, description: 'The node the volume is attached to', cell: (o) => String(spec(o).nodeName ?? '') },
    {
      name: 'Attached',
      type: 'boolean',
      priority: 0,
      description: 'Whether the volume is attached',
      cell: (o) => ((o.status ?? {}) as Record<string, unknown>).attached === true,
    },
  ],
};
