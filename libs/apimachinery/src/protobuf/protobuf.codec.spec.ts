import { readFileSync } from 'node:fs';
import {
  JsonObject,
  PROTOBUF_MAGIC,
  ProtobufCodecError,
  decodeMessage,
  decodeProtobuf,
  decodeValue,
  decodeWatchEventFrames,
  encodeMessage,
  encodeProtobuf,
  encodeValue,
  encodeWatchEventFrame,
  isProtobufMediaType,
  messageNameFor,
  protobufRoot,
  type ProtobufKinds,
} from './protobuf.codec.js';
import { configMap, enc, everyKind, kinds, messageOf, PACKAGES } from './protobuf.fixtures.js';

const META = 'k8s.io.apimachinery.pkg.apis.meta.v1';

function fixture(name: string): Uint8Array {
  return readFileSync(new URL(`./fixtures/${name}.bin`, import.meta.url));
}

function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('hex');
}

function roundTrip(obj: JsonObject): JsonObject {
  return decodeProtobuf(enc(obj), kinds).object;
}

/**
 * What a round trip must give back: list items carry no apiVersion/kind in protobuf (the list's
 * envelope names the kind), exactly as items of a Kubernetes JSON list response.
 */
function withoutItemTypeMeta(obj: JsonObject): JsonObject {
  if (!Array.isArray(obj.items)) return obj;
  return {
    ...obj,
    items: obj.items.map((item) => {
      const { apiVersion: _a, kind: _k, ...rest } = item as JsonObject;
      return rest;
    }),
  };
}

function codeOf(fn: () => unknown): number | undefined {
  try {
    fn();
  } catch (e) {
    if (e instanceof ProtobufCodecError) return e.code;
    throw e;
  }
  return undefined;
}

describe('kubectl 1.32 request bodies (captured fixtures)', () => {
  // Captured from `kubectl` v1.32.4 against a recording server; see fixtures/README.md.
  const expected: Record<string, JsonObject> = {
    'configmap-literal': { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm1' }, data: { a: 'b', c: 'd' } },
    'configmap-binary': {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'cm2' },
      data: { k: 'v' },
      binaryData: { bin: 'AAH/' },
    },
    'secret-generic': { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's1' }, data: { k: 'dg==' }, type: 'Opaque' },
    namespace: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n1' }, spec: {}, status: {} },
    serviceaccount: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'sa1' } },
    'tokenrequest-default': {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      metadata: {},
      spec: {},
      status: { token: '' },
    },
    'tokenrequest-bound': {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      metadata: {},
      spec: {
        audiences: ['api'],
        expirationSeconds: 3600,
        boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'p1', uid: 'uid-1' },
      },
      status: { token: '' },
    },
    selfsubjectreview: {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'SelfSubjectReview',
      metadata: {},
      status: { userInfo: {} },
    },
    'ssar-get-pods': {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectAccessReview',
      metadata: {},
      spec: { resourceAttributes: { namespace: 'default', verb: 'get', resource: 'pods' } },
      status: { allowed: false },
    },
    'ssar-subresource': {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectAccessReview',
      metadata: {},
      spec: { resourceAttributes: { namespace: 'kube-system', verb: 'list', resource: 'pods', subresource: 'log' } },
      status: { allowed: false },
    },
    'ssar-nonresource': {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectAccessReview',
      metadata: {},
      spec: { nonResourceAttributes: { path: '/healthz', verb: 'get' } },
      status: { allowed: false },
    },
    selfsubjectrulesreview: {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectRulesReview',
      metadata: {},
      spec: { namespace: 'default' },
      status: { incomplete: false },
    },
  };

  it.each(Object.keys(expected))('%s decodes to the JSON kubectl meant', (name) => {
    const decoded = decodeProtobuf(fixture(name), kinds);
    expect(decoded.object).toEqual(expected[name]);
    expect(decoded.apiVersion).toBe(expected[name]!.apiVersion);
    expect(decoded.kind).toBe(expected[name]!.kind);
    // And what we decode re-encodes to the same JSON.
    expect(roundTrip(decoded.object)).toEqual(expected[name]);
  });

  it('certificate approve: the PUT .../approval body keeps the server object and adds the condition', () => {
    const { object } = decodeProtobuf(fixture('csr-approval'), kinds);
    expect(object).toMatchObject({
      apiVersion: 'certificates.k8s.io/v1',
      kind: 'CertificateSigningRequest',
      metadata: { name: 'c1', uid: 'u-1', resourceVersion: '5', creationTimestamp: '2024-01-02T03:04:05Z' },
      spec: {
        signerName: 'kubernetes.io/kube-apiserver-client',
        expirationSeconds: 3600,
        usages: ['client auth'],
        username: 'alice',
        groups: ['system:authenticated'],
        extra: { 'scopes.example': ['a', 'b'] },
      },
      status: {
        conditions: [
          {
            type: 'Approved',
            status: 'True',
            reason: 'KubectlApprove',
            message: 'This CSR was approved by kubectl certificate approve.',
          },
        ],
      },
    });
    const spec = object.spec as JsonObject;
    expect(Buffer.from(spec.request as string, 'base64').toString()).toMatch(/^-----BEGIN CERTIFICATE REQUEST-----\n/);
    const cond = (object.status as { conditions: JsonObject[] }).conditions[0]!;
    expect(cond.lastUpdateTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  });

  it('kubectl writes the envelope with empty contentEncoding/contentType, as we do', () => {
    const body = fixture('configmap-literal');
    expect(hex(body.subarray(0, 21))).toBe(hex(Buffer.from('6b3873000a0f0a0276311209436f6e6669674d6170', 'hex')));
    expect(hex(body.subarray(body.length - 4))).toBe('1a002200');
  });
});

describe('envelope', () => {
  it('matches a hand-computed vector byte for byte', () => {
    const bytes = enc({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'a' } });
    const expected = [
      '6b387300', // magic "k8s\0"
      '0a0f', // Unknown.typeMeta, 15 bytes
      '0a027631', //   apiVersion "v1"
      '12094e616d657370616365', //   kind "Namespace"
      '1205', // Unknown.raw, 5 bytes
      '0a030a0161', //   Namespace.metadata { name "a" }
      '1a00', // contentEncoding ""
      '2200', // contentType ""
    ].join('');
    expect(hex(bytes)).toBe(expected);
    expect(decodeProtobuf(bytes, kinds)).toEqual({
      apiVersion: 'v1',
      kind: 'Namespace',
      object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'a' } },
    });
  });

  it('starts with the magic bytes', () => {
    expect([...PROTOBUF_MAGIC]).toEqual([0x6b, 0x38, 0x73, 0x00]);
  });

  it('accepts an explicit message name and the protobuf contentType', () => {
    const bytes = encodeProtobuf({ apiVersion: 'v1', kind: 'ConfigMap', data: { a: 'b' } }, 'k8s.io.api.core.v1.ConfigMap');
    expect(decodeProtobuf(bytes, kinds).object).toEqual({ apiVersion: 'v1', kind: 'ConfigMap', data: { a: 'b' } });
  });
});

describe('round trips JSON -> protobuf -> JSON', () => {
  it.each(everyKind.map((o) => [`${o.apiVersion} ${o.kind}`, o] as const))('%s', (_name, obj) => {
    expect(roundTrip(obj)).toEqual(withoutItemTypeMeta(obj));
  });

  it('covers every kind and list message of the API packages loaded', () => {
    const covered = new Set(everyKind.map((o) => messageOf(o)));
    const roots: string[] = [];
    for (const pkg of Object.values(PACKAGES)) {
      const ns = protobufRoot().lookup(pkg) as unknown as { nestedArray: { name: string; fields?: Record<string, unknown> }[] };
      for (const t of ns.nestedArray) {
        // A root kind's message has ObjectMeta (or, for a List, ListMeta) as its field `metadata`.
        const meta = (t.fields?.metadata as { type?: string } | undefined)?.type;
        // PersistentVolumeClaimTemplate (an ephemeral volume's claim) and PodTemplateSpec (a
        // workload's pod template) have ObjectMeta but are no kinds.
        if (t.name === 'PersistentVolumeClaimTemplate' || t.name === 'PodTemplateSpec') continue;
        if (meta?.endsWith('v1.ObjectMeta') || meta?.endsWith('v1.ListMeta')) roots.push(`${pkg}.${t.name}`);
      }
    }
    expect(roots.length).toBeGreaterThan(20);
    for (const r of roots) expect(covered).toContain(r);
  });
});

describe('Kubernetes JSON rules', () => {
  it('drops zero values Go writes on the wire for non-pointer fields (omitempty)', () => {
    // What Go's marshaller emits for a ConfigMap named "x": every ObjectMeta string, generation 0,
    // an empty creationTimestamp message.
    const raw = encodeMessage('k8s.io.api.core.v1.ConfigMap', {});
    expect(raw.length).toBe(0);
    const goMeta = Buffer.from('0a0178' + '1200' + '1a00' + '2200' + '2a00' + '3200' + '3800' + '4200', 'hex');
    const goConfigMap = Buffer.concat([Buffer.from([0x0a, goMeta.length]), goMeta]);
    expect(decodeMessage('k8s.io.api.core.v1.ConfigMap', goConfigMap)).toEqual({ metadata: { name: 'x' } });
  });

  it('keeps an explicit false on pointer booleans and leaves unset ones absent', () => {
    expect(roundTrip({ apiVersion: 'v1', kind: 'ConfigMap', immutable: false })).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      immutable: false,
    });
    expect(roundTrip({ apiVersion: 'v1', kind: 'ConfigMap' })).toEqual({ apiVersion: 'v1', kind: 'ConfigMap' });
    expect(roundTrip({ apiVersion: 'v1', kind: 'ServiceAccount', automountServiceAccountToken: false }).automountServiceAccountToken).toBe(false);
  });

  it('keeps PriorityClass value 0 (no omitempty) and drops globalDefault false (omitempty)', () => {
    const pc = { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: 'p' }, value: 0, globalDefault: false };
    expect(roundTrip(pc)).toEqual({ apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: 'p' }, value: 0 });
  });

  it('Time drops sub-second precision, MicroTime keeps microseconds', () => {
    const out = roundTrip({
      apiVersion: 'v1',
      kind: 'Event',
      firstTimestamp: '2024-01-02T05:04:05.9+02:00',
      eventTime: '2024-01-02T03:04:05.1234567Z',
    });
    expect(out.firstTimestamp).toBe('2024-01-02T03:04:05Z');
    expect(out.eventTime).toBe('2024-01-02T03:04:05.123456Z');
  });

  it('a zero Time message is null in Go, so the field is left out', () => {
    // Go reads {seconds: 0, nanos: 0} and an empty message alike as the zero time (JSON null).
    const epoch = encodeValue(`${META}.Time`, '1970-01-01T00:00:00Z');
    expect(hex(epoch)).toBe('08001000');
    expect(decodeValue(`${META}.Time`, epoch)).toBeUndefined();
    expect(decodeValue(`${META}.Time`, new Uint8Array(0))).toBeUndefined();
    expect(decodeMessage('k8s.io.api.core.v1.Event', Buffer.from('32003a00', 'hex'))).toEqual({});
  });

  it('Time is {seconds, nanos} on the wire', () => {
    // seconds=1704164645 (varint a5 fa cd ac 06), nanos=5
    expect(hex(encodeValue(`${META}.Time`, '2024-01-02T03:04:05.000000005Z'))).toBe('08a5facdac061005');
    expect(decodeValue(`${META}.MicroTime`, Buffer.from('08a5facdac0610c0843d', 'hex'))).toBe('2024-01-02T03:04:05.001000Z');
  });

  it('Duration is int64 nanoseconds on the wire and a Go duration string in JSON', () => {
    const bytes = encodeValue(`${META}.Duration`, '1h0m0s');
    expect(hex(bytes)).toBe('0880c0e285e368'); // 3600e9
    expect(decodeValue(`${META}.Duration`, bytes)).toBe('1h0m0s');
  });

  it('IntOrString is a number or a string', () => {
    const name = 'k8s.io.apimachinery.pkg.util.intstr.IntOrString';
    expect(hex(encodeValue(name, 8080))).toBe('0800' + '10903f');
    expect(hex(encodeValue(name, 'http'))).toBe('0801' + '1a0468747470');
    // Go writes all three fields.
    expect(decodeValue(name, Buffer.from('080010903f1a00', 'hex'))).toBe(8080);
    expect(decodeValue(name, Buffer.from('080110001a0468747470', 'hex'))).toBe('http');
    expect(codeOf(() => encodeValue(name, 1.5))).toBe(400);
  });

  it('Quantity is its string', () => {
    const name = 'k8s.io.apimachinery.pkg.api.resource.Quantity';
    expect(hex(encodeValue(name, '100Mi'))).toBe('0a05' + Buffer.from('100Mi').toString('hex'));
    expect(decodeValue(name, encodeValue(name, '100Mi'))).toBe('100Mi');
  });

  it('FieldsV1 carries its JSON as bytes', () => {
    const fields = { 'f:metadata': { 'f:labels': { 'f:app': {} } } };
    const bytes = encodeValue(`${META}.FieldsV1`, fields);
    expect(Buffer.from(bytes.subarray(2)).toString()).toBe(JSON.stringify(fields));
    expect(decodeValue(`${META}.FieldsV1`, bytes)).toEqual(fields);
  });

  it('RawExtension holds embedded JSON or an embedded protobuf envelope', () => {
    const ev = decodeMessage(`${META}.WatchEvent`, encodeMessage(`${META}.WatchEvent`, { type: 'ADDED', object: { a: 1 } }));
    expect(ev).toEqual({ type: 'ADDED', object: { a: 1 } });
    const embedded = enc(configMap);
    const rawExt = Buffer.concat([Buffer.from([0x0a]), varint(embedded.length), embedded]);
    const raw = Buffer.concat([Buffer.from('0a05', 'hex'), Buffer.from('ADDED'), Buffer.from([0x12]), varint(rawExt.length), rawExt]);
    expect(decodeMessage(`${META}.WatchEvent`, raw, kinds)).toEqual({ type: 'ADDED', object: configMap });
  });

  it('map<string, ExtraValue> is a map of string arrays', () => {
    const bytes = encodeMessage('k8s.io.api.authentication.v1.UserInfo', { extra: { k: ['a', 'b'] } });
    // extra entry: key "k", value ExtraValue{items: "a", "b"}
    expect(hex(bytes)).toBe('220b0a016b12060a01610a0162');
    expect(decodeMessage('k8s.io.api.authentication.v1.UserInfo', bytes)).toEqual({ extra: { k: ['a', 'b'] } });
  });

  it('int64 fields become JS numbers', () => {
    const out = roundTrip({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { generation: 2 ** 40 } });
    expect((out.metadata as JsonObject).generation).toBe(2 ** 40);
  });
});

function varint(n: number): Buffer {
  const out: number[] = [];
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  out.push(n);
  return Buffer.from(out);
}

describe('watch frames', () => {
  it('are a 4-byte big-endian length and a WatchEvent whose object is an envelope', () => {
    const frame = encodeWatchEventFrame('ADDED', configMap, messageOf(configMap));
    const len = new DataView(frame.buffer, frame.byteOffset).getUint32(0, false);
    expect(len).toBe(frame.length - 4);
    const event = frame.subarray(4);
    // WatchEvent.type "ADDED", then field 2 (object) holding RawExtension.raw = envelope.
    expect(hex(event.subarray(0, 7))).toBe('0a05' + Buffer.from('ADDED').toString('hex'));
    const envelope = enc(configMap);
    expect(hex(event.subarray(event.length - envelope.length))).toBe(hex(envelope));
  });

  it('decode a stream split at any point', () => {
    const a = encodeWatchEventFrame('ADDED', configMap, messageOf(configMap));
    const b = encodeWatchEventFrame(
      'DELETED',
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' } },
      messageOf({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' } }),
    );
    const all = Buffer.concat([a, b]);
    const first = decodeWatchEventFrames(all.subarray(0, a.length + 3), kinds);
    expect(first.events).toEqual([{ type: 'ADDED', object: configMap }]);
    expect(first.rest.length).toBe(3);
    const second = decodeWatchEventFrames(Buffer.concat([first.rest, all.subarray(a.length + 3)]), kinds);
    expect(second.events).toEqual([{ type: 'DELETED', object: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' } } }]);
    expect(second.rest.length).toBe(0);
  });
});

describe('errors', () => {
  it('unknown kinds: 415 when decoding, 406 when encoding', () => {
    const body = encodeProtobuf({ apiVersion: 'example.com/v1', kind: 'Widget' }, 'k8s.io.api.core.v1.ConfigMap');
    expect(codeOf(() => decodeProtobuf(body, kinds))).toBe(415);
    expect(codeOf(() => encodeProtobuf({ apiVersion: 'example.com/v1', kind: 'Widget' }))).toBe(406);
    expect(codeOf(() => encodeProtobuf({ kind: 'ConfigMap' }))).toBe(406);
    const err = (() => {
      try {
        decodeProtobuf(body, kinds);
      } catch (e) {
        return e as ProtobufCodecError;
      }
      return undefined;
    })();
    expect(err?.reason).toBe('UnsupportedMediaType');
  });

  it('bad bytes are 400', () => {
    expect(codeOf(() => decodeProtobuf(Buffer.from('{"kind":"ConfigMap"}'), kinds))).toBe(400);
    expect(codeOf(() => decodeProtobuf(Uint8Array.of(0x6b, 0x38, 0x73), kinds))).toBe(400);
    const good = enc(configMap);
    expect(codeOf(() => decodeProtobuf(good.subarray(0, good.length - 10), kinds))).toBe(400);
    expect(codeOf(() => decodeProtobuf(Buffer.concat([Buffer.from(PROTOBUF_MAGIC), Buffer.from([0x0a, 0xff, 0xff])]), kinds))).toBe(400);
  });

  it('an envelope with a contentEncoding is 415', () => {
    const good = enc({ apiVersion: 'v1', kind: 'Namespace' });
    const withGzip = Buffer.concat([good.subarray(0, good.length - 4), Buffer.from('1a04677a69702200', 'hex')]);
    expect(codeOf(() => decodeProtobuf(withGzip, kinds))).toBe(415);
  });

  it('JSON values of the wrong type are 400 for messages, 500 for stored objects', () => {
    expect(codeOf(() => encodeMessage('k8s.io.api.core.v1.ConfigMap', { data: { a: 1 } }))).toBe(400);
    expect(codeOf(() => encodeMessage('k8s.io.api.core.v1.ConfigMap', { immutable: 'yes' }))).toBe(400);
    expect(codeOf(() => encodeMessage('k8s.io.api.core.v1.Event', { eventTime: 'soon' }))).toBe(400);
    expect(codeOf(() => enc({ apiVersion: 'v1', kind: 'ConfigMap', metadata: 'x' }))).toBe(500);
  });
});

describe('registry and media types', () => {
  it("maps GVKs to the served kinds' messages, and meta/v1 kinds in every served group version", () => {
    expect(messageNameFor(kinds, 'v1', 'ConfigMap')).toBe('k8s.io.api.core.v1.ConfigMap');
    expect(messageNameFor(kinds, 'v1', 'Status')).toBe(`${META}.Status`);
    expect(messageNameFor(kinds, 'meta.k8s.io/v1', 'DeleteOptions')).toBe(`${META}.DeleteOptions`);
    expect(messageNameFor(kinds, 'rbac.authorization.k8s.io/v1', 'ClusterRole')).toBe('k8s.io.api.rbac.v1.ClusterRole');
    expect(messageNameFor(kinds, 'v1', 'Widget')).toBeUndefined();
    expect(messageNameFor(kinds, 'apps/v1', 'Deployment')).toBeUndefined();
    expect(messageNameFor(kinds, 'apps/v1', 'Status')).toBeUndefined();
  });

  it('decodes only kinds the served-kinds table names: an unserved message is 415', () => {
    const lease = enc({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'l' } });
    const coreOnly: ProtobufKinds = {
      messageFor: (apiVersion, kind) => (apiVersion === 'v1' ? kinds.messageFor(apiVersion, kind) : undefined),
      servesGroupVersion: (apiVersion) => apiVersion === 'v1',
    };
    expect(decodeProtobuf(lease, kinds).object).toEqual({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'l' } });
    expect(codeOf(() => decodeProtobuf(lease, coreOnly))).toBe(415);
  });

  it('recognises the protobuf media type with parameters', () => {
    expect(isProtobufMediaType('application/vnd.kubernetes.protobuf')).toBe(true);
    expect(isProtobufMediaType('application/vnd.kubernetes.protobuf;stream=watch')).toBe(true);
    expect(isProtobufMediaType('application/json')).toBe(false);
    expect(isProtobufMediaType(undefined)).toBe(false);
  });
});
