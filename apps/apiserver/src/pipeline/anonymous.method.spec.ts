import { parseFlags } from '../config/flags.js';
import { AnonymousAccess, isPublicInfoPath } from './anonymous.method.js';

describe('anonymous access (--anonymous-auth)', () => {
  const policy = (argv: string[]) => new AnonymousAccess(parseFlags(argv)).allowed;

  it('not given, under the default RBAC mode: every path (RBAC then decides what system:anonymous may do)', () => {
    expect(['/version', '/readyz', '/readyz/raft', '/api/v1/namespaces'].every(policy([]))).toBe(true);
    expect(policy(['--authorization-mode=RBAC,AlwaysDeny'])('/apis')).toBe(true);
  });

  it('not given, with AlwaysAllow among the modes: the public info paths only', () => {
    for (const modes of ['AlwaysAllow', 'RBAC,AlwaysAllow']) {
      const allowed = policy([`--authorization-mode=${modes}`]);
      expect(['/version', '/healthz', '/livez', '/readyz'].every(allowed)).toBe(true);
      expect(allowed('/readyz/raft')).toBe(false);
      expect(allowed('/api/v1/namespaces')).toBe(false);
    }
    expect(isPublicInfoPath('/version')).toBe(true);
  });

  it('false: nothing; true: everything, whatever the modes', () => {
    expect(policy(['--anonymous-auth=false'])('/version')).toBe(false);
    expect(policy(['--anonymous-auth=true'])('/api/v1/namespaces')).toBe(true);
    expect(policy(['--anonymous-auth', '--authorization-mode=AlwaysAllow'])('/apis')).toBe(true);
  });
});
