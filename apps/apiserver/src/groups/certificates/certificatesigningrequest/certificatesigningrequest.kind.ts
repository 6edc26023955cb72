/**
 * certificates.k8s.io/v1 CertificateSigningRequest (cluster-scoped): its declaration, with
 * kubectl's columns (NAME AGE SIGNERNAME REQUESTOR REQUESTEDDURATION CONDITION,
 * pkg/printers/internalversion), the `spec.signerName` field selector, and the `approval` and
 * `status` subresources.
 */
import { ageOf, humanDuration, type KindDeclaration } from '@app/registry';
import { CertificateSigningRequestSchema } from './certificatesigningrequest.schema.js';
import { conditionsOf, csrApprovalStrategy, csrStatusStrategy, csrStrategy } from './certificatesigningrequest.strategy.js';

const asMap = (v: unknown): Record<string, unknown> => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});

/** kubectl's CONDITION cell: Denied, else Approved, else Pending; then ",Failed" and ",Issued". */
export function csrConditionCell(obj: Parameters<typeof conditionsOf>[0]): string {
  const types = new Set(conditionsOf(obj).map((c) => c.type));
  let s = types.has('Denied') ? 'Denied' : types.has('Approved') ? 'Approved' : 'Pending';
  if (types.has('Failed')) s += ',Failed';
  const cert = asMap(obj.status).certificate;
  if (typeof cert === 'string' && cert !== '') s += ',Issued';
  return s;
}

/** The CertificateSigningRequest declaration. */
export const certificateSigningRequestKind: KindDeclaration = {
  group: 'certificates.k8s.io',
  version: 'v1',
  kind: 'CertificateSigningRequest',
  plural: 'certificatesigningrequests',
  singular: 'certificatesigningrequest',
  shortNames: ['csr'],
  namespaced: false,
  // ValidateCertificateRequestName accepts any name ("We don't care what you call your
  // certificate requests"); only what a URL path segment cannot hold is refused.
  nameValidation: 'pathSegment',
  schema: CertificateSigningRequestSchema,
  protobufMessage: 'k8s.io.api.certificates.v1.CertificateSigningRequest',
  strategy: csrStrategy,
  subresources: {
    approval: { verbs: ['get', 'patch', 'update'], strategy: csrApprovalStrategy },
    status: { verbs: ['get', 'patch', 'update'], strategy: csrStatusStrategy },
  },
  // The CSR strategy sets no generation.
  generation: 'none',
  tableColumns: [
    { name: 'Age', type: 'string', priority: 0, description: 'Time since creation', cell: (o, now) => ageOf(o, now) },
    { name: 'SignerName', type: 'string', priority: 0, description: 'The signer asked to sign', cell: (o) => asMap(o.spec).signerName ?? '' },
    { name: 'Requestor', type: 'string', priority: 0, description: 'Who created the request', cell: (o) => asMap(o.spec).username ?? '' },
    {
      name: 'RequestedDuration',
      type: 'string',
      priority: 0,
      description: 'The lifetime asked for (spec.expirationSeconds)',
      cell: (o) => {
        const s = asMap(o.spec).expirationSeconds;
        return typeof s === 'number' ? humanDuration(s * 1000) : '<none>';
      },
    },
    { name: 'Condition', type: 'string', priority: 0, description: 'Pending, Approved or Denied, then Failed and Issued', cell: (o) => csrConditionCell(o) },
  ],
  fieldSelectors: { 'spec.signerName': (o) => String(asMap(o.spec).signerName ?? '') },
};
