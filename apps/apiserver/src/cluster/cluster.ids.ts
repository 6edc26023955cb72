/**
 * Node identity of the replicated cluster (docs/cluster.md "Node ids"): Raft ids are derived
 * from node names, so every node computes the same id for a name from `--initial-cluster`
 * alone, ids survive restarts, and nobody has to hand them out. The id is the 32-bit FNV-1a
 * hash of the UTF-8 name (0 is reserved by Raft for "none" and maps to 1). Two names with the
 * same id are refused where members are declared (bootstrap and POST /cluster/members).
 */

/** Stable non-zero uint32 Raft id of a node name (FNV-1a 32). */
export function nodeIdFromName(name: string): number {
  let h = 0x811c9dc5;
  for (const b of new TextEncoder().encode(name)) {
    h ^= b;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h === 0 ? 1 : h;
}

/** One member of `--initial-cluster`. `peerAddress` is `host:port` (no scheme). */
export interface ClusterMemberSpec {
  name: string;
  id: number;
  peerAddress: string;
}

/** A malformed cluster declaration (flags or membership request). */
export class ClusterConfigError extends Error {
  override readonly name = 'ClusterConfigError';
}

const NAME = /^[a-z0-9]([-a-z0-9.]{0,61}[a-z0-9])?$/;

/** Validates a node name (a DNS-1123 subdomain-ish label, as etcd member names usually are). */
export function validateNodeName(name: string): string | undefined {
  if (!NAME.test(name)) return `invalid node name ${JSON.stringify(name)}: lowercase alphanumerics, '-' or '.', at most 63 characters`;
  return undefined;
}

/**
 * Normalises a peer URL to `host:port`: accepts `host:port`, `[v6]:port` and `http(s)://host:port`
 * (etcd writes `--initial-cluster n1=http://10.0.0.1:2380`).
 */
export function normalizePeerAddress(raw: string): string {
  const s = raw
    .trim()
    .replace(/^[a-z]+:\/\//i, '')
    .replace(/\/+$/, '');
  const m = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(s);
  if (!m || Number(m[2]) < 1 || Number(m[2]) > 65535) throw new ClusterConfigError(`invalid peer address ${JSON.stringify(raw)}: want host:port`);
  return `${m[1]}:${m[2]}`;
}

/** Parses `name=host:port,name=host:port`; rejects duplicates and id collisions. */
export function parseInitialCluster(value: string): ClusterMemberSpec[] {
  const out: ClusterMemberSpec[] = [];
  const ids = new Map<number, string>();
  for (const part of value
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p.length > 0)) {
    const eq = part.indexOf('=');
    if (eq <= 0) throw new ClusterConfigError(`invalid --initial-cluster entry ${JSON.stringify(part)}: want name=host:port`);
    const name = part.slice(0, eq);
    const bad = validateNodeName(name);
    if (bad) throw new ClusterConfigError(bad);
    const id = nodeIdFromName(name);
    const other = ids.get(id);
    if (other !== undefined) throw new ClusterConfigError(other === name ? `node ${name} listed twice` : `node names ${other} and ${name} hash to the same id`);
    ids.set(id, name);
    out.push({ name, id, peerAddress: normalizePeerAddress(part.slice(eq + 1)) });
  }
  if (out.length === 0) throw new ClusterConfigError('--initial-cluster is empty');
  return out;
}
