/**
 * Content negotiation (conventions "Representations"): Accept picks the response media type,
 * Content-Type the body's; Table and PartialObjectMetadata transforms; errors in the media type
 * the client accepts.
 */
import type { RowGroup } from './conformance.types.js';

const NS = 'cf-neg';
const CM = `/api/v1/namespaces/${NS}/configmaps`;
const PB = 'application/vnd.kubernetes.protobuf';
/** The protobuf envelope's magic bytes. */
const MAGIC = 'k8s\u0000';
const TABLE = 'application/json;as=Table;g=meta.k8s.io;v=v1';
const PARTIAL = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1';
const PARTIAL_LIST = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1';
const cm = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { a: '1' } });
const get = (accept: string, path = `${CM}/n1`) => ({ method: 'GET', path, headers: { accept } });

/** The group. */
export const NEGOTIATION: RowGroup = {
  name: 'negotiation',
  namespace: NS,
  rows: [
    {
      id: 'neg-01',
      rule: 'Without Accept the answer is JSON',
      source: 'conventions Representations (default JSON)',
      upstream: '200 application/json',
      setup: [{ method: 'POST', path: CM, body: cm('n1') }],
      req: { method: 'GET', path: `${CM}/n1` },
      expect: { status: 200, headers: { 'content-type': /^application\/json/ }, body: { kind: 'ConfigMap' } },
    },
    {
      id: 'neg-02',
      rule: 'Accept application/yaml answers YAML',
      source: 'upstream serializers (yaml)',
      upstream: '200 application/yaml',
      req: get('application/yaml'),
      expect: { status: 200, headers: { 'content-type': /^application\/yaml/ }, text: /^apiVersion: v1\n|\nkind: ConfigMap\n/ },
    },
    {
      id: 'neg-03',
      rule: 'Accept protobuf answers the protobuf envelope (magic k8s\\0)',
      source: 'conventions Representations (Protobuf envelope)',
      upstream: '200 application/vnd.kubernetes.protobuf',
      req: get(PB),
      expect: { status: 200, headers: { 'content-type': PB }, prefix: MAGIC },
    },
    {
      id: 'neg-04',
      rule: 'Accept "protobuf, json" at equal quality',
      source: 'conventions Representations (clients may list several types)',
      upstream: "200 protobuf (the client's first choice)",
      divergence:
        'JSON is preferred at equal quality: every client that lists protobuf also reads JSON (kubectl, client-go), JSON is our storage form, and encoding it is cheaper for us.',
      req: get(`${PB}, application/json`),
      expect: { status: 200, headers: { 'content-type': /^application\/json/ } },
    },
    {
      id: 'neg-05',
      rule: 'Quality values order the choice: json;q=0.5 after protobuf',
      source: 'upstream negotiation (q values)',
      upstream: '200 protobuf',
      req: get(`application/json;q=0.5, ${PB}`),
      expect: { status: 200, headers: { 'content-type': PB } },
    },
    {
      id: 'neg-06',
      rule: 'An Accept the server cannot serve is 406',
      source: 'conventions Representations (406 Not Acceptable)',
      upstream: '406 NotAcceptable',
      req: get('text/html'),
      expect: { status: 406, reason: 'NotAcceptable', headers: { 'content-type': /^application\/json/ } },
    },
    {
      id: 'neg-07',
      rule: 'Table: kind Table, apiVersion meta.k8s.io/v1, columnDefinitions and rows',
      source: 'conventions Representations (Table)',
      upstream: '200 Table, columns Name, Data, Age',
      req: get(TABLE, CM),
      expect: {
        status: 200,
        body: { kind: 'Table', apiVersion: 'meta.k8s.io/v1', columnDefinitions: [{ name: 'Name', type: 'string' }, { name: 'Data' }, { name: 'Age' }] },
        text: /"rows":\[\{"cells":\["kube-root-ca\.crt",1,"[^"]+"\][\s\S]*\{"cells":\["n1",1,"[^"]+"\]/,
      },
    },
    {
      id: 'neg-08',
      rule: 'Table rows carry PartialObjectMetadata by default (includeObject=Metadata)',
      source: 'upstream TableConvertor (includeObject default Metadata)',
      upstream: '200, rows[].object.kind PartialObjectMetadata (kube-root-ca.crt, which every namespace holds, and n1)',
      req: get(TABLE, CM),
      expect: {
        status: 200,
        body: {
          rows: [
            { object: { kind: 'PartialObjectMetadata', metadata: { name: 'kube-root-ca.crt' } } },
            { object: { kind: 'PartialObjectMetadata', metadata: { name: 'n1' } } },
          ],
        },
      },
    },
    {
      id: 'neg-09',
      rule: 'includeObject=None leaves the rows without objects',
      source: 'upstream TableConvertor (includeObject)',
      upstream: '200, no rows[].object',
      req: get(TABLE, `${CM}?includeObject=None`),
      expect: { status: 200, text: /"rows":\[\{"cells":\["kube-root-ca\.crt",1,"[^"]+"\]\},\{"cells":\["n1",1,"[^"]+"\]\}\]/ },
    },
    {
      id: 'neg-10',
      rule: 'Table v1beta1',
      source: 'conventions Representations (Table)',
      upstream: '200 Table meta.k8s.io/v1beta1',
      req: get('application/json;as=Table;g=meta.k8s.io;v=v1beta1', CM),
      expect: { status: 200, body: { kind: 'Table', apiVersion: 'meta.k8s.io/v1beta1' } },
    },
    {
      id: 'neg-11',
      rule: 'A Table for an unknown group falls back to the next listed type',
      source: 'conventions Representations (fall back: ...;v=v1, application/json)',
      upstream: '200 ConfigMap in JSON',
      req: get('application/json;as=Table;g=example.com;v=v1, application/json'),
      expect: { status: 200, body: { kind: 'ConfigMap' } },
    },
    {
      id: 'neg-12',
      rule: 'PartialObjectMetadata on get',
      source: 'upstream transformResponseObject (asPartialObjectMetadata)',
      upstream: '200 PartialObjectMetadata',
      req: get(PARTIAL),
      expect: { status: 200, body: { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: { name: 'n1' } }, absent: ['data'] },
    },
    {
      id: 'neg-13',
      rule: 'PartialObjectMetadataList on list',
      source: 'upstream transformResponseObject (asPartialObjectMetadataList)',
      upstream: '200 PartialObjectMetadataList',
      req: get(PARTIAL_LIST, CM),
      expect: {
        status: 200,
        body: {
          kind: 'PartialObjectMetadataList',
          items: [
            { kind: 'PartialObjectMetadata', metadata: { name: 'kube-root-ca.crt' } },
            { kind: 'PartialObjectMetadata', metadata: { name: 'n1' } },
          ],
        },
      },
    },
    {
      id: 'neg-14',
      rule: 'PartialObjectMetadataList on a single object is 406',
      source: 'upstream asPartialObjectMetadataList (errNotAcceptable)',
      upstream: '406 NotAcceptable "you requested PartialObjectMetadataList, but the requested object is not a list ..."',
      req: get(PARTIAL_LIST),
      expect: { status: 406, reason: 'NotAcceptable', message: /^you requested PartialObjectMetadataList, but the requested object is not a list/ },
    },
    {
      id: 'neg-15',
      rule: 'PartialObjectMetadata on a list is 406',
      source: 'upstream asPartialObjectMetadata (errNotAcceptable)',
      upstream: '406 NotAcceptable "you requested PartialObjectMetadata, but the requested object is a list ..."',
      req: get(PARTIAL, CM),
      expect: { status: 406, reason: 'NotAcceptable', message: /^you requested PartialObjectMetadata, but the requested object is a list/ },
    },
    {
      id: 'neg-16',
      rule: 'An error answers a Status in protobuf when the client accepts only protobuf',
      source: 'upstream responsewriters.ErrorNegotiated',
      upstream: '404, Content-Type application/vnd.kubernetes.protobuf, a Status envelope',
      req: get(PB, `${CM}/missing`),
      expect: { status: 404, headers: { 'content-type': PB }, prefix: MAGIC, text: /Status[\s\S]*NotFound/ },
    },
    {
      id: 'neg-17',
      rule: 'An error answers a JSON Status when the client accepts JSON',
      source: 'upstream responsewriters.ErrorNegotiated',
      upstream: '404 application/json Status',
      req: get(`${PB}, application/json`, `${CM}/missing`),
      expect: {
        status: 404,
        headers: { 'content-type': /^application\/json/ },
        body: { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404 },
      },
    },
    {
      id: 'neg-18',
      rule: 'A YAML body creates (Content-Type application/yaml)',
      source: 'upstream serializers (yaml decoding)',
      upstream: '201',
      req: {
        method: 'POST',
        path: CM,
        body: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: n-yaml\ndata:\n  a: "1"\n',
        headers: { 'content-type': 'application/yaml' },
      },
      expect: { status: 201, body: { metadata: { name: 'n-yaml' } } },
    },
    {
      id: 'neg-19',
      rule: 'A body in a media type the server does not decode is 415',
      source: 'conventions Representations (Content-Type)',
      upstream: '415 UnsupportedMediaType',
      req: { method: 'POST', path: CM, body: 'name=x', headers: { 'content-type': 'text/plain' } },
      expect: { status: 415, reason: 'UnsupportedMediaType' },
    },
    {
      id: 'neg-20',
      rule: 'A watch with Accept protobuf streams protobuf frames',
      source: 'conventions Representations; upstream watch (stream=watch)',
      upstream: '200 application/vnd.kubernetes.protobuf;stream=watch',
      req: { method: 'GET', path: `${CM}?watch=1&timeoutSeconds=1`, headers: { accept: PB } },
      expect: { status: 200, headers: { 'content-type': `${PB};stream=watch` } },
    },
    {
      id: 'neg-21',
      rule: 'A watch with a Table Accept streams one-row Tables',
      source: 'conventions Representations (Table); upstream watch with Table transform',
      upstream: '200, events whose object is a Table',
      req: { method: 'GET', path: `${CM}?watch=1&timeoutSeconds=1`, headers: { accept: TABLE } },
      expect: { status: 200, text: /^\{"type":"ADDED","object":\{"kind":"Table"/ },
    },
    {
      id: 'neg-22',
      rule: 'A list in protobuf is the <Kind>List message',
      source: 'conventions Representations (List kinds; Protobuf)',
      upstream: '200 protobuf ConfigMapList',
      req: get(PB, CM),
      expect: { status: 200, headers: { 'content-type': PB }, prefix: MAGIC, text: /ConfigMapList/ },
    },
    {
      id: 'neg-23',
      rule: 'An error answers a YAML Status when the client accepts only YAML',
      source: 'upstream responsewriters.ErrorNegotiated',
      upstream: '404 application/yaml Status',
      req: get('application/yaml', `${CM}/missing`),
      expect: { status: 404, headers: { 'content-type': /^application\/yaml/ }, text: /reason: NotFound/ },
    },
  ],
};
