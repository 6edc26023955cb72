import { buildOpenAPIV2Document, defineSchema, keepZeroMismatches, objectRootSchema, resolveSchema } from '@app/apimachinery';
import { protobufKindProblems, servedKinds } from './groups.check.js';

describe('served kinds and protobuf', () => {
  it('finds the kinds of every group module', async () => {
    const kinds = (await servedKinds()).map((d) => `${d.group}/${d.kind}`);
    expect(kinds).toEqual(expect.arrayContaining(['/Namespace', '/ConfigMap', 'coordination.k8s.io/Lease']));
  });

  it('every served kind has a protobuf message whose fields match its schema', async () => {
    expect(protobufKindProblems(await servedKinds())).toEqual([]);
  });

  it('publishes every served kind in one OpenAPI v2 document (one schema per definition name)', async () => {
    const kinds = (await servedKinds()).map((d) => ({ ...d, subresources: { status: Boolean(d.subresources?.status) } }));
    const doc = buildOpenAPIV2Document(kinds) as { definitions: Record<string, unknown> };
    expect(Object.keys(doc.definitions)).toEqual(expect.arrayContaining(['io.k8s.api.core.v1.PersistentVolumeSpec', 'io.k8s.api.core.v1.ObjectReference']));
  });

  it('KEEP_ZERO names only scalar fields of loaded messages', () => {
    expect(keepZeroMismatches()).toEqual([]);
  });

  it('reports a kind without a message, a missing message, and fields on one side only', async () => {
    const cm = (await servedKinds()).find((d) => d.kind === 'ConfigMap')!;
    const schema = defineSchema(
      'test.Drifted',
      objectRootSchema({ group: '', version: 'v1', kind: 'ConfigMap' }, 'drifted', {
        data: { type: 'object', additionalProperties: { type: 'string' } },
        immutable: { type: 'string' },
        extra: { type: 'string' },
      }),
    );
    const problems = protobufKindProblems([
      { ...cm, protobufMessage: undefined },
      { ...cm, protobufMessage: 'k8s.io.api.core.v1.Nope' },
      { ...cm, schema },
    ]);
    expect(problems).toEqual([
      'core/v1 ConfigMap: no protobufMessage',
      'core/v1 ConfigMap: no message k8s.io.api.core.v1.Nope in proto/',
      'core/v1 ConfigMap: k8s.io.api.core.v1.ConfigMap.extra: in the schema, not in message k8s.io.api.core.v1.ConfigMap',
      'core/v1 ConfigMap: k8s.io.api.core.v1.ConfigMap.immutable: bool but schema type string',
      'core/v1 ConfigMap: k8s.io.api.core.v1.ConfigMap.binaryData: in message k8s.io.api.core.v1.ConfigMap, not in the schema',
    ]);
  });

  it('compares nested messages: a spec field missing from the schema is reported', async () => {
    const lease = (await servedKinds()).find((d) => d.kind === 'Lease')!;
    const resolved = resolveSchema(lease.schema.properties!.spec!);
    const { renewTime: _dropped, ...rest } = resolved.properties!;
    const schema = { ...lease.schema, properties: { ...lease.schema.properties, spec: { ...resolved, properties: rest } } };
    expect(protobufKindProblems([{ ...lease, schema }])).toEqual([
      'coordination.k8s.io/v1 Lease: k8s.io.api.coordination.v1.Lease.spec.renewTime: in message k8s.io.api.coordination.v1.LeaseSpec, not in the schema',
    ]);
  });
});
