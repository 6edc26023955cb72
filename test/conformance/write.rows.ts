/**
 * create, update and patch (conventions "Verbs", "Standard response codes", "Dry run"; upstream
 * handlers create.go, update.go, patch.go and the generic Store): the decode step answers 400
 * for a body (422 on `patch` for a patch result), validation 422, storage 404/409.
 */
import type { RowGroup } from './conformance.types.js';

const NS = 'cf-write';
const CM = `/api/v1/namespaces/${NS}/configmaps`;
const LEASES = `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases`;
const cm = (name: string, data: Record<string, unknown> = { a: '1' }, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name },
  data,
  ...extra,
});
const MERGE = { 'content-type': 'application/merge-patch+json' };
const JSONPATCH = { 'content-type': 'application/json-patch+json' };

/** The group. */
export const WRITES: RowGroup = {
  name: 'writes',
  namespace: NS,
  rows: [
    {
      id: 'write-01',
      rule: "A body whose kind is not the endpoint's is 400",
      source: 'upstream create.go (decoder: the object provided is unrecognized)',
      upstream: '400 BadRequest',
      req: { method: 'POST', path: CM, body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'w1' } } },
      expect: { status: 400, reason: 'BadRequest' },
    },
    {
      id: 'write-02',
      rule: "A body whose apiVersion is not the endpoint's is 400",
      source: 'conventions Path shapes (apiVersion); upstream create.go AcceptsGroupVersion',
      upstream: '400 BadRequest',
      req: { method: 'POST', path: CM, body: { apiVersion: 'v2', kind: 'ConfigMap', metadata: { name: 'w2' } } },
      expect: { status: 400, reason: 'BadRequest' },
    },
    {
      id: 'write-03',
      rule: 'A body naming another namespace than the URL is 400',
      source: 'upstream rest.BeforeCreate (ValidNamespace)',
      upstream: '400 BadRequest "the namespace of the provided object does not match the namespace sent on the request"',
      req: { method: 'POST', path: CM, body: { ...cm('w3'), metadata: { name: 'w3', namespace: 'elsewhere' } } },
      expect: { status: 400, reason: 'BadRequest', message: 'the namespace of the provided object does not match the namespace sent on the request' },
    },
    {
      id: 'write-04',
      rule: 'A create carrying resourceVersion is 400',
      source: 'upstream storage Create (ErrResourceVersionSetOnCreate)',
      upstream: '500 with reason "" and the same message (a plain storage error reaches the client as an internal error)',
      divergence:
        "A client mistake is answered with 400 BadRequest rather than kube's 500: the message is kube's, the code says whose fault it is, and clients do not retry it as a server error.",
      req: { method: 'POST', path: CM, body: { ...cm('w4'), metadata: { name: 'w4', resourceVersion: '5' } } },
      expect: { status: 400, reason: 'BadRequest', message: 'resourceVersion should not be set on objects to be created' },
    },
    {
      id: 'write-05',
      rule: 'A create of an existing name is 409 AlreadyExists',
      source: 'conventions What the service does 7 (unique names)',
      upstream: '409 AlreadyExists "configmaps \\"w5\\" already exists"',
      setup: [{ method: 'POST', path: CM, body: cm('w5') }],
      req: { method: 'POST', path: CM, body: cm('w5') },
      expect: { status: 409, reason: 'AlreadyExists', message: 'configmaps "w5" already exists', body: { details: { name: 'w5', kind: 'configmaps' } } },
    },
    {
      id: 'write-06',
      rule: 'A create without name or generateName is 422',
      source: 'upstream ValidateObjectMeta',
      upstream: '422 Invalid "metadata.name: Required value: name or generateName is required"',
      req: { method: 'POST', path: CM, body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: {} } },
      expect: { status: 422, reason: 'Invalid', message: /metadata.name: Required value: name or generateName is required/ },
    },
    {
      id: 'write-07',
      rule: 'generateName: the server completes the name',
      source: 'conventions Dry run (generateName); upstream names.SimpleNameGenerator',
      upstream: '201, metadata.name = prefix + 5 characters',
      req: { method: 'POST', path: CM, body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'gen-' } } },
      expect: { status: 201, text: /"name":"gen-[a-z0-9]{5}"/ },
    },
    {
      id: 'write-08',
      rule: 'A name that is not a DNS subdomain is 422',
      source: 'upstream ValidateObjectMeta (NameIsDNSSubdomain)',
      upstream: '422 Invalid metadata.name',
      req: { method: 'POST', path: CM, body: cm('Not_Valid') },
      expect: { status: 422, reason: 'Invalid', message: /^ConfigMap "Not_Valid" is invalid: metadata.name: Invalid value: "Not_Valid"/ },
    },
    {
      id: 'write-09',
      rule: 'An update with a stale resourceVersion is 409 Conflict',
      source: 'conventions Resource versions; upstream storage GuaranteedUpdate',
      upstream:
        '409 Conflict "Operation cannot be fulfilled on configmaps \\"w9\\": the object has been modified; please apply your changes to the latest version and try again"',
      setup: [{ method: 'POST', path: CM, body: cm('w9') }],
      req: { method: 'PUT', path: `${CM}/w9`, body: { ...cm('w9', { a: '2' }), metadata: { name: 'w9', resourceVersion: '1' } } },
      expect: {
        status: 409,
        reason: 'Conflict',
        message:
          'Operation cannot be fulfilled on configmaps "w9": the object has been modified; please apply your changes to the latest version and try again',
      },
    },
    {
      id: 'write-10',
      rule: 'An update whose body names another object than the URL is 400',
      source: 'upstream update.go checkName',
      upstream: '400 BadRequest "the name of the object (other) does not match the name on the URL (w9)"',
      req: { method: 'PUT', path: `${CM}/w9`, body: cm('other') },
      expect: { status: 400, reason: 'BadRequest', message: 'the name of the object (other) does not match the name on the URL (w9)' },
    },
    {
      id: 'write-11',
      rule: 'A value of the wrong JSON type does not decode: 400 "cannot be handled as"',
      source: 'upstream create.go transformDecodeError',
      upstream:
        '400 BadRequest "ConfigMap in version \\"v1\\" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ConfigMap.data of type string"',
      req: { method: 'POST', path: CM, body: cm('w11', { a: 1 }) },
      expect: {
        status: 400,
        reason: 'BadRequest',
        message:
          /^ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ConfigMap.data of type string$/,
      },
    },
    {
      id: 'write-12',
      rule: 'A body that is not JSON is 400',
      source: 'upstream create.go (decode error)',
      upstream: '400 BadRequest',
      req: { method: 'POST', path: CM, body: '{"apiVersion":', headers: { 'content-type': 'application/json' } },
      expect: { status: 400, reason: 'BadRequest' },
    },
    {
      id: 'write-13',
      rule: 'fieldValidation=Strict: an unknown field fails decoding with 400',
      source: 'conventions Query parameters (fieldValidation); upstream create.go (strict decoding)',
      upstream: '400 BadRequest "ConfigMap in version \\"v1\\" cannot be handled as a ConfigMap: strict decoding error: unknown field \\"bogus\\""',
      req: { method: 'POST', path: `${CM}?fieldValidation=Strict`, body: cm('w13', { a: '1' }, { bogus: 1 }) },
      expect: {
        status: 400,
        reason: 'BadRequest',
        message: 'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "bogus"',
      },
    },
    {
      id: 'write-14',
      rule: 'fieldValidation=Warn (the default): an unknown field is dropped with a Warning header',
      source: 'conventions Query parameters (fieldValidation); upstream addStrictDecodingWarnings',
      upstream: '201, Warning: 299 - "unknown field \\"bogus\\""',
      req: { method: 'POST', path: CM, body: cm('w14', { a: '1' }, { bogus: 1 }) },
      expect: { status: 201, headers: { warning: /299 - "unknown field \\"bogus\\""/ }, absent: ['bogus'] },
    },
    {
      id: 'write-15',
      rule: 'fieldValidation=Ignore: an unknown field is dropped silently',
      source: 'conventions Query parameters (fieldValidation)',
      upstream: '201, no Warning header',
      req: { method: 'POST', path: `${CM}?fieldValidation=Ignore`, body: cm('w15', { a: '1' }, { bogus: 1 }) },
      expect: { status: 201, headers: { warning: /^$/ }, absent: ['bogus'] },
    },
    {
      id: 'write-16',
      rule: 'fieldValidation=Strict: a duplicate field fails decoding with 400',
      source: 'upstream create.go (strict decoding: duplicate field)',
      upstream: '400 BadRequest "... strict decoding error: duplicate field \\"data\\""',
      req: {
        method: 'POST',
        path: `${CM}?fieldValidation=Strict`,
        body: '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"w16"},"data":{"a":"1"},"data":{"a":"2"}}',
        headers: { 'content-type': 'application/json' },
      },
      expect: { status: 400, reason: 'BadRequest', message: /strict decoding error: duplicate field "data"/ },
    },
    {
      id: 'write-17',
      rule: 'fieldValidation=Strict on a merge patch: an unknown field is 422 on `patch`',
      source: 'upstream patch.go jsonPatcher (strict errors: NewInvalid field patch)',
      upstream: '422 Invalid " \\"\\" is invalid: patch: Invalid value: ...: strict decoding error: unknown field \\"bogus\\""',
      setup: [{ method: 'POST', path: CM, body: cm('w17') }],
      req: { method: 'PATCH', path: `${CM}/w17?fieldValidation=Strict`, body: { bogus: 1 }, headers: MERGE },
      expect: { status: 422, reason: 'Invalid', message: /^ "" is invalid: patch: Invalid value: ".*": strict decoding error: unknown field "bogus"$/ },
    },
    {
      id: 'write-18',
      rule: 'A merge patch result of the wrong type is 422 on `patch`',
      source: 'upstream patch.go jsonPatcher (DecodeInto error: NewInvalid field patch)',
      upstream: '422 Invalid " \\"\\" is invalid: patch: Invalid value: ...: json: cannot unmarshal ..."',
      req: { method: 'PATCH', path: `${CM}/w17`, body: { data: { a: 5 } }, headers: MERGE },
      expect: { status: 422, reason: 'Invalid', message: /^ "" is invalid: patch: Invalid value: ".*": json: cannot unmarshal number/ },
    },
    {
      id: 'write-19',
      rule: 'A JSON patch whose test operation fails is 422',
      source: 'upstream patch.go applyJSPatch (NewGenericServerResponse 422)',
      upstream: '422',
      req: { method: 'PATCH', path: `${CM}/w17`, body: [{ op: 'test', path: '/data/a', value: 'nope' }], headers: JSONPATCH },
      expect: { status: 422 },
    },
    {
      id: 'write-20',
      rule: 'A JSON patch body that is not a list of operations is 400',
      source: 'upstream patch.go applyJSPatch (jsonpatch.DecodePatch: NewBadRequest)',
      upstream: '400 BadRequest',
      req: { method: 'PATCH', path: `${CM}/w17`, body: { op: 'add' }, headers: JSONPATCH },
      expect: { status: 400, reason: 'BadRequest' },
    },
    {
      id: 'write-21',
      rule: 'A patch of a missing object is 404',
      source: 'upstream patch.go (createNewObject: NotFound)',
      upstream: '404 NotFound',
      req: { method: 'PATCH', path: `${CM}/missing`, body: { data: { a: '1' } }, headers: MERGE },
      expect: { status: 404, reason: 'NotFound', message: 'configmaps "missing" not found' },
    },
    {
      id: 'write-22',
      rule: 'A patch with a Content-Type that is no patch type is 415',
      source: 'conventions Verbs (patch media types); upstream patch.go (NewUnsupportedMediaTypeError)',
      upstream: '415 UnsupportedMediaType',
      req: { method: 'PATCH', path: `${CM}/w17`, body: { data: { a: '1' } }, headers: { 'content-type': 'application/json' } },
      expect: { status: 415, reason: 'UnsupportedMediaType' },
    },
    {
      id: 'write-23',
      rule: 'A merge patch naming a stale resourceVersion is 409 (a precondition)',
      source: 'conventions Resource versions',
      upstream: '409 Conflict',
      req: { method: 'PATCH', path: `${CM}/w17`, body: { metadata: { resourceVersion: '1' }, data: { a: '2' } }, headers: MERGE },
      expect: { status: 409, reason: 'Conflict' },
    },
    {
      id: 'write-24',
      rule: 'A strategic merge patch merges maps',
      source: 'conventions Verbs (strategic merge patch)',
      upstream: '200, data merged',
      req: { method: 'PATCH', path: `${CM}/w17`, body: { data: { b: '2' } }, headers: { 'content-type': 'application/strategic-merge-patch+json' } },
      expect: { status: 200, body: { data: { a: '1', b: '2' } } },
    },
    {
      id: 'write-25',
      rule: 'A PUT without resourceVersion of a ConfigMap is an unconditional update',
      source: 'upstream configmap strategy AllowUnconditionalUpdate',
      upstream: '200',
      req: { method: 'PUT', path: `${CM}/w17`, body: cm('w17', { a: '9' }) },
      expect: { status: 200, body: { data: { a: '9' } } },
    },
    {
      id: 'write-26',
      rule: 'A PUT without resourceVersion of an existing Lease is 422 (Lease allows no unconditional update)',
      source: 'upstream lease strategy AllowUnconditionalUpdate false; Store.Update',
      upstream: '422 Invalid "metadata.resourceVersion: Invalid value: 0: must be specified for an update"',
      setup: [{ method: 'POST', path: LEASES, body: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'w26' }, spec: {} } }],
      req: {
        method: 'PUT',
        path: `${LEASES}/w26`,
        body: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'w26' }, spec: { holderIdentity: 'x' } },
      },
      expect: {
        status: 422,
        reason: 'Invalid',
        message: 'Lease.coordination.k8s.io "w26" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update',
      },
    },
    {
      id: 'write-27',
      rule: 'Server-set metadata in a create body is replaced (uid, creationTimestamp)',
      source: 'upstream rest.BeforeCreate (FillObjectMetaSystemFields)',
      upstream: '201 with a server uid',
      req: { method: 'POST', path: CM, body: { ...cm('w27'), metadata: { name: 'w27', uid: 'mine', creationTimestamp: '2001-01-01T00:00:00Z' } } },
      expect: { status: 201, text: /"uid":"(?!mine)[0-9a-f-]{36}"/ },
    },
    {
      id: 'write-28',
      rule: 'dryRun=All on update returns the result and stores nothing',
      source: 'conventions Dry run',
      upstream: '200 with the would-be object; stored object unchanged',
      req: { method: 'PUT', path: `${CM}/w27?dryRun=All`, body: cm('w27', { a: 'dry' }) },
      expect: { status: 200, body: { data: { a: 'dry' } } },
      then: [{ req: { method: 'GET', path: `${CM}/w27` }, expect: { status: 200, body: { data: { a: '1' } } } }],
    },
    {
      id: 'write-29',
      rule: 'A kind without spec has no metadata.generation',
      source: 'upstream strategies (ConfigMap sets no generation)',
      upstream: '201 without metadata.generation',
      req: { method: 'POST', path: CM, body: cm('w29') },
      expect: { status: 201, absent: ['metadata.generation'] },
    },
    {
      id: 'write-30',
      rule: 'Duplicate ownerReferences are dropped with a Warning',
      source: 'upstream rest.go dedupOwnerReferencesAndAddWarning',
      upstream: '201, one ownerReference, Warning ".metadata.ownerReferences contains duplicate entries; ..."',
      req: {
        method: 'POST',
        path: CM,
        body: {
          ...cm('w30'),
          metadata: {
            name: 'w30',
            ownerReferences: [
              { apiVersion: 'v1', kind: 'ConfigMap', name: 'w5', uid: '11111111-1111-1111-1111-111111111111' },
              { apiVersion: 'v1', kind: 'ConfigMap', name: 'w5', uid: '11111111-1111-1111-1111-111111111111' },
            ],
          },
        },
      },
      expect: {
        status: 201,
        headers: {
          warning:
            /\.metadata\.ownerReferences contains duplicate entries; API server dedups owner references in 1\.20\+, and may reject such requests as early as 1\.24; please fix your requests; duplicate UID\(s\) observed: 11111111-1111-1111-1111-111111111111/,
        },
        body: { metadata: { ownerReferences: [{ name: 'w5' }] } },
      },
    },
    {
      id: 'write-31',
      rule: 'A write to the main resource of a kind with /status keeps the stored status',
      source: 'conventions Terminology (sub-resource); upstream namespace strategy PrepareForUpdate',
      upstream: '200, status unchanged',
      setup: [{ method: 'POST', path: '/api/v1/namespaces', body: { metadata: { name: 'cf-write-status' } } }],
      req: { method: 'PATCH', path: '/api/v1/namespaces/cf-write-status', body: { status: { phase: 'Terminating' } }, headers: MERGE },
      expect: { status: 200, body: { status: { phase: 'Active' } } },
    },
    {
      id: 'write-32',
      rule: 'A merge patch putting bytes that are not base64 in binaryData is 422 on `patch`',
      source: 'upstream patch.go jsonPatcher (DecodeInto error)',
      upstream: '422 Invalid " \\"\\" is invalid: patch: Invalid value: ...: illegal base64 data at input byte 0"',
      setup: [{ method: 'POST', path: CM, body: cm('w32') }],
      req: { method: 'PATCH', path: `${CM}/w32`, body: { binaryData: { b: '%%%' } }, headers: MERGE },
      expect: { status: 422, reason: 'Invalid', message: /^ "" is invalid: patch: Invalid value: ".*": illegal base64 data at input byte 0$/ },
    },
    {
      id: 'write-33',
      rule: 'PUT that creates (Lease) still checks the name against the URL',
      source: 'upstream update.go checkName',
      upstream: '400 BadRequest "the name of the object (b) does not match the name on the URL (a)"',
      req: { method: 'PUT', path: `${LEASES}/a`, body: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'b' }, spec: {} } },
      expect: { status: 400, reason: 'BadRequest', message: 'the name of the object (b) does not match the name on the URL (a)' },
    },
    {
      id: 'write-34',
      rule: 'A create through an object path of a REST path shape that names a subresource of a kind without it is 404',
      source: 'conventions Path shapes (subresource support differs per object)',
      upstream: '404 NotFound',
      req: { method: 'PUT', path: `${CM}/w32/status`, body: cm('w32') },
      expect: { status: 404, reason: 'NotFound' },
    },
    {
      id: 'write-35',
      rule: "A field of the wrong type inside a nested struct names the innermost struct and the field's Go type",
      source: 'upstream create.go transformDecodeError (Go encoding/json UnmarshalTypeError)',
      upstream:
        '400 BadRequest "ConfigMap in version \\"v1\\" cannot be handled as a ConfigMap: json: cannot unmarshal string into Go struct field ObjectMeta.metadata.labels of type map[string]string"',
      req: { method: 'POST', path: CM, body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'w35', labels: 'x' } } },
      expect: {
        status: 400,
        reason: 'BadRequest',
        message:
          /^ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal string into Go struct field ObjectMeta\.metadata\.labels of type map\[string\]string$/,
      },
    },
    {
      id: 'write-36',
      rule: 'JSON null in a field of a built-in kind is the zero value, as if the field were absent (PUT and JSON patch alike)',
      source: 'upstream: objects decode into Go types (encoding/json leaves a field its zero value for null)',
      upstream: '201 without labels or data; a JSON patch setting data to null answers 200 without data',
      req: { method: 'POST', path: CM, body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'w36', labels: null }, data: null, binaryData: null } },
      expect: { status: 201, body: { metadata: { name: 'w36' } }, absent: ['metadata.labels', 'data', 'binaryData'] },
      then: [
        {
          req: { method: 'PATCH', path: `${CM}/w36`, headers: JSONPATCH, body: [{ op: 'add', path: '/data', value: null }] },
          expect: { status: 200, absent: ['data'] },
        },
      ],
    },
    {
      id: 'write-37',
      rule: 'A create body sent without a Content-Type is read as JSON (kubectl create --raw -f sends one so over HTTP/2, with no Content-Length)',
      source: 'upstream apiserver pkg/endpoints/handlers/negotiation NegotiateInputSerializerForMediaType (no media type: the first supported, JSON)',
      upstream: 'kubectl create --raw prints the created ConfigMap',
      kubectl: {
        args: ['create', '--raw', `${CM}`, '-f', '-'],
        input: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'w37' }, data: { a: '1' } }),
        stdout: /"name":"w37"/,
      },
      then: [{ req: { method: 'GET', path: `${CM}/w37` }, expect: { status: 200, body: { data: { a: '1' } } } }],
    },
  ],
};
