/**
 * The flowcontrol.apiserver.k8s.io kinds at each served version (v1 preferred and stored,
 * v1beta3, and v1beta2 which the resources document names; the betas are deprecated as in
 * Kubernetes), with kubectl's columns, and the mandatory objects kube-apiserver always has
 * (the `exempt` and `catch-all` schemas and levels). The objects are stored only: no request
 * is queued by them.
 */
import type { KubeObject } from '@app/apimachinery';
import { ageOf, type Deprecation, type KindDeclaration, type TableColumn } from '@app/registry';
import { asMap } from '../core/core.helpers.js';
import { FLOWCONTROL_CONVERSION } from './flowcontrol.conversion.js';
import { FLOWCONTROL_GROUP, FLOWCONTROL_SCHEMAS, FLOWCONTROL_VERSIONS, sharesField, type FlowcontrolVersion } from './flowcontrol.schema.js';
import { flowcontrolStatusStrategy, flowSchemaStrategy } from './flowschema/flowschema.strategy.js';
import { priorityLevelConfigurationStrategy } from './prioritylevelconfiguration/prioritylevelconfiguration.strategy.js';

const DEPRECATIONS: Partial<Record<FlowcontrolVersion, Deprecation>> = {
  v1beta3: { deprecatedIn: '1.29', removedIn: '1.32', replacement: { group: FLOWCONTROL_GROUP, version: 'v1', kind: '' } },
  v1beta2: { deprecatedIn: '1.26', removedIn: '1.29', replacement: { group: FLOWCONTROL_GROUP, version: 'v1beta3', kind: '' } },
};

function deprecationFor(version: FlowcontrolVersion, kind: string): Deprecation | undefined {
  const d = DEPRECATIONS[version];
  return d && { ...d, replacement: d.replacement && { ...d.replacement, kind } };
}

const AUTOUPDATE = { 'apf.kubernetes.io/autoupdate-spec': 'true' };
const EVERYTHING = {
  resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], clusterScope: true, namespaces: ['*'] }],
  nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
};

/** The mandatory priority levels (as kube-apiserver's apf bootstrap configuration). */
export const MANDATORY_PRIORITY_LEVELS: readonly KubeObject[] = [
  { metadata: { name: 'exempt', annotations: AUTOUPDATE }, spec: { type: 'Exempt', exempt: { nominalConcurrencyShares: 0, lendablePercent: 0 } } },
  {
    metadata: { name: 'catch-all', annotations: AUTOUPDATE },
    spec: { type: 'Limited', limited: { nominalConcurrencyShares: 5, lendablePercent: 0, limitResponse: { type: 'Reject' } } },
  },
];

/** The mandatory flow schemas. */
export const MANDATORY_FLOW_SCHEMAS: readonly KubeObject[] = [
  {
    metadata: { name: 'exempt', annotations: AUTOUPDATE },
    spec: {
      matchingPrecedence: 1,
      priorityLevelConfiguration: { name: 'exempt' },
      rules: [{ subjects: [{ kind: 'Group', group: { name: 'system:masters' } }], ...EVERYTHING }],
    },
  },
  {
    metadata: { name: 'catch-all', annotations: AUTOUPDATE },
    spec: {
      matchingPrecedence: 10000,
      priorityLevelConfiguration: { name: 'catch-all' },
      distinguisherMethod: { type: 'ByUser' },
      rules: [
        {
          subjects: [
            { kind: 'Group', group: { name: 'system:unauthenticated' } },
            { kind: 'Group', group: { name: 'system:authenticated' } },
          ],
          ...EVERYTHING,
        },
      ],
    },
  },
];

const AGE: TableColumn = { name: 'Age', type: 'string', priority: 0, description: 'Time since creation', cell: (o, now) => ageOf(o, now) };

/** MISSINGPL: the Dangling condition's status, `?` without one. */
function missingPL(o: KubeObject): string {
  const conds = asMap(o.status).conditions;
  const c = Array.isArray(conds) ? conds.map(asMap).find((x) => x.type === 'Dangling') : undefined;
  return c ? String(c.status ?? '?') : '?';
}

function flowSchemaKind(version: FlowcontrolVersion): KindDeclaration {
  return {
    group: FLOWCONTROL_GROUP,
    version,
    kind: 'FlowSchema',
    plural: 'flowschemas',
    singular: 'flowschema',
    namespaced: false,
    schema: FLOWCONTROL_SCHEMAS[version].flowSchema,
    protobufMessage: `k8s.io.api.flowcontrol.${version}.FlowSchema`,
    strategy: flowSchemaStrategy,
    subresources: { status: { verbs: ['get', 'patch', 'update'], strategy: flowcontrolStatusStrategy } },
    conversion: FLOWCONTROL_CONVERSION,
    deprecation: deprecationFor(version, 'FlowSchema'),
    tableColumns: [
      {
        name: 'PriorityLevel',
        type: 'string',
        priority: 0,
        description: 'The priority level of matched requests',
        cell: (o) => asMap(asMap(o.spec).priorityLevelConfiguration).name ?? '',
      },
      {
        name: 'MatchingPrecedence',
        type: 'string',
        priority: 0,
        description: 'Order among schemas',
        cell: (o) => String(asMap(o.spec).matchingPrecedence ?? ''),
      },
      {
        name: 'DistinguisherMethod',
        type: 'string',
        priority: 0,
        description: 'How flows are distinguished',
        cell: (o) => {
          const d = asMap(o.spec).distinguisherMethod;
          return d ? String(asMap(d).type ?? '') : '*';
        },
      },
      AGE,
      { name: 'MissingPL', type: 'string', priority: 0, description: 'Whether the referenced priority level is missing', cell: missingPL },
    ],
    initialObjects: version === 'v1' ? MANDATORY_FLOW_SCHEMAS.map((o) => structuredClone(o)) : undefined,
  };
}

function priorityLevelKind(version: FlowcontrolVersion): KindDeclaration {
  const shares = sharesField(version);
  const limited = (o: KubeObject) => asMap(asMap(o.spec).limited);
  const queuing = (o: KubeObject) => asMap(asMap(limited(o).limitResponse).queuing);
  const ifQueued = (f: string) => (o: KubeObject) => {
    const v = queuing(o)[f];
    return typeof v === 'number' ? String(v) : '<none>';
  };
  return {
    group: FLOWCONTROL_GROUP,
    version,
    kind: 'PriorityLevelConfiguration',
    plural: 'prioritylevelconfigurations',
    singular: 'prioritylevelconfiguration',
    namespaced: false,
    schema: FLOWCONTROL_SCHEMAS[version].priorityLevelConfiguration,
    protobufMessage: `k8s.io.api.flowcontrol.${version}.PriorityLevelConfiguration`,
    strategy: priorityLevelConfigurationStrategy(version),
    subresources: { status: { verbs: ['get', 'patch', 'update'], strategy: flowcontrolStatusStrategy } },
    conversion: FLOWCONTROL_CONVERSION,
    deprecation: deprecationFor(version, 'PriorityLevelConfiguration'),
    tableColumns: [
      { name: 'Type', type: 'string', priority: 0, description: 'Exempt or Limited', cell: (o) => asMap(o.spec).type ?? '' },
      {
        name: shares.charAt(0).toUpperCase() + shares.slice(1),
        type: 'string',
        priority: 0,
        description: 'Share of the concurrency limit',
        cell: (o) => {
          const v = limited(o)[shares];
          return typeof v === 'number' ? String(v) : '<none>';
        },
      },
      { name: 'Queues', type: 'string', priority: 0, description: 'Number of queues', cell: ifQueued('queues') },
      { name: 'HandSize', type: 'string', priority: 0, description: 'Queues per flow', cell: ifQueued('handSize') },
      { name: 'QueueLengthLimit', type: 'string', priority: 0, description: 'Requests per queue', cell: ifQueued('queueLengthLimit') },
      AGE,
    ],
    initialObjects: version === 'v1' ? MANDATORY_PRIORITY_LEVELS.map((o) => structuredClone(o)) : undefined,
  };
}

/** Every flowcontrol declaration, the preferred version first. */
export const FLOWCONTROL_KINDS: readonly KindDeclaration[] = FLOWCONTROL_VERSIONS.flatMap((v) => [priorityLevelKind(v), flowSchemaKind(v)]);
