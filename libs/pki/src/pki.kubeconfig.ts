/**
 * Kubeconfig files: writing the admin kubeconfig (one or many contexts) and reading back the
 * credentials of its current context.
 *
 * Format: the `Config` kind of client-go's `clientcmd/api/v1` (apiVersion v1, kind Config,
 * `clusters[].cluster.{server, certificate-authority-data}`,
 * `users[].user.{client-certificate-data, client-key-data}`, `contexts[].context.{cluster,
 * user}`, `current-context`). The `*-data` fields are base64 of the PEM text, as kubectl and
 * kubeadm write them.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';

/** One extra context of a multi-context kubeconfig: its own cluster entry pointing at `server`. */
export interface KubeconfigContext {
  /** Context name; also used as the name of its cluster entry. */
  readonly name: string;
  /** `https://host:port` of the API server (a node or the balancer) this context talks to. */
  readonly server: string;
}

/** Input of {@link writeKubeconfig}. All PEM values are the PEM text itself (not base64). */
export interface KubeconfigOptions {
  /** Server of the default context, e.g. `https://127.0.0.1:6443`. */
  readonly server: string;
  /** CA certificate clients verify the serving certificate against. */
  readonly caPem: string;
  /** Client certificate of the user (admin). */
  readonly certPem: string;
  /** Private key of {@link certPem}. */
  readonly keyPem: string;
  /** Name of the default cluster and context. Default `kapi`. */
  readonly clusterName?: string;
  /** Name of the user entry. Default `kubernetes-admin` (kubeadm's admin user name). */
  readonly userName?: string;
  /** Extra contexts (e.g. one per node plus the balancer), all with the same user and CA. */
  readonly contexts?: readonly KubeconfigContext[];
  /** Which context is current. Default: the default context (named `clusterName`). */
  readonly currentContext?: string;
}

/** Credentials of one kubeconfig context, PEM-decoded. */
export interface KubeconfigCredentials {
  readonly contextName: string;
  readonly server: string;
  readonly caPem: string;
  readonly certPem: string;
  readonly keyPem: string;
}

/** A kubeconfig file that is missing something or is not a kubeconfig. */
export class KubeconfigError extends Error {
  override readonly name = 'KubeconfigError';
}

const b64 = (pem: string): string => Buffer.from(pem, 'utf8').toString('base64');

/**
 * Builds the kubeconfig document (a plain object ready for YAML/JSON) for {@link writeKubeconfig}.
 * Context names must be unique; a duplicate (including one equal to the default context) is a
 * {@link KubeconfigError} because kubectl would silently use the first one.
 */
export function buildKubeconfig(opts: KubeconfigOptions): Record<string, unknown> {
  const clusterName = opts.clusterName ?? 'kapi';
  const userName = opts.userName ?? 'kubernetes-admin';
  const all: KubeconfigContext[] = [{ name: clusterName, server: opts.server }, ...(opts.contexts ?? [])];
  const seen = new Set<string>();
  for (const c of all) {
    if (seen.has(c.name)) throw new KubeconfigError(`duplicate kubeconfig context name ${JSON.stringify(c.name)}`);
    seen.add(c.name);
  }
  const current = opts.currentContext ?? clusterName;
  if (!seen.has(current)) throw new KubeconfigError(`current context ${JSON.stringify(current)} is not among the contexts`);
  const caData = b64(opts.caPem);
  return {
    apiVersion: 'v1',
    kind: 'Config',
    preferences: {},
    clusters: all.map((c) => ({
      name: c.name,
      cluster: { server: c.server, 'certificate-authority-data': caData },
    })),
    users: [
      {
        name: userName,
        user: { 'client-certificate-data': b64(opts.certPem), 'client-key-data': b64(opts.keyPem) },
      },
    ],
    contexts: all.map((c) => ({ name: c.name, context: { cluster: c.name, user: userName } })),
    'current-context': current,
  };
}

/**
 * The kubeconfig published in the ConfigMap kube-public/cluster-info (its `kubeconfig` key, as
 * kubeadm writes it): one cluster entry with the server URL clients should use and the CA
 * (`certificate-authority-data`), named "" as kubeadm names it, and no users, contexts or
 * credentials of any kind: anyone may read it. YAML text.
 */
export function clusterInfoKubeconfig(server: string, caPem: string): string {
  return stringifyYaml({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: '', cluster: { server, 'certificate-authority-data': b64(caPem) } }],
    contexts: null,
    'current-context': '',
    preferences: {},
    users: null,
  });
}

/**
 * Writes a kubeconfig to `file` with mode 0600 (it holds a private key), atomically: the text
 * goes to a temporary file in the same directory which is then renamed over `file`, so a
 * reader never sees half a file. Creates the parent directory when missing. Overwrites.
 */
export async function writeKubeconfig(file: string, opts: KubeconfigOptions): Promise<void> {
  const text = stringifyYaml(buildKubeconfig(opts));
  await fs.mkdir(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
  await fs.writeFile(tmp, text, { mode: 0o600 });
  await fs.rename(tmp, file);
}

function field(obj: unknown, key: string): unknown {
  return typeof obj === 'object' && obj !== null ? (obj as Record<string, unknown>)[key] : undefined;
}

function named(list: unknown, name: string, what: string): unknown {
  if (!Array.isArray(list)) throw new KubeconfigError(`kubeconfig has no ${what}s`);
  const hit: unknown = list.find((e) => field(e, 'name') === name);
  if (hit === undefined) throw new KubeconfigError(`kubeconfig has no ${what} named ${JSON.stringify(name)}`);
  return hit;
}

function dataField(obj: unknown, key: string, where: string): string {
  const v = field(obj, key);
  if (typeof v !== 'string' || v === '') throw new KubeconfigError(`kubeconfig ${where} has no ${key}`);
  return Buffer.from(v, 'base64').toString('utf8');
}

/**
 * Parses kubeconfig text and returns the credentials of `contextName` (default: the current
 * context). Only inline `*-data` fields are supported (that is what this project writes); a
 * missing piece is a {@link KubeconfigError}.
 */
export function parseKubeconfig(text: string, contextName?: string): KubeconfigCredentials {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (e) {
    throw new KubeconfigError(`kubeconfig is not YAML: ${(e as Error).message}`);
  }
  const ctxName = contextName ?? field(doc, 'current-context');
  if (typeof ctxName !== 'string' || ctxName === '') throw new KubeconfigError('kubeconfig has no current-context');
  const ctx = field(named(field(doc, 'contexts'), ctxName, 'context'), 'context');
  const clusterName = field(ctx, 'cluster');
  const userName = field(ctx, 'user');
  if (typeof clusterName !== 'string' || typeof userName !== 'string') {
    throw new KubeconfigError(`kubeconfig context ${JSON.stringify(ctxName)} lacks cluster or user`);
  }
  const cluster = field(named(field(doc, 'clusters'), clusterName, 'cluster'), 'cluster');
  const user = field(named(field(doc, 'users'), userName, 'user'), 'user');
  const server = field(cluster, 'server');
  if (typeof server !== 'string' || server === '') throw new KubeconfigError(`kubeconfig cluster ${clusterName} has no server`);
  return {
    contextName: ctxName,
    server,
    caPem: dataField(cluster, 'certificate-authority-data', `cluster ${clusterName}`),
    certPem: dataField(user, 'client-certificate-data', `user ${userName}`),
    keyPem: dataField(user, 'client-key-data', `user ${userName}`),
  };
}

/** Reads and parses a kubeconfig file; see {@link parseKubeconfig}. */
export async function readKubeconfig(file: string, contextName?: string): Promise<KubeconfigCredentials> {
  return parseKubeconfig(await fs.readFile(file, 'utf8'), contextName);
}
