import { startEtcd, type EtcdCluster } from '../../../test/support/etcd.js';
import { getFreePort } from '../../../test/support/net.helper.js';
import { prerequisite } from '../../../test/support/prereq.js';
import { Etcd3Client, Etcd3Error, etcdPrefixEnd, parseEtcdServers, type EtcdRangeResponse, type Etcd3TxnResponse } from './etcd3.client.js';

describe('parseEtcdServers', () => {
  it('takes http(s) URLs with host and port, all of one scheme', () => {
    expect(parseEtcdServers('https://127.0.0.1:2379, https://[::1]:2479')).toEqual({ urls: ['https://127.0.0.1:2379', 'https://[::1]:2479'], secure: true });
    expect(parseEtcdServers('http://h:1').secure).toBe(false);
    expect(() => parseEtcdServers('')).toThrow('at least one URL');
    expect(() => parseEtcdServers('127.0.0.1:2379')).toThrow('is not a URL');
    expect(() => parseEtcdServers('ftp://h:1')).toThrow('scheme must be https or http');
    expect(() => parseEtcdServers('https://h')).toThrow('host and port only');
    expect(() => parseEtcdServers('https://h:1/x')).toThrow('host and port only');
    expect(() => parseEtcdServers('https://h:1,http://h:2')).toThrow('either https or http');
  });

  it('etcdPrefixEnd is the first key after the prefix', () => {
    expect(etcdPrefixEnd(Buffer.from('/a/')).toString()).toBe('/a0');
    expect([...etcdPrefixEnd(Buffer.from([0x61, 0xff]))]).toEqual([0x62]);
    expect([...etcdPrefixEnd(Buffer.from([0xff]))]).toEqual([0]);
  });
});

describe('Etcd3Client failover (real etcd, one member, and a dead endpoint)', () => {
  let etcd: EtcdCluster;
  // false only when the run opted out of etcd (KAPI_TEST_WITHOUT=etcd): recorded, tests return at once.
  let haveEtcd = false;
  const clients: Etcd3Client[] = [];

  beforeAll(async () => {
    haveEtcd = prerequisite('etcd', 'Etcd3Client failover against a real etcd (libs/storage/src/etcd3.client.spec.ts)');
    if (haveEtcd) etcd = await startEtcd({ members: 1 });
  }, 60_000);

  afterAll(async () => {
    for (const c of clients) c.close();
    await etcd?.cleanup();
  });

  it('sends reads and writes to a reachable member when the first endpoint is down', async () => {
    if (!haveEtcd) return;
    const dead = `http://127.0.0.1:${await getFreePort()}`;
    const c = new Etcd3Client({ endpoints: [dead, etcd.servers], connectTimeoutMs: 3000 });
    clients.push(c);
    const key = Buffer.from('/failover/k');
    // A write that cannot have reached the dead member goes to the live one.
    const put = await c.call<Etcd3TxnResponse>('kv', 'Txn', { compare: [], success: [{ request_put: { key, value: Buffer.from('v') } }], failure: [] }, false);
    expect(put.succeeded).toBe(true);
    const got = await c.call<EtcdRangeResponse>('kv', 'Range', { key }, true);
    expect(got.kvs[0]!.value.toString()).toBe('v');
  });

  it('leaves no timer behind once closed while it waited for a dead endpoint', async () => {
    if (!haveEtcd) return;
    const timers = (): number => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    // The clients of the tests before, closed first: their channels' timers would come and go.
    for (const earlier of clients.splice(0)) earlier.close();
    await new Promise((r) => setTimeout(r, 50));
    const before = timers();
    const dead = `http://127.0.0.1:${await getFreePort()}`;
    // Long enough that a timer of the wait for the dead endpoint would still be pending below.
    const c = new Etcd3Client({ endpoints: [dead, etcd.servers], connectTimeoutMs: 60_000 });
    await c.call<EtcdRangeResponse>('kv', 'Range', { key: Buffer.from('/none') }, true);
    c.close();
    await new Promise((r) => setTimeout(r, 50));
    expect(timers()).toBeLessThanOrEqual(before);
  });

  it('fails Unavailable when no member can be reached', async () => {
    if (!haveEtcd) return;
    const c = new Etcd3Client({ endpoints: [`http://127.0.0.1:${await getFreePort()}`], connectTimeoutMs: 300 });
    clients.push(c);
    const err = await c.call('kv', 'Range', { key: Buffer.from('x') }, true).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Etcd3Error);
    expect((err as Etcd3Error).unavailable).toBe(true);
    c.close();
    await expect(c.call('kv', 'Range', { key: Buffer.from('x') }, true)).rejects.toMatchObject({ unavailable: true });
  });
});
