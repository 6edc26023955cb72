/**
 * events.k8s.io/v1 Event <-> core/v1 Event (pkg/apis/events/v1 conversion): the same object
 * under other field names. The core shape is the stored one, so both APIs read and write the
 * same Events. Fields absent on one side stay absent on the other. Pure.
 */
import type { KubeObject } from '@app/apimachinery';

/** events.k8s.io field -> core/v1 field, for the fields whose names differ. */
const RENAMED: ReadonlyArray<readonly [string, string]> = [
  ['regarding', 'involvedObject'],
  ['note', 'message'],
  ['reportingController', 'reportingComponent'],
  ['deprecatedSource', 'source'],
  ['deprecatedFirstTimestamp', 'firstTimestamp'],
  ['deprecatedLastTimestamp', 'lastTimestamp'],
  ['deprecatedCount', 'count'],
];

/** The fields both shapes share under one name. */
const SHARED = ['eventTime', 'series', 'reportingInstance', 'action', 'reason', 'related', 'type'];

function convert(obj: KubeObject, apiVersion: string, pairs: ReadonlyArray<readonly [string, string]>): KubeObject {
  const out: KubeObject = { apiVersion, kind: 'Event', metadata: obj.metadata };
  for (const f of SHARED) if (obj[f] !== undefined) out[f] = obj[f];
  for (const [from, to] of pairs) if (obj[from] !== undefined) out[to] = obj[from];
  return out;
}

/** An events.k8s.io/v1 Event as a core/v1 Event. */
export function eventToCore(obj: KubeObject): KubeObject {
  return convert(obj, 'v1', RENAMED);
}

/** A core/v1 Event as an events.k8s.io/v1 Event. */
export function eventFromCore(obj: KubeObject): KubeObject {
  return convert(
    obj,
    'events.k8s.io/v1',
    RENAMED.map(([a, b]) => [b, a] as const),
  );
}
