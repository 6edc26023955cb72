/**
 * Checks over the declarations of every group module: each served kind names a protobuf message
 * (and its List) that proto/ defines, and that message has the same fields as the kind's schema.
 * A kind missing here would otherwise surface as a 415 on the first protobuf body. The same
 * holds for the kinds REST subresources take (TokenRequest).
 */
import { readdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { protobufRoot, protobufSchemaMismatches } from '@app/apimachinery';
import type { KindDeclaration } from '@app/registry';

/** Every declaration exported by every group module (groups/<group>/<group>.module.ts). */
export async function servedKinds(): Promise<KindDeclaration[]> {
  const here = dirname(fileURLToPath(import.meta.url));
  const out: KindDeclaration[] = [];
  for (const group of readdirSync(here, { withFileTypes: true })) {
    if (!group.isDirectory()) continue;
    const mod = (await import(`./${group.name}/${group.name}.module.js`)) as Record<string, unknown>;
    for (const v of Object.values(mod)) {
      if (Array.isArray(v)) out.push(...(v as KindDeclaration[]).filter((d) => d && typeof d === 'object' && 'kind' in d && 'schema' in d));
    }
  }
  return out;
}

function defined(messageName: string): boolean {
  try {
    protobufRoot().lookupType(messageName);
    return true;
  } catch {
    return false;
  }
}

/**
 * Built-in kinds served as JSON only, each with its reason. CustomResourceDefinition: its
 * JSONSchemaProps carries raw JSON values (default, enum, example) in protobuf, and the clients
 * that write definitions (kubectl apply, helm, client libraries) send JSON.
 */
export const JSON_ONLY_KINDS: ReadonlySet<string> = new Set(['apiextensions.k8s.io/v1 CustomResourceDefinition']);

/** Every protobuf inconsistency of `decls`, one line each; empty when all agree. */
export function protobufKindProblems(decls: readonly KindDeclaration[]): string[] {
  const out: string[] = [];
  for (const d of decls) {
    const id = `${d.group || 'core'}/${d.version} ${d.kind}`;
    if (!d.protobufMessage && JSON_ONLY_KINDS.has(id)) continue;
    if (!d.protobufMessage) {
      out.push(`${id}: no protobufMessage`);
      continue;
    }
    if (!defined(d.protobufMessage)) {
      out.push(`${id}: no message ${d.protobufMessage} in proto/`);
      continue;
    }
    // A REST-only kind is never listed, so it has no list message (the review APIs).
    if (!d.rest && !defined(`${d.protobufMessage}List`)) out.push(`${id}: no list message ${d.protobufMessage}List in proto/`);
    for (const m of protobufSchemaMismatches(d.protobufMessage, d.schema)) out.push(`${id}: ${m}`);
  }
  // The kinds REST subresources take (TokenRequest): a message and a schema that agree.
  for (const d of decls) {
    for (const [name, sub] of Object.entries(d.subresources ?? {})) {
      if (!sub.rest) continue;
      const id = `${d.group || 'core'}/${d.version} ${d.kind}/${name} (${sub.kind.group || 'core'}/${sub.kind.version} ${sub.kind.kind})`;
      if (!sub.kind.protobufMessage || !sub.kind.schema) {
        out.push(`${id}: no protobufMessage and schema`);
        continue;
      }
      if (!defined(sub.kind.protobufMessage)) {
        out.push(`${id}: no message ${sub.kind.protobufMessage} in proto/`);
        continue;
      }
      for (const m of protobufSchemaMismatches(sub.kind.protobufMessage, sub.kind.schema)) out.push(`${id}: ${m}`);
    }
  }
  return out;
}
