import { StatusError } from '@app/apimachinery';
import { columnsOf } from '@app/registry';
import { componentStatuses, componentStatusKind } from './componentstatus.kind.js';

const ctx = { user: { username: 'u', groups: [] }, dryRun: false, warnings: [], now: () => new Date() };

describe('ComponentStatus', () => {
  it("lists this node's storage as etcd-0, healthy or not", () => {
    expect(componentStatuses(() => undefined)).toEqual([
      { apiVersion: 'v1', kind: 'ComponentStatus', metadata: { name: 'etcd-0' }, conditions: [{ type: 'Healthy', status: 'True', message: 'ok' }] },
    ]);
    expect(componentStatuses(() => 'storage closed')[0].conditions).toEqual([{ type: 'Healthy', status: 'False', message: '', error: 'storage closed' }]);
  });
  it('gets by name and answers 404 for other names; prints NAME STATUS MESSAGE ERROR', async () => {
    const decl = componentStatusKind(() => undefined);
    expect((await decl.computed!.get('', 'etcd-0', ctx)).metadata.name).toBe('etcd-0');
    await expect(decl.computed!.get('', 'scheduler', ctx)).rejects.toBeInstanceOf(StatusError);
    expect(columnsOf(decl).map((c) => c.name)).toEqual(['Name', 'Status', 'Message', 'Error']);
    expect(decl.tableColumns!.map((c) => c.cell(componentStatuses(() => 'down')[0], new Date()))).toEqual(['Unhealthy', '', 'down']);
  });
});

describe('ComponentStatus protobuf', () => {
  it('has messages whose fields match the schema', async () => {
    const { protobufKindProblems } = await import('../../groups.check.js');
    expect(protobufKindProblems([componentStatusKind(() => undefined)])).toEqual([]);
  });
});
