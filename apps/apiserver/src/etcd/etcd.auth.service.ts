/**
 * etcd's Auth service (docs/etcd-api.md "Authentication"), answered as an etcd whose
 * authentication is disabled and which has no users and no roles. This server does not keep
 * etcd users and roles: the etcd API's clients are identified by TLS client certificates
 * (--client-cert-auth) instead. So:
 *
 * - Authenticate fails with etcd's "authentication is not enabled", which etcd's clients take as
 *   leave to go on without a token: a client configured with a user name and password works.
 * - AuthStatus says disabled; AuthDisable succeeds (nothing to disable).
 * - The reads and changes of users and roles answer as they would on an empty auth store: the
 *   lists are empty, and a user or role named is not found.
 * - AuthEnable, UserAdd and RoleAdd, which would create what this server does not keep, are
 *   refused with UNIMPLEMENTED and a message saying how clients are authenticated here.
 */
import type { ServiceHandlers } from '@app/grpc';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { EtcdApiError } from './etcd.convert.js';
import { unary, type EtcdContext } from './etcd.context.js';

/** etcd's error strings (its clients match them to typed errors by their text). */
const ERR_AUTH_NOT_ENABLED = 'etcdserver: authentication is not enabled';
const ERR_USER_NOT_FOUND = 'etcdserver: user name not found';
const ERR_ROLE_NOT_FOUND = 'etcdserver: role name not found';

/** Why users, roles and enabling authentication are refused. */
const AUTH_NOT_SERVED =
  'etcdserver: etcd users and roles are not kept by this server: its etcd API identifies clients by TLS client certificates (--client-cert-auth)';

/** The revision of the auth store, which never changes here (etcd starts its own at 1). */
const AUTH_REVISION = '1';

/** The Auth service's handlers. */
export function authService(ctx: EtcdContext): ServiceHandlers {
  const ok = unary(async () => ({ header: ctx.header() }));
  const fail = (code: GrpcStatus, message: string) =>
    unary(async () => {
      throw new EtcdApiError(code, message);
    });
  // Every user or role a request names is one that does not exist.
  const userNotFound = fail(GrpcStatus.FAILED_PRECONDITION, ERR_USER_NOT_FOUND);
  const roleNotFound = fail(GrpcStatus.FAILED_PRECONDITION, ERR_ROLE_NOT_FOUND);
  return {
    AuthStatus: unary(async () => ({ header: ctx.header(), enabled: false, authRevision: AUTH_REVISION })),
    AuthDisable: ok,
    AuthEnable: fail(GrpcStatus.UNIMPLEMENTED, AUTH_NOT_SERVED),
    Authenticate: fail(GrpcStatus.FAILED_PRECONDITION, ERR_AUTH_NOT_ENABLED),
    UserList: unary(async () => ({ header: ctx.header(), users: [] })),
    RoleList: unary(async () => ({ header: ctx.header(), roles: [] })),
    UserAdd: fail(GrpcStatus.UNIMPLEMENTED, AUTH_NOT_SERVED),
    RoleAdd: fail(GrpcStatus.UNIMPLEMENTED, AUTH_NOT_SERVED),
    UserGet: userNotFound,
    UserDelete: userNotFound,
    UserChangePassword: userNotFound,
    UserGrantRole: userNotFound,
    UserRevokeRole: userNotFound,
    RoleGet: roleNotFound,
    RoleDelete: roleNotFound,
    RoleGrantPermission: roleNotFound,
    RoleRevokePermission: roleNotFound,
  };
}
