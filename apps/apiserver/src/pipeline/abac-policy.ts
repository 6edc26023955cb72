/**
 * The ABAC mode's policy file (`--authorization-policy-file`), read once at start as
 * kube-apiserver reads it: a file that cannot be read or parsed stops the start, naming the flag,
 * the line and what is wrong with it. One provider, so the authorizer and the rules review share
 * the same policies.
 */
import { readFileSync } from 'node:fs';
import { Inject, Injectable } from '@nestjs/common';
import { AbacAuthorizer, parseAbacPolicyFile } from '@app/authz';
import type { ServerConfig } from '../config/flags.js';
import { SERVER_CONFIG } from '../tokens.js';
import { flagStartError } from './authentication-method.js';

const FLAG = 'authorization-policy-file';

/** The ABAC authorizer of `--authorization-policy-file`; undefined without the flag. */
export function abacAuthorizerFor(cfg: ServerConfig): AbacAuthorizer | undefined {
  const file = cfg.raw[FLAG];
  if (file === undefined || file === '') return undefined;
  try {
    const { policies, unversioned } = parseAbacPolicyFile(file, readFileSync(file, 'utf8'));
    if (unversioned > 0)
      process.stderr.write(`${cfg.name}: policy file ${file} contains ${unversioned} unversioned rules (abac.authorization.kubernetes.io/v0 semantics)\n`);
    return new AbacAuthorizer(policies);
  } catch (e) {
    throw flagStartError(cfg, FLAG, e);
  }
}

/** The loaded ABAC policies, for the authorizer and the rule resolver. */
@Injectable()
export class AbacPolicyFile {
  readonly authorizer: AbacAuthorizer | undefined;

  constructor(@Inject(SERVER_CONFIG) cfg: ServerConfig) {
    this.authorizer = abacAuthorizerFor(cfg);
  }
}
