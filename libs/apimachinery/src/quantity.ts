/**
 * resource.Quantity: parsing, canonical printing and comparison of quantity strings such as
 * `100m`, `1.5Gi`, `1e3`. Grammar, suffixes, rounding and the canonical form follow
 * k8s.io/apimachinery/pkg/api/resource (quantity.go parseQuantityString, ParseQuantity,
 * CanonicalizeBytes; suffix.go). Values are held exactly as a count of nano-units (a bigint),
 * which is the precision Kubernetes keeps: anything finer is rounded up, away from zero.
 */

/** How a quantity was written, which decides how it is printed back. */
export type QuantityFormat = 'DecimalExponent' | 'BinarySI' | 'DecimalSI';

/** resource.ErrFormatWrong's message. */
export const QUANTITY_FORMAT_ERROR = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
/** resource.ErrSuffix's message. */
export const QUANTITY_SUFFIX_ERROR = "unable to parse quantity's suffix";

/** A string that is not a quantity; `message` is Kubernetes' error text. */
export class QuantityParseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'QuantityParseError';
  }
}

const NANO = 10n ** 9n;
/** resource.maxAllowed: BinarySI values are capped at 2^63-1. */
const MAX_ALLOWED_NANOS = (2n ** 63n - 1n) * NANO;
/** Exponents beyond this are refused rather than materialised as huge integers. */
const MAX_ABS_EXPONENT = 1000;

const BINARY: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const DECIMAL: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const DECIMAL_BY_EXP = new Map(Object.entries(DECIMAL).map(([s, e]) => [e, s]));
const BINARY_BY_EXP = new Map([[0, ''], ...Object.entries(BINARY).map(([s, e]): [number, string] => [e / 10, s])]);

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';

interface Parts {
  negative: boolean;
  num: string;
  denom: string;
  suffix: string;
}

/** parseQuantityString: sign, digits, optional fraction, then a suffix of [eEinumkKMGTP]* [+-]? digits*. */
function split(str: string): Parts {
  let pos = 0;
  const end = str.length;
  let negative = false;
  if (str[0] === '-') {
    negative = true;
    pos++;
  } else if (str[0] === '+') pos++;
  while (pos < end && str[pos] === '0') pos++;
  if (pos >= end) return { negative, num: '0', denom: '', suffix: '' };
  let i = pos;
  while (i < end && isDigit(str[i])) i++;
  const num = str.slice(pos, i) || '0';
  pos = i;
  let denom = '';
  if (str[pos] === '.') {
    pos++;
    i = pos;
    while (i < end && isDigit(str[i])) i++;
    denom = str.slice(pos, i);
    pos = i;
  }
  const suffixStart = pos;
  while (pos < end && 'eEinumkKMGTP'.includes(str[pos])) pos++;
  if (str[pos] === '-' || str[pos] === '+') pos++;
  while (pos < end && isDigit(str[pos])) pos++;
  if (pos < end) throw new QuantityParseError(QUANTITY_FORMAT_ERROR);
  return { negative, num, denom, suffix: str.slice(suffixStart) };
}

/** suffixer.interpret: (base, exponent, format) of a suffix. */
function interpret(suffix: string): { base: 2 | 10; exponent: number; format: QuantityFormat } {
  if (suffix in BINARY) return { base: 2, exponent: BINARY[suffix], format: 'BinarySI' };
  if (suffix in DECIMAL) return { base: 10, exponent: DECIMAL[suffix], format: 'DecimalSI' };
  if (suffix.length > 1 && (suffix[0] === 'e' || suffix[0] === 'E') && /^[+-]?[0-9]+$/.test(suffix.slice(1))) {
    const exponent = Number(suffix.slice(1));
    if (Math.abs(exponent) > MAX_ABS_EXPONENT) throw new QuantityParseError(QUANTITY_SUFFIX_ERROR);
    return { base: 10, exponent, format: 'DecimalExponent' };
  }
  throw new QuantityParseError(QUANTITY_SUFFIX_ERROR);
}

/** Integer division rounding away from zero (inf.RoundUp). */
function divUp(n: bigint, d: bigint): bigint {
  const q = n / d;
  return q * d === n ? q : n < 0n ? q - 1n : q + 1n;
}

/** An exact Kubernetes quantity. Immutable. */
export class Quantity {
  private constructor(
    /** The value in units of 10^-9. */
    readonly nanos: bigint,
    readonly format: QuantityFormat,
  ) {}

  /**
   * resource.ParseQuantity.
   * @throws QuantityParseError with Kubernetes' message for malformed strings or suffixes.
   */
  static parse(str: string): Quantity {
    if (str.length === 0) throw new QuantityParseError(QUANTITY_FORMAT_ERROR);
    if (str === '0') return new Quantity(0n, 'DecimalSI');
    const p = split(str);
    const { base, exponent, format: parsedFormat } = interpret(p.suffix);
    let format = parsedFormat;
    // |value| * 10^(9 + exponent10) * 2^exponent2 as a fraction over 10^denom.length.
    let n = BigInt(p.num + p.denom);
    let d = 10n ** BigInt(p.denom.length);
    n *= NANO;
    if (base === 2) n *= 2n ** BigInt(exponent);
    else if (exponent >= 0) n *= 10n ** BigInt(exponent);
    else d *= 10n ** BigInt(-exponent);
    let abs = divUp(n, d); // round fractional nanos up
    if (format === 'BinarySI' && abs > MAX_ALLOWED_NANOS) abs = MAX_ALLOWED_NANOS;
    if (format === 'BinarySI' && abs > 0n && abs < NANO) format = 'DecimalSI';
    return new Quantity(p.negative ? -abs : abs, format);
  }

  /** Builds a quantity from an integer number of units (resource.NewQuantity). */
  static fromInt(value: number | bigint, format: QuantityFormat = 'DecimalSI'): Quantity {
    return new Quantity(BigInt(value) * NANO, format);
  }

  /** Builds a quantity from milli-units (resource.NewMilliQuantity). */
  static fromMilli(milli: number | bigint, format: QuantityFormat = 'DecimalSI'): Quantity {
    return new Quantity(BigInt(milli) * 10n ** 6n, format);
  }

  /** True for a zero value (Quantity.IsZero). */
  isZero(): boolean {
    return this.nanos === 0n;
  }

  /** -1, 0, 1 as this is less than, equal to, greater than `other` (Quantity.Cmp). */
  cmp(other: Quantity): -1 | 0 | 1 {
    return this.nanos < other.nanos ? -1 : this.nanos > other.nanos ? 1 : 0;
  }

  /** Same value, whatever the format (Quantity.Equal). */
  equals(other: Quantity): boolean {
    return this.nanos === other.nanos;
  }

  /** Sum, in this quantity's format. */
  add(other: Quantity): Quantity {
    return new Quantity(this.nanos + other.nanos, this.format);
  }

  /** Difference, in this quantity's format; a zero takes the other's (Quantity.Sub). */
  sub(other: Quantity): Quantity {
    return new Quantity(this.nanos - other.nanos, this.nanos === 0n ? other.format : this.format);
  }

  /** Value in whole units, rounded up away from zero (Quantity.Value). */
  value(): bigint {
    return divUp(this.nanos, NANO);
  }

  /** Value in milli-units, rounded up away from zero (Quantity.MilliValue). */
  milliValue(): bigint {
    return divUp(this.nanos, 10n ** 6n);
  }

  /** The canonical string (Quantity.String / CanonicalizeBytes). */
  toString(): string {
    if (this.nanos === 0n) return '0';
    let format = this.format;
    if (format === 'BinarySI') {
      // Small or fractional binary values print as DecimalSI to avoid rounding.
      const a = this.nanos < 0n ? -this.nanos : this.nanos;
      if (a < 1024n * NANO || this.nanos % NANO !== 0n) format = 'DecimalSI';
    }
    if (format === 'BinarySI') {
      let v = this.nanos / NANO;
      let e = 0;
      while (v % 1024n === 0n && BINARY_BY_EXP.has(e + 1)) {
        v /= 1024n;
        e++;
      }
      return `${v}${BINARY_BY_EXP.get(e)}`;
    }
    // AsCanonicalBytes: move factors of ten into the exponent, then lower it to a multiple of 3.
    let m = this.nanos;
    let exp = -9;
    while (m % 10n === 0n) {
      m /= 10n;
      exp++;
    }
    while (exp % 3 !== 0) {
      m *= 10n;
      exp--;
    }
    if (format === 'DecimalExponent') return exp === 0 ? `${m}` : `${m}e${exp}`;
    if (exp > 18) {
      m *= 10n ** BigInt(exp - 18);
      exp = 18;
    }
    return `${m}${DECIMAL_BY_EXP.get(exp)}`;
  }

  /** JSON form: the canonical string. */
  toJSON(): string {
    return this.toString();
  }
}

/** Shorthand for Quantity.parse. @throws QuantityParseError */
export function parseQuantity(str: string): Quantity {
  return Quantity.parse(str);
}

/** The canonical spelling of a quantity string (what the apiserver stores and returns). @throws QuantityParseError */
export function canonicalQuantity(str: string): string {
  return Quantity.parse(str).toString();
}
