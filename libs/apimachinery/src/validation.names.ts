/**
 * Name and label syntax rules, with Kubernetes' exact error detail strings.
 * Source of every rule and message: k8s.io/apimachinery/pkg/util/validation/validation.go
 * (IsDNS1123Label, IsDNS1123Subdomain, IsDNS1035Label, IsQualifiedName, IsValidLabelValue,
 * RegexError, MaxLenError, EmptyError) and pkg/api/validation (NameIsDNSSubdomain, path segment
 * names). Each validator returns the list of detail strings (empty = valid), as Go does, so
 * callers can wrap each one into a `FieldError` on their own path.
 */

/** Builds the detail Kubernetes' RegexError builds: `msg (e.g. 'a' or 'b', regex used for validation is 'fmt')`. */
export function regexError(msg: string, fmt: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${fmt}')`;
  // Go appends "'ex', " per example and " or " between them, hence the double space: "'a',  or 'b', ".
  return `${msg} (e.g. ${examples.map((e) => `'${e}', `).join(' or ')}regex used for validation is '${fmt}')`;
}

/** validation.MaxLenError. */
export function maxLenError(length: number): string {
  return `must be no more than ${length} characters`;
}

/** validation.EmptyError. */
export const EMPTY_ERROR = 'must be non-empty';

/** validation.DNS1123LabelMaxLength. */
export const DNS1123_LABEL_MAX_LENGTH = 63;
/** validation.DNS1123SubdomainMaxLength. */
export const DNS1123_SUBDOMAIN_MAX_LENGTH = 253;
/** validation.DNS1035LabelMaxLength. */
export const DNS1035_LABEL_MAX_LENGTH = 63;
/** Maximum length of the name part of a qualified name (qualifiedNameMaxLength). */
export const QUALIFIED_NAME_MAX_LENGTH = 63;
/** validation.LabelValueMaxLength. */
export const LABEL_VALUE_MAX_LENGTH = 63;

const DNS1123_LABEL_FMT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_LABEL_ERR =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`;
const DNS1123_SUBDOMAIN_ERR =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const DNS1035_LABEL_FMT = '[a-z]([-a-z0-9]*[a-z0-9])?';
const DNS1035_LABEL_ERR =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";
const QNAME_CHAR = '[A-Za-z0-9]';
const QNAME_EXT_CHAR = '[-A-Za-z0-9_.]';
const QUALIFIED_NAME_FMT = `(${QNAME_CHAR}${QNAME_EXT_CHAR}*)?${QNAME_CHAR}`;
const QUALIFIED_NAME_ERR = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_FMT = `(${QUALIFIED_NAME_FMT})?`;
const LABEL_VALUE_ERR =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

const dns1123LabelRe = new RegExp(`^${DNS1123_LABEL_FMT}$`);
const dns1123SubdomainRe = new RegExp(`^${DNS1123_SUBDOMAIN_FMT}$`);
const dns1035LabelRe = new RegExp(`^${DNS1035_LABEL_FMT}$`);
const qualifiedNameRe = new RegExp(`^${QUALIFIED_NAME_FMT}$`);
const labelValueRe = new RegExp(`^${LABEL_VALUE_FMT}$`);

/** IsDNS1123Label: at most 63 chars of [a-z0-9-], alphanumeric at both ends. */
export function isDNS1123Label(value: string): string[] {
  const errs: string[] = [];
  if (value.length > DNS1123_LABEL_MAX_LENGTH) errs.push(maxLenError(DNS1123_LABEL_MAX_LENGTH));
  if (!dns1123LabelRe.test(value)) {
    // Go: a valid subdomain that is not a valid label (length already checked) must have dots.
    if (dns1123SubdomainRe.test(value)) errs.push('must not contain dots');
    else errs.push(regexError(DNS1123_LABEL_ERR, DNS1123_LABEL_FMT, 'my-name', '123-abc'));
  }
  return errs;
}

/** IsDNS1123Subdomain: at most 253 chars, dot-separated DNS-1123 labels. */
export function isDNS1123Subdomain(value: string): string[] {
  const errs: string[] = [];
  if (value.length > DNS1123_SUBDOMAIN_MAX_LENGTH) errs.push(maxLenError(DNS1123_SUBDOMAIN_MAX_LENGTH));
  if (!dns1123SubdomainRe.test(value)) errs.push(regexError(DNS1123_SUBDOMAIN_ERR, DNS1123_SUBDOMAIN_FMT, 'example.com'));
  return errs;
}

/** IsDNS1035Label: like a DNS-1123 label but starting with a letter (Service names). */
export function isDNS1035Label(value: string): string[] {
  const errs: string[] = [];
  if (value.length > DNS1035_LABEL_MAX_LENGTH) errs.push(maxLenError(DNS1035_LABEL_MAX_LENGTH));
  if (!dns1035LabelRe.test(value)) errs.push(regexError(DNS1035_LABEL_ERR, DNS1035_LABEL_FMT, 'my-name', 'abc-123'));
  return errs;
}

/**
 * IsQualifiedName: label/annotation keys and finalizers: `[prefix/]name`, prefix a DNS-1123
 * subdomain, name at most 63 chars of [-A-Za-z0-9_.] with alphanumeric ends.
 */
export function isQualifiedName(value: string): string[] {
  const errs: string[] = [];
  const parts = value.split('/');
  let name: string;
  if (parts.length === 1) {
    name = parts[0];
  } else if (parts.length === 2) {
    const prefix = parts[0];
    name = parts[1];
    if (prefix.length === 0) errs.push(`prefix part ${EMPTY_ERROR}`);
    else errs.push(...isDNS1123Subdomain(prefix).map((m) => `prefix part ${m}`));
  } else {
    return [
      `a qualified name ${regexError(QUALIFIED_NAME_ERR, QUALIFIED_NAME_FMT, 'MyName', 'my.name', '123-abc')}` +
        " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ];
  }
  if (name.length === 0) errs.push(`name part ${EMPTY_ERROR}`);
  else if (name.length > QUALIFIED_NAME_MAX_LENGTH) errs.push(`name part ${maxLenError(QUALIFIED_NAME_MAX_LENGTH)}`);
  if (!qualifiedNameRe.test(name)) errs.push(`name part ${regexError(QUALIFIED_NAME_ERR, QUALIFIED_NAME_FMT, 'MyName', 'my.name', '123-abc')}`);
  return errs;
}

/** IsValidLabelValue: empty, or at most 63 chars of [-A-Za-z0-9_.] with alphanumeric ends. */
export function isValidLabelValue(value: string): string[] {
  const errs: string[] = [];
  if (value.length > LABEL_VALUE_MAX_LENGTH) errs.push(maxLenError(LABEL_VALUE_MAX_LENGTH));
  if (!labelValueRe.test(value)) errs.push(regexError(LABEL_VALUE_ERR, LABEL_VALUE_FMT, 'MyValue', 'my_value', '12345'));
  return errs;
}

/**
 * A name validator as apimachinery's ValidateNameFunc: `prefix` is true when validating a
 * generateName, where a trailing '-' is allowed because random characters follow.
 */
export type NameValidator = (name: string, prefix: boolean) => string[];

/** pkg/api/validation maskTrailingDash: a generateName may end in '-'. */
function maskTrailingDash(name: string): string {
  return name.endsWith('-') ? `${name.slice(0, -1)}a` : name;
}

/** NameIsDNSSubdomain (most kinds, e.g. ConfigMap, Secret, Deployment). */
export const nameIsDNSSubdomain: NameValidator = (name, prefix) => isDNS1123Subdomain(prefix ? maskTrailingDash(name) : name);
/** NameIsDNSLabel (e.g. Namespace). */
export const nameIsDNSLabel: NameValidator = (name, prefix) => isDNS1123Label(prefix ? maskTrailingDash(name) : name);
/** NameIsDNS1035Label (Service). */
export const nameIsDNS1035Label: NameValidator = (name, prefix) => isDNS1035Label(prefix ? maskTrailingDash(name) : name);

/**
 * path.IsValidPathSegmentName: the only rule for names of kinds without a stricter one (e.g.
 * custom resources use NameIsDNSSubdomain, but RBAC roles use this): not '.'/'..', no '/' or '%'.
 */
export const nameIsPathSegment: NameValidator = (name, prefix) => {
  const errs: string[] = [];
  if (!prefix && (name === '.' || name === '..')) errs.push(`may not be '${name}'`);
  for (const illegal of ['/', '%']) if (name.includes(illegal)) errs.push(`may not contain '${illegal}'`);
  return errs;
};

/** The alphabet of apimachinery/pkg/util/rand: consonants and digits, no vowels (no words), no 0/1/3. */
export const GENERATE_NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
/** apiserver/pkg/storage/names randomLength: characters appended to a generateName. */
export const GENERATE_NAME_RANDOM_LENGTH = 5;
/** apiserver/pkg/storage/names MaxGeneratedNameLength (63 - 5): longer bases are truncated. */
export const MAX_GENERATED_NAME_BASE_LENGTH = 63 - GENERATE_NAME_RANDOM_LENGTH;

/** Random source returning an integer in [0, n). Injected so tests are deterministic. */
export type RandomInt = (n: number) => number;

/** Default random source (Math.random is enough: names need uniqueness, not secrecy, and conflicts are retried). */
export const mathRandomInt: RandomInt = (n) => Math.floor(Math.random() * n);

/**
 * names.SimpleNameGenerator.GenerateName: `base` truncated to 58 chars plus 5 random characters
 * from GENERATE_NAME_ALPHABET, so a valid base always yields a name of at most 63 characters.
 */
export function generateName(base: string, random: RandomInt = mathRandomInt): string {
  const b = base.length > MAX_GENERATED_NAME_BASE_LENGTH ? base.slice(0, MAX_GENERATED_NAME_BASE_LENGTH) : base;
  let suffix = '';
  for (let i = 0; i < GENERATE_NAME_RANDOM_LENGTH; i++) suffix += GENERATE_NAME_ALPHABET[random(GENERATE_NAME_ALPHABET.length)];
  return b + suffix;
}
