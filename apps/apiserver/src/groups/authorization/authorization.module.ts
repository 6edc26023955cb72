/**
 * The authorization.k8s.io API group (`/apis/authorization.k8s.io/v1`): the access reviews
 * and the rules review, REST-only kinds answered by the pipeline's AUTHORIZER and the rule
 * resolver of the same `--authorization-mode` list. A kind is one folder here.
 */
import { Inject, Injectable, Module } from '@nestjs/common';
import { AUTHORIZER, ruleResolverForModes, type Authorizer } from '@app/authz';
import type { ServerConfig } from '../../config/flags.js';
import { authorizationModes } from '../../pipeline/authorization-modes.js';
import { AbacPolicyFile } from '../../pipeline/abac-policy.js';
import { RbacPolicyWatcher } from '../../pipeline/rbac-policy.watcher.js';
import { SERVER_CONFIG } from '../../tokens.js';
import { apiKinds } from '../api-group.js';
import { AuthorizationPorts } from './access.review.js';
import { AUTHORIZATION_GROUP } from './authorization.schema.js';
import { localSubjectAccessReviewKind } from './localsubjectaccessreview/localsubjectaccessreview.kind.js';
import { selfSubjectAccessReviewKind } from './selfsubjectaccessreview/selfsubjectaccessreview.kind.js';
import { selfSubjectRulesReviewKind } from './selfsubjectrulesreview/selfsubjectrulesreview.kind.js';
import { subjectAccessReviewKind } from './subjectaccessreview/subjectaccessreview.kind.js';

const ports = new AuthorizationPorts();

/** The authorization.k8s.io/v1 kinds. */
export const AUTHORIZATION_KINDS = [
  localSubjectAccessReviewKind(ports),
  selfSubjectAccessReviewKind(ports),
  selfSubjectRulesReviewKind(ports),
  subjectAccessReviewKind(ports),
];

/** Hands the pipeline's authorizer and the modes' rule resolver to the review kinds at start. */
@Injectable()
export class AuthorizationPortsWiring {
  constructor(@Inject(AUTHORIZER) authorizer: Authorizer, @Inject(SERVER_CONFIG) cfg: ServerConfig, rbac: RbacPolicyWatcher, abac: AbacPolicyFile) {
    ports.authorizer = authorizer;
    ports.rules = ruleResolverForModes(authorizationModes(cfg), { rbac: rbac.policy, ...(abac.authorizer ? { abac: abac.authorizer } : {}) });
  }
}

/** Provides the authorization.k8s.io/v1 kinds. */
@Module({ providers: [apiKinds(AUTHORIZATION_GROUP, AUTHORIZATION_KINDS), AuthorizationPortsWiring] })
export class AuthorizationGroupModule {}
