/**
 * A pod's `log` subresource (kube's pod LogREST and LogLocation): GET
 * /api/v1/namespaces/{ns}/pods/{name}/log answers with the container's log as text/plain, which
 * only the node agent running the pod has. So, as kube-apiserver does:
 *
 * - the options (PodLogOptions as query parameters) are decoded (400 for a value that does not
 *   parse) and validated (422 Invalid, kind PodLogOptions);
 * - the pod must exist (404) and the container be one of its own: without `container` a pod of
 *   one container means that one, a pod of several asks for a name (400, listing them);
 * - a pod that no node runs yet (no spec.nodeName) has no log: 200 with an empty body;
 * - otherwise the log is read from the node's kubelet, at the address its Node object gives
 *   (by --kubelet-preferred-address-types, by default the first of Hostname, InternalDNS,
 *   InternalIP, ExternalDNS, ExternalIP) and status.daemonEndpoints.kubeletEndpoint.Port (10250
 *   when unset): GET https://<address>:<port>/containerLogs/<ns>/<pod>/<container> with the
 *   options, streamed back as it comes (a followed log until either side ends). The request
 *   presents --kubelet-client-certificate/--kubelet-client-key when given, and checks the
 *   kubelet's serving certificate against --kubelet-certificate-authority when given (not at
 *   all without it, as kube-apiserver; nor for a request with insecureSkipTLSVerifyBackend);
 *   a kubelet that cannot be reached is a 500 naming the request and the error, an answer
 *   other than 2xx is passed on with the kubelet's message.
 */
import type { IncomingMessage } from 'node:http';
import { type Agent, get } from 'node:https';
import { Errors, StatusError, type FieldError } from '@app/apimachinery';
import type { RequestContext, StreamAnswer, SubresourceDeclaration } from '@app/registry';
import { queryBool } from '../../../http/options.dto.js';
import { asMap } from '../core.helpers.js';
import { kubeletAddress, podContainer, type PodKubeletPorts } from './pod.kubelet.js';

/** PodLogOptions as decoded from the query. */
export interface PodLogOptions {
  container?: string;
  follow: boolean;
  previous: boolean;
  timestamps: boolean;
  sinceSeconds?: number;
  sinceTime?: string;
  tailLines?: number;
  limitBytes?: number;
  insecureSkipTLSVerifyBackend: boolean;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** An int64 query parameter as Go's strconv.ParseInt reads it (400 with its error otherwise). */
function int64(v: string | undefined): number | undefined {
  if (v === undefined || v === '') return undefined;
  if (!/^[+-]?\d+$/.test(v)) throw Errors.badRequest(`strconv.ParseInt: parsing ${JSON.stringify(v)}: invalid syntax`);
  const n = BigInt(v);
  if (n < -(2n ** 63n) || n >= 2n ** 63n) throw Errors.badRequest(`strconv.ParseInt: parsing ${JSON.stringify(v)}: value out of range`);
  return Number(n);
}

/** Decodes PodLogOptions from the query (400 BadRequest for a value that does not parse). */
export function decodePodLogOptions(query: Readonly<Record<string, string | undefined>>): PodLogOptions {
  const sinceTime = query.sinceTime === '' ? undefined : query.sinceTime;
  if (sinceTime !== undefined && (!RFC3339.test(sinceTime) || Number.isNaN(Date.parse(sinceTime)))) {
    throw Errors.badRequest(`parsing time ${JSON.stringify(sinceTime)} as "2006-01-02T15:04:05Z07:00": cannot parse ${JSON.stringify(sinceTime)} as "2006"`);
  }
  const o: PodLogOptions = {
    follow: queryBool(query.follow),
    previous: queryBool(query.previous),
    timestamps: queryBool(query.timestamps),
    insecureSkipTLSVerifyBackend: queryBool(query.insecureSkipTLSVerifyBackend),
  };
  if (query.container) o.container = query.container;
  const sinceSeconds = int64(query.sinceSeconds);
  const tailLines = int64(query.tailLines);
  const limitBytes = int64(query.limitBytes);
  if (sinceSeconds !== undefined) o.sinceSeconds = sinceSeconds;
  if (sinceTime !== undefined) o.sinceTime = sinceTime;
  if (tailLines !== undefined) o.tailLines = tailLines;
  if (limitBytes !== undefined) o.limitBytes = limitBytes;
  return o;
}

/** kube's ValidatePodLogOptions. */
export function validatePodLogOptions(o: PodLogOptions): FieldError[] {
  const errs: FieldError[] = [];
  if (o.tailLines !== undefined && o.tailLines < 0) {
    errs.push({ type: 'FieldValueInvalid', field: 'tailLines', value: o.tailLines, detail: 'must be greater than or equal to 0' });
  }
  if (o.limitBytes !== undefined && o.limitBytes < 1) {
    errs.push({ type: 'FieldValueInvalid', field: 'limitBytes', value: o.limitBytes, detail: 'must be greater than 0' });
  }
  if (o.sinceSeconds !== undefined && o.sinceTime !== undefined) {
    errs.push({ type: 'FieldValueForbidden', field: '', detail: 'at most one of `sinceTime` or `sinceSeconds` may be specified' });
  } else if (o.sinceSeconds !== undefined && o.sinceSeconds < 1) {
    errs.push({ type: 'FieldValueInvalid', field: 'sinceSeconds', value: o.sinceSeconds, detail: 'must be greater than 0' });
  }
  return errs;
}

/** The kubelet URL of a container's log with the options (LogLocation). */
export function containerLogUrl(addr: { host: string; port: number }, ns: string, pod: string, container: string, o: PodLogOptions): string {
  const params = new URLSearchParams();
  if (o.follow) params.set('follow', 'true');
  if (o.previous) params.set('previous', 'true');
  if (o.timestamps) params.set('timestamps', 'true');
  if (o.sinceSeconds !== undefined) params.set('sinceSeconds', String(o.sinceSeconds));
  if (o.sinceTime !== undefined) params.set('sinceTime', new Date(o.sinceTime).toISOString().replace(/\.\d{3}Z$/, 'Z'));
  if (o.tailLines !== undefined) params.set('tailLines', String(o.tailLines));
  if (o.limitBytes !== undefined) params.set('limitBytes', String(o.limitBytes));
  // Sorted by name, as Go's url.Values encodes them.
  params.sort();
  const host = addr.host.includes(':') ? `[${addr.host}]` : addr.host;
  const query = params.toString();
  return `https://${host}:${addr.port}/containerLogs/${encodeURIComponent(ns)}/${encodeURIComponent(pod)}/${encodeURIComponent(container)}${query ? `?${query}` : ''}`;
}

/** How long a kubelet may take to start answering before the request fails. */
const HEADERS_TIMEOUT_MS = 30_000;

async function fromKubelet(agent: Agent, url: string, podName: string, signal: AbortSignal): Promise<StreamAnswer> {
  const res = await new Promise<IncomingMessage>((resolve, reject) => {
    const req = get(url, { agent, signal, timeout: HEADERS_TIMEOUT_MS }, resolve);
    req.once('timeout', () => req.destroy(new Error(`no answer within ${HEADERS_TIMEOUT_MS / 1000}s`)));
    req.once('error', (e) => reject(Errors.internal(`Get ${JSON.stringify(url)}: ${e.message}`)));
  });
  // Once answering, a followed log may stay quiet for as long as the container does.
  res.socket.setTimeout(0);
  const code = res.statusCode ?? 500;
  if (code < 200 || code > 299) {
    // kube's GenericHttpResponseChecker: the kubelet's status and what it said.
    let text = '';
    for await (const chunk of res) {
      text += String(chunk);
      if (text.length > 4096) break;
    }
    res.destroy();
    const reason = code === 404 ? 'NotFound' : code === 403 ? 'Forbidden' : code === 400 ? 'BadRequest' : 'InternalError';
    throw new StatusError(code, reason, text.slice(0, 4096).trim() || `the kubelet answered ${code} for the log of pod ${podName}`, {
      name: podName,
      kind: 'pods/log',
    });
  }
  return { contentType: 'text/plain', body: res };
}

/** The subresource, with the ports its handler uses. */
export function logSubresource(ports: PodKubeletPorts): SubresourceDeclaration {
  return {
    verbs: ['get'],
    stream: {
      async get(ns: string, name: string, query, _ctx: RequestContext, signal: AbortSignal): Promise<StreamAnswer> {
        const deps = ports.deps;
        if (!deps) throw Errors.internal('the log subresource is not wired');
        const opts = decodePodLogOptions(query);
        const invalid = validatePodLogOptions(opts);
        if (invalid.length) throw Errors.invalid('', 'PodLogOptions', name, invalid);
        const pod = await deps.getPod(ns, name);
        const container = podContainer(pod, opts.container);
        const nodeName = asMap(pod.spec).nodeName;
        // No node runs the pod yet: there is no log to show.
        if (typeof nodeName !== 'string' || nodeName === '') return { contentType: 'text/plain', body: Buffer.alloc(0) };
        const addr = kubeletAddress(await deps.getNode(nodeName), deps.addressTypes);
        // insecureSkipTLSVerifyBackend: the kubelet's certificate is not checked for this request.
        const agent = opts.insecureSkipTLSVerifyBackend ? deps.kubelets.insecure : deps.kubelets.verified;
        return fromKubelet(agent, containerLogUrl(addr, ns, name, container, opts), name, signal);
      },
    },
  };
}
