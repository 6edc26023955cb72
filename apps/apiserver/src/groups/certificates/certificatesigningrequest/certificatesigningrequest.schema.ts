/**
 * Schema of certificates.k8s.io/v1 CertificateSigningRequest with Kubernetes' field names and
 * types (k8s.io/api/certificates/v1 types.go), registered under its definition names.
 */
import { defineSchema, fieldOf, objectRootSchema, TimeSchema, type JSONSchemaProps } from '@app/apimachinery';

const DEF = 'io.k8s.api.certificates.v1';
const str = (description: string): JSONSchemaProps => ({ type: 'string', description });
const time = (description: string): JSONSchemaProps => fieldOf(TimeSchema, { description });

/** certificates/v1 CertificateSigningRequestCondition. */
export const CsrConditionSchema = defineSchema(`${DEF}.CertificateSigningRequestCondition`, {
  type: 'object',
  description: 'One condition of a request: Approved, Denied or Failed.',
  required: ['type', 'status'],
  properties: {
    lastTransitionTime: time('When the status of the condition last changed.'),
    lastUpdateTime: time('When the condition was last updated.'),
    message: str('Human-readable details.'),
    reason: str('Brief machine-readable reason, e.g. KubectlApprove or SignerValidationFailure.'),
    status: str('True, False or Unknown; Approved and Denied must be True.'),
    type: str('Approved, Denied or Failed (other types are kept as they are).'),
  },
});

/** certificates/v1 CertificateSigningRequestSpec. */
export const CsrSpecSchema = defineSchema(`${DEF}.CertificateSigningRequestSpec`, {
  type: 'object',
  description: 'The request and what it asks for. Immutable after creation; username, uid, groups and extra are set by the server from the creator.',
  required: ['request', 'signerName'],
  properties: {
    expirationSeconds: {
      type: 'integer',
      format: 'int32',
      description: 'Requested lifetime of the certificate, at least 600. The signer issues min(this, its configured duration).',
    },
    extra: {
      type: 'object',
      description: 'Extra attributes of the creator. Set by the server.',
      additionalProperties: { type: 'array', items: { type: 'string' } },
    },
    groups: { type: 'array', description: 'Groups of the creator. Set by the server.', items: { type: 'string' }, 'x-kubernetes-list-type': 'atomic' },
    request: { type: 'string', format: 'byte', description: 'A PEM-encoded PKCS#10 certificate request (base64 in JSON).' },
    signerName: str('The signer asked to sign, e.g. kubernetes.io/kube-apiserver-client: a domain and a path.'),
    uid: str('UID of the creator. Set by the server.'),
    usages: {
      type: 'array',
      description: 'Key usages and extended key usages asked for, e.g. "digital signature", "key encipherment", "client auth".',
      items: { type: 'string' },
      'x-kubernetes-list-type': 'atomic',
    },
    username: str('Name of the creator. Set by the server.'),
  },
});

/** certificates/v1 CertificateSigningRequestStatus. */
export const CsrStatusSchema = defineSchema(`${DEF}.CertificateSigningRequestStatus`, {
  type: 'object',
  description: 'Approval, denial or failure, and the issued certificate.',
  properties: {
    certificate: { type: 'string', format: 'byte', description: 'The issued PEM certificate(s), set by the signer through the status subresource.' },
    conditions: {
      type: 'array',
      description: 'Approved/Denied (through the approval subresource) and Failed (set by the signer).',
      items: CsrConditionSchema,
      'x-kubernetes-list-map-keys': ['type'],
      'x-kubernetes-list-type': 'map',
    },
  },
});

/** certificates/v1 CertificateSigningRequest (cluster-scoped). */
export const CertificateSigningRequestSchema: JSONSchemaProps = defineSchema(
  `${DEF}.CertificateSigningRequest`,
  objectRootSchema(
    { group: 'certificates.k8s.io', version: 'v1', kind: 'CertificateSigningRequest' },
    'A request for a certificate from a signer: created by a client, approved or denied through /approval, signed by the signer through /status.',
    {
      spec: fieldOf(CsrSpecSchema, { description: 'The request and what it asks for.' }),
      status: fieldOf(CsrStatusSchema, { description: 'Approval, denial, failure and the issued certificate.' }),
    },
    { required: ['spec'] },
  ),
);
