import { parseFlags } from '../config/flags.js';
import { AnonymousAccess, isPublicInfoPath } from './anonymous.method.js';

describe('anonymous access (--anonymous-auth)', () => {
  const policy = (argv: string[]) => new AnonymousAccess(parseFlags(argv)).allowed;

  it('not given: the public info paths only', () => {
    const allowed = policy([]);
    expect(['/version', '/healthz', '/livez', '/readyz'].every(allowed)).toBe(true);
    expect(allowed('/readyz/raft')).toBe(false);
    expect(allowed('/api/v1/namespaces')).toBe(false);
    expect(isPublicInfoPath('/version')).toBe(true);
  });

  it('false: nothing; true: everything', () => {
    expect(policy(['--anonymous-auth=false'])('/version')).toBe(false);
    expect(policy(['--anonymous-auth=true'])('/api/v1/namespaces')).toBe(true);
    expect(policy(['--anonymous-auth'])('/apis')).toBe(true);
  });
});
