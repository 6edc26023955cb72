/**
 * Which verbs each kind of resource path serves: kube-apiserver's installer registers routes per
 * path (endpoints/installer.go registerResourceHandlers), and go-restful answers 405 for a
 * method a registered path does not have. So the answer for a verb on the wrong kind of path
 * comes from this one table, never from the verb's handler:
 *
 *   collection      /namespaces/{ns}/{plural}, or /{plural} of a cluster-scoped kind:
 *                   GET (list, watch), POST (create), DELETE (deletecollection)
 *   all namespaces  /{plural} of a namespaced kind: GET (list, watch) only
 *   object          .../{plural}/{name}: GET (get, watch), PUT, PATCH, DELETE; POST is 405
 *   subresource     .../{name}/{sub}: the verbs the kind declares for it
 *
 * A path that names nothing (a namespaced object without its namespace, a cluster-scoped kind
 * under a namespace) has no routes at all: 404.
 */
import { StatusError } from '@app/apimachinery';
import type { Verb } from '@app/registry';

/** The shape of a resource path. */
export type PathShape = 'collection' | 'allNamespaces' | 'object' | 'subresource';

/** The verbs each shape of path routes (before the kind's own verbs narrow them). */
export const PATH_VERBS: Readonly<Record<Exclude<PathShape, 'subresource'>, readonly Verb[]>> = {
  collection: ['list', 'watch', 'create', 'deletecollection'],
  allNamespaces: ['list', 'watch'],
  object: ['get', 'watch', 'update', 'patch', 'delete'],
};

/** What the table needs to know about a request and its kind. */
export interface PathFacts {
  namespaced: boolean;
  /** The namespace of the path ('' when none). */
  namespace: string;
  name: string;
  subresource: string;
  /** True for /api/v1/namespaces/{name}[/sub], whose namespace is the object itself. */
  namespaceIsObject: boolean;
}

/** The shape of a path, or undefined when the path names nothing of this kind (404). */
export function pathShape(f: PathFacts): PathShape | undefined {
  if (f.namespaced) {
    if (!f.namespace) return f.name ? undefined : 'allNamespaces';
  } else if (f.namespace && !f.namespaceIsObject) {
    return undefined;
  }
  if (!f.name) return 'collection';
  return f.subresource ? 'subresource' : 'object';
}

/**
 * The 405 of a method the path has no route for, as go-restful's answer reaches the client
 * through kube-apiserver's ServiceErrorHandler (NewGenericServerResponse with code 405).
 */
export function methodNotAllowed(): StatusError {
  return new StatusError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource', {});
}

/**
 * Checks `verb` against the path's shape and the verbs the kind (or the subresource) declares;
 * throws 405 when the path has no route for it.
 */
export function checkPathVerb(shape: PathShape, verb: Verb, declared: readonly Verb[]): void {
  const routed = shape === 'subresource' ? declared : PATH_VERBS[shape].filter((v) => declared.includes(v));
  if (!routed.includes(verb)) throw methodNotAllowed();
}
