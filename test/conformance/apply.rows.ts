/** Server-side apply (conventions "Server-side apply"). */
import type { RowGroup } from './conformance.types.js';

const NS = 'cf-apply';
const CM = `/api/v1/namespaces/${NS}/configmaps`;
const APPLY = { 'content-type': 'application/apply-patch+yaml' };
const doc = (name: string, data: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n${data}`;

/** The group. */
export const APPLY_ROWS: RowGroup = {
  name: 'server-side apply',
  namespace: NS,
  rows: [
    {
      id: 'apply-01',
      rule: 'Apply creates a missing object (201) and records an Apply entry',
      source: 'conventions Server-side apply 1, 3',
      upstream: '201, managedFields [{manager: a, operation: Apply}]',
      req: { method: 'PATCH', path: `${CM}/ap1?fieldManager=a`, body: doc('ap1', '  x: "1"\n  w: "2"\n'), headers: APPLY },
      expect: {
        status: 201,
        body: {
          data: { x: '1', w: '2' },
          metadata: { managedFields: [{ manager: 'a', operation: 'Apply', fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:x': {}, 'f:w': {} } } }] },
        },
      },
    },
    {
      id: 'apply-02',
      rule: 'Applying the same intent again is 200',
      source: 'conventions Server-side apply 2',
      upstream: '200',
      req: { method: 'PATCH', path: `${CM}/ap1?fieldManager=a`, body: doc('ap1', '  x: "1"\n  w: "2"\n'), headers: APPLY },
      expect: { status: 200, body: { data: { x: '1', w: '2' } } },
    },
    {
      id: 'apply-03',
      rule: 'Another manager changing an owned field conflicts: 409 with FieldManagerConflict causes',
      source: 'conventions Server-side apply 4',
      upstream: '409 Conflict "Apply failed with 1 conflict: conflict with \\"a\\": .data.x"',
      req: { method: 'PATCH', path: `${CM}/ap1?fieldManager=b`, body: doc('ap1', '  x: "9"\n'), headers: APPLY },
      expect: {
        status: 409,
        reason: 'Conflict',
        message: 'Apply failed with 1 conflict: conflict with "a": .data.x',
        body: { details: { causes: [{ reason: 'FieldManagerConflict', field: '.data.x' }] } },
      },
    },
    {
      id: 'apply-04',
      rule: 'Setting the same value shares ownership without conflict',
      source: 'conventions Server-side apply 3, 4',
      upstream: '200, both managers own .data.x',
      req: { method: 'PATCH', path: `${CM}/ap1?fieldManager=b`, body: doc('ap1', '  x: "1"\n'), headers: APPLY },
      expect: { status: 200, body: { metadata: { managedFields: [{ manager: 'a' }, { manager: 'b', fieldsV1: { 'f:data': { 'f:x': {} } } }] } } },
    },
    {
      id: 'apply-05',
      rule: 'force=true takes ownership of a conflicting field',
      source: 'conventions Server-side apply 4 (force)',
      upstream: '200, value changed, the other manager loses the field',
      req: { method: 'PATCH', path: `${CM}/ap1?fieldManager=b&force=true`, body: doc('ap1', '  w: "7"\n'), headers: APPLY },
      expect: { status: 200, body: { data: { x: '1', w: '7' } } },
    },
    {
      id: 'apply-06',
      rule: 'A field the manager stops applying, owned by no one else, is removed',
      source: 'conventions Server-side apply 2',
      upstream: '200, field removed',
      setup: [{ method: 'PATCH', path: `${CM}/ap2?fieldManager=a`, body: doc('ap2', '  x: "1"\n  w: "2"\n'), headers: APPLY }],
      req: { method: 'PATCH', path: `${CM}/ap2?fieldManager=a`, body: doc('ap2', '  x: "1"\n'), headers: APPLY },
      expect: { status: 200, body: { data: { x: '1' } }, absent: ['data.w'] },
    },
    {
      id: 'apply-07',
      rule: 'An Update takes ownership of the fields it changes and never conflicts; the applier loses them',
      source: 'conventions Server-side apply 4 (Update operations never conflict)',
      upstream: "200, only the writer's Update entry is left (the applier owned only .data.x)",
      req: { method: 'PATCH', path: `${CM}/ap2?fieldManager=editor`, body: { data: { x: '5' } }, headers: { 'content-type': 'application/merge-patch+json' } },
      expect: { status: 200, body: { metadata: { managedFields: [{ manager: 'editor', operation: 'Update', fieldsV1: { 'f:data': { 'f:x': {} } } }] } } },
    },
    {
      id: 'apply-08',
      rule: 'managedFields must not be in the applied object',
      source: 'conventions Server-side apply 1',
      upstream: '400 BadRequest "metadata.managedFields must be nil"',
      req: {
        method: 'PATCH',
        path: `${CM}/ap3?fieldManager=a`,
        body: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ap3\n  managedFields:\n  - manager: a\n    operation: Apply\n',
        headers: APPLY,
      },
      expect: { status: 400, reason: 'BadRequest', message: 'metadata.managedFields must be nil' },
    },
    {
      id: 'apply-09',
      rule: 'An apply whose name differs from the URL is 400',
      source: 'upstream patch.go checkName',
      upstream: '400 BadRequest',
      req: { method: 'PATCH', path: `${CM}/ap4?fieldManager=a`, body: doc('other', '  x: "1"\n'), headers: APPLY },
      expect: { status: 400, reason: 'BadRequest' },
    },
    {
      id: 'apply-10',
      rule: 'An apply body that is not YAML is 400',
      source: 'upstream applyPatcher ("error decoding YAML")',
      upstream: '400 BadRequest',
      req: { method: 'PATCH', path: `${CM}/ap4?fieldManager=a`, body: 'metadata: [unclosed', headers: APPLY },
      expect: { status: 400, reason: 'BadRequest' },
    },
    {
      id: 'apply-11',
      rule: 'Apply with dryRun=All stores nothing',
      source: 'conventions Dry run',
      upstream: '201 with the object; nothing stored',
      req: { method: 'PATCH', path: `${CM}/ap5?fieldManager=a&dryRun=All`, body: doc('ap5', '  x: "1"\n'), headers: APPLY },
      expect: { status: 201, body: { metadata: { name: 'ap5' } } },
      then: [{ req: { method: 'GET', path: `${CM}/ap5` }, expect: { status: 404 } }],
    },
    {
      id: 'apply-12',
      rule: 'kubectl apply --server-side creates and reports serverside-applied',
      source: 'conventions Server-side apply 1',
      upstream: 'configmap/ap6 serverside-applied',
      kubectl: {
        args: ['apply', '--server-side', '-f', '-'],
        input: `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ap6\n  namespace: ${NS}\ndata:\n  x: "1"\n`,
        stdout: /configmap\/ap6 serverside-applied/,
      },
    },
    {
      id: 'apply-13',
      rule: 'An applied value of the wrong type does not decode (400)',
      source: 'upstream structuredmerge Apply (typed conversion of the patch)',
      upstream: '500 "failed to create typed patch object (/v1, Kind=ConfigMap): .data.x: expected string, got ..."',
      divergence: "kube reports a type error in an applied intent as an internal error (500); we answer the client's mistake with the decode step's 400.",
      req: {
        method: 'PATCH',
        path: `${CM}/ap7?fieldManager=a`,
        body: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ap7\ndata:\n  x: 5\n',
        headers: APPLY,
      },
      expect: { status: 400, reason: 'BadRequest', message: /cannot be handled as a ConfigMap: json: cannot unmarshal number/ },
    },
  ],
};
