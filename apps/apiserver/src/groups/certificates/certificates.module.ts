/**
 * The certificates.k8s.io API group (`/apis/certificates.k8s.io/v1`). A kind is one folder here;
 * CERTIFICATES_KINDS is the one list of the group's kinds.
 */
import { Module } from '@nestjs/common';
import type { KindDeclaration } from '@app/registry';
import { apiKinds } from '../api-group.js';
import { certificateSigningRequestKind } from './certificatesigningrequest/certificatesigningrequest.kind.js';

/** The certificates.k8s.io/v1 kinds. */
export const CERTIFICATES_KINDS: readonly KindDeclaration[] = [certificateSigningRequestKind];

/** Provides the certificates.k8s.io/v1 kinds. */
@Module({ providers: [apiKinds('certificates.k8s.io', CERTIFICATES_KINDS)] })
export class CertificatesGroupModule {}
