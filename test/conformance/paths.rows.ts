/**
 * Path shapes and verbs (conventions "Path shapes", "Verbs"; resources "Endpoints", "Kinds and
 * their paths"): which path serves which verb, 404 for paths that name nothing, 405 for a
 * method a path has no route for (kube's installer routes, answered by go-restful).
 */
import type { Row, RowGroup } from './conformance.types.js';

const NS = 'cf-paths';
const CM = `/api/v1/namespaces/${NS}/configmaps`;
const NOT_ALLOWED = { status: 405, reason: 'MethodNotAllowed', message: 'the server does not allow this method on the requested resource' };
const NOT_FOUND = { status: 404, reason: 'NotFound', message: 'the server could not find the requested resource' };
const cm = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { a: '1' } });

function route(id: string, rule: string, method: string, path: string, expect: Row['expect'], upstream: string, body?: unknown): Row {
  return { id, rule, source: 'conventions Path shapes / Verbs; upstream endpoints/installer.go', upstream, req: { method, path, body }, expect };
}

/** The group. */
export const PATHS: RowGroup = {
  name: 'paths and verbs',
  namespace: NS,
  rows: [
    {
      id: 'path-05',
      rule: 'list: GET on the collection returns <Kind>List with metadata.resourceVersion and items',
      source: 'conventions Verbs (list)',
      upstream: '200 ConfigMapList (kube-root-ca.crt, which every namespace holds, and one)',
      setup: [{ method: 'POST', path: CM, body: cm('one') }],
      req: { method: 'GET', path: CM },
      expect: {
        status: 200,
        body: { kind: 'ConfigMapList', apiVersion: 'v1', items: [{ metadata: { name: 'kube-root-ca.crt' } }, { metadata: { name: 'one' } }] },
      },
    },
    {
      id: 'path-06',
      rule: 'list across all namespaces: GET on the collection path without namespaces/{ns}',
      source: 'conventions Path shapes',
      upstream: '200 ConfigMapList holding objects of every namespace',
      req: { method: 'GET', path: '/api/v1/configmaps?labelSelector=cf%3Dpaths' },
      setup: [{ method: 'POST', path: CM, body: { ...cm('labelled'), metadata: { name: 'labelled', labels: { cf: 'paths' } } } }],
      expect: { status: 200, body: { kind: 'ConfigMapList', items: [{ metadata: { name: 'labelled', namespace: NS } }] } },
    },
    {
      id: 'path-07',
      rule: 'create: POST on the collection answers 201 with the stored object',
      source: 'conventions Verbs (create); Standard response codes',
      upstream: '201 Created',
      req: { method: 'POST', path: CM, body: cm('created') },
      expect: { status: 201, body: { kind: 'ConfigMap', metadata: { name: 'created', namespace: NS } } },
    },
    {
      id: 'path-08',
      rule: 'get: GET on the object path',
      source: 'conventions Verbs (get)',
      upstream: '200 ConfigMap',
      req: { method: 'GET', path: `${CM}/one` },
      expect: { status: 200, body: { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'one' } } },
    },
    {
      id: 'path-09',
      rule: 'get of a missing object: 404 naming the resource and the name',
      source: 'upstream storage NotFound',
      upstream: '404 NotFound "configmaps \\"nope\\" not found", details {name, kind}',
      req: { method: 'GET', path: `${CM}/nope` },
      expect: { status: 404, reason: 'NotFound', message: 'configmaps "nope" not found', body: { details: { name: 'nope', kind: 'configmaps' } } },
    },
    route('path-10', 'An unknown resource type is 404', 'GET', `/api/v1/namespaces/${NS}/widgets`, NOT_FOUND, '404 NotFound'),
    route('path-11', 'An unknown group version is 404', 'GET', '/apis/coordination.k8s.io/v9/leases', NOT_FOUND, '404 NotFound'),
    route(
      'path-12',
      'A namespaced object without its namespace names nothing: 404',
      'GET',
      '/api/v1/configmaps/one',
      NOT_FOUND,
      '404 NotFound (no such route)',
    ),
    route(
      'path-13',
      'A cluster-scoped kind under a namespace names nothing: 404',
      'GET',
      `/apis/scheduling.k8s.io/v1/namespaces/${NS}/priorityclasses`,
      NOT_FOUND,
      '404 NotFound',
    ),
    route('path-14', 'An undeclared subresource is 404', 'GET', `${CM}/one/status`, NOT_FOUND, '404 NotFound'),
    route('path-15', 'POST on the all-namespaces collection is 405', 'POST', '/api/v1/configmaps', NOT_ALLOWED, '405 MethodNotAllowed', cm('x')),
    route('path-16', 'PUT on the all-namespaces collection is 405', 'PUT', '/api/v1/configmaps', NOT_ALLOWED, '405 MethodNotAllowed', cm('x')),
    route(
      'path-17',
      'POST on a subresource that only gets, updates and patches is 405',
      'POST',
      '/api/v1/namespaces/default/status',
      NOT_ALLOWED,
      '405 MethodNotAllowed',
      {},
    ),
    route('path-18', 'GET on /finalize (update only) is 405', 'GET', '/api/v1/namespaces/default/finalize', NOT_ALLOWED, '405 MethodNotAllowed'),
    route(
      'path-19',
      'POST on a cluster-scoped object path is 405',
      'POST',
      '/apis/scheduling.k8s.io/v1/priorityclasses/system-node-critical',
      NOT_ALLOWED,
      '405 MethodNotAllowed',
      {},
    ),
    route('path-20', 'PUT on a cluster-scoped collection is 405', 'PUT', '/apis/scheduling.k8s.io/v1/priorityclasses', NOT_ALLOWED, '405 MethodNotAllowed', {}),
    {
      id: 'path-21',
      rule: 'The 405 comes before the body is read: a POST to an object path with a broken body is still 405',
      source: 'upstream go-restful routing precedes the handler',
      upstream: '405 MethodNotAllowed',
      req: { method: 'POST', path: `${CM}/one`, body: '{not json', headers: { 'content-type': 'application/json' } },
      expect: NOT_ALLOWED,
    },
    {
      id: 'path-22',
      rule: 'Namespaces: GET /api/v1/namespaces/{name} reads one, the namespace being the object itself',
      source: 'conventions Path shapes (Namespaces are cluster-scoped)',
      upstream: '200 Namespace',
      req: { method: 'GET', path: '/api/v1/namespaces/default' },
      expect: { status: 200, body: { kind: 'Namespace', metadata: { name: 'default' } } },
    },
    {
      id: 'path-23',
      rule: 'Namespace status subresource: GET',
      source: 'resources Kinds and their paths (Namespace status: get, PUT, PATCH)',
      upstream: '200 Namespace',
      req: { method: 'GET', path: '/api/v1/namespaces/default/status' },
      expect: { status: 200, body: { kind: 'Namespace', status: { phase: 'Active' } } },
    },
    {
      id: 'path-24',
      rule: 'Named group paths: /apis/<group>/<version>/namespaces/{ns}/<type> with apiVersion <group>/<version>',
      source: 'conventions Path shapes; Versioning 2',
      upstream: '201 Lease with apiVersion coordination.k8s.io/v1',
      req: {
        method: 'POST',
        path: `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases`,
        body: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'l1' }, spec: { holderIdentity: 'a' } },
      },
      expect: { status: 201, body: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { namespace: NS } } },
    },
    {
      id: 'path-25',
      rule: 'deletecollection: DELETE on the collection answers a Success Status',
      source: 'conventions Verbs (deletecollection); resources Delete response bodies',
      upstream: '200 Status Success',
      setup: [{ method: 'POST', path: CM, body: { ...cm('dc'), metadata: { name: 'dc', labels: { dc: 'yes' } } } }],
      req: { method: 'DELETE', path: `${CM}?labelSelector=dc%3Dyes` },
      expect: { status: 200, body: { kind: 'Status', status: 'Success' } },
      then: [{ req: { method: 'GET', path: `${CM}/dc` }, expect: { status: 404 } }],
    },
    route('path-26', 'POST on a namespace object path is 405', 'POST', '/api/v1/namespaces/default', NOT_ALLOWED, '405 MethodNotAllowed', {}),
    {
      id: 'path-27',
      rule: 'Namespace has no all-namespaces collection: its collection is cluster-wide',
      source: 'resources Kinds and their paths',
      upstream: '200 NamespaceList including default',
      req: { method: 'GET', path: '/api/v1/namespaces' },
      expect: { status: 200, body: { kind: 'NamespaceList' } },
    },
  ],
};
