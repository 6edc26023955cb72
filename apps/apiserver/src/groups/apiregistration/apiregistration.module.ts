/**
 * The apiregistration.k8s.io API group (`/apis/apiregistration.k8s.io/v1`): APIService objects,
 * the hook that keeps one local APIService per served group-version, and the aggregation layer
 * (aggregation/): requests to the group-versions of remote APIServices are passed on to the
 * servers behind their services, whose availability a controller keeps in their status, and
 * kube-system/extension-apiserver-authentication tells those servers how to trust their callers.
 */
import { Global, Module } from '@nestjs/common';
import type { KindDeclaration } from '@app/registry';
import { AGGREGATOR } from '../../http/aggregator.port.js';
import { apiKinds } from '../api-group.js';
import { ApiServiceAvailabilityRunner } from './aggregation/availability.controller.js';
import { ExtensionAuthenticationPublisher } from './aggregation/extension-authentication.hook.js';
import { RemoteApis } from './aggregation/remote-apis.js';
import { apiServiceKind } from './apiservice/apiservice.kind.js';
import { LocalAPIServiceRegistration } from './apiservice/apiservice.registration.js';

/** The apiregistration.k8s.io kinds. */
export const APIREGISTRATION_KINDS: readonly KindDeclaration[] = [apiServiceKind];

/** Provides the apiregistration.k8s.io kinds, the local APIService registration and the aggregation layer (AGGREGATOR). */
@Global()
@Module({
  providers: [
    apiKinds('apiregistration.k8s.io', APIREGISTRATION_KINDS),
    LocalAPIServiceRegistration,
    RemoteApis,
    { provide: AGGREGATOR, useExisting: RemoteApis },
    ApiServiceAvailabilityRunner,
    ExtensionAuthenticationPublisher,
  ],
  exports: [AGGREGATOR],
})
export class ApiregistrationGroupModule {}
