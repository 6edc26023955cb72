/**
 * The rules of the certificates API and of the Node, Service and Endpoints kinds (resources
 * "CertificateSigningRequest", "Delete response bodies"; conventions "CertificateSigningRequest
 * lifecycle", admission table TaintNodesByCondition; upstream pkg/apis/certificates/validation,
 * pkg/apis/core/validation).
 */
import type { RowGroup } from './conformance.types.js';

const NS = 'cf-certs';
const CSRS = '/apis/certificates.k8s.io/v1/certificatesigningrequests';
const NODES = '/api/v1/nodes';
const SVCS = `/api/v1/namespaces/${NS}/services`;
const EPS = `/api/v1/namespaces/${NS}/endpoints`;

/** A fixed PKCS#10 request (openssl req -new, EC P-256, /O=dev/CN=conformance). */
const REQUEST_PEM = [
  '-----BEGIN CERTIFICATE REQUEST-----',
  'MIHeMIGGAgEAMCQxDDAKBgNVBAoMA2RldjEUMBIGA1UEAwwLY29uZm9ybWFuY2Uw',
  'WTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAARrVIdkBk6I+atMoSeTGJZQJa+RuvmC',
  'm6xSWLrkDCyMIwZUzAyg5on5XF0mMv1+bnOJf+QTh1SqxD5SmX8lNLnSoAAwCgYI',
  'KoZIzj0EAwIDRwAwRAIgRq6pxLcBMU0wrs4reEDSDGkTHlyJNafvOgT3km8qvSEC',
  'ICAsD5/hjtKTbxIocsaqHUdoZ+Ft2n39MIDM2m9+AW1n',
  '-----END CERTIFICATE REQUEST-----',
  '',
].join('\n');
/** The same request with one byte of its signature flipped. */
const FORGED_PEM =
  '-----BEGIN CERTIFICATE REQUEST-----\nMIHeMIGGAgEAMCQxDDAKBgNVBAoMA2RldjEUMBIGA1UEAwwLY29uZm9ybWFuY2UwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAARrVIdkBk6I+atMoSeTGJZQJa+RuvmCm6xSWLrkDCyMIwZUzAyg5on5XF0mMv1+bnOJf+QTh1SqxD5SmX8lNLnSoAAwCgYIKoZIzj0EAwIDRwAwRAIgRq6pxLcBMU0wrs4reEDSDGkTHlyJNafvOgT3km8qvSECICAsD5/hjtKTbxIocsaqHUdoZ+Ft2n39MIDM2pB+AW1n\n-----END CERTIFICATE REQUEST-----\n';

const b64 = (s: string): string => Buffer.from(s).toString('base64');
const csr = (name: string, spec: Record<string, unknown>) => ({
  apiVersion: 'certificates.k8s.io/v1',
  kind: 'CertificateSigningRequest',
  metadata: { name },
  spec: { request: b64(REQUEST_PEM), signerName: 'example.com/signer', usages: ['client auth'], ...spec },
});
const approved = (name: string, conditions: Array<Record<string, string>>) => ({
  ...csr(name, {}),
  status: { conditions },
});

/** The group. */
export const CERTIFICATES: RowGroup = {
  name: 'certificates',
  namespace: NS,
  rows: [
    {
      id: 'cert-01',
      rule: 'CSR spec.username/groups come from the creator, whatever the body says',
      source: 'resources CertificateSigningRequest (username, uid, groups, extra filled by the server)',
      upstream: '201, spec.username the requesting user',
      req: { method: 'POST', path: CSRS, body: csr('c1', { username: 'someone-else', groups: ['x'] }) },
      expect: { status: 201, body: { spec: { username: 'kubernetes-admin', groups: ['system:masters', 'system:authenticated'] } }, absent: ['status'] },
    },
    {
      id: 'cert-02',
      rule: 'CSR signerName legacy-unknown is refused in certificates.k8s.io/v1',
      source: 'resources CertificateSigningRequest signer table (legacy-unknown)',
      upstream: '422 Invalid "spec.signerName: Invalid value: \\"kubernetes.io/legacy-unknown\\": the legacy signerName is not allowed via this API version"',
      req: { method: 'POST', path: CSRS, body: csr('c2', { signerName: 'kubernetes.io/legacy-unknown' }) },
      expect: {
        status: 422,
        reason: 'Invalid',
        message: /spec\.signerName: Invalid value: "kubernetes\.io\/legacy-unknown": the legacy signerName is not allowed via this API version/,
      },
    },
    {
      id: 'cert-03',
      rule: 'CSR expirationSeconds is at least 600',
      source: 'resources CertificateSigningRequest (expirationSeconds minimum 600)',
      upstream: '422 Invalid "spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 600 seconds (10 minutes)"',
      req: { method: 'POST', path: CSRS, body: csr('c3', { expirationSeconds: 599 }) },
      expect: {
        status: 422,
        reason: 'Invalid',
        message: /spec\.expirationSeconds: Invalid value: 599: may not specify a duration less than 600 seconds \(10 minutes\)/,
      },
    },
    {
      id: 'cert-04',
      rule: 'CSR request must be a PEM CERTIFICATE REQUEST',
      source: 'conventions CertificateSigningRequest lifecycle (create: PEM-encoded PKCS#10)',
      upstream: '422 Invalid "spec.request: Invalid value: []byte{...}: PEM block type must be CERTIFICATE REQUEST"',
      divergence: 'the value is not repeated in the message (it is the whole request)',
      req: { method: 'POST', path: CSRS, body: csr('c4', { request: b64('hello') }) },
      expect: { status: 422, reason: 'Invalid', message: /spec\.request: Invalid value: PEM block type must be CERTIFICATE REQUEST/ },
    },
    {
      id: 'cert-05',
      rule: 'CSR request signature must verify',
      source: 'issue: create parses the PKCS#10 request and verifies its signature',
      upstream: '422 Invalid "spec.request: Invalid value: []byte{...}: x509: ECDSA verification failure"',
      divergence: "the verification failure is worded by the WebCrypto check, not Go's crypto/x509",
      req: { method: 'POST', path: CSRS, body: csr('c5', { request: b64(FORGED_PEM) }) },
      expect: { status: 422, reason: 'Invalid', message: /spec\.request: Invalid value: x509: signature of the certificate request does not verify/ },
    },
    {
      id: 'cert-06',
      rule: 'CSR usages must be known',
      source: 'resources CertificateSigningRequest (usages list)',
      upstream: '422 Invalid "spec.usages[0]: Unsupported value: \\"flying\\": supported values: ..."',
      req: { method: 'POST', path: CSRS, body: csr('c6', { usages: ['flying'] }) },
      expect: { status: 422, reason: 'Invalid', message: /spec\.usages\[0\]: Unsupported value: "flying": supported values: "any", "cert sign"/ },
    },
    {
      id: 'cert-07',
      rule: 'CSR approval: Approved and Denied are mutually exclusive',
      source: 'conventions CertificateSigningRequest lifecycle (Pending -> Approved or Denied)',
      upstream: '422 Invalid "status.conditions: Invalid value: ...: Approved and Denied conditions are mutually exclusive"',
      setup: [{ method: 'POST', path: CSRS, body: csr('c7', {}) }],
      req: {
        method: 'PUT',
        path: `${CSRS}/c7/approval`,
        body: approved('c7', [
          { type: 'Approved', status: 'True', reason: 'A' },
          { type: 'Denied', status: 'True', reason: 'D' },
        ]),
      },
      expect: { status: 422, reason: 'Invalid', message: /status\.conditions: Invalid value: Approved and Denied conditions are mutually exclusive/ },
    },
    {
      id: 'cert-08',
      rule: 'CSR approval changes only conditions: spec and certificate stay',
      source: 'issue: approval/denial only through the approval subresource',
      upstream: '200, spec.usages unchanged, Approved condition with lastUpdateTime',
      setup: [{ method: 'POST', path: CSRS, body: csr('c8', {}) }],
      req: {
        method: 'PUT',
        path: `${CSRS}/c8/approval`,
        body: { ...approved('c8', [{ type: 'Approved', status: 'True', reason: 'A' }]), spec: { ...csr('c8', {}).spec, usages: ['server auth'] } },
      },
      expect: { status: 200, body: { spec: { usages: ['client auth'] }, status: { conditions: [{ type: 'Approved', status: 'True', reason: 'A' }] } } },
    },
    {
      id: 'cert-09',
      rule: 'CSR status: a certificate that is not PEM CERTIFICATE blocks is refused',
      source: 'resources CertificateSigningRequest (status.certificate holds the issued PEM)',
      upstream: '422 Invalid "status.certificate: Invalid value: \\"<certificate data>\\": ..."',
      setup: [{ method: 'POST', path: CSRS, body: csr('c9', {}) }],
      req: { method: 'PUT', path: `${CSRS}/c9/status`, body: { ...csr('c9', {}), status: { certificate: b64('junk') } } },
      expect: { status: 422, reason: 'Invalid', message: /status\.certificate: Invalid value: "<certificate data>"/ },
    },
    {
      id: 'cert-10',
      rule: 'New Node gets the not-ready NoSchedule taint',
      source: 'conventions admission table (TaintNodesByCondition)',
      upstream: '201, spec.taints [{key: node.kubernetes.io/not-ready, effect: NoSchedule}]',
      req: { method: 'POST', path: NODES, body: { apiVersion: 'v1', kind: 'Node', metadata: { name: 'cf-node-1' } } },
      expect: { status: 201, body: { spec: { taints: [{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }] } } },
    },
    {
      id: 'cert-11',
      rule: 'Node taint effect must be known',
      source: 'upstream validateNodeTaints',
      upstream: '422 Invalid "spec.taints[0].effect: Unsupported value: \\"Sometimes\\": supported values: ..."',
      req: {
        method: 'POST',
        path: NODES,
        body: { apiVersion: 'v1', kind: 'Node', metadata: { name: 'cf-node-2' }, spec: { taints: [{ key: 'a', effect: 'Sometimes' }] } },
      },
      expect: { status: 422, reason: 'Invalid', message: /spec\.taints\[0\]\.effect: Unsupported value: "Sometimes"/ },
    },
    {
      id: 'cert-12',
      rule: 'Service needs ports (unless headless or ExternalName)',
      source: 'upstream ValidateService',
      upstream: '422 Invalid "spec.ports: Required value"',
      req: { method: 'POST', path: SVCS, body: { apiVersion: 'v1', kind: 'Service', metadata: { name: 's1' }, spec: { selector: { app: 'x' } } } },
      expect: { status: 422, reason: 'Invalid', message: /spec\.ports: Required value/ },
    },
    {
      id: 'cert-13',
      rule: 'Service delete answers with the deleted object',
      source: 'upstream service storage (ReturnDeletedObject)',
      upstream: '200, the Service',
      setup: [{ method: 'POST', path: SVCS, body: { apiVersion: 'v1', kind: 'Service', metadata: { name: 's2' }, spec: { ports: [{ port: 80 }] } } }],
      req: { method: 'DELETE', path: `${SVCS}/s2` },
      expect: { status: 200, body: { kind: 'Service', metadata: { name: 's2' }, spec: { ports: [{ port: 80, protocol: 'TCP', targetPort: 80 }] } } },
    },
    {
      id: 'cert-14',
      rule: 'Endpoints addresses may not be loopback',
      source: 'upstream ValidateEndpoints (validateNonSpecialIP)',
      upstream: '422 Invalid "subsets[0].addresses[0].ip: Invalid value: \\"127.0.0.1\\": may not be in the loopback range (127.0.0.0/8, ::1/128)"',
      req: {
        method: 'POST',
        path: EPS,
        body: { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'e1' }, subsets: [{ addresses: [{ ip: '127.0.0.1' }] }] },
      },
      expect: { status: 422, reason: 'Invalid', message: /subsets\[0\]\.addresses\[0\]\.ip: Invalid value: "127\.0\.0\.1": may not be in the loopback range/ },
    },
    {
      id: 'cert-15',
      rule: 'CSR names are free-form (any path segment)',
      source: 'upstream ValidateCertificateRequestName',
      upstream: '201',
      req: { method: 'POST', path: CSRS, body: csr('Node_Client:worker-3', {}) },
      expect: { status: 201, body: { metadata: { name: 'Node_Client:worker-3' } } },
    },
  ],
};
