import type { KubeObject } from '@app/apimachinery';
import type { KindDeclaration, RequestContext } from '@app/registry';
import { evalJsonPath, parseJsonPath, simpleFieldPath } from './crd.jsonpath.js';
import { desiredNamingStatus, namesConflict } from './crd.controllers.js';
import { crdStrategy } from './crd.strategy.js';
import { crdSchemaErrors } from './crd.schema-checks.js';
import { validateCrd, validateCrdUpdate } from './crd.validation.js';
import { CLEANUP_FINALIZER, crdNames, customResourceKinds, customResourceSchema, isCustomResource, printerColumn } from './custom-resource.kinds.js';

type Obj = Record<string, unknown>;
const ctx = (): RequestContext => ({ user: { username: 'u', groups: [] }, dryRun: false, warnings: [], now: () => new Date('2026-01-01T00:10:00Z') });
const SCHEMA = { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' }, color: { type: 'string' } } } } };

function crd(over: Obj = {}, versions?: Obj[]): KubeObject {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'widgets.acme.io' },
    spec: {
      group: 'acme.io',
      scope: 'Namespaced',
      names: { plural: 'widgets', kind: 'Widget' },
      versions: versions ?? [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: SCHEMA } }],
      ...over,
    },
  };
}
const msgs = (o: KubeObject) => validateCrd(o).map((e) => `${e.field}: ${e.detail}`);
const noStore = () => {
  throw new Error('no store in this spec');
};

describe('custom resource JSON paths', () => {
  const doc = {
    spec: { replicas: 3, 'a.b': 'dotted' },
    status: {
      conditions: [
        { type: 'Ready', status: 'True' },
        { type: 'Synced', status: 'False' },
      ],
    },
    list: [1, 2, 3],
  };
  const at = (p: string) => evalJsonPath(doc, parseJsonPath(p));
  it('reaches fields, indexes, wildcards and filtered items, braces and $ optional', () => {
    expect(at('.spec.replicas')).toEqual([3]);
    expect(at('{.spec.replicas}')).toEqual([3]);
    expect(at("$.spec['a.b']")).toEqual(['dotted']);
    expect(at('.list[1]')).toEqual([2]);
    expect(at('.list[-1]')).toEqual([3]);
    expect(at('.list[*]')).toEqual([1, 2, 3]);
    expect(at('.status.conditions[?(@.type=="Ready")].status')).toEqual(['True']);
    expect(at(".status.conditions[?(@.type!='Ready')].type")).toEqual(['Synced']);
    expect(at('.status.conditions[?(@.status)].type')).toEqual(['Ready', 'Synced']);
    expect(at('.spec.missing')).toEqual([]);
    expect(at('.list[7]')).toEqual([]);
  });
  it('refuses what it cannot parse, and tells simple paths apart', () => {
    expect(() => parseJsonPath('.spec..x')).toThrow('empty field name');
    expect(() => parseJsonPath('.list[1:2]')).toThrow('unsupported subscript');
    expect(() => parseJsonPath('.list[0')).toThrow('unclosed');
    expect(simpleFieldPath('.spec.replicas')).toEqual(['spec', 'replicas']);
    expect(simpleFieldPath('.spec.list[0]')).toBeUndefined();
    expect(simpleFieldPath('spec')).toBeUndefined();
  });
});

describe('printer columns', () => {
  const now = new Date('2026-01-01T00:10:00Z');
  const obj: KubeObject = { metadata: { name: 'w', creationTimestamp: '2026-01-01T00:00:00Z' }, spec: { size: 3, color: 'red', on: true, tags: ['a'] } };
  const cell = (c: Obj) => printerColumn(c).cell(obj, now);
  it('give the first value of the column type, dates as ages, and null for a missing or mistyped value', () => {
    expect(cell({ name: 'Size', type: 'integer', jsonPath: '.spec.size' })).toBe(3);
    expect(cell({ name: 'Size', type: 'integer', jsonPath: '.spec.color' })).toBeNull();
    expect(cell({ name: 'Color', type: 'string', jsonPath: '.spec.color' })).toBe('red');
    expect(cell({ name: 'Tags', type: 'string', jsonPath: '.spec.tags' })).toBe('["a"]');
    expect(cell({ name: 'On', type: 'boolean', jsonPath: '.spec.on' })).toBe(true);
    expect(cell({ name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' })).toBe('10m');
    expect(cell({ name: 'Age', type: 'date', jsonPath: '.spec.color' })).toBe('<unknown>');
    expect(cell({ name: 'Gone', type: 'string', jsonPath: '.spec.none' })).toBeNull();
    expect(printerColumn({ name: 'P', type: 'string', jsonPath: '.a', priority: 1 })).toMatchObject({ name: 'P', type: 'string', priority: 1 });
  });
});

describe('the kinds of a definition', () => {
  it('one per served version, the preferred first, under the accepted names', () => {
    const def = crd({ names: { plural: 'widgets', kind: 'Widget', shortNames: ['wd'], categories: ['all'] } }, [
      { name: 'v1alpha1', served: true, storage: false, schema: { openAPIV3Schema: SCHEMA } },
      { name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: SCHEMA } },
      { name: 'v2', served: false, storage: false, schema: { openAPIV3Schema: SCHEMA } },
    ]);
    const kinds = customResourceKinds(def, noStore);
    expect(kinds.map((d) => d.version)).toEqual(['v1', 'v1alpha1']);
    expect(kinds[0]).toMatchObject({
      group: 'acme.io',
      kind: 'Widget',
      listKind: 'WidgetList',
      plural: 'widgets',
      singular: 'widget',
      shortNames: ['wd'],
      categories: ['all'],
      namespaced: true,
      genericObjectMeta: true,
    });
    expect(kinds.every(isCustomResource)).toBe(true);
    // Objects live at the storage version; every version reads them, old stored versions too.
    expect(kinds[1]!.conversion).toMatchObject({ storageVersion: 'v1', mixedStoredVersions: true });
    expect(kinds[1]!.conversion!.convert({ apiVersion: 'acme.io/v1', kind: 'Widget', metadata: {} }, 'v1alpha1').apiVersion).toBe('acme.io/v1alpha1');
    const accepted = customResourceKinds({ ...def, status: { acceptedNames: { plural: 'widgets', kind: 'Gadget' } } }, noStore);
    expect(accepted[0]!.kind).toBe('Gadget');
  });

  it('wraps the schema under apiVersion, kind and ObjectMeta with the group-version-kind', () => {
    const s = customResourceSchema('acme.io', 'v1', 'Widget', {
      type: 'object',
      required: ['spec', 'metadata'],
      properties: { spec: { type: 'object' }, metadata: { type: 'object' } },
    });
    expect(Object.keys(s.properties!)).toEqual(['apiVersion', 'kind', 'metadata', 'spec']);
    expect(s.required).toEqual(['spec']);
    expect(s['x-kubernetes-group-version-kind']).toEqual([{ group: 'acme.io', version: 'v1', kind: 'Widget' }]);
    expect(
      customResourceSchema('acme.io', 'v1', 'Widget', { type: 'object', 'x-kubernetes-preserve-unknown-fields': true })['x-kubernetes-preserve-unknown-fields'],
    ).toBe(true);
  });

  it('serves /status, /scale, selectable fields, deprecation and an Age column when none is declared', () => {
    const d: KindDeclaration = customResourceKinds(
      crd({}, [
        {
          name: 'v1',
          served: true,
          storage: true,
          deprecated: true,
          schema: { openAPIV3Schema: SCHEMA },
          subresources: { status: {}, scale: { specReplicasPath: '.spec.size', statusReplicasPath: '.status.size' } },
          selectableFields: [{ jsonPath: '.spec.color' }, { jsonPath: '.spec.size' }],
        },
      ]),
      noStore,
    )[0]!;
    expect(Object.keys(d.subresources ?? {})).toEqual(['status', 'scale']);
    expect(d.deprecation?.warning).toBe('acme.io/v1 Widget is deprecated');
    expect(d.conversion).toBeUndefined();
    const obj: KubeObject = { metadata: { name: 'w' }, spec: { color: 'red', size: 2 }, status: { size: 1 } };
    expect(d.fieldSelectors!['spec.color']!(obj)).toBe('red');
    expect(d.fieldSelectors!['spec.size']!(obj)).toBe('2');
    expect(d.tableColumns!.map((c) => [c.name, c.type])).toEqual([['Age', 'date']]);
    expect(d.ageColumn).toBe(false);
    const created: KubeObject = { metadata: { name: 'w' }, status: { size: 5 } };
    d.strategy!.prepareForCreate!(created, ctx());
    expect(created.status).toBeUndefined();
  });
});

describe('CustomResourceDefinition validation', () => {
  it('accepts a well-formed definition', () => {
    expect(msgs(crd())).toEqual([]);
  });

  it('checks the name, group, scope, names and versions', () => {
    expect(
      msgs({
        ...crd({ group: 'acme', scope: 'Global', names: { plural: 'Widgets', kind: 'Widget', listKind: 'Widget' }, conversion: { strategy: 'Webhook' } }, [
          { name: 'v1', served: false, storage: false, schema: { openAPIV3Schema: SCHEMA } },
          { name: 'v1', served: false, storage: false },
        ]),
      }),
    ).toEqual([
      'metadata.name: must be spec.names.plural+"."+spec.group',
      'spec.group: should be a domain with at least one dot',
      'spec.scope: supported values: "Cluster", "Namespaced"',
      "spec.names.plural: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
      'spec.names.listKind: kind and listKind cannot be the same',
      'spec.conversion.webhook: required when strategy is set to Webhook',
      'spec.versions: must have exactly one version marked as storage version',
      'spec.versions: must have at least one version marked as served',
      'spec.versions[1].name: ',
      'spec.versions[1].schema.openAPIV3Schema: schemas are required',
    ]);
  });

  it('checks the conversion webhook', () => {
    const conv = (conversion: unknown) => msgs(crd({ conversion }));
    expect(conv({ strategy: 'Webhook', webhook: { clientConfig: { url: 'https://hook.example.com/convert' }, conversionReviewVersions: ['v1'] } })).toEqual([]);
    expect(
      conv({
        strategy: 'Webhook',
        webhook: { clientConfig: { service: { namespace: 'ns', name: 'conv', path: '/convert' } }, conversionReviewVersions: ['v2', 'v1beta1'] },
      }),
    ).toEqual([]);
    expect(conv({ strategy: 'Webhook', webhook: { conversionReviewVersions: ['v2'] } })).toEqual([
      'spec.conversion.webhook.clientConfig: required when strategy is set to Webhook',
      'spec.conversion.webhook.conversionReviewVersions: must include at least one of v1, v1beta1',
    ]);
    expect(
      conv({ strategy: 'Webhook', webhook: { clientConfig: { url: 'http://hook', service: { name: 'a', namespace: 'b' } }, conversionReviewVersions: [] } }),
    ).toEqual([
      'spec.conversion.webhook.clientConfig: exactly one of url or service is required',
      'spec.conversion.webhook.conversionReviewVersions: must specify one of v1, v1beta1',
    ]);
    expect(conv({ strategy: 'Webhook', webhook: { clientConfig: { url: 'http://hook' }, conversionReviewVersions: ['v1'] } })[0]).toMatch(
      /^spec.conversion.webhook.clientConfig.url: 'https' is the only allowed URL scheme/,
    );
    expect(conv({ strategy: 'None', webhook: { conversionReviewVersions: ['v1'] } })).toEqual([
      'spec.conversion.webhook: should not be set when strategy is not set to Webhook',
    ]);
    expect(conv({ strategy: 'Other' })).toEqual(['spec.conversion.strategy: supported values: "None", "Webhook"']);
  });

  it('requires the approval annotation in protected groups', () => {
    const def = crd({ group: 'x.k8s.io' });
    def.metadata.name = 'widgets.x.k8s.io';
    expect(msgs(def)).toEqual([
      'metadata.annotations[api-approved.kubernetes.io]: protected groups must have approval annotation "api-approved.kubernetes.io", see https://github.com/kubernetes/enhancements/pull/1111',
    ]);
    def.metadata.annotations = { 'api-approved.kubernetes.io': 'https://github.com/kubernetes/kubernetes/pull/1' };
    expect(msgs(def)).toEqual([]);
  });

  it('requires structural schemas', () => {
    const errs = (s: unknown) => crdSchemaErrors(s, 'x').map((e) => `${e.field}: ${e.detail}`);
    expect(errs({ type: 'string' })).toEqual(['x.type: must be object at the root']);
    expect(errs({})).toEqual(['x.type: must not be empty at the root']);
    expect(
      errs({
        type: 'object',
        properties: {
          a: { description: 'untyped' },
          b: { 'x-kubernetes-int-or-string': true },
          c: { 'x-kubernetes-preserve-unknown-fields': true },
          d: { type: 'array' },
          e: { type: 'object', properties: { f: { type: 'date' } }, additionalProperties: { type: 'string' } },
          h: { type: 'string', pattern: '^(?i)(abort|warn)?$' },
          i: { type: 'string', pattern: '([a-z' },
        },
      }),
    ).toEqual([
      'x.properties[a].type: must not be empty for specified object fields',
      'x.properties[d].items: must be specified',
      'x.properties[e].additionalProperties: additionalProperties and properties are mutual exclusive',
      'x.properties[e].properties[f].type: supported values: "array", "boolean", "integer", "number", "object", "string"',
      'x.properties[i].pattern: must be a valid regular expression',
    ]);
    // A keyword a structural schema cannot hold is named, and the structural rules wait for it to go.
    expect(errs({ type: 'object', properties: { a: {}, g: { $ref: '#/definitions/x', type: 'object' } } })).toEqual([
      'x.properties[g].$ref: $ref is not supported',
    ]);
  });

  it('checks scale paths, printer columns and selectable fields', () => {
    expect(
      msgs(
        crd({}, [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: { openAPIV3Schema: SCHEMA },
            subresources: { scale: { specReplicasPath: '.status.x', statusReplicasPath: '' } },
            additionalPrinterColumns: [{ name: 'A', type: 'color', jsonPath: '.a[' }],
            selectableFields: [{ jsonPath: '.metadata.name' }, { jsonPath: '.spec.list[0]' }],
          },
        ]),
      ),
    ).toEqual([
      'spec.subresources.scale.specReplicasPath: should be a json path under .spec',
      'spec.subresources.scale.statusReplicasPath: ',
      'spec.selectableFields[0].jsonPath: must not select metadata fields',
      'spec.selectableFields[1].jsonPath: must be a simple json path',
      'spec.additionalPrinterColumns[0].type: supported values: "integer", "number", "string", "boolean", "date"',
      'spec.additionalPrinterColumns[0].jsonPath: must be a simple json path: unclosed [ in ".a["',
    ]);
  });

  it('on update keeps the scope and the stored versions listed', () => {
    const old = crd();
    const next = crd({ scope: 'Cluster' }, [{ name: 'v2', served: true, storage: true, schema: { openAPIV3Schema: SCHEMA } }]);
    next.status = { storedVersions: ['v1', 'v2'] };
    expect(validateCrdUpdate(next, old).map((e) => `${e.field}: ${e.detail}`)).toEqual([
      'spec.scope: field is immutable',
      'status.storedVersions[0]: must appear in spec.versions',
    ]);
  });

  it('compiles CEL rules: errors name the rule, the definition is otherwise accepted', () => {
    const withRules = (spec: Record<string, unknown>) =>
      crd({}, [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec } } } }]);
    const ok = withRules({ type: 'object', properties: { a: { type: 'integer' } }, 'x-kubernetes-validations': [{ rule: 'self.a > 0' }] });
    expect(validateCrd(ok)).toEqual([]);
    const bad = withRules({
      type: 'object',
      properties: { a: { type: 'integer' } },
      'x-kubernetes-validations': [{ rule: 'self.b > 0' }, { rule: 'self.a >' }, { rule: 'self.a' }, { rule: 'self.a > 0', reason: 'Nope' }],
    });
    const p = 'spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations';
    expect(validateCrd(bad).map((e) => `${e.field}: ${e.detail}`)).toEqual([
      `${p}[0].rule: compilation failed: ERROR: <input>:1:5: undefined field 'b'`,
      `${p}[1].rule: compilation failed: ERROR: <input>:1:9: Unexpected token: EOF`,
      `${p}[2].rule: compilation failed: cel expression must evaluate to a bool`,
      `${p}[3].reason: supported values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"`,
    ]);
    const c = ctx();
    crdStrategy.validate!(ok, c);
    expect(c.warnings).toEqual([]);
  });
});

describe('CustomResourceDefinition strategy', () => {
  it('starts status with the storage version and adds a new storage version on update', () => {
    const def = crd();
    def.status = { conditions: [{ type: 'Established', status: 'True' }] };
    crdStrategy.prepareForCreate!(def, ctx());
    expect(def.status).toEqual({ storedVersions: ['v1'] });
    const next = crd({}, [
      { name: 'v1', served: true, storage: false, schema: { openAPIV3Schema: SCHEMA } },
      { name: 'v2', served: true, storage: true, schema: { openAPIV3Schema: SCHEMA } },
    ]);
    next.status = { storedVersions: ['v1'] };
    crdStrategy.prepareForUpdate!(next, def, ctx());
    expect(next.status).toEqual({ storedVersions: ['v1', 'v2'] });
  });

  it('holds a deleted definition with the cleanup finalizer and a Terminating condition', () => {
    const def = crd();
    def.metadata.finalizers = ['example.com/other'];
    crdStrategy.prepareForDelete!(def, ctx());
    expect(def.metadata.finalizers).toEqual(['example.com/other', CLEANUP_FINALIZER]);
    expect((def.status as Obj).conditions).toEqual([
      {
        type: 'Terminating',
        status: 'True',
        reason: 'InstanceDeletionPending',
        message: 'CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon',
        lastTransitionTime: '2026-01-01T00:10:00Z',
      },
    ]);
  });
});

describe('naming', () => {
  const now = new Date('2026-01-01T00:00:00Z');
  const accepted = (name: string, names: Obj, group = 'acme.io'): KubeObject => ({
    metadata: { name: `${String(names.plural)}.${group}` },
    spec: { group, names },
    status: { acceptedNames: names },
  });

  it('accepts names no other definition of the group serves, and establishes the definition', () => {
    const def = crd({ names: { plural: 'widgets', kind: 'Widget' } });
    const next = desiredNamingStatus(def, [def, accepted('gadgets', { plural: 'gadgets', kind: 'Gadget' })], [], now);
    expect(next.status).toEqual({
      acceptedNames: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
      conditions: [
        { type: 'NamesAccepted', status: 'True', reason: 'NoConflicts', message: 'no conflicts found', lastTransitionTime: '2026-01-01T00:00:00Z' },
        {
          type: 'Established',
          status: 'True',
          reason: 'InitialNamesAccepted',
          message: 'the initial names have been accepted',
          lastTransitionTime: '2026-01-01T00:00:00Z',
        },
      ],
    });
  });

  it('reports each kind of conflict, with the built-in kinds of the group too', () => {
    const want = (names: Obj) => crdNames(names);
    const def = crd();
    const others = [
      accepted('gadgets', { plural: 'gadgets', singular: 'gadget', shortNames: ['gd'], kind: 'Gadget' }),
      accepted('widgets', { plural: 'widgets', kind: 'Widget' }, 'other.io'),
    ];
    expect(namesConflict(def, want({ plural: 'gadgets', kind: 'W' }), others, [])).toEqual(['PluralConflict', '"gadgets" is already in use']);
    expect(namesConflict(def, want({ plural: 'ws', singular: 'gadget', kind: 'W' }), others, [])).toEqual(['SingularConflict', '"gadget" is already in use']);
    expect(namesConflict(def, want({ plural: 'ws', shortNames: ['gd'], kind: 'W' }), others, [])).toEqual(['ShortNamesConflict', '"gd" is already in use']);
    expect(namesConflict(def, want({ plural: 'ws', singular: 'w', kind: 'Gadget' }), others, [])).toEqual(['KindConflict', '"Gadget" is already in use']);
    expect(namesConflict(def, want({ plural: 'ws', kind: 'W', listKind: 'GadgetList' }), others, [])).toEqual([
      'ListKindConflict',
      '"GadgetList" is already in use',
    ]);
    expect(namesConflict(def, want({ plural: 'widgets', kind: 'Widget' }), others, [])).toBeUndefined();
    const builtin = { group: 'acme.io', plural: 'widgets', kind: 'Thing' } as KindDeclaration;
    expect(namesConflict(def, want({ plural: 'widgets', kind: 'Widget' }), [], [builtin])).toEqual(['PluralConflict', '"widgets" is already in use']);
  });

  it('keeps an established definition serving its accepted names when new ones conflict', () => {
    const def = crd({ names: { plural: 'widgets', singular: 'widget', kind: 'Gadget' } });
    def.status = {
      acceptedNames: { plural: 'widgets', kind: 'Widget' },
      conditions: [{ type: 'Established', status: 'True', reason: 'InitialNamesAccepted', message: 'm' }],
    };
    const next = desiredNamingStatus(def, [def, accepted('gadgets', { plural: 'gadgets', kind: 'Gadget' })], [], now);
    expect((next.status as Obj).acceptedNames).toEqual({ plural: 'widgets', kind: 'Widget' });
    expect((next.status as Obj).conditions).toEqual([
      { type: 'Established', status: 'True', reason: 'InitialNamesAccepted', message: 'm' },
      { type: 'NamesAccepted', status: 'False', reason: 'KindConflict', message: '"Gadget" is already in use', lastTransitionTime: '2026-01-01T00:00:00Z' },
    ]);
    const fresh = crd({ names: { plural: 'widgets', singular: 'widget', kind: 'Gadget' } });
    const refused = desiredNamingStatus(fresh, [fresh, accepted('gadgets', { plural: 'gadgets', kind: 'Gadget' })], [], now);
    expect((refused.status as Obj).conditions).toEqual(
      expect.arrayContaining([expect.objectContaining({ type: 'Established', status: 'False', reason: 'NotAccepted', message: 'not all names are accepted' })]),
    );
  });
});
