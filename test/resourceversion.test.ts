/**
 * Every cell of the conventions' "Resource versions" get and list tables, the "Pagination"
 * rules and the resourceVersion rows of "Errors", against a started server over raw HTTPS
 * (HTTP/1.1, and HTTP/2 for a sample). A second server with `--compaction-interval 1` makes
 * history expire so the 410 cases (Exact on a compacted revision, expired continue token) happen.
 */
import { jest } from '@jest/globals';
import { request, request2, startServer, waitFor, type HttpResponse, type ServerHandle } from './support/server.js';

// Several cells wait out the 3 s "too large resource version" bound.
jest.setTimeout(120_000);

interface ListBody {
  metadata: { resourceVersion: string; continue?: string; remainingItemCount?: number };
  items: Array<{ metadata: { name: string; resourceVersion: string }; data?: Record<string, string> }>;
}
interface StatusBody {
  kind: string;
  code: number;
  reason: string;
  message: string;
  metadata?: { continue?: string };
}

const cm = (name: string, data: Record<string, string> = { v: '1' }, labels?: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, ...(labels ? { labels } : {}) },
  data,
});

/** The root-CA publisher's ConfigMap, which every namespace gets (as in Kubernetes). */
const ROOT_CA = 'kube-root-ca.crt';

/** Creates a namespace and waits for the root-CA publisher's ConfigMap in it, so it exists before anything a test writes. */
async function mkns(s: ServerHandle, ns: string): Promise<void> {
  const r = await request(s, 'POST', '/api/v1/namespaces', { body: { metadata: { name: ns } } });
  expect([201, 409]).toContain(r.status);
  await waitFor(`${ROOT_CA} in ${ns}`, async () => (await request(s, 'GET', `/api/v1/namespaces/${ns}/configmaps/${ROOT_CA}`)).status === 200);
}

async function create(s: ServerHandle, ns: string, body: unknown): Promise<{ metadata: { name: string; resourceVersion: string } }> {
  const r = await request(s, 'POST', `/api/v1/namespaces/${ns}/configmaps`, { body });
  expect(r.status).toBe(201);
  return r.json();
}

async function put(s: ServerHandle, ns: string, name: string, data: Record<string, string>): Promise<string> {
  const r = await request(s, 'PATCH', `/api/v1/namespaces/${ns}/configmaps/${name}`, {
    body: { data },
    headers: { 'content-type': 'application/merge-patch+json' },
  });
  expect(r.status).toBe(200);
  return r.json<{ metadata: { resourceVersion: string } }>().metadata.resourceVersion;
}

const list = (s: ServerHandle, ns: string, query: string): Promise<HttpResponse> => request(s, 'GET', `/api/v1/namespaces/${ns}/configmaps?${query}`);
const names = (b: ListBody): string[] => b.items.map((i) => i.metadata.name);

function expectStatus(r: HttpResponse, code: number, reason: string, text?: string): StatusBody {
  expect(r.status).toBe(code);
  const s = r.json<StatusBody>();
  expect(s).toMatchObject({ kind: 'Status', code, reason });
  if (text) expect(s.message).toContain(text);
  return s;
}

function expectTooLarge(r: HttpResponse): void {
  const s = expectStatus(r, 504, 'Timeout', 'Too large resource version');
  expect(s.message).toContain('Too large resource version');
  expect(Number(r.headers['retry-after'])).toBeGreaterThanOrEqual(1);
}

describe('resource versions on one node (compaction off)', () => {
  let server: ServerHandle;
  const ns = 'rv';
  /** rv0: a list revision at which only a@v1 and b exist; later: a@v2, c. */
  let rv0: number;
  let aRv1: string;

  beforeAll(async () => {
    server = await startServer({ args: ['--compaction-interval', '0'] });
    await mkns(server, ns);
    aRv1 = (await create(server, ns, cm('a', { v: '1' }))).metadata.resourceVersion;
    rv0 = Number((await create(server, ns, cm('b'))).metadata.resourceVersion);
    await put(server, ns, 'a', { v: '2' });
    await create(server, ns, cm('c'));
  });
  afterAll(async () => {
    await server?.cleanup();
  });

  describe('get table', () => {
    it('unset: Most Recent (the latest write is visible at once)', async () => {
      const rv = await put(server, ns, 'b', { v: String(Date.now()) });
      const g = await request(server, 'GET', `/api/v1/namespaces/${ns}/configmaps/b`);
      expect(g.status).toBe(200);
      expect(g.json<{ metadata: { resourceVersion: string } }>().metadata.resourceVersion).toBe(rv);
    });
    it('"0": Any (served, at some version)', async () => {
      const g = await request(server, 'GET', `/api/v1/namespaces/${ns}/configmaps/a?resourceVersion=0`);
      expect(g.status).toBe(200);
      expect(g.json<{ data: Record<string, string> }>().data).toBeDefined();
    });
    it('non-zero: Not older than (an older rv gives the current object, never the old one)', async () => {
      const g = await request(server, 'GET', `/api/v1/namespaces/${ns}/configmaps/a?resourceVersion=${aRv1}`);
      expect(g.status).toBe(200);
      const o = g.json<{ data: Record<string, string>; metadata: { resourceVersion: string } }>();
      expect(o.data).toEqual({ v: '2' });
      expect(Number(o.metadata.resourceVersion)).toBeGreaterThan(Number(aRv1));
    });
    it('non-zero in the future: waits briefly, then 504 Too large resource version with Retry-After', async () => {
      const t0 = Date.now();
      const g = await request(server, 'GET', `/api/v1/namespaces/${ns}/configmaps/a?resourceVersion=99999999`);
      expect(Date.now() - t0).toBeGreaterThanOrEqual(1000);
      expectTooLarge(g);
    });
    it('non-zero in the near future: answered as soon as the revision is reached', async () => {
      const cur = Number((await list(server, ns, '')).json<ListBody>().metadata.resourceVersion);
      const pending = request(server, 'GET', `/api/v1/namespaces/${ns}/configmaps/a?resourceVersion=${cur + 1}`);
      await new Promise((r) => setTimeout(r, 300));
      const written = Number(await put(server, ns, 'a', { v: '2', w: String(cur) }));
      const g = await pending;
      expect(g.status).toBe(200);
      // The revision is reached by this write, or by a background write (a controller's Lease)
      // landing first: then the answer is the object as it was before this write.
      const rv = Number(g.json<{ metadata: { resourceVersion: string } }>().metadata.resourceVersion);
      expect(rv === written || (written > cur + 1 && rv <= cur)).toBe(true);
    });
    it('a malformed resourceVersion is 400', async () => {
      expectStatus(await request(server, 'GET', `/api/v1/namespaces/${ns}/configmaps/a?resourceVersion=abc`), 400, 'BadRequest');
    });
  });

  describe('list table', () => {
    /** Writes a ConfigMap; answers its name and revision. */
    const tick = async (): Promise<{ name: string; rv: number }> => {
      const r = await create(server, 'rv', cm(`tick-${Date.now()}-${Math.random().toString(36).slice(2, 7)}`));
      return { name: r.metadata.name, rv: Number(r.metadata.resourceVersion) };
    };
    /**
     * A Most Recent list is at the store's current revision: not before the write acknowledged
     * before it, and before a write made after it. (Not exactly the former's: a background write,
     * such as a controller renewing its Lease, may come between.)
     */
    const expectMostRecent = async (b: ListBody, before: number): Promise<void> => {
      const listed = Number(b.metadata.resourceVersion);
      expect(listed).toBeGreaterThanOrEqual(before);
      expect(listed).toBeLessThan((await tick()).rv);
    };

    // Row: resourceVersionMatch unset, no limit.
    it('match unset, no limit, rv unset: Most Recent', async () => {
      const t = await tick();
      const b = (await list(server, ns, '')).json<ListBody>();
      await expectMostRecent(b, t.rv);
      expect(b.items.find((i) => i.metadata.name === t.name)?.metadata.resourceVersion).toBe(String(t.rv));
    });
    it('match unset, no limit, rv "0": Any', async () => {
      const r = await list(server, ns, 'resourceVersion=0');
      expect(r.status).toBe(200);
      expect(names(r.json<ListBody>())).toEqual(expect.arrayContaining(['a', 'b', 'c']));
    });
    it('match unset, no limit, rv non-zero: Not older than (current state, list rv >= given)', async () => {
      const r = await list(server, ns, `resourceVersion=${rv0}`);
      expect(r.status).toBe(200);
      const b = r.json<ListBody>();
      expect(Number(b.metadata.resourceVersion)).toBeGreaterThan(rv0);
      expect(names(b)).toContain('c');
      expectTooLarge(await list(server, ns, 'resourceVersion=99999999'));
    });
    // Row: match unset, limit without continue.
    it('match unset, limit, rv unset: Most Recent', async () => {
      const t = await tick();
      const b = (await list(server, ns, 'limit=2')).json<ListBody>();
      await expectMostRecent(b, t.rv);
      expect(b.items).toHaveLength(2);
    });
    it('match unset, limit, rv "0": Any', async () => {
      const r = await list(server, ns, 'limit=2&resourceVersion=0');
      expect(r.status).toBe(200);
      expect(r.json<ListBody>().items).toHaveLength(2);
    });
    it('match unset, limit, rv non-zero: Exact (the state at that revision)', async () => {
      const b = (await list(server, ns, `limit=10&resourceVersion=${rv0}`)).json<ListBody>();
      expect(b.metadata.resourceVersion).toBe(String(rv0));
      expect(names(b)).toEqual(['a', 'b', ROOT_CA]);
      expect(b.items[0]!.data).toEqual({ v: '1' });
      expect(b.items[0]!.metadata.resourceVersion).toBe(aRv1);
    });
    // Row: match unset, limit and continue.
    it('limit and continue, rv unset: continue-token exact', async () => {
      const p1 = (await list(server, ns, `limit=1&resourceVersion=${rv0}`)).json<ListBody>();
      expect(names(p1)).toEqual(['a']);
      const p2 = (await list(server, ns, `limit=1&continue=${p1.metadata.continue}`)).json<ListBody>();
      expect(names(p2)).toEqual(['b']);
      expect(p2.metadata.resourceVersion).toBe(String(rv0));
      const p3 = (await list(server, ns, `limit=1&continue=${p2.metadata.continue}`)).json<ListBody>();
      expect(names(p3)).toEqual([ROOT_CA]); // c (which sorts before it) did not exist at rv0
      expect(p3.metadata.continue).toBeUndefined();
    });
    it('limit and continue, rv "0": treated as continue-token exact', async () => {
      const p1 = (await list(server, ns, `limit=1&resourceVersion=${rv0}`)).json<ListBody>();
      const r = await list(server, ns, `limit=1&resourceVersion=0&continue=${p1.metadata.continue}`);
      expect(r.status).toBe(200);
      expect(r.json<ListBody>().metadata.resourceVersion).toBe(String(rv0));
      expect(names(r.json<ListBody>())).toEqual(['b']);
    });
    it('limit and continue, rv non-zero: 400', async () => {
      const p1 = (await list(server, ns, 'limit=1')).json<ListBody>();
      expectStatus(
        await list(server, ns, `limit=1&resourceVersion=${rv0}&continue=${p1.metadata.continue}`),
        400,
        'BadRequest',
        'specifying resource version is not allowed when using continue',
      );
    });
    // Row: Exact.
    it('Exact, rv unset: invalid (400)', async () => {
      expectStatus(
        await list(server, ns, 'resourceVersionMatch=Exact'),
        400,
        'BadRequest',
        'resourceVersionMatch is forbidden unless resourceVersion is provided',
      );
      expectStatus(await list(server, ns, 'resourceVersionMatch=Exact&limit=1'), 400, 'BadRequest');
    });
    it('Exact, rv "0": invalid (400)', async () => {
      expectStatus(
        await list(server, ns, 'resourceVersionMatch=Exact&resourceVersion=0'),
        400,
        'BadRequest',
        'resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
      );
      expectStatus(await list(server, ns, 'resourceVersionMatch=Exact&resourceVersion=0&limit=1'), 400, 'BadRequest');
    });
    it('Exact, rv non-zero: the list at exactly that revision, with or without limit', async () => {
      for (const q of [`resourceVersionMatch=Exact&resourceVersion=${rv0}`, `resourceVersionMatch=Exact&resourceVersion=${rv0}&limit=5`]) {
        const b = (await list(server, ns, q)).json<ListBody>();
        expect(b.metadata.resourceVersion).toBe(String(rv0));
        expect(names(b)).toEqual(['a', 'b', ROOT_CA]);
        expect(b.items[0]!.data).toEqual({ v: '1' });
      }
      expectTooLarge(await list(server, ns, 'resourceVersionMatch=Exact&resourceVersion=99999999'));
    });
    // Row: NotOlderThan.
    it('NotOlderThan, rv unset: invalid (400)', async () => {
      expectStatus(
        await list(server, ns, 'resourceVersionMatch=NotOlderThan'),
        400,
        'BadRequest',
        'resourceVersionMatch is forbidden unless resourceVersion is provided',
      );
      expectStatus(await list(server, ns, 'resourceVersionMatch=NotOlderThan&limit=1'), 400, 'BadRequest');
    });
    it('NotOlderThan, rv "0": Any', async () => {
      for (const q of ['resourceVersionMatch=NotOlderThan&resourceVersion=0', 'resourceVersionMatch=NotOlderThan&resourceVersion=0&limit=1']) {
        const r = await list(server, ns, q);
        expect(r.status).toBe(200);
        expect(r.json<ListBody>().items.length).toBeGreaterThan(0);
      }
    });
    it('NotOlderThan, rv non-zero: at least as new as given, with or without limit; future -> 504', async () => {
      for (const q of [`resourceVersionMatch=NotOlderThan&resourceVersion=${rv0}`, `resourceVersionMatch=NotOlderThan&resourceVersion=${rv0}&limit=50`]) {
        const b = (await list(server, ns, q)).json<ListBody>();
        expect(Number(b.metadata.resourceVersion)).toBeGreaterThan(rv0);
        expect(names(b)).toContain('c');
      }
      expectTooLarge(await list(server, ns, 'resourceVersionMatch=NotOlderThan&resourceVersion=99999999'));
    });
    it('resourceVersionMatch with continue, or an unknown value, is 400', async () => {
      const p1 = (await list(server, ns, 'limit=1')).json<ListBody>();
      expectStatus(
        await list(server, ns, `limit=1&resourceVersion=${p1.metadata.resourceVersion}&resourceVersionMatch=Exact&continue=${p1.metadata.continue}`),
        400,
        'BadRequest',
        'resourceVersionMatch is forbidden when continue is provided',
      );
      expect((await list(server, ns, `resourceVersion=${rv0}&resourceVersionMatch=Newest`)).status).toBe(400);
    });
    it('the same cells hold over HTTP/2', async () => {
      const b = (await request2(server, 'GET', `/api/v1/namespaces/${ns}/configmaps?resourceVersion=${rv0}&resourceVersionMatch=Exact`)).json<ListBody>();
      expect(b.metadata.resourceVersion).toBe(String(rv0));
      expect((await request2(server, 'GET', `/api/v1/namespaces/${ns}/configmaps?resourceVersionMatch=Exact`)).status).toBe(400);
    });
  });

  describe('pagination', () => {
    const pns = 'pg';
    beforeAll(async () => {
      await mkns(server, pns);
      for (let i = 0; i < 10; i++) await create(server, pns, cm(`p${i}`, { i: String(i) }, { odd: String(i % 2 === 1) }));
    });

    it('pages are one consistent snapshot: later writes and deletes do not show; remainingItemCount until the last page', async () => {
      // The namespace's kube-root-ca.crt sorts first.
      const p1 = (await list(server, pns, 'limit=4')).json<ListBody>();
      expect(names(p1)).toEqual([ROOT_CA, 'p0', 'p1', 'p2']);
      expect(p1.metadata.remainingItemCount).toBe(7);
      // Changes after the first page: none may appear in later pages.
      await create(server, pns, cm('p45'));
      await put(server, pns, 'p5', { i: 'changed' });
      expect((await request(server, 'DELETE', `/api/v1/namespaces/${pns}/configmaps/p6`)).status).toBe(200);
      const p2 = (await list(server, pns, `limit=4&continue=${p1.metadata.continue}`)).json<ListBody>();
      expect(p2.metadata.resourceVersion).toBe(p1.metadata.resourceVersion);
      expect(names(p2)).toEqual(['p3', 'p4', 'p5', 'p6']);
      expect(p2.items[2]!.data).toEqual({ i: '5' });
      expect(p2.metadata.remainingItemCount).toBe(3);
      const p3 = (await list(server, pns, `limit=4&continue=${p2.metadata.continue}`)).json<ListBody>();
      expect(names(p3)).toEqual(['p7', 'p8', 'p9']);
      expect(p3.metadata.continue).toBeUndefined();
      expect(p3.metadata.remainingItemCount).toBeUndefined();
      // Clean up for the next test: restore p6, drop p45.
      await request(server, 'DELETE', `/api/v1/namespaces/${pns}/configmaps/p45`);
      await create(server, pns, cm('p6', { i: '6' }, { odd: 'false' }));
    });

    it('a page that ends exactly at the last item has no continue and no remainingItemCount', async () => {
      const b = (await list(server, pns, 'limit=11')).json<ListBody>();
      expect(b.items).toHaveLength(11);
      expect(b.metadata.continue).toBeUndefined();
      expect(b.metadata.remainingItemCount).toBeUndefined();
    });

    it('selectors with limit still fill pages, and omit remainingItemCount', async () => {
      // Each page: its names, whether it continues, what it says remains (never known with a selector).
      const pages: Array<{ names: string[]; continued: boolean; remainingItemCount?: number }> = [];
      let token: string | undefined;
      do {
        const b = (await list(server, pns, `limit=2&labelSelector=odd%3Dtrue${token ? `&continue=${token}` : ''}`)).json<ListBody>();
        pages.push({ names: names(b), continued: Boolean(b.metadata.continue), remainingItemCount: b.metadata.remainingItemCount });
        token = b.metadata.continue;
      } while (token && pages.length < 10);
      // Every page but the last is full: the server keeps reading past filtered-out items.
      expect(pages).toEqual([
        { names: ['p1', 'p3'], continued: true, remainingItemCount: undefined },
        { names: ['p5', 'p7'], continued: true, remainingItemCount: undefined },
        { names: ['p9'], continued: false, remainingItemCount: undefined },
      ]);
      const f = (await list(server, pns, 'limit=3&fieldSelector=metadata.name!%3Dp0')).json<ListBody>();
      expect(names(f)).toEqual([ROOT_CA, 'p1', 'p2']);
      expect(f.metadata.remainingItemCount).toBeUndefined();
    });

    it('tokens are opaque and tamper-checked: forged, edited or malformed tokens are 400', async () => {
      const p1 = (await list(server, pns, 'limit=2')).json<ListBody>();
      const token = p1.metadata.continue!;
      const [payload, tag] = token.split('.');
      // Edit the payload (start key pointing at another collection) and keep the old tag.
      const decoded = JSON.parse(Buffer.from(payload!, 'base64url').toString()) as { v: string; rv: number; start: string };
      expect(decoded).toMatchObject({ v: 'meta.k8s.io/v1', rv: Number(p1.metadata.resourceVersion), start: 'p0' });
      const evil = Buffer.from(JSON.stringify({ ...decoded, start: '../../secrets/kube-system/x' })).toString('base64url');
      const unsigned = Buffer.from(JSON.stringify({ ...decoded, start: 'p5' })).toString('base64url');
      for (const bad of [`${evil}.${tag}`, `${unsigned}.${tag}`, unsigned, 'garbage', `${payload}.AAAA`, `${payload}.${tag}x`, '....']) {
        expectStatus(await list(server, pns, `limit=2&continue=${encodeURIComponent(bad)}`), 400, 'BadRequest', 'continue key is not valid');
      }
      // The genuine token still works.
      expect(names((await list(server, pns, `limit=2&continue=${token}`)).json<ListBody>())).toEqual(['p1', 'p2']);
    });
  });
});

describe('history and compaction (--compaction-interval 1)', () => {
  let server: ServerHandle;
  const ns = 'cmp';
  let n = 0;

  /** Writes (to advance revisions) until `check` passes or 15 s elapse. */
  async function until(check: () => Promise<boolean>): Promise<void> {
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline) {
      await create(server, ns, cm(`filler-${n++}`));
      if (await check()) return;
      await new Promise((r) => setTimeout(r, 250));
    }
    throw new Error('history was not compacted in time');
  }

  beforeAll(async () => {
    server = await startServer({ args: ['--compaction-interval', '1'] });
    await mkns(server, ns);
    for (let i = 0; i < 5; i++) await create(server, ns, cm(`k${i}`));
  });
  afterAll(async () => {
    await server?.cleanup();
  });

  it('Exact on a compacted revision is 410 Gone (Expired)', async () => {
    const rv = (await list(server, ns, '')).json<ListBody>().metadata.resourceVersion;
    await until(async () => (await list(server, ns, `resourceVersion=${rv}&resourceVersionMatch=Exact`)).status === 410);
    const s = expectStatus(
      await list(server, ns, `resourceVersion=${rv}&resourceVersionMatch=Exact`),
      410,
      'Expired',
      'The resourceVersion for the provided list is too old.',
    );
    expect(s.code).toBe(410);
    // The legacy form (rv + limit = Exact) expires the same way.
    expectStatus(await list(server, ns, `resourceVersion=${rv}&limit=2`), 410, 'Expired');
  });

  it('an expired continue token is 410 with the inconsistent-continue message and a fresh token in metadata.continue', async () => {
    const p1 = (await list(server, ns, 'limit=2')).json<ListBody>();
    expect(p1.items).toHaveLength(2);
    const first = p1.metadata.resourceVersion;
    let gone: HttpResponse | undefined;
    await until(async () => {
      const r = await list(server, ns, `limit=2&continue=${p1.metadata.continue}`);
      if (r.status === 410) gone = r;
      return r.status === 410;
    });
    const s = expectStatus(gone!, 410, 'Expired', 'The provided continue parameter is too old to display a consistent list result');
    expect(s.message).toContain('inconsistent list');
    expect(s.metadata?.continue).toEqual(expect.any(String));
    // The fresh token continues after the same key, at the latest revision.
    const next = await list(server, ns, `limit=2&continue=${s.metadata!.continue}`);
    expect(next.status).toBe(200);
    const b = next.json<ListBody>();
    expect(Number(b.metadata.resourceVersion)).toBeGreaterThan(Number(first));
    const lastOfFirst = names(p1)[1]!;
    for (const nm of names(b)) expect(nm > lastOfFirst).toBe(true);
    expect(b.items).toHaveLength(2);
  });
});
