/**
 * Small object helpers the core kinds' strategies and table columns, and the admission plugins
 * that read pods and claims, share.
 */
import type { KubeObject } from '@app/apimachinery';

/** `v` as a plain object, or an empty one when it is not an object. */
export function asMap(v: unknown): Record<string, unknown> {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

/** The plain-object elements of a list value (none when it is not a list). */
export function mapsOf(v: unknown): Record<string, unknown>[] {
  return Array.isArray(v) ? v.filter((x): x is Record<string, unknown> => !!x && typeof x === 'object' && !Array.isArray(x)) : [];
}

/** Number of keys of an object value (0 for anything else). */
export function count(v: unknown): number {
  return v && typeof v === 'object' ? Object.keys(v).length : 0;
}

/** A field-selector getter that prints a value as a string ('' when absent). */
export const str =
  (get: (o: KubeObject) => unknown) =>
  (o: KubeObject): string => {
    const v = get(o);
    return v === undefined || v === null ? '' : String(v);
  };

/** labels.FormatLabels: the `k=v` pairs of a label map sorted by key and joined by commas; `empty` when there are none. */
export function formatLabels(labels: unknown, empty = '<none>'): string {
  const m = asMap(labels);
  const pairs = Object.keys(m)
    .sort()
    .map((k) => `${k}=${String(m[k])}`);
  return pairs.length ? pairs.join(',') : empty;
}
