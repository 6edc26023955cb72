/**
 * `/version` (version.Info): the Kubernetes API level this server implements, which decides
 * which bundled kubectl the kubectl dispatcher runs, and the build's provenance
 * (version/version.info.ts), read once.
 */
import type { FastifyReply } from 'fastify';
import { readBuildInfo, versionBody } from '../version/version.info.js';
import { sendDocument } from './status.js';

/** The Kubernetes API level this server implements. */
export const KUBE_VERSION = { major: '1', minor: '32', gitVersion: 'v1.32.0+kapi' };

let body: string | undefined;

/** Answers /version. */
export function serveVersion(reply: FastifyReply): void {
  body ??= JSON.stringify(versionBody(KUBE_VERSION, readBuildInfo()));
  sendDocument(reply, body);
}
