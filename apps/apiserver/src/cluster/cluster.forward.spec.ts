import { GrpcTransport } from '@app/raft';
import { getFreePort } from '../../../../test/support/net.helper.js';
import { ClusterConfigError } from './cluster.ids.js';
import { ClusterAdminClient, errorForReply, replyForError } from './cluster.forward.js';
import { MembershipConflictError, NotLeaderError } from './cluster.members.js';

describe('membership forwarding', () => {
  it('carries the leader errors across as the same error types (and so the same Status)', () => {
    const back = (e: Error): Error => errorForReply(replyForError(e));
    const nl = back(new NotLeaderError('lost leadership', 'n2', 'https://127.0.0.1:6445'));
    expect(nl).toBeInstanceOf(NotLeaderError);
    expect(nl).toMatchObject({ message: 'lost leadership', leaderName: 'n2', leaderURL: 'https://127.0.0.1:6445' });
    const none = back(new NotLeaderError('no leader known; retry later'));
    expect(none).toMatchObject({ leaderName: undefined, leaderURL: undefined });
    expect(back(new MembershipConflictError('no member named x'))).toBeInstanceOf(MembershipConflictError);
    expect(back(new ClusterConfigError('bad name'))).toBeInstanceOf(ClusterConfigError);
    const other = back(new Error('raft stopped'));
    expect(other).toMatchObject({ message: 'raft stopped', code: 'Unavailable' });
  });

  it('an unreachable leader becomes NotLeaderError naming it, so the client can go there', async () => {
    const port = await getFreePort();
    const t = new GrpcTransport({ id: 1, listen: '127.0.0.1:0', peers: new Map(), insecure: true }, { onMessage: () => undefined });
    const client = new ClusterAdminClient(t);
    try {
      const p = client.forward(
        { op: 'remove', name: 'n4', requestedBy: 'admin' },
        { name: 'n2', peerURL: `127.0.0.1:${port}`, clientURL: 'https://127.0.0.1:6445' },
      );
      await expect(p).rejects.toBeInstanceOf(NotLeaderError);
      await expect(p).rejects.toMatchObject({ leaderName: 'n2', leaderURL: 'https://127.0.0.1:6445' });
    } finally {
      client.close();
    }
  });
});
