import { encodeProtobuf, ProtobufCodecError } from '@app/apimachinery';
import { KindRegistry } from '@app/registry';
import { CORE_KINDS } from '../groups/core/core.module.js';
import { createWireCodecs, registryProtobufKinds } from './machinery.js';

function coreRegistry(): KindRegistry {
  const r = new KindRegistry();
  for (const k of CORE_KINDS) r.register(k);
  return r;
}

describe('protobuf kinds from the registry', () => {
  it("names a served kind's message and its List's, and knows the served group versions", () => {
    const kinds = registryProtobufKinds(coreRegistry());
    expect(kinds.messageFor('v1', 'ConfigMap')).toBe('k8s.io.api.core.v1.ConfigMap');
    expect(kinds.messageFor('v1', 'ConfigMapList')).toBe('k8s.io.api.core.v1.ConfigMapList');
    expect(kinds.messageFor('v1', 'Widget')).toBeUndefined();
    expect(kinds.messageFor('coordination.k8s.io/v1', 'Lease')).toBeUndefined();
    expect(kinds.servesGroupVersion('v1')).toBe(true);
    expect(kinds.servesGroupVersion('coordination.k8s.io/v1')).toBe(false);
  });

  it('decodes request bodies of registered kinds only: another kind is 415 though proto/ defines it', () => {
    const codecs = createWireCodecs(coreRegistry());
    const cm = encodeProtobuf({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: 'b' } }, 'k8s.io.api.core.v1.ConfigMap');
    expect(codecs.decodeProtobuf(cm).object).toEqual({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: 'b' } });
    const lease = encodeProtobuf({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'l' } }, 'k8s.io.api.coordination.v1.Lease');
    let err: unknown;
    try {
      codecs.decodeProtobuf(lease);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ProtobufCodecError);
    expect((err as ProtobufCodecError).code).toBe(415);
  });
});
