/**
 * YAML request bodies -> JSON values. Kubernetes converts YAML with sigs.k8s.io/yaml, which
 * is built on go-yaml v2: YAML 1.1 scalars (`yes`/`on`/`y` are booleans, `0777` is octal,
 * `1_000` is 1000), merge keys `<<`, but timestamps stay strings (go-yaml v2 keeps them as
 * strings when decoding into interface{}) and sexagesimal numbers are not numbers. Only the
 * standard tags exist: an unknown tag such as `!foo` is rejected rather than silently dropped.
 * Duplicate keys are collected (the last one wins, like go-yaml's non-strict mode) so
 * fieldValidation=Strict/Warn can report them with go-yaml's wording
 * (`line 3: key "a" already set in map`). Aliases are bounded so a "billion laughs" body
 * cannot exhaust memory.
 */
import { Document, isAlias, isMap, isScalar, isSeq, LineCounter, parseAllDocuments, type Node, type Tags } from 'yaml';

/** A body that is not valid YAML, or not representable as JSON. */
export class YamlDecodeError extends Error {
  constructor(
    message: string,
    /** 1-based position of the problem, when known. */
    readonly line?: number,
    readonly column?: number,
  ) {
    super(message);
    this.name = 'YamlDecodeError';
  }
}

/** A repeated mapping key. */
export interface YamlDuplicate {
  /** Field path of the key (`spec.template.metadata.labels.app`, `items[0].name`). */
  path: string;
  key: string;
  /** 1-based line of the repeated occurrence. */
  line: number;
}

/** One decoded document. */
export interface YamlDocument {
  value: unknown;
  duplicates: YamlDuplicate[];
}

/** Decoding limits. */
export interface YamlDecodeOptions {
  /** Max alias resolutions per document, relative to its size (the `yaml` package's guard). Default 100. */
  maxAliasCount?: number;
}

/** The strict-mode error text go-yaml v2 produces for duplicate keys. */
export function yamlDuplicatesMessage(dups: readonly YamlDuplicate[]): string {
  return `yaml: unmarshal errors:\n${dups.map((d) => `  line ${d.line}: key ${JSON.stringify(d.key)} already set in map`).join('\n')}`;
}

/** YAML 1.1 schema minus what go-yaml v2 does not resolve for interface{} targets. */
function goYamlTags(tags: Tags): Tags {
  return tags
    .filter((t) => {
      const tag = typeof t === 'string' ? t : t.tag;
      const format = typeof t === 'string' ? undefined : (t as { format?: string }).format;
      return format !== 'TIME' && !tag.endsWith(':timestamp');
    })
    .map((t) => {
      // The 1.1 float pattern also takes plain scalars without a digit (`.`, `-.`), which go-yaml
      // leaves strings; the yaml package would make them NaN, which JSON cannot carry.
      if (typeof t === 'string' || !t.tag.endsWith(':float') || !(t.test instanceof RegExp) || !t.test.test('.')) return t;
      return { ...t, test: new RegExp(`^(?=[^]*[0-9])(?:${t.test.source})`, t.test.flags) } as typeof t;
    });
}

function scalarKey(node: unknown, lc: LineCounter): string {
  if (node === null || node === undefined) return 'null';
  if (isScalar(node)) {
    const v = node.value;
    if (v === null) return 'null';
    if (typeof v === 'object') {
      throw new YamlDecodeError(`invalid map key: ${String(v)}`, ...pos(node, lc));
    }
    return String(v);
  }
  throw new YamlDecodeError('invalid map key: a collection cannot be a mapping key', ...pos(node as Node, lc));
}

function pos(node: Node | null | undefined, lc: LineCounter): [number?, number?] {
  const off = node?.range?.[0];
  if (off === undefined) return [];
  const p = lc.linePos(off);
  return [p.line, p.col];
}

/** Walks the AST collecting duplicate keys and rejecting collection keys. */
function findDuplicates(node: unknown, path: string, lc: LineCounter, out: YamlDuplicate[]): void {
  if (isAlias(node) || node === null || node === undefined) return;
  if (isMap(node)) {
    const seen = new Set<string>();
    for (const pair of node.items) {
      const key = scalarKey(pair.key, lc);
      const child = path ? `${path}.${key}` : key;
      if (key !== '<<') {
        if (seen.has(key)) out.push({ path: child, key, line: pos(pair.key as Node, lc)[0] ?? 0 });
        seen.add(key);
      }
      findDuplicates(pair.value, child, lc, out);
    }
  } else if (isSeq(node)) {
    node.items.forEach((item, i) => findDuplicates(item, `${path}[${i}]`, lc, out));
  }
}

/** Makes the `yaml` package's JS value plain JSON data (Buffers, Maps, Sets, non-finite numbers). */
function toJsonValue(v: unknown, path: string): unknown {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return v;
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new YamlDecodeError(`json: unsupported value: ${v > 0 ? '+Inf' : v < 0 ? '-Inf' : 'NaN'} (at ${path || '<root>'})`);
    return v;
  }
  if (typeof v === 'bigint') return Number(v);
  if (v instanceof Uint8Array) return Buffer.from(v).toString('utf8'); // !!binary decodes to a byte string in go-yaml
  if (Array.isArray(v)) return v.map((x, i) => toJsonValue(x, `${path}[${i}]`));
  if (v instanceof Map) {
    const o: Record<string, unknown> = {};
    for (const [k, x] of v) o[String(k)] = toJsonValue(x, path ? `${path}.${String(k)}` : String(k));
    return o;
  }
  if (v instanceof Set) {
    const o: Record<string, unknown> = {};
    for (const k of v) o[String(k)] = null;
    return o;
  }
  if (typeof v === 'object') {
    const o = v as Record<string, unknown>;
    for (const k of Object.keys(o)) o[k] = toJsonValue(o[k], path ? `${path}.${k}` : k);
    return o;
  }
  throw new YamlDecodeError(`unsupported YAML value at ${path || '<root>'}`);
}

function decodeDoc(doc: Document.Parsed, lc: LineCounter, opts: YamlDecodeOptions): YamlDocument {
  if (doc.errors.length > 0) {
    const e = doc.errors[0];
    const p = e.linePos?.[0];
    throw new YamlDecodeError(`yaml: ${e.message.split('\n')[0]}`, p?.line, p?.col);
  }
  for (const w of doc.warnings) {
    if (w.code === 'TAG_RESOLVE_FAILED') {
      const p = w.linePos?.[0];
      throw new YamlDecodeError(`yaml: ${w.message.split('\n')[0]}`, p?.line, p?.col);
    }
  }
  const duplicates: YamlDuplicate[] = [];
  findDuplicates(doc.contents, '', lc, duplicates);
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: opts.maxAliasCount ?? 100 });
  } catch (e) {
    // The yaml package throws ReferenceError for excessive aliases or unknown anchors.
    throw new YamlDecodeError(`yaml: ${(e as Error).message}`);
  }
  return { value: toJsonValue(value ?? null, ''), duplicates };
}

function parseDocs(text: string): { docs: Document.Parsed[]; lc: LineCounter } {
  const lc = new LineCounter();
  const docs = parseAllDocuments(text, {
    version: '1.1',
    uniqueKeys: false,
    customTags: goYamlTags,
    lineCounter: lc,
    prettyErrors: true,
    merge: true,
  });
  return { docs: Array.isArray(docs) ? docs : [], lc };
}

/**
 * Decodes every non-empty document of a `---`-separated stream.
 * @throws YamlDecodeError on syntax errors, unknown tags, collection keys, alias bombs.
 */
export function decodeYamlDocuments(text: string, opts: YamlDecodeOptions = {}): YamlDocument[] {
  const { docs, lc } = parseDocs(text);
  const out: YamlDocument[] = [];
  for (const d of docs) {
    // A document with nothing but comments parses as an empty plain scalar; `~` or `null` is a real null.
    const empty = d.contents === null || (isScalar(d.contents) && d.contents.value === null && d.contents.source === '');
    if (empty && d.errors.length === 0 && d.warnings.length === 0) continue;
    out.push(decodeDoc(d, lc, opts));
  }
  return out;
}

/**
 * Decodes a request body. Like go-yaml's Unmarshal, only the first document counts; an empty
 * body decodes to null. Later documents are still parsed so a malformed tail is an error.
 * @throws YamlDecodeError
 */
export function decodeYaml(text: string, opts: YamlDecodeOptions = {}): YamlDocument {
  const all = decodeYamlDocuments(text, opts);
  return all[0] ?? { value: null, duplicates: [] };
}
