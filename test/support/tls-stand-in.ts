/**
 * A stand-in for a remote service the API server calls as a client (an authorization or audit
 * webhook): an HTTPS server on loopback with a PKI of its own, requiring a client certificate
 * of that PKI, and the kubeconfig that reaches it with such a certificate, as the server's
 * `--*-webhook-config-file` flags take.
 */
import { readFile, writeFile } from 'node:fs/promises';
import * as https from 'node:https';
import type { IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { ensurePki, issueClientCertificate } from '@app/pki';

export interface TlsStandIn {
  readonly port: number;
  /** The kubeconfig naming the stand-in (its CA, the client certificate presented to it). */
  readonly kubeconfig: string;
  close(): Promise<void>;
}

export interface TlsStandInOptions {
  /** The common name of the client certificate the kubeconfig holds. */
  readonly clientName: string;
  /** The path of the URL in the kubeconfig. */
  readonly path: string;
  /** The answer to one request: status and JSON body (a promise to hold the answer back). */
  answer(body: Buffer, req: IncomingMessage, clientName: string | undefined): { status: number; body: unknown } | Promise<{ status: number; body: unknown }>;
}

const b64 = (s: string) => Buffer.from(s).toString('base64');

/** Starts a stand-in whose files (PKI, kubeconfig) go under `dir`. */
export async function startTlsStandIn(dir: string, o: TlsStandInOptions): Promise<TlsStandIn> {
  const pki = await ensurePki(join(dir, `${o.clientName}-pki`), { hosts: ['127.0.0.1'] });
  const caPem = await readFile(pki.caCert, 'utf8');
  const server = https.createServer(
    { cert: await readFile(pki.servingCert, 'utf8'), key: await readFile(pki.servingKey, 'utf8'), ca: caPem, requestCert: true, rejectUnauthorized: true },
    (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const cn = (req.socket as TLSSocket).getPeerCertificate().subject?.CN;
        void Promise.resolve(o.answer(Buffer.concat(chunks), req, Array.isArray(cn) ? cn[0] : cn)).then(({ status, body }) => {
          res.writeHead(status, { 'content-type': 'application/json' });
          res.end(JSON.stringify(body));
        });
      });
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const client = await issueClientCertificate(pki.dir, o.clientName);
  const kubeconfig = join(dir, `${o.clientName}.kubeconfig`);
  await writeFile(
    kubeconfig,
    [
      'apiVersion: v1',
      'kind: Config',
      `clusters: [{name: stand-in, cluster: {server: "https://127.0.0.1:${port}${o.path}", certificate-authority-data: ${b64(caPem)}}}]`,
      `users: [{name: apiserver, user: {client-certificate-data: ${b64(client.certPem)}, client-key-data: ${b64(client.keyPem)}}}]`,
      'contexts: [{name: stand-in, context: {cluster: stand-in, user: apiserver}}]',
      'current-context: stand-in',
    ].join('\n'),
  );
  return {
    port,
    kubeconfig,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
