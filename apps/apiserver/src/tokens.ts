/**
 * Injection tokens of the server's own providers (the ports of libraries carry theirs:
 * AUTHENTICATOR in @app/auth, AUTHORIZER in @app/authz). Nest resolves them once at start; the
 * request path holds plain references.
 */
import type { PkiMaterial } from '@app/pki';
import type { GenericStore, KindDeclaration } from '@app/registry';

/** The parsed flags (ServerConfig). */
export const SERVER_CONFIG = Symbol.for('kapi.ServerConfig');
/** This node's PKI material (PkiMaterial). */
export const PKI = Symbol.for('kapi.Pki');
/** Where this node serves: { url, host } (ServerEndpoint). */
export const SERVER_ENDPOINT = Symbol.for('kapi.ServerEndpoint');
/**
 * This node's Raft member and its storage side (ClusterNode); provided with the built-in
 * backend only. Code that works on any backend injects STORAGE_BACKEND instead.
 */
export const CLUSTER_NODE = Symbol.for('kapi.ClusterNode');
/** The storage backend: storage, its health checks, membership, lifecycle (storage/storage.backend.ts). */
export const STORAGE_BACKEND = Symbol.for('kapi.StorageBackend');
/** The storage the API layer uses (@app/storage Storage). */
export const STORAGE = Symbol.for('kapi.Storage');
/** The machinery port of the generic store (@app/registry Machinery). */
export const MACHINERY = Symbol.for('kapi.Machinery');
/** The wire codecs of the HTTP edge (http/codec.ts WireCodecs). */
export const WIRE_CODECS = Symbol.for('kapi.WireCodecs');
/** The admission chain (@app/registry Admission). */
export const ADMISSION = Symbol.for('kapi.Admission');
/** The generic store of each kind (StoreFactory). */
export const STORES = Symbol.for('kapi.Stores');

/** Where this node's API is served. */
export interface ServerEndpoint {
  /** `https://host:port` clients (and the admin kubeconfig) use. */
  url: string;
  /** The host part: the bind address, or 127.0.0.1 for a wildcard bind. */
  host: string;
}

/** Hands out the one GenericStore of each kind. */
export interface StoreFactory {
  storeFor(decl: KindDeclaration): GenericStore;
}

export type { PkiMaterial };
