/**
 * Forwarding of membership changes to the Raft leader (docs/cluster.md "Membership").
 *
 * Changes run on the leader (it adds the learner, waits for it to catch up, promotes it). A node
 * that is not the leader used to answer 503 naming the leader, so a client behind the load
 * balancer had to retry elsewhere; now it forwards the change over the peer port
 * (proto/cluster.proto, the same mutual TLS as Raft) and answers with the leader's result. The
 * forwarding node has already authenticated and authorized the caller (system:masters); the
 * leader trusts the peer channel, which is the trust boundary Raft traffic already has. A
 * forwarded change is never forwarded again: a node that lost leadership in between answers
 * NotLeader, and the client sees the same 503 as before.
 */
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import type { UnaryCall } from '@app/grpc';
import { findProtoFile, type GrpcTransport } from '@app/raft';
import { ClusterConfigError } from './cluster.ids.js';
import { MembershipConflictError, NotLeaderError, type ClusterMembership, type MemberRecord } from './cluster.members.js';

/** A membership change as sent to the leader. */
export interface MemberChange {
  op: 'add' | 'remove' | 'promote';
  name: string;
  peerURL?: string;
  requestedBy: string;
}

interface WireRequest {
  op: string;
  name: string;
  peerUrl: string;
  requestedBy: string;
}

interface WireReply {
  recordJson: string;
  errorKind: string;
  errorMessage: string;
  leaderName: string;
  leaderUrl: string;
}

/** Longest a forwarded change may take: the leader waits up to 60 s for a learner to catch up. */
const FORWARD_DEADLINE_MS = 120_000;

let cached: grpc.ServiceDefinition | undefined;
/** The ClusterAdmin service of proto/cluster.proto. */
export function clusterAdminService(): grpc.ServiceDefinition {
  cached ??= protoLoader.loadSync(findProtoFile('cluster.proto'), { keepCase: false, defaults: true })[
    'kapi.cluster.v1.ClusterAdmin'
  ] as grpc.ServiceDefinition;
  return cached;
}

/** The reply for an error thrown by ClusterMembership on the leader. */
export function replyForError(e: unknown): WireReply {
  const r: WireReply = { recordJson: '', errorKind: 'Unavailable', errorMessage: e instanceof Error ? e.message : String(e), leaderName: '', leaderUrl: '' };
  if (e instanceof NotLeaderError) {
    r.errorKind = 'NotLeader';
    r.leaderName = e.leaderName ?? '';
    r.leaderUrl = e.leaderURL ?? '';
  } else if (e instanceof MembershipConflictError) r.errorKind = 'Conflict';
  else if (e instanceof ClusterConfigError) r.errorKind = 'BadRequest';
  return r;
}

/** The error a forwarding node throws for an error reply (the inverse of replyForError). */
export function errorForReply(r: WireReply): Error {
  switch (r.errorKind) {
    case 'NotLeader':
      return new NotLeaderError(r.errorMessage, r.leaderName || undefined, r.leaderUrl || undefined);
    case 'Conflict':
      return new MembershipConflictError(r.errorMessage);
    case 'BadRequest':
      return new ClusterConfigError(r.errorMessage);
    default:
      return Object.assign(new Error(r.errorMessage), { code: 'Unavailable' });
  }
}

/** Serves ClusterAdmin on the transport's peer port: changes are carried out by `membership`. */
export function serveClusterAdmin(transport: GrpcTransport, membership: ClusterMembership, log: (line: string) => void = () => undefined): void {
  transport.addService(clusterAdminService(), {
    ChangeMember: (call: UnaryCall) => {
      const req = call.request as WireRequest;
      const done = (p: Promise<MemberRecord | void>): void => {
        p.then(
          (rec) => call.respond({ recordJson: rec ? JSON.stringify(rec) : '', errorKind: '', errorMessage: '', leaderName: '', leaderUrl: '' }),
          (e: unknown) => call.respond(replyForError(e)),
        );
      };
      // Quoted: both strings come from the network.
      if (req.op === 'add' || req.op === 'remove' || req.op === 'promote')
        log(`membership: ${req.op} ${JSON.stringify(req.name)} forwarded by a peer for user ${JSON.stringify(req.requestedBy)}`);
      if (req.op === 'add') done(membership.add(req.name, req.peerUrl, { forwarded: true }));
      else if (req.op === 'remove') done(membership.remove(req.name, { forwarded: true }));
      else if (req.op === 'promote') done(membership.promote(req.name, { forwarded: true }));
      else call.respond(replyForError(new ClusterConfigError(`unknown membership operation "${req.op}"`)));
    },
  });
}

type AdminClient = grpc.Client & {
  ChangeMember(req: WireRequest, opts: grpc.CallOptions, cb: (err: grpc.ServiceError | null, reply?: WireReply) => void): void;
};

/** Sends membership changes to the leader's peer address over the transport's credentials. */
export class ClusterAdminClient {
  private readonly clients = new Map<string, AdminClient>();
  private readonly ctor = grpc.makeGenericClientConstructor(clusterAdminService(), 'ClusterAdmin');

  constructor(private readonly transport: GrpcTransport) {}

  /**
   * Carries out `change` on the leader at `leader.peerURL`; resolves with the leader's record
   * (add, promote) or nothing (remove), rejects with the leader's error. When the leader cannot be reached
   * the error is NotLeaderError naming it, so the client can go there itself.
   */
  async forward(change: MemberChange, leader: Pick<MemberRecord, 'name' | 'peerURL' | 'clientURL'>): Promise<MemberRecord | void> {
    let client = this.clients.get(leader.peerURL);
    if (!client) {
      client = new this.ctor(leader.peerURL, this.transport.channelCredentials(), { 'grpc.enable_retries': 0 }) as unknown as AdminClient;
      this.clients.set(leader.peerURL, client);
    }
    const req: WireRequest = { op: change.op, name: change.name, peerUrl: change.peerURL ?? '', requestedBy: change.requestedBy };
    const reply = await new Promise<WireReply>((resolve, reject) => {
      client.ChangeMember(req, { deadline: Date.now() + FORWARD_DEADLINE_MS }, (err, r) => {
        if (err || !r) {
          reject(
            new NotLeaderError(
              `not the leader, and the leader ${leader.name} could not be reached to forward the change: ${err?.details || err?.message || 'no reply'}`,
              leader.name,
              leader.clientURL,
            ),
          );
        } else resolve(r);
      });
    });
    if (reply.errorKind) throw errorForReply(reply);
    if (change.op === 'remove') return;
    try {
      return JSON.parse(reply.recordJson) as MemberRecord;
    } catch {
      throw Object.assign(new Error('the leader answered with an unreadable member record'), { code: 'Unavailable' });
    }
  }

  close(): void {
    for (const c of this.clients.values()) c.close();
    this.clients.clear();
  }
}
