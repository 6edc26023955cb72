/**
 * Pod validation (pkg/apis/core/validation ValidatePodCreate/ValidatePodUpdate): containers
 * (names, images, ports, resources, volume mounts), restart policy, and the volumes through the
 * shared Volume source module. Messages and field paths are Kubernetes'.
 */
import { isDeepStrictEqual } from 'node:util';
import { canonicalJson, isDNS1123Label, parseQuantity, Quantity, type FieldError } from '@app/apimachinery';
import { asMap } from '../core.helpers.js';
import { validateVolumes } from '../volume/volume.validation.js';

type Obj = Record<string, unknown>;
const list = (v: unknown): Obj[] => (Array.isArray(v) ? v.map(asMap) : []);
const PORT_RANGE = 'must be between 1 and 65535, inclusive';
const RESTART_POLICIES = ['Always', 'OnFailure', 'Never'];
// IANA service names (validation.IsValidPortName).
const PORT_NAME_CHARS = /^[-a-z0-9]+$/;
const PORT_NAME_LETTER = /[a-z]/;

/** validation.IsValidPortName's messages for `name`. */
export function portNameErrors(name: string): string[] {
  const errs: string[] = [];
  if (name.length > 15) errs.push('must be no more than 15 characters');
  if (!PORT_NAME_CHARS.test(name)) errs.push('must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)');
  if (name.includes('--')) errs.push('must not contain consecutive hyphens');
  if (!PORT_NAME_LETTER.test(name)) errs.push('must contain at least one letter (a-z)');
  if (name.startsWith('-') || name.endsWith('-')) errs.push('must not begin or end with a hyphen');
  return errs;
}

function validatePorts(ports: Obj[], path: string, names: Set<string>): FieldError[] {
  const errs: FieldError[] = [];
  ports.forEach((p, i) => {
    const pp = `${path}[${i}]`;
    if (typeof p.name === 'string' && p.name !== '') {
      for (const m of portNameErrors(p.name)) errs.push({ type: 'FieldValueInvalid', field: `${pp}.name`, value: p.name, detail: m });
      if (names.has(p.name)) errs.push({ type: 'FieldValueDuplicate', field: `${pp}.name`, value: p.name, detail: '' });
      names.add(p.name);
    }
    const cp = p.containerPort;
    if (cp === undefined || cp === 0) errs.push({ type: 'FieldValueRequired', field: `${pp}.containerPort`, detail: '' });
    else if (typeof cp === 'number' && (cp < 1 || cp > 65535))
      errs.push({ type: 'FieldValueInvalid', field: `${pp}.containerPort`, value: cp, detail: PORT_RANGE });
    const hp = p.hostPort;
    if (typeof hp === 'number' && hp !== 0 && (hp < 1 || hp > 65535))
      errs.push({ type: 'FieldValueInvalid', field: `${pp}.hostPort`, value: hp, detail: PORT_RANGE });
  });
  return errs;
}

function quantities(m: unknown, path: string, errs: FieldError[]): Map<string, Quantity> {
  const out = new Map<string, Quantity>();
  for (const [k, v] of Object.entries(asMap(m))) {
    try {
      const q = parseQuantity(String(v));
      if (q.cmp(Quantity.fromInt(0)) < 0)
        errs.push({ type: 'FieldValueInvalid', field: `${path}[${k}]`, value: String(v), detail: 'must be greater than or equal to 0' });
      out.set(k, q);
    } catch {
      errs.push({ type: 'FieldValueInvalid', field: `${path}[${k}]`, value: v, detail: 'must be a valid resource quantity' });
    }
  }
  return out;
}

/** ValidateResourceRequirements: quantities >= 0 and each request at most its limit. */
function validateResources(res: Obj, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const limits = quantities(res.limits, `${path}.limits`, errs);
  const requests = quantities(res.requests, `${path}.requests`, errs);
  for (const [k, req] of requests) {
    const lim = limits.get(k);
    if (lim && req.cmp(lim) > 0) {
      errs.push({
        type: 'FieldValueInvalid',
        field: `${path}.requests`,
        value: req.toString(),
        detail: `must be less than or equal to ${k} limit of ${lim.toString()}`,
      });
    }
  }
  return errs;
}

function validateContainers(containers: Obj[], path: string, volumes: Set<string>, names: Set<string>, required: boolean): FieldError[] {
  const errs: FieldError[] = [];
  if (required && containers.length === 0) errs.push({ type: 'FieldValueRequired', field: path, detail: '' });
  containers.forEach((c, i) => {
    const cp = `${path}[${i}]`;
    const name = c.name;
    if (name === undefined || name === '') errs.push({ type: 'FieldValueRequired', field: `${cp}.name`, detail: '' });
    else {
      for (const m of isDNS1123Label(String(name))) errs.push({ type: 'FieldValueInvalid', field: `${cp}.name`, value: name, detail: m });
      if (names.has(String(name))) errs.push({ type: 'FieldValueDuplicate', field: `${cp}.name`, value: name, detail: '' });
      names.add(String(name));
    }
    if (c.image === undefined || c.image === '' || (typeof c.image === 'string' && c.image.trim() !== c.image)) {
      errs.push(
        c.image
          ? { type: 'FieldValueInvalid', field: `${cp}.image`, value: c.image, detail: 'must not have leading or trailing whitespace' }
          : { type: 'FieldValueRequired', field: `${cp}.image`, detail: '' },
      );
    }
    errs.push(...validatePorts(list(c.ports), `${cp}.ports`, new Set()));
    errs.push(...validateResources(asMap(c.resources), `${cp}.resources`));
    const mounts = new Set<string>();
    list(c.volumeMounts).forEach((m, j) => {
      const mp = `${cp}.volumeMounts[${j}]`;
      if (!m.name) errs.push({ type: 'FieldValueRequired', field: `${mp}.name`, detail: '' });
      else if (!volumes.has(String(m.name))) errs.push({ type: 'FieldValueNotFound', field: `${mp}.name`, value: m.name, detail: '' });
      if (!m.mountPath) errs.push({ type: 'FieldValueRequired', field: `${mp}.mountPath`, detail: '' });
      else if (mounts.has(String(m.mountPath)))
        errs.push({ type: 'FieldValueInvalid', field: `${mp}.mountPath`, value: m.mountPath, detail: 'must be unique' });
      else mounts.add(String(m.mountPath));
    });
    const env = new Set<string>();
    list(c.env).forEach((e, j) => {
      if (!e.name) errs.push({ type: 'FieldValueRequired', field: `${cp}.env[${j}].name`, detail: '' });
      env.add(String(e.name));
    });
  });
  return errs;
}

/**
 * The fields an ephemeral container may set (kube's allowedEphemeralContainerFields): it must not
 * take part in what the pod serves, so ports, probes, lifecycle hooks and resources are refused.
 */
const EPHEMERAL_ALLOWED = new Set([
  'name',
  'image',
  'command',
  'args',
  'workingDir',
  'envFrom',
  'env',
  'volumeMounts',
  'volumeDevices',
  'terminationMessagePath',
  'terminationMessagePolicy',
  'imagePullPolicy',
  'securityContext',
  'stdin',
  'stdinOnce',
  'tty',
  'targetContainerName',
]);

/** True for a value Go would leave at its zero value (absent, null, false, 0, '', empty list or object). */
function isZero(v: unknown): boolean {
  if (v === undefined || v === null || v === false || v === 0 || v === '') return true;
  if (Array.isArray(v)) return v.length === 0;
  if (typeof v === 'object') return Object.values(v as Obj).every(isZero);
  return false;
}

/**
 * validateEphemeralContainers: each is a container (name, image, mounts, env) whose name is
 * unique among all the pod's containers, whose target (if any) is a container or init
 * container of the pod, which sets only the allowed fields, and whose volume mounts use no
 * sub-path.
 */
function validateEphemeralContainers(spec: Obj, path: string, volumes: Set<string>, names: Set<string>): FieldError[] {
  const ephemeral = list(spec.ephemeralContainers);
  if (ephemeral.length === 0) return [];
  const others = new Set([...list(spec.containers), ...list(spec.initContainers)].map((c) => String(c.name ?? '')));
  const errs = validateContainers(ephemeral, path, volumes, names, false);
  ephemeral.forEach((c, i) => {
    const cp = `${path}[${i}]`;
    const target = c.targetContainerName;
    if (typeof target === 'string' && target !== '' && !others.has(target))
      errs.push({ type: 'FieldValueNotFound', field: `${cp}.targetContainerName`, value: target, detail: '' });
    for (const [k, v] of Object.entries(c)) {
      if (!EPHEMERAL_ALLOWED.has(k) && !isZero(v))
        errs.push({ type: 'FieldValueForbidden', field: `${cp}.${k}`, detail: 'cannot be set for an Ephemeral Container' });
    }
    list(c.volumeMounts).forEach((m, j) => {
      for (const k of ['subPath', 'subPathExpr']) {
        if (typeof m[k] === 'string' && m[k] !== '')
          errs.push({ type: 'FieldValueForbidden', field: `${cp}.volumeMounts[${j}].${k}`, detail: 'cannot be set for an Ephemeral Container' });
      }
    });
  });
  return errs;
}

/**
 * checkHostPortConflicts: one host port (with its protocol and host IP) taken by two ports of
 * the containers.
 */
function hostPortConflicts(containers: Obj[], path: string): FieldError[] {
  const errs: FieldError[] = [];
  const taken = new Set<string>();
  containers.forEach((c, ci) =>
    list(c.ports).forEach((p, pi) => {
      if (typeof p.hostPort !== 'number' || p.hostPort === 0) return;
      const key = `${String(p.protocol ?? 'TCP')}/${String(p.hostIP ?? '')}/${p.hostPort}`;
      if (taken.has(key)) errs.push({ type: 'FieldValueDuplicate', field: `${path}[${ci}].ports[${pi}].hostPort`, value: key, detail: '' });
      else taken.add(key);
    }),
  );
  return errs;
}

/** ValidatePodSpec at `path`: `spec` for a Pod, `spec.template.spec` for a workload's pod template. */
export function validatePodSpec(spec: Obj, path = 'spec'): FieldError[] {
  const errs = validateVolumes(spec.volumes, `${path}.volumes`);
  const volumes = new Set(list(spec.volumes).map((v) => String(v.name ?? '')));
  const names = new Set<string>();
  errs.push(...validateContainers(list(spec.containers), `${path}.containers`, volumes, names, true));
  errs.push(...validateContainers(list(spec.initContainers), `${path}.initContainers`, volumes, names, false));
  errs.push(...validateEphemeralContainers(spec, `${path}.ephemeralContainers`, volumes, names));
  errs.push(...hostPortConflicts(list(spec.containers), `${path}.containers`));
  // A pod template (any path but a Pod's own spec) has none: they are added to running pods.
  if (path !== 'spec' && list(spec.ephemeralContainers).length > 0)
    errs.push({ type: 'FieldValueForbidden', field: `${path}.ephemeralContainers`, detail: 'ephemeral containers not allowed in pod template' });
  const rp = spec.restartPolicy;
  if (rp !== undefined && !RESTART_POLICIES.includes(String(rp))) {
    errs.push({
      type: 'FieldValueNotSupported',
      field: `${path}.restartPolicy`,
      value: rp,
      detail: `supported values: ${RESTART_POLICIES.map((r) => JSON.stringify(r)).join(', ')}`,
    });
  }
  // A negative terminationGracePeriodSeconds is not refused (kube accepts it for compatibility): a
  // Pod's becomes 1 (normalizeGracePeriod), a template's draws a warning (podWarnings).
  const deadline = spec.activeDeadlineSeconds;
  if (typeof deadline === 'number' && deadline <= 0) {
    errs.push({ type: 'FieldValueInvalid', field: `${path}.activeDeadlineSeconds`, value: deadline, detail: 'must be between 1 and 2147483647, inclusive' });
  }
  return errs;
}

/**
 * Whether every old item has an equal (isDeepStrictEqual) item in `now`: the new items are
 * indexed by their canonical text (equal text confirmed by isDeepStrictEqual), so a long list
 * costs its length, not old x new comparisons.
 */
function everyKept(old: Obj[], now: Obj[]): boolean {
  if (old.length === 0) return true;
  const byText = new Map<string, Obj[]>();
  for (const n of now) {
    const text = canonicalJson(n);
    const same = byText.get(text);
    if (same) same.push(n);
    else byText.set(text, [n]);
  }
  return old.every((t) => byText.get(canonicalJson(t))?.some((n) => isDeepStrictEqual(n, t)) ?? false);
}

/**
 * A Pod's negative terminationGracePeriodSeconds becomes 1, as kube's conversion of a v1 Pod does
 * (a negative grace period is treated as 1 everywhere); pod templates keep theirs and are warned.
 */
export function normalizeGracePeriod(spec: Obj): void {
  const grace = spec.terminationGracePeriodSeconds;
  if (typeof grace === 'number' && grace < 0) spec.terminationGracePeriodSeconds = 1;
}

/**
 * ValidatePodUpdate's rule on spec: only container and init container images,
 * activeDeadlineSeconds and added tolerations may change, and terminationGracePeriodSeconds only
 * from a negative value (stored before negative values became 1) to 1.
 */
export function validatePodSpecUpdate(spec: Obj, old: Obj): FieldError[] {
  const oldGrace = old.terminationGracePeriodSeconds;
  const graceRepaired = typeof oldGrace === 'number' && oldGrace < 0 && spec.terminationGracePeriodSeconds === 1;
  const strip = (s: Obj): Obj => {
    const c = structuredClone(s);
    for (const key of ['containers', 'initContainers']) for (const ct of list(c[key])) delete ct.image;
    delete c.activeDeadlineSeconds;
    if (graceRepaired) delete c.terminationGracePeriodSeconds;
    delete c.tolerations;
    return c;
  };
  const errs: FieldError[] = [];
  const sameShape = list(spec.containers).length === list(old.containers).length && list(spec.initContainers).length === list(old.initContainers).length;
  const tolerationsKept = everyKept(list(old.tolerations), list(spec.tolerations));
  if (!sameShape || !isDeepStrictEqual(strip(spec), strip(old)) || !tolerationsKept) {
    errs.push({
      type: 'FieldValueForbidden',
      field: 'spec',
      detail:
        'pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)',
    });
  }
  return errs;
}

/** ValidatePodCreate's rule: ephemeral containers are added to a running pod only (its ephemeralcontainers subresource). */
export function validateNoEphemeralOnCreate(spec: Obj, path = 'spec'): FieldError[] {
  return list(spec.ephemeralContainers).length > 0
    ? [{ type: 'FieldValueForbidden', field: `${path}.ephemeralContainers`, detail: 'cannot be set on create' }]
    : [];
}

/**
 * ValidatePodEphemeralContainersUpdate's rule: ephemeral containers are only added; one that
 * exists may be neither removed nor changed (each found by name, as a patch may reorder them).
 */
export function validateEphemeralContainersUpdate(spec: Obj, old: Obj): FieldError[] {
  const errs: FieldError[] = [];
  const now = new Map(list(spec.ephemeralContainers).map((c) => [String(c.name ?? ''), c]));
  for (const before of list(old.ephemeralContainers)) {
    const name = String(before.name ?? '');
    const after = now.get(name);
    if (!after)
      errs.push({
        type: 'FieldValueForbidden',
        field: 'spec.ephemeralContainers',
        detail: `existing ephemeral containers ${JSON.stringify(name)} may not be removed\n`,
      });
    else if (!isDeepStrictEqual(after, before))
      errs.push({
        type: 'FieldValueForbidden',
        field: `spec.ephemeralContainers[${name}]`,
        detail: `existing ephemeral containers ${JSON.stringify(name)} may not be changed\n`,
      });
  }
  return errs;
}
