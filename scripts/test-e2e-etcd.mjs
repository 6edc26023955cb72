#!/usr/bin/env node
/**
 * `npm run test:e2e:etcd`: the e2e tests about the Kubernetes API once more, with every server
 * the harness starts running on its own external etcd (KAPI_TEST_STORAGE=etcd3, one etcd-server
 * member on loopback per server; test/support/server.ts). npm run build runs first (npm script).
 *
 * Left out, because they are about the built-in store rather than the API it serves, and start
 * their servers with the built-in store's own flags (--initial-cluster, its disk):
 *   test/chaos/                 Raft chaos, faults and the linearizability checker of our store
 *   test/raft/                  Raft between real processes
 *   cluster.test.ts, cluster.compaction.test.ts, rbac.cluster.test.ts
 *                               three-node Raft clusters (membership, quorum loss, compaction
 *                               through the Raft log)
 *   storage.failure.test.ts     a failing LevelDB/Raft-log write stopping the node
 *   disk-faults.test.ts, disk-faults.cluster.test.ts
 *                               faults injected into the built-in store's LevelDB and files
 *   soak.test.ts                a three-node built-in cluster under load for a minute
 *   deploy.test.ts              the built-in cluster's launcher, compose file and haproxy
 *   bench.test.ts, bench.storage.test.ts
 *                               the built-in store's benchmarks
 *   etcd3.backend.test.ts       starts its own three-member etcd already (runs in npm test)
 *   etcd.differential.test.ts   the built-in store's etcd API compared with an etcd member
 *   etcd.concurrency.test.ts    the built-in store's Lock and Election services compared with an etcd member
 *   snapshot-restore.test.ts    the built-in store's backup through etcdctl and its restore
 *   support/                    the harness's own tests (no API server storage involved)
 *
 * Usage: node scripts/test-e2e-etcd.mjs [extra jest arguments]
 */
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
// One pattern, and the extra arguments before the array options: jest reads every bare argument
// after an array option into it, so test paths given last would become ignore patterns.
const ignored = [
  '/node_modules/',
  '/test/(client-node-2|chaos|raft|support)/',
  '/test/(cluster|cluster\\.compaction|rbac\\.cluster|storage\\.failure|disk-faults|disk-faults\\.cluster|soak|deploy|bench|bench\\.storage|etcd3\\.backend|etcd\\.differential|etcd\\.concurrency|snapshot-restore)\\.test\\.ts$',
].join('|');
const args = [
  '--experimental-vm-modules',
  '--no-warnings',
  join(root, 'node_modules', 'jest', 'bin', 'jest.js'),
  ...process.argv.slice(2),
  '--selectProjects',
  'e2e',
  `--testPathIgnorePatterns=${ignored}`,
];
const r = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit', env: { ...process.env, KAPI_TEST_STORAGE: 'etcd3' } });
process.exit(r.status ?? 1);
