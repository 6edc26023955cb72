import { describe, expect, it } from '@jest/globals';
import type { KubeObject, StatusError } from '@app/apimachinery';
import { convertThroughWebhook, type ConversionWebhook } from './crd.conversion.js';

type Obj = Record<string, unknown>;
const HOOK: ConversionWebhook = { group: 'ex.io', kind: 'Box', clientConfig: { url: 'https://conv.example/c' }, conversionReviewVersions: ['v2', 'v1'] };
const box = (v: string, name: string, extra: Obj = {}): KubeObject => ({
  apiVersion: `ex.io/${v}`,
  kind: 'Box',
  metadata: { name, namespace: 'ns', uid: `uid-${name}`, resourceVersion: '7', labels: { a: '1' } },
  ...extra,
});

/** A webhook converting v1 `size` to v2 `spec.size`, answering as `answer` says. */
function webhook(answer: (req: Obj) => Obj | Promise<Obj>) {
  const reviews: Obj[] = [];
  const call = async (_cc: unknown, review: unknown) => {
    reviews.push(review as Obj);
    return answer((review as Obj).request as Obj);
  };
  return { reviews, call };
}
const success = (req: Obj, objects: unknown[]) => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'ConversionReview',
  response: { uid: req.uid, result: { status: 'Success' }, convertedObjects: objects },
});

describe('conversion webhook', () => {
  it('sends only the objects not at the wanted version, in one v1 ConversionReview, and keeps their metadata but labels and annotations', async () => {
    const { reviews, call } = webhook((req) =>
      success(
        req,
        (req.objects as KubeObject[]).map((o) => ({
          apiVersion: req.desiredAPIVersion,
          kind: 'Box',
          metadata: { name: 'renamed', labels: { converted: 'yes' }, annotations: { by: 'webhook' } },
          spec: { size: o.size },
        })),
      ),
    );
    const out = await convertThroughWebhook(
      HOOK,
      call,
      [box('v1', 'a', { size: 1 }), box('v2', 'b', { spec: { size: 2 } }), box('v1', 'c', { size: 3 })],
      'v2',
    );
    expect(reviews).toHaveLength(1);
    const sent = reviews[0] as { apiVersion: string; kind: string; request: { desiredAPIVersion: string; objects: KubeObject[] } };
    expect([sent.apiVersion, sent.kind, sent.request.desiredAPIVersion, sent.request.objects.map((o) => o.metadata.name)]).toEqual([
      'apiextensions.k8s.io/v1',
      'ConversionReview',
      'ex.io/v2',
      ['a', 'c'],
    ]);
    expect(out.map((o) => [o.apiVersion, o.metadata.name, o.metadata.uid, o.metadata.labels, (o.spec as Obj).size])).toEqual([
      ['ex.io/v2', 'a', 'uid-a', { converted: 'yes' }, 1],
      ['ex.io/v2', 'b', 'uid-b', { a: '1' }, 2],
      ['ex.io/v2', 'c', 'uid-c', { converted: 'yes' }, 3],
    ]);
    expect(out[0]!.metadata.annotations).toEqual({ by: 'webhook' });
    // Nothing to convert: no call.
    await convertThroughWebhook(HOOK, call, [box('v2', 'b')], 'v2');
    expect(reviews).toHaveLength(1);
  });

  it('fails with 500 and kube’s reasons for an unusable answer', async () => {
    const fails = async (answer: (req: Obj) => Obj, hook = HOOK) => {
      const { call } = webhook(answer);
      const err = (await convertThroughWebhook(hook, call, [box('v1', 'a')], 'v2').catch((e: unknown) => e)) as StatusError;
      return [err.code, err.message];
    };
    const prefix = 'Internal error occurred: conversion webhook for ex.io/v1, Kind=Box';
    expect(await fails((req) => ({ ...success(req, []), response: { uid: req.uid, result: { status: 'Failure', message: 'cannot convert a' } } }))).toEqual([
      500,
      `${prefix} failed: cannot convert a`,
    ]);
    expect(await fails((req) => ({ ...success(req, []), response: { uid: 'other', result: { status: 'Success' } } }))).toEqual([
      500,
      expect.stringMatching(/^Internal error occurred: conversion webhook for ex\.io\/v1, Kind=Box failed: expected response\.uid="[0-9a-f-]+", got "other"$/),
    ]);
    expect(await fails((req) => ({ ...success(req, []), kind: 'AdmissionReview' }))).toEqual([
      500,
      `${prefix} failed: expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got apiextensions.k8s.io/v1, Kind=AdmissionReview`,
    ]);
    expect(await fails((req) => success(req, []))).toEqual([500, `${prefix} returned 0 objects, expected 1`]);
    expect(await fails((req) => success(req, [{ apiVersion: 'ex.io/v1', kind: 'Box', metadata: {} }]))).toEqual([
      500,
      `${prefix} returned invalid converted object at index 0: invalid groupVersion (expected ex.io/v2, received ex.io/v1)`,
    ]);
    expect(await fails((req) => success(req, [{ apiVersion: 'ex.io/v2', kind: 'Crate', metadata: {} }]))).toEqual([
      500,
      `${prefix} returned invalid converted object at index 0: invalid kind (expected Box, received Crate)`,
    ]);
    expect(await fails((req) => success(req, []), { ...HOOK, conversionReviewVersions: ['v9'] })).toEqual([
      500,
      `${prefix} failed: no supported conversion review versions`,
    ]);
    const { call } = webhook(() => Promise.reject(new Error('Post "https://conv.example/c?timeout=30s": connect ECONNREFUSED')) as never);
    const err = (await convertThroughWebhook(HOOK, call, [box('v1', 'a')], 'v2').catch((e: unknown) => e)) as StatusError;
    expect(err.message).toBe(`${prefix} failed: Post "https://conv.example/c?timeout=30s": connect ECONNREFUSED`);
  });
});
