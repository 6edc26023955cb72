/**
 * Rows for the divergences a client trips on first: managedFields reset, 405 on the wrong kind
 * of path, create on update, force on non-apply patches, Namespace status phase, MicroTime.
 */
import type { RowGroup } from './conformance.types.js';

const NS = 'cf-fix';
const CM = `/api/v1/namespaces/${NS}/configmaps`;
const LEASES = `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases`;

const cm = (name: string, data: Record<string, string> = { a: '1' }) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data });
const lease = (name: string, spec: Record<string, unknown>) => ({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name }, spec });

/** The group. */
export const FIXES: RowGroup = {
  name: 'first divergences',
  namespace: NS,
  rows: [
    {
      id: 'ssa-01',
      rule: 'A merge patch {"metadata":{"managedFields":[{}]}} resets field ownership',
      source: 'conventions Server-side apply 8',
      upstream: '200, managedFields emptied (fieldmanager decodeManagedFields: isResetManagedFields)',
      setup: [{ method: 'POST', path: `${CM}?fieldManager=writer`, body: cm('mf-merge') }],
      kubectl: {
        args: ['patch', 'cm', 'mf-merge', '-n', NS, '--type', 'merge', '-p', '{"metadata":{"managedFields":[{}]}}'],
        stdout: /configmap\/mf-merge patched/,
      },
      then: [{ req: { method: 'GET', path: `${CM}/mf-merge` }, expect: { status: 200, absent: ['metadata.managedFields'] } }],
    },
    {
      id: 'ssa-02',
      rule: 'A JSON patch replacing /metadata/managedFields with [{}] resets field ownership',
      source: 'conventions Server-side apply 8',
      upstream: '200, managedFields emptied',
      setup: [{ method: 'POST', path: `${CM}?fieldManager=writer`, body: cm('mf-json') }],
      kubectl: {
        args: ['patch', 'cm', 'mf-json', '-n', NS, '--type', 'json', '-p', '[{"op":"replace","path":"/metadata/managedFields","value":[{}]}]'],
        stdout: /configmap\/mf-json patched/,
      },
      then: [{ req: { method: 'GET', path: `${CM}/mf-json` }, expect: { status: 200, absent: ['metadata.managedFields'] } }],
    },
    {
      id: 'ssa-03',
      rule: 'A PUT carrying managedFields [{}] resets ownership first; the writer then owns what it changed',
      source: 'conventions Server-side apply 8',
      upstream: "200, managedFields holds only the writer's Update entry",
      setup: [{ method: 'POST', path: `${CM}?fieldManager=writer`, body: cm('mf-put') }],
      kubectl: {
        args: ['replace', '-f', '-'],
        input: `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: mf-put\n  namespace: ${NS}\n  managedFields: [{}]\ndata:\n  a: "1"\n  b: "2"\n`,
        stdout: /configmap\/mf-put replaced/,
      },
      then: [
        {
          req: { method: 'GET', path: `${CM}/mf-put` },
          expect: {
            status: 200,
            body: { metadata: { managedFields: [{ manager: 'kubectl-replace', operation: 'Update', fieldsV1: { 'f:data': { 'f:b': {} } } }] } },
          },
        },
      ],
    },
    {
      id: 'ssa-04',
      rule: 'An empty managedFields list alone does not reset ownership',
      source: 'conventions Server-side apply 8',
      upstream: '200, managedFields emptied: fieldmanager isResetManagedFields also treats a non-nil empty list as a reset',
      divergence:
        'conventions.md "Server-side apply" 8 says an empty list alone does not reset (clients unaware of the field must not wipe it); the document wins over kube\'s code here.',
      setup: [{ method: 'POST', path: `${CM}?fieldManager=writer`, body: cm('mf-empty') }],
      req: { method: 'PATCH', path: `${CM}/mf-empty`, body: { metadata: { managedFields: [] } }, headers: { 'content-type': 'application/merge-patch+json' } },
      expect: { status: 200, body: { metadata: { managedFields: [{ manager: 'writer' }] } } },
    },
    {
      id: 'path-01',
      rule: 'POST to an object path is 405 and creates nothing',
      source: 'conventions Verbs (create: POST on the collection); upstream installer.go routes',
      upstream: '405 MethodNotAllowed "the server does not allow this method on the requested resource"',
      kubectl: {
        args: ['create', '--raw', `${CM}/foo`, '-f', '-'],
        input: JSON.stringify(cm('bar')),
        fail: true,
        stderr: /MethodNotAllowed|not allow this method/,
      },
      then: [
        {
          req: { method: 'POST', path: `${CM}/foo`, body: cm('bar') },
          expect: { status: 405, reason: 'MethodNotAllowed', message: 'the server does not allow this method on the requested resource' },
        },
        { req: { method: 'GET', path: `${CM}/bar` }, expect: { status: 404, reason: 'NotFound' } },
      ],
    },
    {
      id: 'path-02',
      rule: 'DELETE on the all-namespaces collection is 405',
      source: 'conventions Path shapes (all namespaces: list only); upstream installer.go',
      upstream: '405 MethodNotAllowed',
      kubectl: { args: ['delete', '--raw', '/api/v1/configmaps'], fail: true, stderr: /MethodNotAllowed|not allow this method/ },
      then: [{ req: { method: 'DELETE', path: '/api/v1/configmaps' }, expect: { status: 405, reason: 'MethodNotAllowed' } }],
    },
    {
      id: 'path-03',
      rule: 'PUT on a collection is 405',
      source: 'conventions Verbs (update: single resource); upstream installer.go',
      upstream: '405 MethodNotAllowed',
      kubectl: { args: ['replace', '--raw', CM, '-f', '-'], input: JSON.stringify(cm('x')), fail: true, stderr: /MethodNotAllowed|not allow this method/ },
    },
    {
      id: 'path-04',
      rule: 'PATCH on a collection is 405',
      source: 'conventions Verbs (patch: single resource); upstream installer.go',
      upstream: '405 MethodNotAllowed',
      req: { method: 'PATCH', path: CM, body: {}, headers: { 'content-type': 'application/merge-patch+json' } },
      expect: { status: 405, reason: 'MethodNotAllowed' },
    },
    {
      id: 'update-01',
      rule: 'PUT to a missing Lease creates it',
      source: 'conventions Verbs (update: the server classifies a PUT as create or update); upstream lease strategy AllowCreateOnUpdate',
      upstream: '201 Created',
      kubectl: {
        args: ['replace', '-f', '-'],
        input: `apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata:\n  name: leader\n  namespace: ${NS}\nspec:\n  holderIdentity: me\n  leaseDurationSeconds: 15\n`,
        stdout: /lease.coordination.k8s.io\/leader replaced/,
      },
      then: [
        {
          req: { method: 'PUT', path: `${LEASES}/leader-2`, body: lease('leader-2', { holderIdentity: 'me' }) },
          expect: { status: 201, body: { spec: { holderIdentity: 'me' } } },
        },
        { req: { method: 'GET', path: `${LEASES}/leader` }, expect: { status: 200, body: { spec: { holderIdentity: 'me' } } } },
      ],
    },
    {
      id: 'update-02',
      rule: 'PUT to a missing Event creates it',
      source: 'upstream event strategy AllowCreateOnUpdate',
      upstream: '201 Created',
      req: {
        method: 'PUT',
        path: `/api/v1/namespaces/${NS}/events/ev-1`,
        body: {
          apiVersion: 'v1',
          kind: 'Event',
          metadata: { name: 'ev-1' },
          involvedObject: { kind: 'ConfigMap', name: 'x', namespace: NS },
          reason: 'Test',
          message: 'm',
        },
      },
      expect: { status: 201, body: { metadata: { name: 'ev-1' } } },
    },
    {
      id: 'update-03',
      rule: 'PUT to a missing ConfigMap is 404 (ConfigMap does not allow create on update)',
      source: 'upstream configmap strategy AllowCreateOnUpdate false',
      upstream: '404 NotFound',
      req: { method: 'PUT', path: `${CM}/missing`, body: cm('missing') },
      expect: { status: 404, reason: 'NotFound', message: 'configmaps "missing" not found' },
    },
    {
      id: 'patch-01',
      rule: 'force on a merge patch is 422',
      source: 'conventions Query parameters (force: with apply); upstream ValidatePatchOptions',
      upstream: '422 Invalid "PatchOptions.meta.k8s.io \\"\\" is invalid: force: Forbidden: may not be specified for non-apply patch"',
      setup: [{ method: 'POST', path: CM, body: cm('force') }],
      req: { method: 'PATCH', path: `${CM}/force?force=true`, body: { data: { a: '2' } }, headers: { 'content-type': 'application/merge-patch+json' } },
      expect: { status: 422, reason: 'Invalid', message: 'PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch' },
    },
    {
      id: 'patch-02',
      rule: 'force=false on a JSON patch is 422 as well (any force on a non-apply patch)',
      source: 'upstream ValidatePatchOptions (Force != nil)',
      upstream: '422 Invalid',
      setup: [{ method: 'POST', path: CM, body: cm('force-false') }],
      req: {
        method: 'PATCH',
        path: `${CM}/force-false?force=false`,
        body: [{ op: 'replace', path: '/data/a', value: '2' }],
        headers: { 'content-type': 'application/json-patch+json' },
      },
      expect: { status: 422, reason: 'Invalid', message: /force: Forbidden/ },
    },
    {
      id: 'kinds-01',
      rule: 'Namespace status: phase Terminating on a live namespace is refused',
      source: 'resources Namespace (status.phase); upstream ValidateNamespaceStatusUpdate',
      upstream: '422 Invalid "status.Phase: Invalid value: \\"Terminating\\": may only be \'Active\' if `deletionTimestamp` is empty"',
      setup: [{ method: 'POST', path: '/api/v1/namespaces', body: { metadata: { name: 'cf-phase' } } }],
      kubectl: {
        args: ['patch', 'ns', 'cf-phase', '--subresource=status', '--type', 'merge', '-p', '{"status":{"phase":"Terminating"}}'],
        fail: true,
        stderr: /status.Phase: Invalid value: "Terminating": may only be 'Active' if `deletionTimestamp` is empty/,
      },
      then: [
        { req: { method: 'GET', path: '/api/v1/namespaces/cf-phase' }, expect: { status: 200, body: { status: { phase: 'Active' } } } },
        { req: { method: 'POST', path: '/api/v1/namespaces/cf-phase/configmaps', body: cm('still-open') }, expect: { status: 201 } },
      ],
    },
    {
      id: 'kinds-02',
      rule: 'Lease MicroTime: a renewTime without six fractional digits does not decode',
      source: 'resources (MicroTime: microsecond precision); upstream metav1.MicroTime UnmarshalJSON (RFC3339Micro)',
      upstream: '400 BadRequest "Lease in version \\"v1\\" cannot be handled as a Lease: parsing time ..."',
      kubectl: {
        args: ['create', '-f', '-'],
        input: `apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata:\n  name: micro-bad\n  namespace: ${NS}\nspec:\n  renewTime: "2024-01-01T10:00:00+02:00"\n`,
        fail: true,
        stderr: /cannot be handled as a Lease: parsing time "2024-01-01T10:00:00\+02:00"/,
      },
      then: [
        {
          req: { method: 'POST', path: LEASES, body: lease('micro-bad', { renewTime: '2024-01-01T10:00:00.123Z' }) },
          expect: {
            status: 400,
            reason: 'BadRequest',
            message: /^Lease in version "v1" cannot be handled as a Lease: parsing time "2024-01-01T10:00:00.123Z"/,
          },
        },
      ],
    },
    {
      id: 'kinds-03',
      rule: 'Lease MicroTime: stored in UTC with its microseconds',
      source: 'resources (MicroTime); upstream MicroTime MarshalJSON (UTC, RFC3339Micro)',
      upstream: '201, renewTime "2024-01-01T08:00:00.123456Z"',
      kubectl: {
        args: ['create', '-f', '-'],
        input: `apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata:\n  name: micro-ok\n  namespace: ${NS}\nspec:\n  renewTime: "2024-01-01T10:00:00.123456+02:00"\n  acquireTime: "2024-01-01T07:59:59.000001Z"\n`,
        stdout: /lease.coordination.k8s.io\/micro-ok created/,
      },
      then: [
        {
          req: { method: 'GET', path: `${LEASES}/micro-ok` },
          expect: { status: 200, body: { spec: { renewTime: '2024-01-01T08:00:00.123456Z', acquireTime: '2024-01-01T07:59:59.000001Z' } } },
        },
        {
          req: {
            method: 'PATCH',
            path: `${LEASES}/micro-ok`,
            body: { spec: { renewTime: 'soon' } },
            headers: { 'content-type': 'application/merge-patch+json' },
          },
          expect: { status: 422, reason: 'Invalid', message: /^ "" is invalid: patch: Invalid value: ".*": parsing time "soon"/ },
        },
      ],
    },
  ],
};
