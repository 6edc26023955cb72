import type { KubeObject } from '@app/apimachinery';
import type { RequestContext } from '@app/registry';
import { controllerOf } from './controllerrevision.kind.js';
import { controllerRevisionStrategy } from './controllerrevision.strategy.js';

const ctx: RequestContext = { user: { username: 'u', groups: [] }, dryRun: false, warnings: [], now: () => new Date() };
const cr = (extra: Record<string, unknown>): KubeObject => ({ metadata: { name: 'web-1' }, revision: 1, data: { spec: { a: 1 } }, ...extra });

describe('ControllerRevision strategy', () => {
  it('requires data and a revision that is not negative', () => {
    expect(controllerRevisionStrategy.validate!(cr({}), ctx)).toEqual([]);
    expect(controllerRevisionStrategy.validate!(cr({ data: undefined, revision: -1 }), ctx)).toEqual([
      { type: 'FieldValueRequired', field: 'data', detail: 'data is mandatory' },
      { type: 'FieldValueInvalid', field: 'revision', value: -1, detail: 'must be greater than or equal to 0' },
    ]);
  });
  it('never lets data change; revision and metadata may', () => {
    expect(controllerRevisionStrategy.validateUpdate!(cr({ revision: 2, metadata: { name: 'web-1', labels: { a: 'b' } } }), cr({}), ctx)).toEqual([]);
    expect(controllerRevisionStrategy.validateUpdate!(cr({ data: { spec: { a: 2 } } }), cr({}), ctx)).toEqual([
      { type: 'FieldValueInvalid', field: 'data', value: { spec: { a: 2 } }, detail: 'field is immutable' },
    ]);
  });
  it('prints the controller as kubectl does', () => {
    expect(controllerOf(cr({}))).toBe('<none>');
    const owned = cr({ metadata: { name: 'x', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web', uid: 'u', controller: true }] } });
    expect(controllerOf(owned)).toBe('statefulset.apps/web');
  });
});
