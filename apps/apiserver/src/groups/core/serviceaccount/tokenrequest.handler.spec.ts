import { StatusError, type KubeObject } from '@app/apimachinery';
import type { RequestContext } from '@app/registry';
import { tokenRequestHandler, TokenRequestPorts, tokenRequestSpec, type TokenRequestDeps } from './tokenrequest.handler.js';

const AUD = ['https://kubernetes.default.svc.cluster.local'];
const body = (spec: Record<string, unknown> = {}): KubeObject =>
  ({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', metadata: {}, spec }) as KubeObject;
const ctx = (dryRun = false): RequestContext => ({ user: { username: 'u', groups: [] }, dryRun, warnings: [], now: () => new Date('2026-01-01T00:00:00Z') });

function deps(objects: Record<string, string>, pods = false): TokenRequestDeps & { signed: unknown[] } {
  const signed: unknown[] = [];
  return {
    signed,
    audiences: AUD,
    maxExpirationSeconds: 7200,
    get: async (plural, ns, name) => {
      const uid = objects[`${plural}/${ns}/${name}`];
      if (!uid) throw new StatusError(404, 'NotFound', `${plural} "${name}" not found`);
      return { apiVersion: 'v1', kind: 'X', metadata: { name, namespace: ns, uid } };
    },
    podsServed: () => pods,
    sign: async (req) => {
      signed.push(req);
      return { token: 'signed', expiresAt: new Date(req.now.getTime() + req.expirationSeconds * 1000) };
    },
  };
}

async function status(p: Promise<unknown>): Promise<number | undefined> {
  try {
    await p;
    return undefined;
  } catch (e) {
    return (e as StatusError).code;
  }
}

describe('TokenRequest', () => {
  it('defaults audiences to the API audiences and expirationSeconds to 3600, capping it at the maximum', () => {
    expect(tokenRequestSpec(body(), { audiences: AUD, maxExpirationSeconds: 0 })).toEqual({ audiences: AUD, expirationSeconds: 3600 });
    expect(tokenRequestSpec(body({ audiences: ['vault'], expirationSeconds: '86400' }), { audiences: AUD, maxExpirationSeconds: 7200 })).toEqual({
      audiences: ['vault'],
      expirationSeconds: 7200,
    });
  });

  it('refuses less than 10 minutes and more than 2^32 seconds on spec.expirationSeconds (422), and malformed bodies (400)', () => {
    const tooShort = () => tokenRequestSpec(body({ expirationSeconds: 599 }), { audiences: AUD, maxExpirationSeconds: 0 });
    expect(tooShort).toThrow('spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 10 minutes');
    const thrown = (() => {
      try {
        tooShort();
        return undefined;
      } catch (e) {
        return (e as StatusError).toStatus();
      }
    })();
    expect(thrown).toMatchObject({ code: 422, reason: 'Invalid', details: { causes: [{ field: 'spec.expirationSeconds' }] } });
    expect(() => tokenRequestSpec(body({ expirationSeconds: 2 ** 33 }), { audiences: AUD, maxExpirationSeconds: 0 })).toThrow('larger than 2^32 seconds');
    expect(() => tokenRequestSpec(body({ audiences: 'x' }), { audiences: AUD, maxExpirationSeconds: 0 })).toThrow('list of strings');
    expect(() => tokenRequestSpec({ ...body(), kind: 'TokenReview' }, { audiences: AUD, maxExpirationSeconds: 0 })).toThrow('expected a TokenRequest');
  });

  it('signs for the service account, bound to an existing Secret with its uid', async () => {
    const ports = new TokenRequestPorts();
    const d = deps({ 'serviceaccounts/ns/app': 'sa-uid', 'secrets/ns/s1': 'secret-uid' });
    ports.deps = d;
    const out = await tokenRequestHandler(ports).create!('ns', 'app', body({ boundObjectRef: { kind: 'Secret', apiVersion: 'v1', name: 's1' } }), ctx());
    expect(out).toMatchObject({
      kind: 'TokenRequest',
      metadata: { name: 'app', namespace: 'ns' },
      spec: { audiences: AUD, expirationSeconds: 3600, boundObjectRef: { kind: 'Secret', name: 's1', uid: 'secret-uid' } },
      status: { token: 'signed', expirationTimestamp: '2026-01-01T01:00:00Z' },
    });
    expect(d.signed[0]).toMatchObject({ namespace: 'ns', serviceAccount: { name: 'app', uid: 'sa-uid' }, secret: { name: 's1', uid: 'secret-uid' } });
  });

  it('answers 404 for a missing account or Secret, 409 for another uid, 400 for Pods unless served; a dry run signs nothing', async () => {
    const ports = new TokenRequestPorts();
    ports.deps = deps({ 'serviceaccounts/ns/app': 'sa-uid', 'secrets/ns/s1': 'secret-uid', 'pods/ns/p1': 'pod-uid' });
    const h = tokenRequestHandler(ports);
    expect(await status(h.create!('ns', 'nobody', body(), ctx()))).toBe(404);
    expect(await status(h.create!('ns', 'app', body({ boundObjectRef: { kind: 'Secret', name: 'gone' } }), ctx()))).toBe(404);
    expect(await status(h.create!('ns', 'app', body({ boundObjectRef: { kind: 'Secret', name: 's1', uid: 'old' } }), ctx()))).toBe(409);
    await expect(h.create!('ns', 'app', body({ boundObjectRef: { kind: 'Pod', name: 'p1' } }), ctx())).rejects.toThrow('supported kinds are Secret');
    expect(await status(h.create!('ns', 'app', body({ boundObjectRef: { kind: 'Deployment', apiVersion: 'apps/v1', name: 'd' } }), ctx()))).toBe(400);
    ports.deps = deps({ 'serviceaccounts/ns/app': 'sa-uid', 'pods/ns/p1': 'pod-uid' }, true);
    const pod = await tokenRequestHandler(ports).create!('ns', 'app', body({ boundObjectRef: { kind: 'Pod', name: 'p1' } }), ctx());
    expect((pod.spec as { boundObjectRef: { uid: string } }).boundObjectRef.uid).toBe('pod-uid');
    const d = deps({ 'serviceaccounts/ns/app': 'sa-uid' });
    ports.deps = d;
    const dry = await tokenRequestHandler(ports).create!('ns', 'app', body(), ctx(true));
    expect((dry.status as { token: string }).token).toBe('');
    expect(d.signed).toEqual([]);
  });
});
