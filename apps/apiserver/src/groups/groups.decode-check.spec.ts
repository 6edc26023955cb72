/**
 * decodeProblem (libs/apimachinery schema.decode-check.ts) against the schemas of the served
 * kinds: a fully populated object of every kind decodes, and a field of the wrong type, a
 * `[]byte` field that is not base64 or a Time that does not parse is refused with Go's message.
 */
import { decodeProblem } from '@app/apimachinery';
import type { KindDeclaration } from '@app/registry';
// The protobuf codec's test data (one fully populated object of every kind) is not part of the
// library's API; this spec borrows it as independent examples of real objects.
// eslint-disable-next-line no-restricted-imports
import { everyKind } from '../../../../libs/apimachinery/src/protobuf/protobuf.fixtures.js';
import { servedKinds } from './groups.check.js';

const apiVersionOf = (d: KindDeclaration): string => (d.group ? `${d.group}/${d.version}` : d.version);

describe('decodeProblem on the served kinds', () => {
  let kinds: KindDeclaration[] = [];
  const kind = (k: string): KindDeclaration => kinds.find((d) => d.kind === k && d.group === '')!;
  beforeAll(async () => {
    kinds = await servedKinds();
  });

  it('finds nothing in a fully populated object of every served kind that has one', () => {
    let checked = 0;
    for (const d of kinds) {
      for (const obj of everyKind.filter((o) => o.kind === d.kind && o.apiVersion === apiVersionOf(d))) {
        expect([d.kind, decodeProblem(obj, d.schema, d.kind)]).toEqual([d.kind, undefined]);
        checked++;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(20);
  });

  it("names a field of the wrong type as Go's decoder does", () => {
    const cm = kind('ConfigMap');
    const meta = { name: 'x', namespace: 'default' };
    const problem = (o: Record<string, unknown>): string | undefined =>
      decodeProblem({ apiVersion: 'v1', kind: 'ConfigMap', metadata: meta, ...o }, cm.schema, 'ConfigMap');
    expect(problem({ data: { a: 'b' }, binaryData: { c: 'aGk=' }, immutable: true })).toBeUndefined();
    expect(problem({ data: 5 })).toBe('json: cannot unmarshal number into Go struct field ConfigMap.data of type map[string]string');
    expect(problem({ data: { a: 1 } })).toBe('json: cannot unmarshal number into Go struct field ConfigMap.data of type string');
    expect(problem({ immutable: 'yes' })).toBe('json: cannot unmarshal string into Go struct field ConfigMap.immutable of type bool');
    expect(problem({ metadata: { ...meta, labels: 'x' } })).toBe(
      'json: cannot unmarshal string into Go struct field ObjectMeta.metadata.labels of type map[string]string',
    );
    expect(problem({ metadata: { ...meta, generation: 1.5 } })).toBe(
      'json: cannot unmarshal number 1.5 into Go struct field ObjectMeta.metadata.generation of type int64',
    );
    expect(problem({ binaryData: { c: 'not base64!' } })).toBe('illegal base64 data at input byte 3');
    expect(problem({ metadata: { ...meta, creationTimestamp: 'yesterday' } })).toMatch(/^parsing time "yesterday" as "2006-01-02T15:04:05Z07:00"/);
    // null is the zero value, and unknown fields are ignored by a decoder.
    expect(problem({ data: null, unknownField: 5, metadata: { ...meta, labels: null } })).toBeUndefined();
  });

  it('takes a Quantity as a string or any number, and an IntOrString as a string or an int32', () => {
    const pod = kind('Pod');
    const withCpu = (cpu: unknown) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p' },
      spec: { containers: [{ name: 'c', resources: { limits: { cpu } } }] },
    });
    expect(decodeProblem(withCpu('500m'), pod.schema, 'Pod')).toBeUndefined();
    expect(decodeProblem(withCpu(1.5), pod.schema, 'Pod')).toBeUndefined();
    expect(decodeProblem(withCpu(true), pod.schema, 'Pod')).toBe("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
    const svc = kind('Service');
    const withTarget = (targetPort: unknown) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name: 's' }, spec: { ports: [{ port: 80, targetPort }] } });
    expect(decodeProblem(withTarget('http'), svc.schema, 'Service')).toBeUndefined();
    expect(decodeProblem(withTarget(8080), svc.schema, 'Service')).toBeUndefined();
    expect(decodeProblem(withTarget(true), svc.schema, 'Service')).toBe(
      'json: cannot unmarshal bool into Go struct field ServicePort.spec.ports.targetPort of type int32',
    );
    expect(decodeProblem(withTarget(80.5), svc.schema, 'Service')).toBe(
      'json: cannot unmarshal number 80.5 into Go struct field ServicePort.spec.ports.targetPort of type int32',
    );
  });

  it('walks lists and nested structs by their Go type names', () => {
    const pod = kind('Pod');
    const base = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } };
    expect(decodeProblem({ ...base, spec: { containers: [{ name: 'c', image: 'i' }] } }, pod.schema, 'Pod')).toBeUndefined();
    expect(decodeProblem({ ...base, spec: { containers: [{ name: 'c' }, { name: 7 }] } }, pod.schema, 'Pod')).toBe(
      'json: cannot unmarshal number into Go struct field Container.spec.containers.name of type string',
    );
    expect(decodeProblem({ ...base, spec: { containers: {} } }, pod.schema, 'Pod')).toBe(
      'json: cannot unmarshal object into Go struct field PodSpec.spec.containers of type []v1.Container',
    );
    expect(decodeProblem({ ...base, spec: { containers: [{ name: 'c', ports: [{ containerPort: 3000000000 }] }] } }, pod.schema, 'Pod')).toBe(
      'json: cannot unmarshal number 3000000000 into Go struct field ContainerPort.spec.containers.ports.containerPort of type int32',
    );
  });
});
