/**
 * `/version` (version.Info). The Kubernetes API level this server implements decides which
 * bundled kubectl the kubectl dispatcher runs.
 */
import type { FastifyReply } from 'fastify';
import { sendDocument } from './status.js';

/** The Kubernetes API level this server implements. */
export const KUBE_VERSION = { major: '1', minor: '32', gitVersion: 'v1.32.0+kapi' };

/** Answers /version. */
export function serveVersion(reply: FastifyReply): void {
  sendDocument(
    reply,
    JSON.stringify({
      ...KUBE_VERSION,
      gitCommit: '0000000000000000000000000000000000000000',
      gitTreeState: 'clean',
      buildDate: '2026-01-01T00:00:00Z',
      goVersion: `node${process.versions.node}`,
      compiler: 'tsc',
      platform: `${process.platform}/${process.arch === 'x64' ? 'amd64' : process.arch}`,
    }),
  );
}
