/**
 * The admission steps of the certificates API, as kube-apiserver's plugins of the same names
 * (plugin/pkg/admission/certificates):
 * - CertificateApproval: a write to `certificatesigningrequests/approval` needs the verb
 *   `approve` on resource `signers` (group certificates.k8s.io) named `<signerName>` or
 *   `<domain>/*` (conventions.md, Authorization).
 * - CertificateSigning: a write to `certificatesigningrequests/status` that changes
 *   `status.certificate` needs the verb `sign` on those signers.
 * - CertificateSubjectRestriction: the kube-apiserver-client signer is not asked for a
 *   certificate in group system:masters.
 * - CertificateSigningRequestValidation (required): the request's PKCS#10 self-signature is
 *   verified on create. Kubernetes does this in the CSR's validation; here verification is
 *   asynchronous (WebCrypto), so it runs as the first validating step.
 */
import { Inject, Injectable } from '@nestjs/common';
import { Errors, type KubeObject } from '@app/apimachinery';
import { type UserInfo } from '@app/auth';
import { AUTHORIZER, type Authorizer } from '@app/authz';
import { CsrError, parseCertificateRequest } from '@app/pki';
import type { Admission, AdmissionAttributes } from '@app/registry';
import { KUBE_APISERVER_CLIENT } from '../groups/certificates/certificatesigningrequest/certificatesigningrequest.signers.js';
import { pemOf } from '../groups/certificates/certificatesigningrequest/certificatesigningrequest.strategy.js';
import { AdmissionPlugin } from './admission.plugin.js';

const GROUP = 'certificates.k8s.io';
const GR = { group: GROUP, resource: 'certificatesigningrequests' };

const asMap = (v: unknown): Record<string, unknown> => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
const isCsr = (a: AdmissionAttributes): boolean => a.decl.group === GROUP && a.decl.kind === 'CertificateSigningRequest';
const signerOf = (o: KubeObject | undefined): string => String(asMap(o?.spec).signerName ?? '');

/**
 * Whether `user` may `verb` (approve, sign) for `signerName`: on `signers` named the signer
 * itself or `<domain>/*` (Kubernetes' IsAuthorizedForSignerName).
 */
export async function authorizedForSigner(authorizer: Authorizer, user: UserInfo, verb: string, signerName: string): Promise<boolean> {
  const names = [signerName];
  const slash = signerName.indexOf('/');
  if (slash > 0) names.push(`${signerName.slice(0, slash)}/*`);
  for (const name of names) {
    const d = await authorizer.authorize({
      user,
      verb,
      isResourceRequest: true,
      path: '',
      apiGroup: GROUP,
      apiVersion: '*',
      resource: 'signers',
      subresource: '',
      namespace: '',
      name,
    });
    if (d.decision === 'Allow') return true;
  }
  return false;
}

/** CertificateApproval: approving or denying needs `approve` on the signer. */
@AdmissionPlugin({ name: 'CertificateApproval', order: 6_000 })
@Injectable()
export class CertificateApprovalPlugin implements Admission {
  constructor(@Inject(AUTHORIZER) private readonly authorizer: Authorizer) {}

  async admit(): Promise<void> {}

  async validate(a: AdmissionAttributes): Promise<void> {
    if (!isCsr(a) || a.subresource !== 'approval' || a.operation !== 'UPDATE') return;
    const signer = signerOf(a.oldObject ?? a.object);
    if (await authorizedForSigner(this.authorizer, a.ctx.user, 'approve', signer)) return;
    throw Errors.forbidden(GR, a.name, `user not permitted to approve requests with signerName "${signer}"`);
  }
}

/** CertificateSigning: setting or changing status.certificate needs `sign` on the signer. */
@AdmissionPlugin({ name: 'CertificateSigning', order: 6_100 })
@Injectable()
export class CertificateSigningPlugin implements Admission {
  constructor(@Inject(AUTHORIZER) private readonly authorizer: Authorizer) {}

  async admit(): Promise<void> {}

  async validate(a: AdmissionAttributes): Promise<void> {
    if (!isCsr(a) || a.subresource !== 'status' || a.operation !== 'UPDATE') return;
    if ((asMap(a.object?.status).certificate ?? '') === (asMap(a.oldObject?.status).certificate ?? '')) return;
    const signer = signerOf(a.oldObject ?? a.object);
    if (await authorizedForSigner(this.authorizer, a.ctx.user, 'sign', signer)) return;
    throw Errors.forbidden(GR, a.name, `user not permitted to sign requests with signerName "${signer}"`);
  }
}

/** CertificateSubjectRestriction: no system:masters certificates from the kube-apiserver-client signer. */
@AdmissionPlugin({ name: 'CertificateSubjectRestriction', order: 6_200 })
@Injectable()
export class CertificateSubjectRestrictionPlugin implements Admission {
  async admit(): Promise<void> {}

  async validate(a: AdmissionAttributes): Promise<void> {
    if (!isCsr(a) || a.subresource !== '' || a.operation !== 'CREATE' || signerOf(a.object) !== KUBE_APISERVER_CLIENT) return;
    let orgs: readonly string[];
    try {
      orgs = (await parseCertificateRequest(pemOf(asMap(a.object?.spec).request))).organizations;
    } catch {
      return; // CertificateSigningRequestValidation reports it
    }
    if (orgs.includes('system:masters')) {
      throw Errors.forbidden(GR, a.name, `use of ${KUBE_APISERVER_CLIENT} signer with system:masters group is not allowed`);
    }
  }
}

/** The request's signature, verified on create (422 on spec.request when it does not verify). */
@AdmissionPlugin({ name: 'CertificateSigningRequestValidation', order: 5_900, required: true })
@Injectable()
export class CertificateRequestValidationPlugin implements Admission {
  async admit(): Promise<void> {}

  async validate(a: AdmissionAttributes): Promise<void> {
    if (!isCsr(a) || a.subresource !== '' || a.operation !== 'CREATE' || !a.object) return;
    try {
      await parseCertificateRequest(pemOf(asMap(a.object.spec).request));
    } catch (e) {
      if (!(e instanceof CsrError)) throw e;
      throw Errors.invalid(GROUP, 'CertificateSigningRequest', a.name || (a.object.metadata.name ?? ''), [
        { type: 'FieldValueInvalid', field: 'spec.request', detail: e.message },
      ]);
    }
  }
}
