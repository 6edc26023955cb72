/**
 * apiextensions.k8s.io/v1 CustomResourceDefinition and the resources it defines: a definition
 * is validated with apiextensions-apiserver's messages and becomes Established with its names
 * accepted; its objects are checked by the schema as unstructured objects (wrong types are
 * 422, unknown fields refused under Strict and pruned otherwise), printed with the printer
 * columns, and taken as JSON only.
 */
import type { RowGroup } from './conformance.types.js';

const NS = 'cf-crd';
const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const GADGETS = `/apis/cf.example.com/v1/namespaces/${NS}/gadgets`;
const TABLE = 'application/json;as=Table;g=meta.k8s.io;v=v1';

type Obj = Record<string, unknown>;
const definition = (name: string, plural: string): Obj => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name },
  spec: {
    group: 'cf.example.com',
    scope: 'Namespaced',
    names: { plural, kind: 'Gadget' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } } } },
        additionalPrinterColumns: [{ name: 'Size', type: 'integer', jsonPath: '.spec.size' }],
      },
    ],
  },
});
const gadget = (name: string, spec: Obj): Obj => ({ apiVersion: 'cf.example.com/v1', kind: 'Gadget', metadata: { name }, spec });

/** The group. */
export const CUSTOM_RESOURCES: RowGroup = {
  name: 'custom resources',
  namespace: NS,
  rows: [
    {
      id: 'crd-01',
      rule: 'A CustomResourceDefinition is named <plural>.<group>',
      source: 'upstream apiextensions-apiserver pkg/apis/apiextensions/validation',
      upstream: '422 Invalid "metadata.name: Invalid value: ...: must be spec.names.plural+\\".\\"+spec.group"',
      req: { method: 'POST', path: CRDS, body: definition('widgets.cf.example.com', 'gadgets') },
      expect: {
        status: 422,
        reason: 'Invalid',
        message:
          'CustomResourceDefinition.apiextensions.k8s.io "widgets.cf.example.com" is invalid: metadata.name: Invalid value: "widgets.cf.example.com": must be spec.names.plural+"."+spec.group',
      },
    },
    {
      id: 'crd-02',
      rule: 'A definition gets its names accepted, Established, and its storage version in storedVersions',
      source: 'upstream apiextensions-apiserver naming and established controllers',
      upstream: '201; then status.acceptedNames, NamesAccepted True NoConflicts, Established True InitialNamesAccepted, storedVersions [v1]',
      req: { method: 'POST', path: CRDS, body: definition('gadgets.cf.example.com', 'gadgets') },
      expect: { status: 201, body: { status: { storedVersions: ['v1'] } } },
      then: [
        {
          req: { method: 'GET', path: `${CRDS}/gadgets.cf.example.com` },
          expect: {
            status: 200,
            body: {
              status: {
                acceptedNames: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget', listKind: 'GadgetList' },
                conditions: [
                  { type: 'NamesAccepted', status: 'True', reason: 'NoConflicts', message: 'no conflicts found' },
                  { type: 'Established', status: 'True', reason: 'InitialNamesAccepted', message: 'the initial names have been accepted' },
                ],
              },
            },
          },
          waitMs: 15_000,
        },
        { req: { method: 'GET', path: GADGETS }, expect: { status: 200, body: { kind: 'GadgetList', apiVersion: 'cf.example.com/v1' } }, waitMs: 15_000 },
      ],
    },
    {
      id: 'crd-03',
      rule: 'A custom resource value of the wrong type is a schema error (422), not a decoding error',
      source: 'upstream apiextensions-apiserver customresource validator (kube-openapi validate)',
      upstream: '422 Invalid "spec.size: Invalid value: \\"string\\": spec.size in body must be of type integer: \\"string\\""',
      req: { method: 'POST', path: GADGETS, body: gadget('wrong', { size: 'big' }) },
      expect: {
        status: 422,
        reason: 'Invalid',
        message: 'Gadget.cf.example.com "wrong" is invalid: spec.size: Invalid value: "string": spec.size in body must be of type integer: "string"',
      },
    },
    {
      id: 'crd-04',
      rule: 'An unknown field of a custom resource is refused under fieldValidation=Strict',
      source: 'conventions Field validation; upstream apiextensions-apiserver pruning',
      upstream: '400 BadRequest ".../unknown field \\"spec.color\\""',
      req: { method: 'POST', path: `${GADGETS}?fieldValidation=Strict`, body: gadget('strict', { size: 1, color: 'red' }) },
      expect: {
        status: 400,
        reason: 'BadRequest',
        message: 'Gadget in version "v1" cannot be handled as a Gadget: strict decoding error: unknown field "spec.color"',
      },
    },
    {
      id: 'crd-05',
      rule: 'An unknown field of a custom resource is pruned under fieldValidation=Ignore',
      source: 'upstream apiextensions-apiserver structural pruning',
      upstream: '201 without spec.color',
      req: { method: 'POST', path: `${GADGETS}?fieldValidation=Ignore`, body: gadget('pruned', { size: 2, color: 'red' }) },
      expect: { status: 201, body: { spec: { size: 2 } }, absent: ['spec.color'] },
    },
    {
      id: 'crd-06',
      rule: 'A custom resource Table has the printer columns after Name',
      source: 'upstream apiextensions-apiserver tableconvertor',
      upstream: '200 Table, columns Name, Size',
      req: { method: 'GET', path: GADGETS, headers: { accept: TABLE } },
      expect: {
        status: 200,
        body: {
          kind: 'Table',
          columnDefinitions: [
            { name: 'Name', type: 'string', format: 'name' },
            { name: 'Size', type: 'integer' },
          ],
          rows: [{ cells: ['pruned', 2] }],
        },
      },
    },
    {
      id: 'crd-07',
      rule: 'A custom resource is not taken as protobuf',
      source: 'upstream apiextensions-apiserver (JSON and YAML serializers only)',
      upstream: '415 UnsupportedMediaType',
      req: { method: 'POST', path: GADGETS, body: 'k8s\u0000', headers: { 'content-type': 'application/vnd.kubernetes.protobuf' } },
      expect: { status: 415, reason: 'UnsupportedMediaType' },
    },
  ],
};
