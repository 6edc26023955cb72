/**
 * A CustomResourceDefinition's conversion webhook (`spec.conversion.strategy: Webhook`, kube's
 * webhookConverter): the objects not already at the wanted version go to the webhook in one
 * ConversionReview (the first of `conversionReviewVersions` this server speaks: v1 or v1beta1)
 * and come back converted. The answer is checked as kube checks it (its kind and uid for v1, a
 * Success result, one object per object sent, each at the wanted apiVersion and the kind), and
 * each converted object keeps the metadata of the object sent but for labels and annotations,
 * the only metadata a webhook may change. Any failure is a 500: `conversion webhook for
 * <group/version>, Kind=<kind> failed: <why>`.
 */
import { randomUUID } from 'node:crypto';
import { Errors, type KubeObject } from '@app/apimachinery';
import type { WebhookClientConfig } from '../../../admission/webhook/webhook.client.js';

type Obj = Record<string, unknown>;
const asMap = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});

/** Posts a ConversionReview to the webhook and returns its parsed answer; rejects with why it failed. */
export type ConversionWebhookCall = (clientConfig: WebhookClientConfig, review: unknown) => Promise<unknown>;

/** The ConversionReview versions this server sends, in kube's order of preference. */
export const CONVERSION_REVIEW_VERSIONS = ['v1', 'v1beta1'] as const;

export interface ConversionWebhook {
  group: string;
  kind: string;
  clientConfig: WebhookClientConfig;
  conversionReviewVersions: string[];
}

/** The webhook part of a definition's `spec.conversion`, or undefined under strategy None. */
export function conversionWebhookOf(crd: KubeObject, group: string, kind: string): ConversionWebhook | undefined {
  const conv = asMap(asMap(crd.spec).conversion);
  if (conv.strategy !== 'Webhook') return undefined;
  const webhook = asMap(conv.webhook);
  const cc = asMap(webhook.clientConfig);
  const svc = cc.service ? asMap(cc.service) : undefined;
  return {
    group,
    kind,
    clientConfig: {
      ...(typeof cc.url === 'string' ? { url: cc.url } : {}),
      ...(typeof cc.caBundle === 'string' && cc.caBundle ? { caBundle: cc.caBundle } : {}),
      ...(svc
        ? {
            service: {
              namespace: String(svc.namespace ?? ''),
              name: String(svc.name ?? ''),
              port: typeof svc.port === 'number' ? svc.port : 443,
              ...(typeof svc.path === 'string' ? { path: svc.path } : {}),
            },
          }
        : {}),
    },
    conversionReviewVersions: Array.isArray(webhook.conversionReviewVersions) ? webhook.conversionReviewVersions.map(String) : [],
  };
}

/** Why an answer is not usable, or its converted objects. */
function convertedObjects(answer: unknown, reviewVersion: string, uid: string): unknown[] {
  const review = asMap(answer);
  if (reviewVersion === 'v1') {
    const got = `${String(review.apiVersion ?? '')}, Kind=${String(review.kind ?? '')}`;
    if (review.apiVersion !== 'apiextensions.k8s.io/v1' || review.kind !== 'ConversionReview')
      throw new Error(`expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got ${got}`);
  }
  if (!review.response || typeof review.response !== 'object') throw new Error('no response provided');
  const response = asMap(review.response);
  if (reviewVersion === 'v1' && response.uid !== uid)
    throw new Error(`expected response.uid=${JSON.stringify(uid)}, got ${JSON.stringify(String(response.uid ?? ''))}`);
  const result = asMap(response.result);
  if (result.status !== 'Success') {
    if (typeof result.message === 'string' && result.message) throw new Error(result.message);
    throw new Error(`response.result.status was '${String(result.status ?? '')}', not 'Success'`);
  }
  return Array.isArray(response.convertedObjects) ? (response.convertedObjects as unknown[]) : [];
}

/**
 * Converts `objs` to `group/toVersion` through the webhook; objects already there are not sent
 * (no call when none needs converting).
 */
export async function convertThroughWebhook(
  webhook: ConversionWebhook,
  call: ConversionWebhookCall,
  objs: KubeObject[],
  toVersion: string,
): Promise<KubeObject[]> {
  const desired = `${webhook.group}/${toVersion}`;
  const sent: number[] = [];
  objs.forEach((o, i) => {
    if (o.apiVersion !== desired) sent.push(i);
  });
  if (sent.length === 0) return objs;
  const from = `${String(objs[sent[0]!]!.apiVersion)}, Kind=${webhook.kind}`;
  const failed = (why: string) => Errors.internal(`conversion webhook for ${from} failed: ${why}`);
  const reviewVersion = webhook.conversionReviewVersions.find((v) => (CONVERSION_REVIEW_VERSIONS as readonly string[]).includes(v));
  if (!reviewVersion) throw failed('no supported conversion review versions');
  const uid = randomUUID();
  const review = {
    apiVersion: `apiextensions.k8s.io/${reviewVersion}`,
    kind: 'ConversionReview',
    request: { uid, desiredAPIVersion: desired, objects: sent.map((i) => objs[i]) },
  };
  let converted: unknown[];
  try {
    converted = convertedObjects(await call(webhook.clientConfig, review), reviewVersion, uid);
  } catch (e) {
    throw failed((e as Error).message);
  }
  if (converted.length !== sent.length) throw Errors.internal(`conversion webhook for ${from} returned ${converted.length} objects, expected ${sent.length}`);
  const out = objs.slice();
  sent.forEach((at, n) => {
    const c = asMap(converted[n]);
    const invalid = (why: string) => Errors.internal(`conversion webhook for ${from} returned invalid converted object at index ${n}: ${why}`);
    if (c.apiVersion !== desired) throw invalid(`invalid groupVersion (expected ${desired}, received ${String(c.apiVersion ?? '')})`);
    if (c.kind !== webhook.kind) throw invalid(`invalid kind (expected ${webhook.kind}, received ${String(c.kind ?? '')})`);
    const original = objs[at]!;
    const meta = asMap(c.metadata);
    const labels = asMap(meta.labels);
    const annotations = asMap(meta.annotations);
    if (![...Object.values(labels), ...Object.values(annotations)].every((v) => typeof v === 'string'))
      throw invalid('invalid metadata: labels and annotations must be maps of strings');
    const { labels: _l, annotations: _a, ...kept } = original.metadata;
    out[at] = {
      ...(c as KubeObject),
      metadata: {
        ...kept,
        ...(Object.keys(labels).length ? { labels: labels as Record<string, string> } : {}),
        ...(Object.keys(annotations).length ? { annotations: annotations as Record<string, string> } : {}),
      },
    };
  });
  return out;
}
