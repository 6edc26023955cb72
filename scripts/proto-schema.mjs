// Stores the parsed Kubernetes API schema for the server to read at start: run by `npm run build`
// after the compiler, writes dist/proto/k8s-api.json (protobuf.codec.ts "ApiSchemaFile"), the
// protobufjs JSON form of proto/k8s.io/api/**/generated.proto with a digest of those files. A
// server whose proto files no longer match the digest parses them instead.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const protoDir = join(root, 'proto');
const { apiSchemaFile, API_SCHEMA_FILE } = await import(join(root, 'dist', 'libs', 'apimachinery', 'src', 'protobuf', 'protobuf.codec.js'));
const out = join(protoDir, API_SCHEMA_FILE);
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, JSON.stringify(apiSchemaFile(protoDir)));
