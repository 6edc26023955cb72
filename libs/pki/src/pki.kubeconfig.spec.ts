import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse } from 'yaml';
import { KubeconfigError, buildKubeconfig, clusterInfoKubeconfig, parseKubeconfig, readKubeconfig, writeKubeconfig } from './pki.kubeconfig.js';

const base = { server: 'https://127.0.0.1:6443', caPem: 'CA-PEM\n', certPem: 'CERT-PEM\n', keyPem: 'KEY-PEM\n' };

describe('kubeconfig', () => {
  it('writes one cluster/context per server, all with the same user, mode 0600', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'kc-spec-'));
    try {
      const file = path.join(dir, 'sub', 'admin.kubeconfig');
      await writeKubeconfig(file, {
        ...base,
        contexts: [
          { name: 'n1', server: 'https://127.0.0.1:6444' },
          { name: 'lb', server: 'https://127.0.0.1:6443' },
        ],
        currentContext: 'lb',
      });
      expect((await fs.stat(file)).mode & 0o777).toBe(0o600);
      const doc = parse(await fs.readFile(file, 'utf8')) as Record<string, unknown>;
      expect(doc.kind).toBe('Config');
      expect(doc['current-context']).toBe('lb');
      expect((doc.contexts as unknown[]).length).toBe(3);
      expect(doc.users).toEqual([
        {
          name: 'kubernetes-admin',
          user: {
            'client-certificate-data': Buffer.from('CERT-PEM\n').toString('base64'),
            'client-key-data': Buffer.from('KEY-PEM\n').toString('base64'),
          },
        },
      ]);
      const n1 = await readKubeconfig(file, 'n1');
      expect(n1).toEqual({ contextName: 'n1', server: 'https://127.0.0.1:6444', caPem: 'CA-PEM\n', certPem: 'CERT-PEM\n', keyPem: 'KEY-PEM\n' });
      expect((await readKubeconfig(file)).contextName).toBe('lb');
      expect((await fs.readdir(path.dirname(file))).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  it('rejects duplicate contexts and an unknown current context', () => {
    expect(() => buildKubeconfig({ ...base, contexts: [{ name: 'kapi', server: 'x' }] })).toThrow(KubeconfigError);
    expect(() => buildKubeconfig({ ...base, currentContext: 'nope' })).toThrow(KubeconfigError);
  });

  it('reports what a kubeconfig lacks with a typed error', () => {
    expect(() => parseKubeconfig('a: [')).toThrow(KubeconfigError);
    expect(() => parseKubeconfig('kind: Config\n')).toThrow(/current-context/);
    expect(() => parseKubeconfig('current-context: x\ncontexts: []\n')).toThrow(/no context named "x"/);
    const noKey = JSON.stringify({
      'current-context': 'c',
      contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
      clusters: [{ name: 'c', cluster: { server: 's', 'certificate-authority-data': 'QQ==' } }],
      users: [{ name: 'u', user: { 'client-certificate-data': 'QQ==' } }],
    });
    expect(() => parseKubeconfig(noKey)).toThrow(/client-key-data/);
  });
});

describe('clusterInfoKubeconfig', () => {
  it('holds one cluster with server and CA data, and no user, context or credential', () => {
    const doc = parse(clusterInfoKubeconfig('https://10.0.0.1:6443', 'CA PEM\n')) as Record<string, unknown>;
    expect(doc).toEqual({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: '', cluster: { server: 'https://10.0.0.1:6443', 'certificate-authority-data': Buffer.from('CA PEM\n').toString('base64') } }],
      contexts: null,
      'current-context': '',
      preferences: {},
      users: null,
    });
  });
});
