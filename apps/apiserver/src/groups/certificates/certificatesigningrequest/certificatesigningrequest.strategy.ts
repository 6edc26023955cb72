/**
 * CertificateSigningRequest behaviour (pkg/registry/certificates/certificates strategy.go and
 * pkg/apis/certificates/validation): the creator's identity is written into spec on create and
 * spec never changes afterwards; the main resource changes metadata only; `approval` changes
 * only the Approved/Denied conditions, `status` only the certificate and other conditions.
 * Signature verification of the request is asynchronous (WebCrypto) and runs in the
 * CertificateSigningRequestValidation admission step; everything here is synchronous.
 */
import { formatMetaTime, isDNS1123Label, isDNS1123Subdomain, type FieldError, type KubeObject } from '@app/apimachinery';
import { ALL_USAGES, isCertificateBundle } from '@app/pki';
import { STATUS_STRATEGY, type RequestContext, type Strategy, type SubresourceStrategy } from '@app/registry';
import { LEGACY_UNKNOWN } from './certificatesigningrequest.signers.js';

type Condition = { type?: string; status?: string; reason?: string; message?: string; lastUpdateTime?: string; lastTransitionTime?: string };

const asMap = (v: unknown): Record<string, unknown> => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});

/** The conditions of a CSR's status (an empty list when absent). */
export function conditionsOf(obj: KubeObject): Condition[] {
  const c = asMap(obj.status).conditions;
  return Array.isArray(c) ? (c as Condition[]) : [];
}

/** The condition of `type` with status True, if any. */
export function trueCondition(obj: KubeObject, type: string): Condition | undefined {
  return conditionsOf(obj).find((c) => c.type === type && c.status === 'True');
}

/** The PEM text of a base64 `bytes` field ('' when absent). */
export function pemOf(b64: unknown): string {
  return typeof b64 === 'string' ? Buffer.from(b64, 'base64').toString('utf8') : '';
}

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----\r?\n[\s\S]*?-----END \1-----/;

/** ValidateSignerName: `<domain>/<path>`, the domain DNS labels with a dot, the path DNS subdomains. */
export function validateSignerName(signerName: unknown, field = 'spec.signerName'): FieldError[] {
  if (typeof signerName !== 'string' || signerName === '') return [{ type: 'FieldValueRequired', field, detail: '' }];
  const segments = signerName.split('/');
  if (segments.length !== 2) {
    return [{ type: 'FieldValueInvalid', field, value: signerName, detail: "must be a fully qualified domain and path of the form 'example.com/signer-name'" }];
  }
  const [domain, path] = segments as [string, string];
  const errs: FieldError[] = [];
  if (domain.length > 253) errs.push({ type: 'FieldValueTooLong', field, detail: 'may not be more than 253 bytes' });
  const labels = domain.split('.');
  for (const l of labels) {
    const e = isDNS1123Label(l);
    if (e.length > 0) {
      for (const m of e) errs.push({ type: 'FieldValueInvalid', field, value: domain, detail: `validating label "${l}": ${m}` });
      break;
    }
  }
  if (labels.length < 2)
    errs.push({ type: 'FieldValueInvalid', field, value: domain, detail: 'should be a domain with at least two segments separated by dots' });
  for (const l of path.split('.')) {
    const e = isDNS1123Subdomain(l);
    if (e.length > 0) {
      for (const m of e) errs.push({ type: 'FieldValueInvalid', field, value: path, detail: `validating component "${l}": ${m}` });
      break;
    }
  }
  if (signerName.length > 571) errs.push({ type: 'FieldValueTooLong', field, detail: 'may not be more than 571 bytes' });
  return errs;
}

/** Approved and Denied must be True, at most one condition per type, never both Approved and Denied. */
function validateConditions(obj: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  conditionsOf(obj).forEach((c, i) => {
    const f = `status.conditions[${i}]`;
    if (!c.type) errs.push({ type: 'FieldValueRequired', field: `${f}.type`, detail: '' });
    if (c.type && seen.has(c.type)) errs.push({ type: 'FieldValueDuplicate', field: `${f}.type`, value: c.type, detail: '' });
    if (c.type) seen.add(c.type);
    if (c.type === 'Approved' || c.type === 'Denied' || c.type === 'Failed') {
      if (c.status !== 'True') {
        errs.push({ type: 'FieldValueNotSupported', field: `${f}.status`, value: c.status ?? '', detail: 'supported values: "True"' });
      }
    } else if (c.status !== undefined && c.status !== 'True' && c.status !== 'False' && c.status !== 'Unknown') {
      errs.push({ type: 'FieldValueNotSupported', field: `${f}.status`, value: c.status, detail: 'supported values: "False", "True", "Unknown"' });
    }
  });
  if (seen.has('Approved') && seen.has('Denied')) {
    errs.push({ type: 'FieldValueInvalid', field: 'status.conditions', detail: 'Approved and Denied conditions are mutually exclusive' });
  }
  const cert = asMap(obj.status).certificate;
  if (typeof cert === 'string' && cert !== '' && !isCertificateBundle(pemOf(cert))) {
    errs.push({
      type: 'FieldValueInvalid',
      field: 'status.certificate',
      value: '<certificate data>',
      detail: 'must contain at least one CERTIFICATE PEM block, and only CERTIFICATE PEM blocks that parse',
    });
  }
  return errs;
}

/** validateCertificateSigningRequest for certificates.k8s.io/v1 (the request's signature aside). */
export function validateCsr(obj: KubeObject): FieldError[] {
  const spec = asMap(obj.spec);
  const errs: FieldError[] = [];
  const pem = pemOf(spec.request);
  if (pem === '') errs.push({ type: 'FieldValueRequired', field: 'spec.request', detail: '' });
  else {
    const m = PEM_BLOCK.exec(pem);
    if (!m || m[1] !== 'CERTIFICATE REQUEST')
      errs.push({ type: 'FieldValueInvalid', field: 'spec.request', detail: 'PEM block type must be CERTIFICATE REQUEST' });
  }
  errs.push(...validateSignerName(spec.signerName));
  if (spec.signerName === LEGACY_UNKNOWN) {
    errs.push({
      type: 'FieldValueInvalid',
      field: 'spec.signerName',
      value: LEGACY_UNKNOWN,
      detail: 'the legacy signerName is not allowed via this API version',
    });
  }
  if (typeof spec.expirationSeconds === 'number' && spec.expirationSeconds < 600) {
    errs.push({
      type: 'FieldValueInvalid',
      field: 'spec.expirationSeconds',
      value: spec.expirationSeconds,
      detail: 'may not specify a duration less than 600 seconds (10 minutes)',
    });
  }
  const usages = Array.isArray(spec.usages) ? (spec.usages as string[]) : [];
  if (usages.length === 0) errs.push({ type: 'FieldValueRequired', field: 'spec.usages', detail: 'usages must be provided' });
  const seen = new Set<string>();
  usages.forEach((u, i) => {
    if (!ALL_USAGES.includes(u)) {
      errs.push({
        type: 'FieldValueNotSupported',
        field: `spec.usages[${i}]`,
        value: u,
        detail: `supported values: ${[...ALL_USAGES]
          .sort()
          .map((x) => `"${x}"`)
          .join(', ')}`,
      });
    } else if (seen.has(u)) {
      errs.push({ type: 'FieldValueDuplicate', field: `spec.usages[${i}]`, value: u, detail: '' });
    }
    seen.add(u);
  });
  errs.push(...validateConditions(obj));
  return errs;
}

/** The creator's identity, written into spec (strategy.go PrepareForCreate). */
function setRequestor(obj: KubeObject, ctx: RequestContext): void {
  const spec = { ...asMap(obj.spec) };
  delete spec.username;
  delete spec.uid;
  delete spec.groups;
  delete spec.extra;
  const u = ctx.user;
  if (u.username) spec.username = u.username;
  if (u.uid) spec.uid = u.uid;
  if (u.groups.length > 0) spec.groups = [...u.groups];
  if (u.extra && Object.keys(u.extra).length > 0) spec.extra = structuredClone(u.extra);
  obj.spec = spec;
}

/**
 * Fills lastUpdateTime (and lastTransitionTime of a new or changed condition) as
 * populateConditionTimestamps does. The old conditions are indexed by type (the first of each,
 * as a search from the start finds), so each condition finds its old one in one lookup.
 */
function stampConditions(obj: KubeObject, old: KubeObject | undefined, now: Date, owned: (type: string | undefined) => boolean): void {
  const ts = formatMetaTime(now);
  const before = new Map<string | undefined, Condition>();
  for (const p of old ? conditionsOf(old) : []) if (!before.has(p.type)) before.set(p.type, p);
  for (const c of conditionsOf(obj)) {
    if (!owned(c.type)) continue;
    c.lastUpdateTime ??= ts;
    if (!c.lastTransitionTime) {
      const prev = before.get(c.type);
      c.lastTransitionTime = prev && prev.status === c.status && prev.lastTransitionTime ? prev.lastTransitionTime : ts;
    }
  }
}

/** Conditions of `types` in `from`, kept exactly as they were (the other subresource owns them). */
function carryConditions(obj: KubeObject, from: KubeObject, keep: (type: string | undefined) => boolean): void {
  const mine = conditionsOf(obj).filter((c) => !keep(c.type));
  const theirs = conditionsOf(from).filter((c) => keep(c.type));
  const status = { ...asMap(obj.status), conditions: [...theirs, ...mine] };
  if (status.conditions.length === 0) delete (status as Record<string, unknown>).conditions;
  obj.status = status;
}

const isApproval = (t: string | undefined): boolean => t === 'Approved' || t === 'Denied';

/** The CertificateSigningRequest strategy (main resource). */
export const csrStrategy: Strategy = {
  prepareForCreate(obj, ctx) {
    setRequestor(obj, ctx);
    delete obj.status;
  },
  prepareForUpdate(obj, old) {
    obj.spec = structuredClone(old.spec);
    obj.status = structuredClone(old.status);
    if (obj.status === undefined) delete obj.status;
  },
  validate: validateCsr,
  validateUpdate: (obj) => validateCsr(obj),
};

/** Approved/Denied may be neither removed nor changed once set (ValidateCertificateSigningRequestApprovalUpdate). */
function validateApprovalKept(obj: KubeObject, old: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  for (const t of ['Approved', 'Denied']) {
    if (trueCondition(old, t) && !trueCondition(obj, t)) {
      errs.push({ type: 'FieldValueForbidden', field: 'status.conditions', detail: `updates may not remove a condition of type "${t}"` });
    }
  }
  return errs;
}

/**
 * /approval: only the Approved and Denied conditions change (spec and the certificate stay);
 * timestamps are filled in. Who may approve for which signer is the CertificateApproval
 * admission plugin's check.
 */
export const csrApprovalStrategy: SubresourceStrategy = {
  prepareForUpdate(obj, old, ctx) {
    const approvals = structuredClone(conditionsOf(obj).filter((c) => isApproval(c.type)));
    STATUS_STRATEGY.prepareForUpdate(obj, old, ctx);
    const status: Record<string, unknown> = structuredClone(asMap(old.status));
    const conditions = [...approvals, ...structuredClone(conditionsOf(old).filter((c) => !isApproval(c.type)))];
    if (conditions.length > 0) status.conditions = conditions;
    else delete status.conditions;
    obj.status = status;
    stampConditions(obj, old, ctx.now(), isApproval);
  },
  validateUpdate(obj, old) {
    return [...validateConditions(obj), ...validateApprovalKept(obj, old)];
  },
};

/**
 * /status: the certificate and the non-approval conditions (Failed, ...) change; Approved and
 * Denied stay as stored. An issued certificate cannot be replaced, and none can be set on a
 * request that is not approved or that was denied or failed. Who may sign for which signer is
 * the CertificateSigning admission plugin's check.
 */
export const csrStatusStrategy: SubresourceStrategy = {
  prepareForUpdate(obj, old, ctx) {
    STATUS_STRATEGY.prepareForUpdate(obj, old, ctx);
    carryConditions(obj, old, isApproval);
    stampConditions(obj, old, ctx.now(), (t) => !isApproval(t));
  },
  validateUpdate(obj, old) {
    const errs = validateConditions(obj);
    const cert = asMap(obj.status).certificate;
    const oldCert = asMap(old.status).certificate;
    if (oldCert && cert !== oldCert) {
      errs.push({
        type: 'FieldValueInvalid',
        field: 'status.certificate',
        value: '<certificate data>',
        detail: 'updates may not modify existing certificate content',
      });
    } else if (cert && !oldCert) {
      if (!trueCondition(obj, 'Approved'))
        errs.push({
          type: 'FieldValueInvalid',
          field: 'status.certificate',
          value: '<certificate data>',
          detail: 'certificate cannot be set unless the Approved condition exists',
        });
      else if (trueCondition(obj, 'Denied') || trueCondition(obj, 'Failed')) {
        errs.push({
          type: 'FieldValueInvalid',
          field: 'status.certificate',
          value: '<certificate data>',
          detail: 'certificate cannot be set if the Denied or Failed condition exists',
        });
      }
    }
    return errs;
  },
};
