/**
 * The apiregistration.k8s.io API group (`/apis/apiregistration.k8s.io/v1`): APIService objects,
 * and the hook that keeps one local APIService per served group-version. Proxying to remote
 * APIServices is not built; every served group-version is local.
 */
import { Module } from '@nestjs/common';
import type { KindDeclaration } from '@app/registry';
import { apiKinds } from '../api-group.js';
import { apiServiceKind } from './apiservice/apiservice.kind.js';
import { LocalAPIServiceRegistration } from './apiservice/apiservice.registration.js';

/** The apiregistration.k8s.io kinds. */
export const APIREGISTRATION_KINDS: readonly KindDeclaration[] = [apiServiceKind];

/** Provides the apiregistration.k8s.io kinds and the local APIService registration. */
@Module({ providers: [apiKinds('apiregistration.k8s.io', APIREGISTRATION_KINDS), LocalAPIServiceRegistration] })
export class ApiregistrationGroupModule {}
