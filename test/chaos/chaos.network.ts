/**
 * The three-node chaos suite's faults and how its nodes are networked (cluster.chaos.test.ts):
 * each node in its own network namespace, or, for a run that opted out of namespaces, all on
 * loopback without the faults that need a cut between nodes.
 */
import { NetnsLab } from './faults.js';

/** Every fault of the suite, in the order one round injects them. The last three are the
 * membership phase (chaos.membership.ts): a fourth node added as a learner and promoted, a
 * member replaced after losing its data dir, a voter removed; the round ends with three voters. */
export const FAULTS = [
  'kill-leader',
  'kill-follower',
  'pause-leader',
  'partition-leader',
  'isolate-follower',
  'restart-all',
  'snapshot-catchup',
  'add-member',
  'replace-wiped',
  'remove-member',
] as const;
/** One fault of {@link FAULTS}. */
export type FaultKind = (typeof FAULTS)[number];
/** Faults that cut nodes off from each other: only namespaces can do that exactly (a proxy in
 * front of a peer port sees its node's inbound connections, not who dials, so it cannot cut one
 * node from the two others without cutting those two apart as well). */
export const NETWORK_FAULTS: readonly FaultKind[] = ['partition-leader', 'isolate-follower'];

/** How the nodes are networked and how partitions are made. */
export interface Network {
  readonly mode: 'netns' | 'loopback';
  /** Address of slot i (a node's place: its namespace) that its node binds and the test dials. */
  host(i: number): string;
  /** Peer address of slot i in --initial-cluster. */
  peerAddress(i: number, listenPort: number): Promise<string>;
  wrap(i: number): string[] | undefined;
  /** Cuts every slot in `a` off from every slot in `b`, both directions. */
  cut(a: readonly number[], b: readonly number[]): void;
  heal(): void;
  cleanup(): Promise<void>;
}

/** `slots` namespaces: one per node that can be a member at the same time. */
export function netnsNetwork(slots: number): Network {
  // A subnet per test process, so that two runs on one machine do not share routes.
  const lab = new NetnsLab(slots, 60 + (process.pid % 150));
  lab.create();
  return {
    mode: 'netns',
    host: (i) => lab.nodes[i]!.address,
    peerAddress: async (i, port) => `${lab.nodes[i]!.address}:${port}`,
    wrap: (i) => lab.wrapper(lab.nodes[i]!.name),
    cut: (a, b) => {
      for (const x of a) for (const y of b) lab.partition(lab.nodes[x]!.name, lab.nodes[y]!.name, true);
    },
    heal: () => lab.heal(),
    cleanup: async () => lab.cleanup(),
  };
}

/**
 * Loopback, for a run that opted out of namespaces: the nodes dial each other directly and the
 * faults that need a cut between nodes are not run (NETWORK_FAULTS), so `cut` is never called.
 */
export function loopbackNetwork(): Network {
  return {
    mode: 'loopback',
    host: () => '127.0.0.1',
    peerAddress: async (_i, port) => `127.0.0.1:${port}`,
    wrap: () => undefined,
    cut: () => {
      throw new Error('loopback network: nodes cannot be cut off from each other');
    },
    heal: () => undefined,
    cleanup: async () => undefined,
  };
}

/** The faults this network can inject, in order. */
export function faultKinds(net: Network): readonly FaultKind[] {
  return net.mode === 'netns' ? FAULTS : FAULTS.filter((k) => !NETWORK_FAULTS.includes(k));
}
