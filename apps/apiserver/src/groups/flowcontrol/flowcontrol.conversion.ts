/**
 * Conversion between the served flowcontrol versions (stored at v1). FlowSchema has the same
 * fields in every version; a Limited PriorityLevelConfiguration's shares are
 * `assuredConcurrencyShares` in v1beta2 and `nominalConcurrencyShares` later, so a round trip
 * through any served version keeps every field.
 */
import type { KubeObject } from '@app/apimachinery';
import type { Conversion } from '@app/registry';
import { FLOWCONTROL_GROUP, sharesField } from './flowcontrol.schema.js';

function versionOf(obj: KubeObject): string {
  const av = typeof obj.apiVersion === 'string' ? obj.apiVersion : '';
  return av.startsWith(`${FLOWCONTROL_GROUP}/`) ? av.slice(FLOWCONTROL_GROUP.length + 1) : 'v1';
}

/** Converts a flowcontrol object of any served version to `to`; the input is not changed. */
export function convertFlowcontrol(obj: KubeObject, to: string): KubeObject {
  const from = versionOf(obj);
  if (from === to && obj.apiVersion !== undefined) return obj;
  const out = structuredClone(obj);
  out.apiVersion = `${FLOWCONTROL_GROUP}/${to}`;
  const limited = (out.spec as { limited?: Record<string, unknown> } | undefined)?.limited;
  const fromField = sharesField(from);
  const toField = sharesField(to);
  if (limited && typeof limited === 'object' && fromField !== toField && fromField in limited) {
    limited[toField] = limited[fromField];
    delete limited[fromField];
  }
  return out;
}

/** The conversion of both flowcontrol kinds. */
export const FLOWCONTROL_CONVERSION: Conversion = { storageVersion: 'v1', convert: convertFlowcontrol };
