/**
 * Query options (conventions "Query parameters", "Resource versions", "Dry run"): a value the
 * query cannot be decoded into is 400 (ParameterCodec.DecodeParameters); a decoded value the
 * options' validation refuses is 422 naming the options kind (ValidateCreateOptions, ...), except
 * list and watch option combinations, which conventions.md answers with 400.
 */
import type { Row, RowGroup } from './conformance.types.js';

const NS = 'cf-opts';
const CM = `/api/v1/namespaces/${NS}/configmaps`;
const cm = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { a: '1' } });
const LIST_DIVERGENCE = 'conventions.md "Resource versions" prescribes HTTP 400 for invalid list option combinations; kube answers 422 ListOptions.meta.k8s.io from ValidateListOptions. We follow the document for every list/watch option validation.';

function bad(id: string, rule: string, method: string, path: string, status: number, reason: string, upstream: string, message?: string | RegExp, body?: unknown, extra: Partial<Row> = {}): Row {
  return { id, rule, source: 'conventions Query parameters', upstream, req: { method, path, body }, expect: { status, reason, message }, ...extra };
}

/** The group. */
export const OPTIONS: RowGroup = {
  name: 'options',
  namespace: NS,
  rows: [
    bad('opts-01', 'limit that is not a number does not decode', 'GET', `${CM}?limit=ten`, 400, 'BadRequest', '400 BadRequest (ParameterCodec)'),
    bad('opts-02', 'timeoutSeconds that is not a number does not decode', 'GET', `${CM}?timeoutSeconds=soon`, 400, 'BadRequest', '400 BadRequest (ParameterCodec)'),
    bad('opts-03', 'gracePeriodSeconds that is not an integer does not decode', 'DELETE', `${CM}/x?gracePeriodSeconds=1.5`, 400, 'BadRequest', '400 BadRequest (ParameterCodec)'),
    bad('opts-04', 'resourceVersionMatch without resourceVersion is invalid', 'GET', `${CM}?resourceVersionMatch=NotOlderThan`, 400, 'BadRequest', '422 Invalid ListOptions (ValidateListOptions)', /resourceVersionMatch is forbidden unless resourceVersion is provided/, undefined, { divergence: LIST_DIVERGENCE }),
    bad('opts-05', 'resourceVersionMatch=Exact with resourceVersion=0 is invalid', 'GET', `${CM}?resourceVersion=0&resourceVersionMatch=Exact`, 400, 'BadRequest', '422 Invalid ListOptions', /resourceVersionMatch "exact" is forbidden for resourceVersion "0"/, undefined, { divergence: LIST_DIVERGENCE }),
    bad('opts-06', 'an unsupported resourceVersionMatch value is invalid', 'GET', `${CM}?resourceVersion=1&resourceVersionMatch=Sometimes`, 400, 'BadRequest', '422 Invalid ListOptions (Unsupported value)', /resourceVersionMatch: Unsupported value/, undefined, { divergence: LIST_DIVERGENCE }),
    bad('opts-07', 'limit and continue with a non-zero resourceVersion is 400', 'GET', `${CM}?limit=1&continue=abc&resourceVersion=5`, 400, 'BadRequest', '400 BadRequest', undefined, undefined, { source: 'conventions Resource versions (list table: invalid, HTTP 400)' }),
    bad('opts-08', 'a forged continue token is 400', 'GET', `${CM}?limit=1&continue=bm90LWEtdG9rZW4`, 400, 'BadRequest', '400 BadRequest "continue key is not valid"', undefined, undefined, { source: 'conventions Pagination 2' }),
    bad('opts-09', 'dryRun other than All is refused by CreateOptions validation', 'POST', `${CM}?dryRun=Some`, 422, 'Invalid', '422 Invalid CreateOptions', 'CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: "Some": supported values: "All"', cm('dry1'), { source: 'conventions Dry run; upstream ValidateCreateOptions' }),
    bad('opts-10', 'dryRun other than All on update: UpdateOptions', 'PUT', `${CM}/x?dryRun=Some`, 422, 'Invalid', '422 Invalid UpdateOptions', /^UpdateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value/, cm('x'), { source: 'conventions Dry run; upstream ValidateUpdateOptions' }),
    bad('opts-11', 'dryRun other than All on patch: PatchOptions', 'PATCH', `${CM}/x?dryRun=Some`, 422, 'Invalid', '422 Invalid PatchOptions', /^PatchOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value/, {}, {
      source: 'conventions Dry run; upstream ValidatePatchOptions',
      req: { method: 'PATCH', path: `${CM}/x?dryRun=Some`, body: {}, headers: { 'content-type': 'application/merge-patch+json' } },
    }),
    bad('opts-12', 'dryRun other than All on delete: DeleteOptions', 'DELETE', `${CM}/x?dryRun=Some`, 422, 'Invalid', '422 Invalid DeleteOptions', /^DeleteOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value/, undefined, { source: 'conventions Dry run; upstream ValidateDeleteOptions' }),
    bad('opts-13', 'fieldValidation outside Ignore/Warn/Strict is refused', 'POST', `${CM}?fieldValidation=Loose`, 422, 'Invalid', '422 Invalid CreateOptions', /^CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Loose"/, cm('fv'), { source: 'conventions Query parameters (fieldValidation); upstream ValidateFieldValidation' }),
    bad('opts-14', 'fieldManager longer than 128 bytes is refused', 'POST', `${CM}?fieldManager=${'m'.repeat(129)}`, 422, 'Invalid', '422 Invalid CreateOptions (fieldManager: Too long)', /^CreateOptions.meta.k8s.io "" is invalid: fieldManager: Too long/, cm('fm'), { source: 'upstream ValidateFieldManager' }),
    {
      id: 'opts-15',
      rule: 'apply requires fieldManager',
      source: 'conventions Server-side apply 1',
      upstream: '422 Invalid "PatchOptions.meta.k8s.io \\"\\" is invalid: fieldManager: Required value: is required for apply patch"',
      req: { method: 'PATCH', path: `${CM}/applied`, body: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\n', headers: { 'content-type': 'application/apply-patch+yaml' } },
      expect: { status: 422, reason: 'Invalid', message: 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch' },
    },
    bad('opts-16', 'propagationPolicy outside Orphan/Background/Foreground is refused', 'DELETE', `${CM}/x?propagationPolicy=Sideways`, 422, 'Invalid', '422 Invalid DeleteOptions (Unsupported value)', /^DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Sideways"/, undefined, { source: 'conventions Query parameters (propagationPolicy); upstream ValidateDeleteOptions' }),
    bad('opts-17', 'orphanDependents together with propagationPolicy is refused', 'DELETE', `${CM}/x?orphanDependents=false&propagationPolicy=Background`, 422, 'Invalid', '422 Invalid DeleteOptions', /orphanDependents and deletionPropagation cannot be both set/, undefined, { source: 'upstream ValidateDeleteOptions' }),
    {
      id: 'opts-18',
      rule: 'A DeleteOptions body with a dryRun value other than All is refused',
      source: 'conventions Dry run; upstream ValidateDeleteOptions',
      upstream: '422 Invalid DeleteOptions',
      setup: [{ method: 'POST', path: CM, body: cm('delbody') }],
      req: { method: 'DELETE', path: `${CM}/delbody`, body: { kind: 'DeleteOptions', apiVersion: 'v1', dryRun: ['Nope'] } },
      expect: { status: 422, reason: 'Invalid', message: /^DeleteOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: "Nope"/ },
      then: [{ req: { method: 'GET', path: `${CM}/delbody` }, expect: { status: 200 } }],
    },
    {
      id: 'opts-19',
      rule: 'Unknown query parameters are ignored',
      source: 'upstream ParameterCodec (unknown keys ignored)',
      upstream: '200',
      req: { method: 'GET', path: `${CM}?color=blue` },
      expect: { status: 200, body: { kind: 'ConfigMapList' } },
    },
    {
      id: 'opts-20',
      rule: 'pretty is read as a boolean and never refused',
      source: 'conventions Query parameters (pretty); upstream responsewriters (strconv.ParseBool)',
      upstream: '200, compact JSON for a value that is not a boolean',
      req: { method: 'GET', path: `${CM}?pretty=maybe` },
      expect: { status: 200, body: { kind: 'ConfigMapList' } },
    },
    {
      id: 'opts-21',
      rule: 'pretty=true indents the JSON answer',
      source: 'conventions Query parameters (pretty)',
      upstream: '200, indented JSON',
      req: { method: 'GET', path: '/api/v1/namespaces/default?pretty=true' },
      expect: { status: 200, text: /^\{\n {2}"[a-z]+": / },
    },
    {
      id: 'opts-22',
      rule: 'watch takes any boolean spelling the parameter codec reads as true',
      source: 'conventions Query parameters (watch: boolean); upstream Convert_Slice_string_To_bool',
      upstream: '200 watch stream',
      req: { method: 'GET', path: `${CM}?watch=yes&timeoutSeconds=1` },
      expect: { status: 200, headers: { 'content-type': /application\/json/ }, text: /"type":"ADDED"/ },
    },
    bad('opts-23', 'A malformed labelSelector is 400', 'GET', `${CM}?labelSelector=a%20in%20(`, 400, 'BadRequest', '400 BadRequest (unable to parse requirement)', undefined, undefined, { source: 'conventions Query parameters (labelSelector)' }),
    bad('opts-24', 'A fieldSelector on a field the kind does not index is 400', 'GET', `${CM}?fieldSelector=data.a%3D1`, 400, 'BadRequest', '400 BadRequest ("data.a" is not a known field selector)', undefined, undefined, { source: 'conventions Query parameters (fieldSelector)' }),
    bad('opts-25', 'A malformed request timeout is 400', 'GET', `${CM}?timeout=soon`, 400, 'BadRequest', '400 BadRequest "invalid timeout specified in the request URL"', /^invalid timeout specified in the request URL/, undefined, { source: 'upstream filters/timeout.go (parseTimeout)' }),
    bad('opts-26', 'dryRun on create returns the object and stores nothing', 'POST', `${CM}?dryRun=All`, 201, '', '201 with the object; nothing stored', undefined, cm('dry-ok'), {
      source: 'conventions Dry run',
      expect: { status: 201, body: { metadata: { name: 'dry-ok' } } },
      then: [{ req: { method: 'GET', path: `${CM}/dry-ok` }, expect: { status: 404 } }],
    }),
    {
      id: 'opts-27',
      rule: 'watch=false is a list',
      source: 'conventions Query parameters (watch: boolean)',
      upstream: '200 ConfigMapList',
      req: { method: 'GET', path: `${CM}?watch=false` },
      expect: { status: 200, body: { kind: 'ConfigMapList' } },
    },
    {
      id: 'opts-28',
      rule: 'force=false on an apply patch is accepted',
      source: 'conventions Query parameters (force: with apply); upstream ValidatePatchOptions',
      upstream: '201',
      req: { method: 'PATCH', path: `${CM}/forced?fieldManager=m&force=false`, body: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: forced\n', headers: { 'content-type': 'application/apply-patch+yaml' } },
      expect: { status: 201 },
    },
  ],
};
