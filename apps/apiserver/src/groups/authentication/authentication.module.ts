/**
 * The authentication.k8s.io API group: SelfSubjectReview (v1 and v1beta1) and TokenReview,
 * REST-only kinds. A kind is one folder here.
 */
import { Inject, Injectable, Module } from '@nestjs/common';
import { AUTHENTICATOR, type Authenticator } from '@app/auth';
import { apiKinds } from '../api-group.js';
import { AUTHENTICATION_GROUP } from './authentication.schema.js';
import { selfSubjectReviewKind } from './selfsubjectreview/selfsubjectreview.kind.js';
import { AuthenticationPorts, tokenReviewKind } from './tokenreview/tokenreview.kind.js';

const ports = new AuthenticationPorts();

/** The authentication.k8s.io kinds; v1 first, so it is the preferred version. */
export const AUTHENTICATION_KINDS = [selfSubjectReviewKind('v1'), tokenReviewKind(ports), selfSubjectReviewKind('v1beta1')];

/** Hands the pipeline's authenticator chain to TokenReview at start. */
@Injectable()
export class AuthenticationPortsWiring {
  constructor(@Inject(AUTHENTICATOR) authenticator: Authenticator) {
    ports.authenticator = authenticator;
  }
}

/** Provides the authentication.k8s.io kinds. */
@Module({ providers: [apiKinds(AUTHENTICATION_GROUP, AUTHENTICATION_KINDS), AuthenticationPortsWiring] })
export class AuthenticationGroupModule {}
