/**
 * The REST operations of a kind, as a format-neutral model that the v3 and v2 renderers turn
 * into OpenAPI. Paths, operation ids, `x-kubernetes-action` values and parameter sets follow
 * kube-apiserver's route builder (resources.md "Endpoints"): read/list/create/replace/patch/
 * delete/deletecollection plus the watch paths, the all-namespaces list for namespaced kinds,
 * and the status subresource. PATCH lists `fieldValidation`: kubectl checks for it to decide it
 * may send fieldValidation=Strict instead of validating client-side (KUBECTL-NOTES "OpenAPI").
 */
import { operationGroupVersion, operationTag, type OpenAPIKind, type OpenAPIVerb } from './openapi.kinds.js';

/** A path or query parameter. */
export interface ParamModel {
  name: string;
  in: 'path' | 'query';
  description: string;
  type: 'string' | 'boolean' | 'integer';
  required?: boolean;
}

/** A response: code, description and the definition name of its body, if any. */
export interface ResponseModel {
  code: string;
  description: string;
  schema?: string;
}

/** The `x-kubernetes-action` values kube-apiserver publishes. */
export type KubeAction = 'get' | 'list' | 'post' | 'put' | 'patch' | 'delete' | 'deletecollection' | 'watch' | 'watchlist';

/** One HTTP operation. */
export interface OperationModel {
  method: 'get' | 'put' | 'post' | 'patch' | 'delete';
  operationId: string;
  description: string;
  tag: string;
  action: KubeAction;
  gvk: { group: string; version: string; kind: string };
  params: ParamModel[];
  /** Request body: `object` = the kind (any JSON/YAML/protobuf), `patch` = the 4 patch types, `delete` = optional DeleteOptions. */
  body?: { kind: 'object' | 'patch' | 'delete'; schema: string; required: boolean };
  responses: ResponseModel[];
  /** Response media types. */
  produces: string[];
}

/** A path and its operations; `params` apply to every operation on it. */
export interface PathModel {
  path: string;
  params: ParamModel[];
  operations: OperationModel[];
}

/** Definition names the operations reference beyond the kinds themselves. */
export const STATUS_DEF = 'io.k8s.apimachinery.pkg.apis.meta.v1.Status';
export const DELETE_OPTIONS_DEF = 'io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions';
export const PATCH_DEF = 'io.k8s.apimachinery.pkg.apis.meta.v1.Patch';
export const WATCH_EVENT_DEF = 'io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent';

/** The content types a PATCH accepts (JSON patch, merge, strategic merge, apply). */
export const PATCH_CONTENT_TYPES = [
  'application/apply-patch+yaml',
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
] as const;

const q = (name: string, type: ParamModel['type'], description: string): ParamModel => ({ name, in: 'query', type, description });

const P = {
  name: (kind: string): ParamModel => ({ name: 'name', in: 'path', type: 'string', required: true, description: `name of the ${kind}` }),
  namespace: {
    name: 'namespace',
    in: 'path',
    type: 'string',
    required: true,
    description: 'object name and auth scope, such as for teams and projects',
  } as ParamModel,
  pretty: q('pretty', 'string', "If 'true', the output is pretty-printed."),
  allowWatchBookmarks: q('allowWatchBookmarks', 'boolean', 'Ask for BOOKMARK watch events; the server may ignore it.'),
  continue: q('continue', 'string', 'Token from a previous chunked list to fetch the next chunk.'),
  fieldSelector: q('fieldSelector', 'string', 'Restrict the returned objects by their fields. Default: everything.'),
  labelSelector: q('labelSelector', 'string', 'Restrict the returned objects by their labels. Default: everything.'),
  limit: q('limit', 'integer', 'Maximum number of items to return; a continue token is returned when more exist.'),
  resourceVersion: q('resourceVersion', 'string', 'Constrains which resource versions a read may be served from.'),
  resourceVersionMatch: q('resourceVersionMatch', 'string', 'How resourceVersion applies to a list: NotOlderThan or Exact.'),
  sendInitialEvents: q('sendInitialEvents', 'boolean', 'With watch=true, start the stream with synthetic events for the current state.'),
  timeoutSeconds: q('timeoutSeconds', 'integer', 'Time limit of the list or watch call, in seconds.'),
  watch: q('watch', 'boolean', 'Watch for changes and return them as a stream of events.'),
  dryRun: q('dryRun', 'string', 'When present, changes are not persisted. The only valid value is All.'),
  fieldManager: q('fieldManager', 'string', 'Name of the actor making the change, recorded in managedFields.'),
  fieldValidation: q(
    'fieldValidation',
    'string',
    'What to do with unknown or duplicate fields in the body: Ignore (drop silently), Warn (drop with a warning), Strict (fail).',
  ),
  force: q('force', 'boolean', 'Apply requests only: take ownership of conflicting fields from other managers.'),
  gracePeriodSeconds: q('gracePeriodSeconds', 'integer', 'Seconds before the object is deleted; zero deletes at once.'),
  ignoreStoreReadErrorWithClusterBreakingPotential: q(
    'ignoreStoreReadErrorWithClusterBreakingPotential',
    'boolean',
    'Remove an object whose stored data cannot be decoded, skipping finalizers, preconditions and admission (needs the unsafe-delete-ignore-read-errors verb).',
  ),
  orphanDependents: q('orphanDependents', 'boolean', 'Deprecated: use propagationPolicy.'),
  propagationPolicy: q('propagationPolicy', 'string', 'Garbage collection of dependents: Orphan, Background or Foreground.'),
};

const LIST_PARAMS = [
  P.allowWatchBookmarks,
  P.continue,
  P.fieldSelector,
  P.labelSelector,
  P.limit,
  P.resourceVersion,
  P.resourceVersionMatch,
  P.sendInitialEvents,
  P.timeoutSeconds,
  P.watch,
];
const WRITE_PARAMS = [P.dryRun, P.fieldManager, P.fieldValidation];
const PATCH_PARAMS = [...WRITE_PARAMS, P.force];
const DELETE_PARAMS = [P.dryRun, P.gracePeriodSeconds, P.ignoreStoreReadErrorWithClusterBreakingPotential, P.orphanDependents, P.propagationPolicy];
const DELETECOLLECTION_PARAMS = [
  P.continue,
  P.dryRun,
  P.fieldSelector,
  P.gracePeriodSeconds,
  P.ignoreStoreReadErrorWithClusterBreakingPotential,
  P.labelSelector,
  P.limit,
  P.orphanDependents,
  P.propagationPolicy,
  P.resourceVersion,
  P.resourceVersionMatch,
  P.sendInitialEvents,
  P.timeoutSeconds,
];

const ALL_VERBS: readonly OpenAPIVerb[] = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection'];

/** Names the publisher needs per kind: root and list definition names. */
export interface KindDefinitionNames {
  kind: string;
  list: string;
}

/** Builds the paths of one kind. `defs` gives its kind and list definition names. */
export function kindPaths(k: OpenAPIKind, defs: KindDefinitionNames): PathModel[] {
  const verbs = new Set(k.verbs ?? ALL_VERBS);
  const gv = operationGroupVersion(k.group, k.version);
  const tag = operationTag(k.group, k.version);
  const gvk = { group: k.group, version: k.version, kind: k.kind };
  const prefix = k.group === '' ? `/api/${k.version}` : `/apis/${k.group}/${k.version}`;
  const scope = k.namespaced ? `${prefix}/namespaces/{namespace}` : prefix;
  const watchScope = k.namespaced ? `${prefix}/watch/namespaces/{namespace}` : `${prefix}/watch`;
  const ns = k.namespaced ? 'Namespaced' : '';
  const nsParams = k.namespaced ? [P.namespace] : [];
  const pb = k.protobufMessage !== undefined;
  const produces = ['application/json', 'application/yaml', ...(pb ? ['application/vnd.kubernetes.protobuf'] : [])];
  const streamProduces = [
    'application/json',
    'application/yaml',
    ...(pb ? ['application/vnd.kubernetes.protobuf'] : []),
    'application/json;stream=watch',
    ...(pb ? ['application/vnd.kubernetes.protobuf;stream=watch'] : []),
  ];
  const unauthorized: ResponseModel = { code: '401', description: 'Unauthorized' };
  const op = (o: Omit<OperationModel, 'tag' | 'gvk' | 'produces'> & { produces?: string[] }): OperationModel => ({
    tag,
    gvk,
    produces,
    ...o,
    responses: [...o.responses, unauthorized],
  });
  const K = k.kind;
  const ok = (schema: string, ...codes: Array<[string, string]>): ResponseModel[] => codes.map(([code, description]) => ({ code, description, schema }));
  const deleteBody = { kind: 'delete' as const, schema: DELETE_OPTIONS_DEF, required: false };
  const deleteResult = k.deleteReturnsObject ? defs.kind : STATUS_DEF;

  const collection: PathModel = { path: `${scope}/${k.plural}`, params: [...nsParams, P.pretty], operations: [] };
  const item: PathModel = { path: `${scope}/${k.plural}/{name}`, params: [P.name(K), ...nsParams, P.pretty], operations: [] };
  const out: PathModel[] = [collection, item];

  if (verbs.has('list')) {
    collection.operations.push(
      op({
        method: 'get',
        operationId: `list${gv}${ns}${K}`,
        description: `list or watch objects of kind ${K}`,
        action: 'list',
        params: LIST_PARAMS,
        responses: ok(defs.list, ['200', 'OK']),
        produces: streamProduces,
      }),
    );
  }
  if (verbs.has('create')) {
    collection.operations.push(
      op({
        method: 'post',
        operationId: `create${gv}${ns}${K}`,
        description: `create a ${K}`,
        action: 'post',
        params: WRITE_PARAMS,
        body: { kind: 'object', schema: defs.kind, required: true },
        responses: ok(defs.kind, ['200', 'OK'], ['201', 'Created'], ['202', 'Accepted']),
      }),
    );
  }
  if (verbs.has('deletecollection')) {
    collection.operations.push(
      op({
        method: 'delete',
        operationId: `delete${gv}Collection${ns}${K}`,
        description: `delete collection of ${K}`,
        action: 'deletecollection',
        params: DELETECOLLECTION_PARAMS,
        body: deleteBody,
        responses: ok(STATUS_DEF, ['200', 'OK']),
      }),
    );
  }
  if (verbs.has('get')) {
    item.operations.push(
      op({
        method: 'get',
        operationId: `read${gv}${ns}${K}`,
        description: `read the specified ${K}`,
        action: 'get',
        params: [],
        responses: ok(defs.kind, ['200', 'OK']),
      }),
    );
  }
  if (verbs.has('update')) {
    item.operations.push(
      op({
        method: 'put',
        operationId: `replace${gv}${ns}${K}`,
        description: `replace the specified ${K}`,
        action: 'put',
        params: WRITE_PARAMS,
        body: { kind: 'object', schema: defs.kind, required: true },
        responses: ok(defs.kind, ['200', 'OK'], ['201', 'Created']),
      }),
    );
  }
  if (verbs.has('patch')) {
    item.operations.push(
      op({
        method: 'patch',
        operationId: `patch${gv}${ns}${K}`,
        description: `partially update the specified ${K}`,
        action: 'patch',
        params: PATCH_PARAMS,
        body: { kind: 'patch', schema: PATCH_DEF, required: true },
        responses: ok(defs.kind, ['200', 'OK'], ['201', 'Created']),
      }),
    );
  }
  if (verbs.has('delete')) {
    item.operations.push(
      op({
        method: 'delete',
        operationId: `delete${gv}${ns}${K}`,
        description: `delete a ${K}`,
        action: 'delete',
        params: DELETE_PARAMS,
        body: deleteBody,
        responses: ok(deleteResult, ['200', 'OK'], ['202', 'Accepted']),
      }),
    );
  }
  if (verbs.has('list') && k.namespaced) {
    out.push({
      path: `${prefix}/${k.plural}`,
      params: [...LIST_PARAMS, P.pretty],
      operations: [
        op({
          method: 'get',
          operationId: `list${gv}${K}ForAllNamespaces`,
          description: `list or watch objects of kind ${K}`,
          action: 'list',
          params: [],
          responses: ok(defs.list, ['200', 'OK']),
          produces: streamProduces,
        }),
      ],
    });
  }
  if (verbs.has('watch')) {
    const watchParams = [...LIST_PARAMS, P.pretty];
    out.push({
      path: `${watchScope}/${k.plural}`,
      params: [...watchParams, ...nsParams],
      operations: [
        op({
          method: 'get',
          operationId: `watch${gv}${ns}${K}List`,
          description: `watch individual changes to a list of ${K}. deprecated: use the 'watch' parameter with a list operation instead.`,
          action: 'watchlist',
          params: [],
          responses: ok(WATCH_EVENT_DEF, ['200', 'OK']),
          produces: streamProduces,
        }),
      ],
    });
    out.push({
      path: `${watchScope}/${k.plural}/{name}`,
      params: [...watchParams, P.name(K), ...nsParams],
      operations: [
        op({
          method: 'get',
          operationId: `watch${gv}${ns}${K}`,
          description: `watch changes to an object of kind ${K}. deprecated: use the 'watch' parameter with a list operation instead, filtered to a single item with the 'fieldSelector' parameter.`,
          action: 'watch',
          params: [],
          responses: ok(WATCH_EVENT_DEF, ['200', 'OK']),
          produces: streamProduces,
        }),
      ],
    });
    if (k.namespaced) {
      out.push({
        path: `${prefix}/watch/${k.plural}`,
        params: watchParams,
        operations: [
          op({
            method: 'get',
            operationId: `watch${gv}${K}ListForAllNamespaces`,
            description: `watch individual changes to a list of ${K}. deprecated: use the 'watch' parameter with a list operation instead.`,
            action: 'watchlist',
            params: [],
            responses: ok(WATCH_EVENT_DEF, ['200', 'OK']),
            produces: streamProduces,
          }),
        ],
      });
    }
  }
  if (k.subresources?.status) {
    const status: PathModel = { path: `${scope}/${k.plural}/{name}/status`, params: [P.name(K), ...nsParams, P.pretty], operations: [] };
    if (verbs.has('get')) {
      status.operations.push(
        op({
          method: 'get',
          operationId: `read${gv}${ns}${K}Status`,
          description: `read status of the specified ${K}`,
          action: 'get',
          params: [],
          responses: ok(defs.kind, ['200', 'OK']),
        }),
      );
    }
    if (verbs.has('update')) {
      status.operations.push(
        op({
          method: 'put',
          operationId: `replace${gv}${ns}${K}Status`,
          description: `replace status of the specified ${K}`,
          action: 'put',
          params: WRITE_PARAMS,
          body: { kind: 'object', schema: defs.kind, required: true },
          responses: ok(defs.kind, ['200', 'OK'], ['201', 'Created']),
        }),
      );
    }
    if (verbs.has('patch')) {
      status.operations.push(
        op({
          method: 'patch',
          operationId: `patch${gv}${ns}${K}Status`,
          description: `partially update status of the specified ${K}`,
          action: 'patch',
          params: PATCH_PARAMS,
          body: { kind: 'patch', schema: PATCH_DEF, required: true },
          responses: ok(defs.kind, ['200', 'OK'], ['201', 'Created']),
        }),
      );
    }
    out.push(status);
  }
  return out.filter((p) => p.operations.length > 0);
}
