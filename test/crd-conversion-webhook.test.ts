/**
 * A CustomResourceDefinition with a conversion webhook, end to end with real kubectl: a real
 * HTTPS webhook (its own CA, given as caBundle) converts Gizmos between v1 (`spec.size`) and v2
 * (`spec.replicas`, the storage version). Objects written at either version are stored at v2 and
 * read at both, by get, list (one review per page) and watch; the webhook's labels and
 * annotations are kept and its other metadata is not; a failing webhook is a 500 with kube's
 * message; definitions with an invalid webhook are refused.
 */
import { jest } from '@jest/globals';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensurePki } from '@app/pki';
import { delay, kubectl, request, startServer, type ServerHandle } from './support/server.js';

jest.setTimeout(120_000);

type Obj = Record<string, unknown>;
let server: ServerHandle;
let dir: string;
let hook: https.Server;
let hookUrl: string;
let caBundle: string;
/** Each review the webhook got: the version asked for and the names sent. */
const reviews: Array<{ desired: string; names: string[] }> = [];
const k = (args: string[], opts: { input?: string; expectFail?: boolean | 'any' } = {}) => kubectl(server, args, opts);

/** The webhook: v1 `spec.size` <-> v2 `spec.replicas`; refuses objects labelled `convert: refuse`. */
function convert(o: Obj, desired: string): Obj {
  const spec = (o.spec ?? {}) as Obj;
  const meta = o.metadata as Obj;
  // A webhook may set labels and annotations; its change of any other metadata is not kept.
  const metadata = {
    ...meta,
    name: 'renamed-by-webhook',
    labels: { ...((meta.labels as Obj) ?? {}), 'served-as': desired.split('/')[1] },
    annotations: { ...((meta.annotations as Obj) ?? {}), 'converted-to': desired },
  };
  if (desired === 'hooks.example.com/v2') {
    const { size, ...rest } = spec;
    return { ...o, apiVersion: desired, metadata, spec: { ...rest, replicas: size } };
  }
  const { replicas, ...rest } = spec;
  return { ...o, apiVersion: desired, metadata, spec: { ...rest, size: replicas } };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kapi-conversion-'));
  const pki = await ensurePki(join(dir, 'hook-pki'), { hosts: ['127.0.0.1'] });
  caBundle = Buffer.from(await readFile(pki.caCert, 'utf8')).toString('base64');
  hook = https.createServer({ cert: await readFile(pki.servingCert, 'utf8'), key: await readFile(pki.servingKey, 'utf8') }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        apiVersion: string;
        request: { uid: string; desiredAPIVersion: string; objects: Obj[] };
      };
      const { uid, desiredAPIVersion, objects } = review.request;
      reviews.push({ desired: desiredAPIVersion, names: objects.map((o) => String((o.metadata as Obj).name)) });
      const refused = objects.find((o) => ((o.metadata as Obj).labels as Obj | undefined)?.convert === 'refuse');
      const response = refused
        ? { uid, result: { status: 'Failure', message: `cannot convert ${String((refused.metadata as Obj).name)}` } }
        : { uid, result: { status: 'Success' }, convertedObjects: objects.map((o) => convert(o, desiredAPIVersion)) };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ apiVersion: review.apiVersion, kind: 'ConversionReview', response }));
    });
  });
  await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
  hookUrl = `https://127.0.0.1:${(hook.address() as AddressInfo).port}/convert`;
  server = await startServer();
  await k(['create', 'namespace', 'gizmos']);
});

afterAll(async () => {
  await server?.cleanup();
  await new Promise<void>((resolve) => (hook ? hook.close(() => resolve()) : resolve()));
  if (dir) await rm(dir, { recursive: true, force: true });
});

const crd = (clientConfig: Obj, reviewVersions = ['v1']) =>
  JSON.stringify({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'gizmos.hooks.example.com' },
    spec: {
      group: 'hooks.example.com',
      scope: 'Namespaced',
      names: { plural: 'gizmos', kind: 'Gizmo' },
      conversion: { strategy: 'Webhook', webhook: { clientConfig, conversionReviewVersions: reviewVersions } },
      versions: ['v1', 'v2'].map((name) => ({
        name,
        served: true,
        storage: name === 'v2',
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: { spec: { type: 'object', properties: name === 'v1' ? { size: { type: 'integer' } } : { replicas: { type: 'integer' } } } },
          },
        },
      })),
    },
  });
const gizmo = (version: string, name: string, spec: Obj, labels: Obj = {}) =>
  JSON.stringify({ apiVersion: `hooks.example.com/${version}`, kind: 'Gizmo', metadata: { name, namespace: 'gizmos', labels }, spec });
const getAt = async (version: string, name: string) =>
  JSON.parse((await k(['get', `gizmos.${version}.hooks.example.com`, name, '-n', 'gizmos', '-o', 'json'])).stdout) as Obj;

describe('a conversion webhook', () => {
  it('refuses definitions whose webhook is not valid', async () => {
    const bad = await k(['apply', '-f', '-'], { input: crd({ url: 'http://127.0.0.1:1/convert' }, ['v3']), expectFail: true });
    expect(bad.stderr).toContain('The CustomResourceDefinition "gizmos.hooks.example.com" is invalid');
    expect(bad.stderr).toContain(`spec.conversion.webhook.clientConfig.url: Invalid value: "http": 'https' is the only allowed URL scheme`);
    expect(bad.stderr).toContain('spec.conversion.webhook.conversionReviewVersions: Invalid value: []string{"v3"}: must include at least one of v1, v1beta1');
  });

  it('converts what is written and read at either version, in get, list and watch', async () => {
    await k(['apply', '-f', '-'], { input: crd({ url: hookUrl, caBundle }) });
    await k(['wait', '--for', 'condition=established', '--timeout=30s', 'crd/gizmos.hooks.example.com']);
    // Written at v1: stored at v2 by the webhook.
    await k(['apply', '-f', '-'], { input: gizmo('v1', 'small', { size: 2 }, { team: 'a' }) });
    expect(reviews.some((r) => r.desired === 'hooks.example.com/v2' && r.names.includes('small'))).toBe(true);
    const v2 = await getAt('v2', 'small');
    expect([v2.apiVersion, v2.spec, (v2.metadata as Obj).name, ((v2.metadata as Obj).labels as Obj).team]).toEqual([
      'hooks.example.com/v2',
      { replicas: 2 },
      'small',
      'a',
    ]);
    const v1 = await getAt('v1', 'small');
    expect([v1.apiVersion, v1.spec, ((v1.metadata as Obj).annotations as Obj)['converted-to']]).toEqual([
      'hooks.example.com/v1',
      { size: 2 },
      'hooks.example.com/v1',
    ]);
    // Written at v2: read at v1 through the webhook; an update at v1 goes back through it.
    await k(['create', '-f', '-'], { input: gizmo('v2', 'large', { replicas: 9 }) });
    await k(['patch', 'gizmos.v1.hooks.example.com', 'large', '-n', 'gizmos', '--type=merge', '-p', '{"spec":{"size":10}}']);
    expect((await getAt('v2', 'large')).spec).toEqual({ replicas: 10 });
    // A list converts its page in one review.
    reviews.length = 0;
    const listed = JSON.parse((await k(['get', 'gizmos.v1.hooks.example.com', '-n', 'gizmos', '-o', 'json'])).stdout) as { items: Obj[] };
    expect(listed.items.map((o) => [o.apiVersion, (o.metadata as Obj).name, o.spec])).toEqual([
      ['hooks.example.com/v1', 'large', { size: 10 }],
      ['hooks.example.com/v1', 'small', { size: 2 }],
    ]);
    expect(reviews).toEqual([{ desired: 'hooks.example.com/v1', names: ['large', 'small'] }]);
    const table = await k(['get', 'gizmos.v1.hooks.example.com', '-n', 'gizmos', '-l', 'team=a']);
    expect(table.stdout).toMatch(/^NAME\s+AGE\nsmall\s+/);
    // Selectors see the converted objects: the webhook labels each object with the version it
    // converted it to. Pages of one object are filled past the objects that do not match.
    const atV1 = (selector: string) => k(['get', 'gizmos.v1.hooks.example.com', '-n', 'gizmos', '-l', selector, '--chunk-size=1', '-o', 'name']);
    expect((await atV1('served-as=v1')).stdout.trim().split('\n')).toEqual(['gizmo.hooks.example.com/large', 'gizmo.hooks.example.com/small']);
    expect((await atV1('served-as=v2')).stdout.trim()).toBe('');
    expect((await atV1('served-as=v1,team=a')).stdout.trim()).toBe('gizmo.hooks.example.com/small');
    // A watch converts each event.
    const watched = await request(server, 'GET', '/apis/hooks.example.com/v1/namespaces/gizmos/gizmos?watch=true&resourceVersion=0&timeoutSeconds=1');
    const events = watched.body
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; object: Obj });
    expect(events.map((e) => [e.type, e.object.apiVersion, e.object.spec])).toEqual([
      ['ADDED', 'hooks.example.com/v1', { size: 10 }],
      ['ADDED', 'hooks.example.com/v1', { size: 2 }],
    ]);
  });

  it('converts a live event once for all the watchers of a version', async () => {
    const listed = JSON.parse((await request(server, 'GET', '/apis/hooks.example.com/v2/namespaces/gizmos/gizmos')).body) as {
      metadata: { resourceVersion: string };
    };
    const from = listed.metadata.resourceVersion;
    const watches = [0, 1, 2].map(() =>
      request(server, 'GET', `/apis/hooks.example.com/v1/namespaces/gizmos/gizmos?watch=true&resourceVersion=${from}&timeoutSeconds=3`),
    );
    await delay(1000);
    reviews.length = 0;
    // Written at the storage version: no review for the write itself, only for the watchers at v1.
    await k(['create', '-f', '-'], { input: gizmo('v2', 'watched', { replicas: 4 }) });
    for (const watched of await Promise.all(watches)) {
      const events = watched.body
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { type: string; object: Obj });
      expect(events.map((e) => [e.type, e.object.apiVersion, (e.object.metadata as Obj).name, e.object.spec])).toEqual([
        ['ADDED', 'hooks.example.com/v1', 'watched', { size: 4 }],
      ]);
    }
    // Each store hands one event to every watcher of the collection (on an external etcd, the
    // watches share one etcd watch), so the webhook converts it once.
    const forWatchers = reviews.filter((r) => r.desired === 'hooks.example.com/v1' && r.names.includes('watched'));
    expect(forWatchers).toHaveLength(1);
  });

  it('fails reads with 500 when the webhook refuses, and when it cannot be reached', async () => {
    await k(['create', '-f', '-'], { input: gizmo('v2', 'stubborn', { replicas: 1 }, { convert: 'refuse' }) });
    const refused = await k(['get', 'gizmos.v1.hooks.example.com', 'stubborn', '-n', 'gizmos'], { expectFail: true });
    expect(refused.stderr).toContain(
      'Error from server (InternalError): Internal error occurred: conversion webhook for hooks.example.com/v2, Kind=Gizmo failed: cannot convert stubborn',
    );
    // At the stored version there is nothing to convert.
    expect((await getAt('v2', 'stubborn')).spec).toEqual({ replicas: 1 });
    await k(['delete', 'gizmos.v2.hooks.example.com', 'stubborn', '-n', 'gizmos']);
    await k(['apply', '-f', '-'], { input: crd({ url: 'https://127.0.0.1:1/convert', caBundle }) });
    const unreachable = await request(server, 'GET', '/apis/hooks.example.com/v1/namespaces/gizmos/gizmos/small');
    expect(unreachable.status).toBe(500);
    expect(unreachable.json<Obj>().message).toMatch(
      /^Internal error occurred: conversion webhook for hooks.example.com\/v2, Kind=Gizmo failed: Post "https:\/\/127.0.0.1:1\/convert\?timeout=30s": .*ECONNREFUSED/,
    );
  });
});
