/**
 * get, list, pagination, selectors and watch (conventions "Resource versions", "Pagination",
 * "Change notification").
 */
import type { RowGroup } from './conformance.types.js';

const NS = 'cf-read';
const CM = `/api/v1/namespaces/${NS}/configmaps`;
const cm = (name: string, labels: Record<string, string> = {}) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels }, data: { a: '1' } });

/** The group. */
export const READS: RowGroup = {
  name: 'reads',
  namespace: NS,
  rows: [
    {
      id: 'read-01',
      rule: 'get with resourceVersion=0 (Any) answers the object',
      source: 'conventions Resource versions (get: 0 = Any)',
      upstream: '200',
      setup: [
        { method: 'POST', path: CM, body: cm('r1', { env: 'a', tier: 'x' }) },
        { method: 'POST', path: CM, body: cm('r2', { env: 'b' }) },
        { method: 'POST', path: CM, body: cm('r3', { env: 'c' }) },
      ],
      req: { method: 'GET', path: `${CM}/r1?resourceVersion=0` },
      expect: { status: 200, body: { metadata: { name: 'r1' } } },
    },
    {
      id: 'read-02',
      rule: 'list with limit: limit items, metadata.continue and remainingItemCount',
      source: 'conventions Pagination 1, 2, 4',
      upstream: '200, 1 item (kube-root-ca.crt, which every namespace holds), continue token, remainingItemCount 3',
      req: { method: 'GET', path: `${CM}?limit=1` },
      expect: { status: 200, body: { items: [{ metadata: { name: 'kube-root-ca.crt' } }], metadata: { remainingItemCount: 3 } }, text: /"continue":"[^"]+"/ },
    },
    {
      id: 'read-03',
      rule: 'Paging through a collection with continue tokens returns every item once',
      source: 'conventions Pagination 2, 3',
      upstream: 'kubectl --chunk-size=1 lists kube-root-ca.crt, r1, r2, r3',
      kubectl: {
        args: ['get', 'cm', '-n', NS, '--chunk-size=1', '-o', 'name'],
        stdout: /^configmap\/kube-root-ca\.crt\nconfigmap\/r1\nconfigmap\/r2\nconfigmap\/r3\n$/,
      },
    },
    {
      id: 'read-04',
      rule: 'remainingItemCount is omitted when a selector is used',
      source: 'conventions Pagination 4',
      upstream: '200 without metadata.remainingItemCount',
      req: { method: 'GET', path: `${CM}?limit=1&labelSelector=env` },
      expect: { status: 200, absent: ['metadata.remainingItemCount'], text: /"continue":"[^"]+"/ },
    },
    {
      id: 'read-05',
      rule: 'The last chunk has no continue token and no remainingItemCount',
      source: 'conventions Pagination 2, 4',
      upstream: '200 without metadata.continue',
      req: { method: 'GET', path: `${CM}?limit=10` },
      expect: { status: 200, absent: ['metadata.continue', 'metadata.remainingItemCount'] },
    },
    {
      id: 'read-06',
      rule: 'list with resourceVersion=0 (Any)',
      source: 'conventions Resource versions (list table)',
      upstream: '200',
      req: { method: 'GET', path: `${CM}?resourceVersion=0` },
      expect: { status: 200, body: { kind: 'ConfigMapList' } },
    },
    {
      id: 'read-07',
      rule: 'Set-based label selectors',
      source: 'conventions Query parameters (labelSelector)',
      upstream: '200, r1 and r2',
      req: { method: 'GET', path: `${CM}?labelSelector=env%20in%20(a,b)` },
      expect: { status: 200, body: { items: [{ metadata: { name: 'r1' } }, { metadata: { name: 'r2' } }] } },
    },
    {
      id: 'read-08',
      rule: 'Label selector with != and !key',
      source: 'conventions Query parameters (labelSelector)',
      upstream: '200, kube-root-ca.crt (no labels), r2 and r3',
      req: { method: 'GET', path: `${CM}?labelSelector=env!%3Da,!tier` },
      expect: { status: 200, body: { items: [{ metadata: { name: 'kube-root-ca.crt' } }, { metadata: { name: 'r2' } }, { metadata: { name: 'r3' } }] } },
    },
    {
      id: 'read-09',
      rule: 'fieldSelector metadata.name',
      source: 'conventions Query parameters (fieldSelector)',
      upstream: '200, r3 only',
      req: { method: 'GET', path: `${CM}?fieldSelector=metadata.name%3Dr3` },
      expect: { status: 200, body: { items: [{ metadata: { name: 'r3' } }] } },
    },
    {
      id: 'read-10',
      rule: 'fieldSelector metadata.namespace on the all-namespaces list',
      source: 'conventions Query parameters (fieldSelector); Path shapes',
      upstream: '200, only this namespace',
      req: { method: 'GET', path: `/api/v1/configmaps?fieldSelector=metadata.namespace%3D${NS},metadata.name%3Dr2` },
      expect: { status: 200, body: { items: [{ metadata: { name: 'r2', namespace: NS } }] } },
    },
    {
      id: 'read-11',
      rule: 'An empty list has items: [] (not null)',
      source: 'resources Common object fields (items required)',
      upstream: '200, "items":[]',
      req: { method: 'GET', path: `${CM}?labelSelector=none%3Dhere` },
      expect: { status: 200, text: /"items":\[\]/ },
    },
    {
      id: 'read-12',
      rule: 'watch without resourceVersion: synthetic ADDED events for the existing objects first',
      source: 'conventions Resource versions (watch: unset)',
      upstream: '200 chunked stream, ADDED kube-root-ca.crt, r1, r2, r3',
      req: { method: 'GET', path: `${CM}?watch=true&timeoutSeconds=1` },
      expect: {
        status: 200,
        headers: { 'transfer-encoding': 'chunked' },
        text: /^\{"type":"ADDED","object":\{.*"name":"kube-root-ca\.crt"[\s\S]*"name":"r1"[\s\S]*"name":"r2"[\s\S]*"name":"r3"/,
      },
    },
    {
      id: 'read-13',
      rule: 'watch with resourceVersion=0: synthetic ADDED events first',
      source: 'conventions Resource versions (watch: 0)',
      upstream: '200 stream, ADDED events',
      req: { method: 'GET', path: `${CM}?watch=1&resourceVersion=0&timeoutSeconds=1` },
      expect: { status: 200, text: /"type":"ADDED"/ },
    },
    {
      id: 'read-14',
      rule: 'watch of one object (fieldSelector metadata.name) sees only it',
      source: 'conventions Verbs (watch: collection or single resource)',
      upstream: '200 stream with r2 only',
      req: { method: 'GET', path: `${CM}?watch=1&fieldSelector=metadata.name%3Dr2&timeoutSeconds=1` },
      expect: { status: 200, text: /^\{"type":"ADDED","object":\{[^\n]*"name":"r2"[^\n]*\}\}\n$/ },
    },
    {
      id: 'read-15',
      rule: 'A watch from a resourceVersion in the future waits: the stream stays open and empty until timeoutSeconds',
      source: 'conventions Resource versions (a watch on an unrecognized version may wait)',
      upstream:
        'etcd watch: 200, empty stream ended by timeoutSeconds; from the watch cache: 504 "Too large resource version" after 3 s (both allowed by the document)',
      req: { method: 'GET', path: `${CM}?watch=1&resourceVersion=999999999&timeoutSeconds=1` },
      expect: { status: 200, text: /^$/ },
    },
    {
      id: 'read-16',
      rule: 'list of a namespace that does not exist is an empty list',
      source: 'upstream (lists are not checked against the Namespace)',
      upstream: '200, items []',
      req: { method: 'GET', path: '/api/v1/namespaces/no-such-ns/configmaps' },
      expect: { status: 200, text: /"items":\[\]/ },
    },
    {
      id: 'read-17',
      rule: 'get of an object in a namespace that does not exist is 404 for the object',
      source: 'upstream storage NotFound',
      upstream: '404 NotFound "configmaps \\"x\\" not found"',
      req: { method: 'GET', path: '/api/v1/namespaces/no-such-ns/configmaps/x' },
      expect: { status: 404, reason: 'NotFound', message: 'configmaps "x" not found' },
    },
  ],
};
