import { cpSync, mkdtempSync, rmSync, writeFileSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { apiProtoDigest, apiSchemaFile, loadApiProtos, parseApiProtos } from './protobuf.codec.js';

/** The repository's proto/ directory (this file is libs/apimachinery/src/protobuf/). */
const PROTO_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..', 'proto');

describe('the parsed API schema stored by the build', () => {
  let dir: string;
  let protoDir: string;
  let schemaPath: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'proto-schema-'));
    protoDir = join(dir, 'proto');
    cpSync(join(PROTO_DIR, 'k8s.io'), join(protoDir, 'k8s.io'), { recursive: true });
    schemaPath = join(dir, 'k8s-api.json');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('loads to the same schema as parsing the .proto files, merge markers included', () => {
    writeFileSync(schemaPath, JSON.stringify(apiSchemaFile(protoDir)));
    const { root, from } = loadApiProtos(protoDir, schemaPath);
    expect(from).toBe('schema');
    const parsed = parseApiProtos(protoDir);
    expect(root.toJSON({ keepComments: true })).toEqual(parsed.toJSON({ keepComments: true }));
    // What schemas derived from messages read (schema.proto.ts): a field's merge markers.
    const containers = root.lookupType('k8s.io.api.core.v1.PodSpec').fields['containers']!;
    expect(containers.comment).toContain('+patchMergeKey=name');
    expect(containers.resolvedType?.fullName).toBe('.k8s.io.api.core.v1.Container');
  });

  it('is ignored once a .proto file changed after the build: the files are parsed', () => {
    writeFileSync(schemaPath, JSON.stringify(apiSchemaFile(protoDir)));
    const before = apiProtoDigest(protoDir);
    const file = join(protoDir, 'k8s.io', 'api', 'core', 'v1', 'generated.proto');
    appendFileSync(file, '\nmessage AddedAfterTheBuild {\n  optional string name = 1;\n}\n');
    expect(apiProtoDigest(protoDir)).not.toBe(before);
    const { root, from } = loadApiProtos(protoDir, schemaPath);
    expect(from).toBe('proto');
    expect(root.lookupType('k8s.io.api.core.v1.AddedAfterTheBuild').fields['name']).toBeDefined();
  });

  it('is parsed from the files when the stored schema is missing or unreadable', () => {
    expect(loadApiProtos(protoDir, schemaPath).from).toBe('proto');
    writeFileSync(schemaPath, '{"digest": "');
    const { root, from } = loadApiProtos(protoDir, schemaPath);
    expect(from).toBe('proto');
    expect(root.lookupType('k8s.io.api.core.v1.Pod')).toBeDefined();
  });
});
