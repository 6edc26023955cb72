import { X509Certificate } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runPkiCli } from './pki.cli.js';
import { readKubeconfig } from '@app/pki';

describe('pki CLI', () => {
  let tmp: string;
  beforeEach(async () => {
    tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'pki-cli-'));
  });
  afterEach(async () => {
    await fs.rm(tmp, { recursive: true, force: true });
  });

  const run = async (argv: string[]): Promise<{ code: number; out: string[]; err: string[] }> => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runPkiCli(
      argv,
      (l) => out.push(l),
      (l) => err.push(l),
    );
    return { code, out, err };
  };

  it('writes the PKI with comma-separated hosts and the given server, then keeps it', async () => {
    const dir = path.join(tmp, 'pki');
    const first = await run(['--out', dir, '--hosts', 'n1,n2,10.0.0.3', '--server', 'https://127.0.0.1:6443']);
    expect(first.code).toBe(0);
    expect(first.out.filter((l) => l.startsWith('wrote'))).toHaveLength(11);
    expect(first.out.at(-1)).toBe(`Admin kubeconfig: ${path.join(dir, 'admin.kubeconfig')}`);
    const serving = new X509Certificate(await fs.readFile(path.join(dir, 'apiserver.crt')));
    expect(serving.checkHost('n2')).toBe('n2');
    expect(serving.checkIP('10.0.0.3')).toBe('10.0.0.3');
    expect((await readKubeconfig(path.join(dir, 'admin.kubeconfig'))).server).toBe('https://127.0.0.1:6443');

    const second = await run(['--out', dir, '--hosts', 'n1']);
    expect(second.code).toBe(0);
    expect(second.out.filter((l) => l.startsWith('kept'))).toHaveLength(11);
  });

  it('exits 2 on usage errors and 1 on bad hosts', async () => {
    expect((await run([])).code).toBe(2);
    expect((await run(['--out', tmp, '--bogus'])).code).toBe(2);
    expect((await run(['--out', tmp, '--server', 'http://x'])).code).toBe(2);
    const bad = await run(['--out', tmp, '--hosts', 'a b']);
    expect(bad.code).toBe(1);
    expect(bad.err[0]).toMatch(/neither an IP address nor a valid DNS name/);
  });
});
