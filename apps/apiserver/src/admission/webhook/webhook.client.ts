/**
 * The HTTPS side of admission webhooks: where a webhook is reached (its URL, or its Service's
 * endpoints), the credentials this server presents to it (`--admission-control-config-file`,
 * conventions.md "Outbound admission webhooks"), and the POST of an AdmissionReview with the
 * webhook's time-out as a deadline for the whole exchange. CustomResourceDefinitions' conversion
 * webhooks are reached the same way.
 */
import * as https from 'node:https';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { KubeObject } from '@app/apimachinery';
import { objectKey } from '@app/registry';
import type { Storage } from '@app/storage';

type Doc = Record<string, unknown>;
const obj = (v: unknown): Doc => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Doc) : {});
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** What this server presents to a webhook (one `users` entry of a webhook kubeconfig). */
export interface WebhookCredentials {
  certPem?: string;
  keyPem?: string;
  token?: string;
  username?: string;
  password?: string;
}

/** The plugins whose configuration names a kubeconfig of webhook credentials. */
export type WebhookPluginName = 'MutatingAdmissionWebhook' | 'ValidatingAdmissionWebhook';

/** A PEM or token from `<key>-data` (base64) or `<key>` (a file relative to `dir`). */
function material(entry: Doc, key: string, dir: string): string | undefined {
  const data = str(entry[`${key}-data`]);
  if (data) return Buffer.from(data, 'base64').toString('utf8');
  const file = str(entry[key]);
  return file ? readFileSync(path.resolve(dir, file), 'utf8') : undefined;
}

/** The credentials of a kubeconfig's `users`, by user name (pure apart from reading named files). */
export function credentialsOf(kubeconfigText: string, dir: string): Map<string, WebhookCredentials> {
  const doc = obj(parseYaml(kubeconfigText));
  const out = new Map<string, WebhookCredentials>();
  for (const raw of Array.isArray(doc.users) ? doc.users : []) {
    const entry = obj(raw);
    const name = str(entry.name);
    if (!name) continue;
    const user = obj(entry.user);
    const creds: WebhookCredentials = {
      certPem: material(user, 'client-certificate', dir),
      keyPem: material(user, 'client-key', dir),
      token: str(user.token) ?? (str(user.tokenFile) ? readFileSync(path.resolve(dir, str(user.tokenFile)!), 'utf8').trim() : undefined),
      username: str(user.username),
      password: str(user.password),
    };
    if ((creds.certPem === undefined) !== (creds.keyPem === undefined))
      throw new Error(`user ${JSON.stringify(name)} needs both a client certificate and a client key`);
    out.set(name, creds);
  }
  return out;
}

/**
 * The credentials for a webhook host (kube's authentication info resolver): the user named
 * exactly like the host (`name.namespace.svc`, `:port` added when not 443, or a URL's host
 * and port as written), then `*.` and the host without its first label, then `*`.
 */
export function credentialsFor(users: ReadonlyMap<string, WebhookCredentials>, host: string): WebhookCredentials | undefined {
  const exact = users.get(host);
  if (exact) return exact;
  const dot = host.indexOf('.');
  if (dot > 0) {
    const wild = users.get(`*${host.slice(dot)}`);
    if (wild) return wild;
  }
  return users.get('*');
}

/**
 * Reads an AdmissionConfiguration (apiserver.config.k8s.io/v1, or apiserver.k8s.io/v1alpha1)
 * and returns, per webhook plugin, the users of the kubeconfig its WebhookAdmission
 * configuration names (inline as `configuration`, or in the file at `path`). Paths are
 * relative to the file naming them. Throws on a file that cannot be read or parsed, and on a
 * configuration of any other plugin: none of the others built here takes one, and running
 * without a configuration an operator gave would be worse than not starting.
 */
export function webhookCredentialsFromAdmissionConfig(file: string): Map<WebhookPluginName, Map<string, WebhookCredentials>> {
  const dir = path.dirname(path.resolve(file));
  const doc = obj(parseYaml(readFileSync(file, 'utf8')));
  if (doc.kind !== undefined && doc.kind !== 'AdmissionConfiguration') throw new Error(`expected kind AdmissionConfiguration, got ${JSON.stringify(doc.kind)}`);
  const out = new Map<WebhookPluginName, Map<string, WebhookCredentials>>();
  for (const raw of Array.isArray(doc.plugins) ? doc.plugins : []) {
    const plugin = obj(raw);
    const name = plugin.name;
    if (name !== 'MutatingAdmissionWebhook' && name !== 'ValidatingAdmissionWebhook') {
      throw new Error(
        `a configuration of admission plugin ${JSON.stringify(name)} is not applied by this server (only MutatingAdmissionWebhook and ValidatingAdmissionWebhook take one)`,
      );
    }
    let config = obj(plugin.configuration);
    let configDir = dir;
    const p = str(plugin.path);
    if (p) {
      const at = path.resolve(dir, p);
      config = obj(parseYaml(readFileSync(at, 'utf8')));
      configDir = path.dirname(at);
    }
    const kubeConfigFile = str(config.kubeConfigFile);
    if (!kubeConfigFile) continue;
    const kc = path.resolve(configDir, kubeConfigFile);
    out.set(name, credentialsOf(readFileSync(kc, 'utf8'), path.dirname(kc)));
  }
  return out;
}

/** Where one call goes. */
export interface WebhookTarget {
  /** The URL posted to (with `?timeout=` added, as kube-apiserver does). */
  url: URL;
  /** The name the server certificate must carry (a Service's `name.namespace.svc`). */
  serverName?: string;
  /** The CA bundle (PEM) to verify the server with; the system roots when absent. */
  caPem?: string;
  credentials?: WebhookCredentials;
}

/** Largest AdmissionReview answer read (kube-apiserver reads at most a few MB too). */
export const MAX_RESPONSE_BYTES = 3 * 1024 * 1024;

/** A failure to get an answer from a webhook (failure policy applies). */
export class WebhookCallError extends Error {}

/** Agents by CA, credentials and server name, so calls to one webhook reuse connections. */
const agents = new Map<string, https.Agent>();

function agentFor(t: WebhookTarget): https.Agent {
  const c = t.credentials;
  const key = JSON.stringify([t.caPem ?? '', c?.certPem ?? '', c?.keyPem ?? '', t.serverName ?? '']);
  let agent = agents.get(key);
  if (!agent) {
    agent = new https.Agent({
      keepAlive: true,
      maxSockets: 64,
      ...(t.caPem ? { ca: t.caPem } : {}),
      ...(c?.certPem ? { cert: c.certPem, key: c.keyPem } : {}),
      ...(t.serverName ? { servername: t.serverName } : {}),
    });
    if (agents.size > 256) {
      for (const a of agents.values()) a.destroy();
      agents.clear();
    }
    agents.set(key, agent);
  }
  return agent;
}

/** Closes the kept-alive connections to webhooks (at shutdown). */
export function closeWebhookConnections(): void {
  for (const a of agents.values()) a.destroy();
  agents.clear();
}

/** Posts `review` and returns the parsed answer (at most `maxResponseBytes`); any failure is a WebhookCallError. */
export function postReview(t: WebhookTarget, review: unknown, timeoutSeconds: number, maxResponseBytes = MAX_RESPONSE_BYTES): Promise<unknown> {
  const url = new URL(t.url);
  url.searchParams.set('timeout', `${timeoutSeconds}s`);
  const shown = `Post ${JSON.stringify(url.toString())}`;
  const payload = Buffer.from(JSON.stringify(review));
  const c = t.credentials;
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json',
    'content-length': String(payload.length),
  };
  if (c?.token) headers.authorization = `Bearer ${c.token}`;
  else if (c?.username !== undefined) headers.authorization = `Basic ${Buffer.from(`${c.username}:${c.password ?? ''}`).toString('base64')}`;
  return new Promise((resolve, reject) => {
    let done = false;
    const fail = (message: string) => {
      if (done) return;
      done = true;
      clearTimeout(deadline);
      reject(new WebhookCallError(message));
    };
    const req = https.request(url, { method: 'POST', headers, agent: agentFor(t) }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxResponseBytes) {
          req.destroy();
          fail(`failed to call webhook: ${shown}: the answer is larger than ${maxResponseBytes} bytes`);
        } else chunks.push(chunk);
      });
      res.on('error', (e) => fail(`failed to call webhook: ${shown}: ${e.message}`));
      res.on('end', () => {
        if (done) return;
        const text = Buffer.concat(chunks).toString('utf8');
        const code = res.statusCode ?? 0;
        if (code < 200 || code > 299) {
          fail(`failed to call webhook: an error on the server (${JSON.stringify(text.slice(0, 256))}) has prevented the request from succeeding`);
          return;
        }
        let body: unknown;
        try {
          body = JSON.parse(text);
        } catch (e) {
          fail(`received invalid webhook response: ${(e as Error).message}`);
          return;
        }
        done = true;
        clearTimeout(deadline);
        resolve(body);
      });
    });
    const deadline = setTimeout(() => {
      req.destroy();
      fail(`failed to call webhook: ${shown}: context deadline exceeded`);
    }, timeoutSeconds * 1000);
    req.on('error', (e) => fail(`failed to call webhook: ${shown}: ${e.message}`));
    req.end(payload);
  });
}

/** A webhook's `clientConfig` (admission webhooks and CRD conversion webhooks share its shape). */
export interface WebhookClientConfig {
  url?: string;
  service?: { namespace: string; name: string; path?: string; port: number };
  caBundle?: string;
}

const SERVICES = { group: '', plural: 'services', namespaced: true };
const ENDPOINTS = { group: '', plural: 'endpoints', namespaced: true };

/**
 * Where a webhook is, and what to present to it (`users`: the credentials by host). A Service is
 * reached at a ready endpoint behind the port it names, verified as `name.namespace.svc`.
 */
export async function webhookTarget(
  storage: Storage,
  cc: WebhookClientConfig,
  users: ReadonlyMap<string, WebhookCredentials> = new Map(),
): Promise<WebhookTarget> {
  const caPem = cc.caBundle ? Buffer.from(cc.caBundle, 'base64').toString('utf8') : undefined;
  const { url, service } = cc;
  if (url !== undefined) {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      throw new WebhookCallError(`invalid URL ${JSON.stringify(url)}`);
    }
    return { url: u, caPem, credentials: credentialsFor(users, u.host) };
  }
  if (!service) throw new WebhookCallError('the webhook has neither a URL nor a service');
  const host = `${service.name}.${service.namespace}.svc`;
  const address = await endpointOf(storage, service.namespace, service.name, service.port);
  const p = service.path ?? '/';
  const u = new URL(`https://${address}${p.startsWith('/') ? p : `/${p}`}`);
  return { url: u, serverName: host, caPem, credentials: credentialsFor(users, service.port === 443 ? host : `${host}:${service.port}`) };
}

/** `ip:port` of a ready endpoint behind Service port `port`. */
async function endpointOf(storage: Storage, ns: string, name: string, port: number): Promise<string> {
  const svc = await storage.get(objectKey(SERVICES, ns, name), { mode: 'Any' });
  if (!svc) throw new WebhookCallError(`service "${name}" not found`);
  const ports = (Array.isArray(obj(svc.spec).ports) ? (obj(svc.spec).ports as unknown[]) : []).map(obj);
  const sp = ports.find((q) => q.port === port);
  if (!sp) throw new WebhookCallError(`no service port ${port} found for service "${name}"`);
  const portName = typeof sp.name === 'string' ? sp.name : '';
  const ep: KubeObject | undefined = await storage.get(objectKey(ENDPOINTS, ns, name), { mode: 'Any' });
  for (const subset of (Array.isArray(ep?.subsets) ? (ep.subsets as unknown[]) : []).map(obj)) {
    const epPort = (Array.isArray(subset.ports) ? (subset.ports as unknown[]) : [])
      .map(obj)
      .find((q) => (typeof q.name === 'string' ? q.name : '') === portName);
    const addr = (Array.isArray(subset.addresses) ? (subset.addresses as unknown[]) : []).map(obj).find((a) => typeof a.ip === 'string');
    if (epPort && typeof epPort.port === 'number' && addr) {
      const ip = addr.ip as string;
      return `${ip.includes(':') ? `[${ip}]` : ip}:${epPort.port}`;
    }
  }
  throw new WebhookCallError(`no endpoints available for service "${name}"`);
}
