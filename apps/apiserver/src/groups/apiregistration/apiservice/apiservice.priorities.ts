/**
 * Discovery priorities of the local APIServices: kube-apiserver's table (the
 * apiVersionPriorities of its aggregator), so groups sort as on a real cluster. A group-version
 * missing from it gets the fallback.
 */

/** groupPriorityMinimum and versionPriority of one group-version. */
export interface ApiServicePriority {
  group: number;
  version: number;
}

const TABLE: Record<string, ApiServicePriority> = {
  '/v1': { group: 18000, version: 1 },
  'apiregistration.k8s.io/v1': { group: 18000, version: 15 },
  'apps/v1': { group: 17800, version: 15 },
  'events.k8s.io/v1': { group: 17750, version: 15 },
  'authentication.k8s.io/v1': { group: 17700, version: 15 },
  'authorization.k8s.io/v1': { group: 17600, version: 15 },
  'autoscaling/v1': { group: 17500, version: 15 },
  'autoscaling/v2': { group: 17500, version: 30 },
  'batch/v1': { group: 17400, version: 15 },
  'certificates.k8s.io/v1': { group: 17300, version: 15 },
  'networking.k8s.io/v1': { group: 17200, version: 15 },
  'policy/v1': { group: 17100, version: 15 },
  'policy/v1beta1': { group: 17100, version: 9 },
  'rbac.authorization.k8s.io/v1': { group: 17000, version: 15 },
  'storage.k8s.io/v1': { group: 16800, version: 15 },
  'apiextensions.k8s.io/v1': { group: 16700, version: 15 },
  'admissionregistration.k8s.io/v1': { group: 16700, version: 15 },
  'scheduling.k8s.io/v1': { group: 16600, version: 15 },
  'coordination.k8s.io/v1': { group: 16500, version: 15 },
  'node.k8s.io/v1': { group: 16300, version: 15 },
  'discovery.k8s.io/v1': { group: 16200, version: 15 },
  'flowcontrol.apiserver.k8s.io/v1': { group: 16100, version: 21 },
  'flowcontrol.apiserver.k8s.io/v1beta3': { group: 16100, version: 18 },
  'flowcontrol.apiserver.k8s.io/v1beta2': { group: 16100, version: 15 },
};

/** The priorities of `group/version` (core: group ''). */
export function apiServicePriority(group: string, version: string): ApiServicePriority {
  return TABLE[`${group}/${version}`] ?? { group: 1000, version: 15 };
}
