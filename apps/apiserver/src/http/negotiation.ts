/**
 * Content negotiation (conventions: "Representations"). Request bodies are decoded by
 * Content-Type; responses are encoded in the first acceptable media type of the Accept header,
 * in the client's order of preference, as Kubernetes' negotiation does.
 */
import { Errors } from '@app/apimachinery';

/** One media range of an Accept header with its parameters (lower-cased keys). */
export interface MediaRange {
  type: string; // e.g. application/json
  params: Record<string, string>;
  q: number;
}

export const PROTOBUF = 'application/vnd.kubernetes.protobuf';
export const JSON_TYPE = 'application/json';
export const YAML_TYPE = 'application/yaml';

/** How a response is rendered. */
export type OutputFormat =
  | { kind: 'json' }
  | { kind: 'yaml' }
  | { kind: 'protobuf' }
  | { kind: 'table'; version: 'v1' | 'v1beta1' }
  /** PartialObjectMetadata (`list` false) or PartialObjectMetadataList (`list` true). */
  | { kind: 'partial'; version: 'v1' | 'v1beta1'; list: boolean };

/** Parses an Accept header; an absent or empty header means application/json. */
export function parseAccept(header: string | undefined): MediaRange[] {
  if (!header || !header.trim()) return [{ type: '*/*', params: {}, q: 1 }];
  const out: MediaRange[] = [];
  for (const clause of header.split(',')) {
    const segs = clause.split(';').map((s) => s.trim());
    const type = (segs[0] ?? '').toLowerCase();
    if (!type) continue;
    const params: Record<string, string> = {};
    let q = 1;
    for (const p of segs.slice(1)) {
      const eq = p.indexOf('=');
      if (eq < 0) continue;
      const k = p.slice(0, eq).trim().toLowerCase();
      const v = p
        .slice(eq + 1)
        .trim()
        .replace(/^"|"$/g, '');
      if (k === 'q') q = Number(v) || 0;
      else params[k] = v;
    }
    out.push({ type, params, q });
  }
  // Stable sort by q (client order preserved among equals).
  return out
    .map((m, i) => ({ m, i }))
    .sort((a, b) => b.m.q - a.m.q || a.i - b.i)
    .map((x) => x.m);
}

function isJsonLike(type: string): boolean {
  return type === JSON_TYPE || type === '*/*' || type === 'application/*';
}

/**
 * Picks the output format for an API object response. `protobufOk` says whether the kind has a
 * protobuf message. JSON is preferred when the client lists it at equal preference, because
 * clients that accept protobuf also read JSON and JSON is what we store.
 * Throws 406 NotAcceptable when nothing listed can be produced.
 */
export function negotiateOutput(accept: string | undefined, protobufOk: boolean, opts: { allowTable?: boolean } = {}): OutputFormat {
  const ranges = parseAccept(accept);
  const allowTable = opts.allowTable ?? true;
  let sawProtobuf = false;
  for (const r of ranges) {
    if (r.q <= 0) continue;
    const as = r.params['as'];
    if (as) {
      const g = r.params['g'];
      const v = r.params['v'];
      if (r.type !== JSON_TYPE || g !== 'meta.k8s.io' || (v !== 'v1' && v !== 'v1beta1')) continue;
      if (as === 'Table' && allowTable) return { kind: 'table', version: v };
      // Which of the two fits the answer is checked when encoding (406 for the other), as kube
      // negotiates first and transforms after.
      if (as === 'PartialObjectMetadata' || as === 'PartialObjectMetadataList')
        return { kind: 'partial', version: v, list: as === 'PartialObjectMetadataList' };
      continue;
    }
    if (isJsonLike(r.type)) {
      return { kind: 'json' };
    }
    if (r.type === YAML_TYPE) return { kind: 'yaml' };
    if (r.type === PROTOBUF) {
      if (protobufOk) {
        // Prefer JSON if listed later at the same q (kubectl sends "protobuf,json").
        const laterJson = ranges.some((o) => o.q === r.q && !o.params['as'] && isJsonLike(o.type));
        return laterJson ? { kind: 'json' } : { kind: 'protobuf' };
      }
      sawProtobuf = true;
      continue;
    }
  }
  void sawProtobuf;
  throw Errors.notAcceptable(protobufOk ? [JSON_TYPE, YAML_TYPE, PROTOBUF] : [JSON_TYPE, YAML_TYPE]);
}

/** Request body formats, from Content-Type. Patch types are handled by the patch verb. */
export type BodyFormat = 'json' | 'yaml' | 'protobuf' | 'merge-patch' | 'json-patch' | 'strategic-merge-patch' | 'apply-patch';

/** Maps a Content-Type header to a body format; undefined when unsupported. */
export function bodyFormatOf(contentType: string | undefined): BodyFormat | undefined {
  const t = (contentType ?? '').split(';')[0].trim().toLowerCase();
  switch (t) {
    case '':
    case JSON_TYPE:
      return 'json';
    case YAML_TYPE:
    case 'application/x-yaml':
    case 'text/yaml':
      return 'yaml';
    case PROTOBUF:
      return 'protobuf';
    case 'application/merge-patch+json':
      return 'merge-patch';
    case 'application/json-patch+json':
      return 'json-patch';
    case 'application/strategic-merge-patch+json':
      return 'strategic-merge-patch';
    case 'application/apply-patch+yaml':
    case 'application/apply-patch+cbor':
      return t === 'application/apply-patch+yaml' ? 'apply-patch' : undefined;
    default:
      return undefined;
  }
}
