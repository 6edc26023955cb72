import type { KubeObject } from '@app/apimachinery';
import type { RequestContext } from '@app/registry';
import { csrConditionCell } from './certificatesigningrequest.kind.js';
import { csrApprovalStrategy, csrStatusStrategy, csrStrategy, validateCsr, validateSignerName } from './certificatesigningrequest.strategy.js';

const PEM = '-----BEGIN CERTIFICATE REQUEST-----\nMIIB\n-----END CERTIFICATE REQUEST-----\n';
const ctx = (username = 'alice'): RequestContext => ({
  user: { username, uid: 'u-1', groups: ['dev', 'system:authenticated'], extra: { scopes: ['a'] } },
  dryRun: false,
  warnings: [],
  now: () => new Date('2026-01-01T00:00:00.123Z'),
});
const csr = (spec: Record<string, unknown> = {}, status?: Record<string, unknown>): KubeObject => ({
  metadata: { name: 'c' },
  spec: { request: Buffer.from(PEM).toString('base64'), signerName: 'example.com/s', usages: ['client auth'], ...spec },
  ...(status ? { status } : {}),
});
const msgs = (errs: Array<{ field: string; detail: string }>): string[] => errs.map((e) => `${e.field}: ${e.detail}`);

describe('csrStrategy', () => {
  it('writes the creator into spec on create, whatever the body says, and drops status', () => {
    const o = csr({ username: 'mallory', groups: ['system:masters'] }, { certificate: 'eA==' });
    csrStrategy.prepareForCreate!(o, ctx());
    expect(o.spec).toMatchObject({ username: 'alice', uid: 'u-1', groups: ['dev', 'system:authenticated'], extra: { scopes: ['a'] } });
    expect(o.status).toBeUndefined();
  });

  it('keeps spec and status on a main-resource update', () => {
    const old = csr({ username: 'alice' }, { conditions: [{ type: 'Approved', status: 'True' }] });
    const next = csr({ username: 'bob', usages: ['server auth'] });
    csrStrategy.prepareForUpdate!(next, old, ctx());
    expect(next.spec).toEqual(old.spec);
    expect(next.status).toEqual(old.status);
  });

  it('validates signer names, usages, expiration and the PEM block', () => {
    expect(validateCsr(csr())).toEqual([]);
    expect(msgs(validateSignerName('a/b/c'))).toEqual(["spec.signerName: must be a fully qualified domain and path of the form 'example.com/signer-name'"]);
    expect(msgs(validateSignerName('example/x'))).toEqual(['spec.signerName: should be a domain with at least two segments separated by dots']);
    expect(validateSignerName('')).toEqual([{ type: 'FieldValueRequired', field: 'spec.signerName', detail: '' }]);
    const errs = msgs(validateCsr(csr({ usages: ['client auth', 'client auth'], expirationSeconds: 10, request: Buffer.from('x').toString('base64') })));
    expect(errs).toEqual([
      'spec.request: PEM block type must be CERTIFICATE REQUEST',
      'spec.expirationSeconds: may not specify a duration less than 600 seconds (10 minutes)',
      'spec.usages[1]: ',
    ]);
    expect(msgs(validateCsr(csr({ usages: [] })))).toEqual(['spec.usages: usages must be provided']);
  });
});

describe('csrApprovalStrategy', () => {
  it('changes only the Approved/Denied conditions and stamps them', () => {
    const old = csr({}, { conditions: [{ type: 'Failed', status: 'True' }], certificate: 'b2xk' });
    const next = csr({ usages: ['server auth'] }, { conditions: [{ type: 'Approved', status: 'True', reason: 'KubectlApprove' }], certificate: 'bmV3' });
    csrApprovalStrategy.prepareForUpdate(next, old, ctx());
    expect(next.spec).toEqual(old.spec);
    expect(next.status).toEqual({
      certificate: 'b2xk',
      conditions: [
        { type: 'Approved', status: 'True', reason: 'KubectlApprove', lastUpdateTime: '2026-01-01T00:00:00Z', lastTransitionTime: '2026-01-01T00:00:00Z' },
        { type: 'Failed', status: 'True' },
      ],
    });
  });

  it('refuses Approved with Denied, and removing an approval', () => {
    const approvedOld = csr({}, { conditions: [{ type: 'Approved', status: 'True' }] });
    const both = csr(
      {},
      {
        conditions: [
          { type: 'Approved', status: 'True' },
          { type: 'Denied', status: 'True' },
        ],
      },
    );
    expect(msgs(csrApprovalStrategy.validateUpdate!(both, approvedOld, ctx()))).toEqual([
      'status.conditions: Approved and Denied conditions are mutually exclusive',
    ]);
    expect(msgs(csrApprovalStrategy.validateUpdate!(csr({}, { conditions: [] }), approvedOld, ctx()))).toEqual([
      'status.conditions: updates may not remove a condition of type "Approved"',
    ]);
  });
});

describe('csrStatusStrategy', () => {
  it('keeps the approval conditions and refuses a certificate on an unapproved request', () => {
    const old = csr({}, { conditions: [{ type: 'Denied', status: 'True' }] });
    const next = csr({}, { conditions: [{ type: 'Approved', status: 'True' }] });
    csrStatusStrategy.prepareForUpdate(next, old, ctx());
    expect(next.status).toEqual({ conditions: [{ type: 'Denied', status: 'True' }] });
    const withCert = csr({}, { certificate: 'eA==' });
    expect(msgs(csrStatusStrategy.validateUpdate!(withCert, csr(), ctx()))).toContain(
      'status.certificate: must contain at least one CERTIFICATE PEM block, and only CERTIFICATE PEM blocks that parse',
    );
  });

  it('stamps each condition from the old one of its type in one pass: 100,000 conditions, reordered', () => {
    const n = 100_000;
    const t0 = '2025-01-01T00:00:00Z';
    const old = csr({}, { conditions: Array.from({ length: n }, (_, i) => ({ type: `T${i}`, status: 'True', lastTransitionTime: t0 })) });
    // Reversed, the first one's status changed, and a new type at the end.
    const conditions = Array.from({ length: n }, (_, i) => ({ type: `T${n - 1 - i}`, status: i === n - 1 ? 'False' : 'True' }));
    const next = csr({}, { conditions: [...conditions, { type: 'New', status: 'True' }] });
    csrStatusStrategy.prepareForUpdate(next, old, ctx());
    const stamped = (next.status as { conditions: Array<{ type: string; lastTransitionTime: string; lastUpdateTime: string }> }).conditions;
    const now = '2026-01-01T00:00:00Z';
    expect(stamped).toHaveLength(n + 1);
    expect(stamped.filter((c) => c.lastTransitionTime === now).map((c) => c.type)).toEqual(['T0', 'New']);
    expect(stamped.every((c) => c.lastUpdateTime === now)).toBe(true);
  });

  it('the CONDITION column: Denied over Approved over Pending, then Failed and Issued', () => {
    expect(csrConditionCell(csr())).toBe('Pending');
    expect(csrConditionCell(csr({}, { conditions: [{ type: 'Approved', status: 'True' }], certificate: 'eA==' }))).toBe('Approved,Issued');
    expect(csrConditionCell(csr({}, { conditions: [{ type: 'Approved' }, { type: 'Failed' }] }))).toBe('Approved,Failed');
  });
});
