/**
 * The apiextensions.k8s.io API group (`/apis/apiextensions.k8s.io/v1`): CustomResourceDefinitions,
 * the registrar serving their resources on every node, and their controllers (naming,
 * established, finalizer) on the controller Lease holder. docs/custom-resources.md.
 */
import { Module } from '@nestjs/common';
import type { KindDeclaration } from '@app/registry';
import { apiKinds } from '../api-group.js';
import { customResourceDefinitionKind } from './customresourcedefinition/crd.kind.js';
import { CrdControllersRunner } from './customresourcedefinition/crd.controllers.js';
import { CustomResourceRegistrar } from './customresourcedefinition/crd.registrar.js';

/** The apiextensions.k8s.io/v1 kinds. */
export const APIEXTENSIONS_KINDS: readonly KindDeclaration[] = [customResourceDefinitionKind];

/** Provides CustomResourceDefinition and what serves the custom resources. */
@Module({ providers: [apiKinds('apiextensions.k8s.io', APIEXTENSIONS_KINDS), CustomResourceRegistrar, CrdControllersRunner] })
export class ApiextensionsGroupModule {}
