/**
 * ControllerRevisions as kube's StatefulSet and DaemonSet controllers keep them (the
 * controller/history package): a revision holds a patch that restores the pod template,
 * `data: {spec: {template: {..., $patch: replace}}}`, is named `<owner>-<hash>` with the hash
 * also in its `controller-revision-hash` label, is owned by the workload, and is numbered one
 * above the highest before it. Pure.
 */
import { isDeepStrictEqual } from 'node:util';
import type { KubeObject } from '@app/apimachinery';
import { asMap } from '../groups/core/core.helpers.js';
import { podTemplateHash } from './deployment.logic.js';
import { newControllerRef } from './disruption.logic.js';

export const CONTROLLER_REVISION_HASH_LABEL = 'controller-revision-hash';

/** The revision data of a workload: a strategic merge patch that puts its pod template back. */
export function templatePatch(owner: KubeObject): Record<string, unknown> {
  const template = structuredClone(asMap(asMap(owner.spec).template));
  return { spec: { template: { ...template, $patch: 'replace' } } };
}

/** The hash naming a revision: FNV-1a of its data, with the owner's collision count. */
export function revisionHash(data: unknown, collisionCount?: number): string {
  return podTemplateHash(data, collisionCount);
}

/** ControllerRevisionName: the owner's name (at most 223 characters) and the hash. */
export function revisionName(ownerName: string, hash: string): string {
  return `${ownerName.slice(0, 223)}-${hash}`;
}

/** The revision number of a ControllerRevision (0 when absent). */
export function revisionNumber(r: KubeObject): number {
  const n = (r as { revision?: unknown }).revision;
  return typeof n === 'number' ? n : 0;
}

/** The revisions sorted by number, then creation, then name (history.SortControllerRevisions). */
export function sortRevisions(revisions: KubeObject[]): KubeObject[] {
  return [...revisions].sort(
    (a, b) =>
      revisionNumber(a) - revisionNumber(b) ||
      String(a.metadata.creationTimestamp ?? '').localeCompare(String(b.metadata.creationTimestamp ?? '')) ||
      String(a.metadata.name).localeCompare(String(b.metadata.name)),
  );
}

/** The number the next revision gets: one above the highest. */
export function nextRevisionNumber(revisions: KubeObject[]): number {
  return revisions.reduce((m, r) => Math.max(m, revisionNumber(r)), 0) + 1;
}

/** The revisions whose data equals `data` (history.FindEqualRevisions). */
export function equalRevisions(revisions: KubeObject[], data: unknown): KubeObject[] {
  const want = JSON.parse(JSON.stringify(data)) as unknown;
  return revisions.filter((r) => isDeepStrictEqual(JSON.parse(JSON.stringify((r as { data?: unknown }).data ?? null)), want));
}

/**
 * A new ControllerRevision for an owner (history.NewControllerRevision): the template's labels
 * plus the hash label, a controller reference to the owner, the data and the number.
 */
export function newRevision(
  owner: KubeObject,
  ownerKind: 'StatefulSet' | 'DaemonSet',
  data: Record<string, unknown>,
  revision: number,
  collisionCount?: number,
): KubeObject {
  const hash = revisionHash(data, collisionCount);
  const labels = {
    ...(asMap(asMap(asMap(owner.spec).template).metadata).labels as Record<string, string> | undefined),
    [CONTROLLER_REVISION_HASH_LABEL]: hash,
  };
  return {
    apiVersion: 'apps/v1',
    kind: 'ControllerRevision',
    metadata: {
      name: revisionName(owner.metadata.name ?? '', hash),
      namespace: owner.metadata.namespace,
      labels,
      ownerReferences: [newControllerRef(owner, 'apps/v1', ownerKind)],
    },
    data,
    revision,
  } as KubeObject;
}

/** The pod template a revision restores (its data's spec.template without the patch directive). */
export function templateOfRevision(r: KubeObject): Record<string, unknown> {
  const t = { ...asMap(asMap(asMap((r as { data?: unknown }).data).spec).template) };
  delete t.$patch;
  return t;
}
