/** delete and deletecollection (conventions "Deletion of an object"; resources "Delete response bodies"). */
import type { RowGroup } from './conformance.types.js';

const NS = 'cf-del';
const CM = `/api/v1/namespaces/${NS}/configmaps`;
const cm = (name: string, meta: Record<string, unknown> = {}) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ...meta }, data: { a: '1' } });
const MERGE = { 'content-type': 'application/merge-patch+json' };
const STATUS_DIVERGENCE =
  'resources.md "Delete response bodies" prescribes a Status for ConfigMap (200 and 202 alike); kube answers the object itself whenever the delete did not remove it at once.';

/** The group. */
export const DELETES: RowGroup = {
  name: 'deletion',
  namespace: NS,
  rows: [
    {
      id: 'del-01',
      rule: 'delete of a ConfigMap answers a Success Status naming it',
      source: 'resources Delete response bodies (ConfigMap: Status)',
      upstream: '200 Status {status: Success, details: {name, kind: configmaps, uid}}',
      setup: [{ method: 'POST', path: CM, body: cm('d1') }],
      req: { method: 'DELETE', path: `${CM}/d1` },
      expect: { status: 200, body: { kind: 'Status', status: 'Success', details: { name: 'd1', kind: 'configmaps' } } },
      then: [{ req: { method: 'GET', path: `${CM}/d1` }, expect: { status: 404 } }],
    },
    {
      id: 'del-02',
      rule: 'delete of a missing object is 404',
      source: 'upstream Store.Delete',
      upstream: '404 NotFound',
      req: { method: 'DELETE', path: `${CM}/nope` },
      expect: { status: 404, reason: 'NotFound', message: 'configmaps "nope" not found' },
    },
    {
      id: 'del-03',
      rule: 'delete of an object with finalizers marks it Terminating (deletionTimestamp) and keeps it',
      source: 'conventions Deletion of an object (Live -> Terminating)',
      upstream: '200 with the Terminating object',
      divergence: STATUS_DIVERGENCE,
      setup: [{ method: 'POST', path: CM, body: cm('d3', { finalizers: ['example.com/hold'] }) }],
      req: { method: 'DELETE', path: `${CM}/d3` },
      expect: { status: 200, body: { kind: 'Status', status: 'Success' } },
      then: [{ req: { method: 'GET', path: `${CM}/d3` }, expect: { status: 200, text: /"deletionTimestamp":"[^"]+"/ } }],
    },
    {
      id: 'del-04',
      rule: 'A terminating object takes no new finalizers',
      source: 'conventions Deletion of an object; upstream ValidateNoNewFinalizers',
      upstream: '422 Invalid "metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted"',
      req: { method: 'PATCH', path: `${CM}/d3`, body: { metadata: { finalizers: ['example.com/hold', 'example.com/more'] } }, headers: MERGE },
      expect: { status: 422, reason: 'Invalid', message: /metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted/ },
    },
    {
      id: 'del-05',
      rule: 'Removing the last finalizer removes the object',
      source: 'conventions Deletion of an object (Terminating -> Removed)',
      upstream: '200, then 404',
      req: { method: 'PATCH', path: `${CM}/d3`, body: { metadata: { finalizers: null } }, headers: MERGE },
      expect: { status: 200 },
      then: [{ req: { method: 'GET', path: `${CM}/d3` }, expect: { status: 404 } }],
    },
    {
      id: 'del-06',
      rule: 'A uid precondition that does not match is 409',
      source: 'upstream Store.Delete (preconditions)',
      upstream: '409 Conflict "Precondition failed: UID in precondition: x, UID in object meta: ..."',
      setup: [{ method: 'POST', path: CM, body: cm('d6') }],
      req: { method: 'DELETE', path: `${CM}/d6`, body: { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: 'x' } } },
      expect: { status: 409, reason: 'Conflict', message: /Precondition failed: UID in precondition: x, UID in object meta: / },
    },
    {
      id: 'del-07',
      rule: 'A resourceVersion precondition that does not match is 409',
      source: 'upstream Store.Delete (preconditions)',
      upstream: '409 Conflict',
      req: { method: 'DELETE', path: `${CM}/d6`, body: { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { resourceVersion: '1' } } },
      expect: { status: 409, reason: 'Conflict' },
    },
    {
      id: 'del-08',
      rule: 'dryRun=All on delete keeps the object',
      source: 'conventions Dry run (DELETE)',
      upstream: '200, object still there',
      req: { method: 'DELETE', path: `${CM}/d6?dryRun=All` },
      expect: { status: 200 },
      then: [{ req: { method: 'GET', path: `${CM}/d6` }, expect: { status: 200 } }],
    },
    {
      id: 'del-09',
      rule: 'orphanDependents=false on an object that is not removed at once is 202',
      source: 'conventions Standard response codes (delete: 202); upstream delete.go',
      upstream: '202 with the Terminating object',
      divergence: STATUS_DIVERGENCE,
      setup: [{ method: 'POST', path: CM, body: cm('d9', { finalizers: ['example.com/hold'] }) }],
      req: { method: 'DELETE', path: `${CM}/d9?orphanDependents=false` },
      expect: { status: 202, body: { kind: 'Status' } },
    },
    {
      id: 'del-10',
      rule: 'ServiceAccount delete answers the deleted object',
      source: 'resources Delete response bodies (ServiceAccount: the object)',
      upstream: '200 ServiceAccount',
      setup: [
        { method: 'POST', path: `/api/v1/namespaces/${NS}/serviceaccounts`, body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'sa1' } } },
      ],
      req: { method: 'DELETE', path: `/api/v1/namespaces/${NS}/serviceaccounts/sa1` },
      expect: { status: 200, body: { kind: 'ServiceAccount', metadata: { name: 'sa1' } } },
    },
    {
      id: 'del-11',
      rule: 'The default namespace may not be deleted',
      source: 'upstream NamespaceLifecycle admission',
      upstream: '403 Forbidden "namespaces \\"default\\" is forbidden: this namespace may not be deleted"',
      req: { method: 'DELETE', path: '/api/v1/namespaces/default' },
      expect: { status: 403, reason: 'Forbidden', message: 'namespaces "default" is forbidden: this namespace may not be deleted' },
    },
    {
      id: 'del-12',
      rule: 'Namespace delete answers a Status (200)',
      source: 'resources Delete response bodies (Namespace: 200 Status)',
      upstream: '200 with the Terminating Namespace',
      divergence: 'resources.md "Delete response bodies" prescribes a Status for Namespace; kube\'s namespace REST answers the Terminating Namespace.',
      setup: [{ method: 'POST', path: '/api/v1/namespaces', body: { metadata: { name: 'cf-del-gone' } } }],
      req: { method: 'DELETE', path: '/api/v1/namespaces/cf-del-gone' },
      expect: { status: 200, body: { kind: 'Status', status: 'Success' } },
    },
    {
      id: 'del-13',
      rule: 'No new content in a terminating namespace',
      source: 'conventions What the service does 8; upstream NamespaceLifecycle admission',
      upstream: '403 Forbidden "unable to create new content in namespace cf-del-term because it is being terminated"',
      setup: [
        { method: 'POST', path: '/api/v1/namespaces', body: { metadata: { name: 'cf-del-term' } } },
        { method: 'POST', path: '/api/v1/namespaces/cf-del-term/configmaps', body: cm('held', { finalizers: ['example.com/hold'] }) },
        { method: 'DELETE', path: '/api/v1/namespaces/cf-del-term' },
      ],
      req: { method: 'POST', path: '/api/v1/namespaces/cf-del-term/configmaps', body: cm('late') },
      expect: { status: 403, reason: 'Forbidden', message: /unable to create new content in namespace cf-del-term because it is being terminated/ },
    },
    {
      id: 'del-14',
      rule: 'deletecollection with dryRun=All deletes nothing',
      source: 'conventions Dry run (deletecollection)',
      upstream: '200 Status, objects kept',
      setup: [{ method: 'POST', path: CM, body: cm('d14', { labels: { dc: 'dry' } }) }],
      req: { method: 'DELETE', path: `${CM}?labelSelector=dc%3Ddry&dryRun=All` },
      expect: { status: 200, body: { kind: 'Status', status: 'Success' } },
      then: [{ req: { method: 'GET', path: `${CM}/d14` }, expect: { status: 200 } }],
    },
    {
      id: 'del-15',
      rule: 'A DeleteOptions body of another kind is 400',
      source: 'upstream delete.go (decode DeleteOptions)',
      upstream: '400 BadRequest',
      req: { method: 'DELETE', path: `${CM}/d14`, body: { kind: 'Pod', apiVersion: 'v1' } },
      expect: { status: 400, reason: 'BadRequest' },
    },
  ],
};
