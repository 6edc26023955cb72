/**
 * A JSON parser that, unlike JSON.parse, reports duplicate object keys. Kubernetes decodes
 * request bodies with sigs.k8s.io/json, whose strict mode collects `duplicate field "<path>"`
 * errors (fieldValidation=Strict rejects the request with them, Warn returns them as warnings);
 * the path is the field path with `.` between keys and `[i]` for list indices, e.g.
 * `spec.template.spec.containers[0].name`. The last occurrence of a duplicated key wins, as in
 * Go and JSON.parse. Syntax errors carry Go encoding/json's wording and the byte position.
 */

/** A JSON syntax error: `message` as Go's encoding/json words it, plus where it happened. */
export class JsonSyntaxError extends Error {
  constructor(
    message: string,
    /** Offset (UTF-16 code units) into the text where parsing failed. */
    readonly offset: number,
    /** 1-based line and column of `offset`. */
    readonly line: number,
    readonly column: number,
  ) {
    super(message);
    this.name = 'JsonSyntaxError';
  }
}

/** Result of `parseJsonStrict`. */
export interface StrictJsonResult {
  value: unknown;
  /** Field paths of every duplicated key, in document order (one entry per repeat). */
  duplicates: string[];
}

/** The strict-decoding message for a duplicate, as sigs.k8s.io/json words it. */
export function duplicateFieldMessage(path: string): string {
  return `duplicate field ${JSON.stringify(path)}`;
}

/** Go's encoding/json nesting limit ("exceeded max depth"); also keeps recursion off the stack limit. */
export const MAX_JSON_DEPTH = 10000;

/** Go's quoteChar: a character in single quotes, escaped like strconv.Quote. */
function quoteChar(c: string): string {
  if (c === "'") return `'\\''`;
  if (c === '"') return `'"'`;
  const q = JSON.stringify(c);
  return `'${q.slice(1, -1)}'`;
}

const hasOwn = Object.prototype.hasOwnProperty;

class StrictParser {
  private i = 0;
  private depth = 0;
  readonly duplicates: string[] = [];
  private readonly stack: string[] = [];

  constructor(private readonly s: string) {}

  fail(message: string, at = this.i): never {
    let line = 1;
    let col = 1;
    for (let k = 0; k < at && k < this.s.length; k++) {
      if (this.s.charCodeAt(k) === 10) {
        line++;
        col = 1;
      } else col++;
    }
    throw new JsonSyntaxError(message, at, line, col);
  }

  private unexpected(context: string): never {
    if (this.i >= this.s.length) this.fail('unexpected end of JSON input');
    this.fail(`invalid character ${quoteChar(this.s[this.i])} ${context}`);
  }

  private ws(): void {
    const s = this.s;
    let i = this.i;
    for (;;) {
      const c = s.charCodeAt(i);
      if (c === 32 || c === 10 || c === 13 || c === 9) i++;
      else break;
    }
    this.i = i;
  }

  parseDocument(): unknown {
    this.ws();
    const v = this.value();
    this.ws();
    if (this.i < this.s.length) this.unexpected('after top-level value');
    return v;
  }

  private value(): unknown {
    const c = this.s.charCodeAt(this.i);
    switch (c) {
      case 123: // {
        return this.object();
      case 91: // [
        return this.array();
      case 34: // "
        return this.string();
      case 116: // t
        return this.literal('true', true);
      case 102: // f
        return this.literal('false', false);
      case 110: // n
        return this.literal('null', null);
      default:
        if (c === 45 || (c >= 48 && c <= 57)) return this.number();
        return this.unexpected('looking for beginning of value');
    }
  }

  private literal<T>(word: string, v: T): T {
    for (let k = 0; k < word.length; k++) {
      if (this.s.charCodeAt(this.i) !== word.charCodeAt(k)) this.unexpected('in literal ' + word + ' (expecting ' + quoteChar(word[k]) + ')');
      this.i++;
    }
    return v;
  }

  private number(): number {
    const s = this.s;
    const start = this.i;
    let i = this.i;
    if (s.charCodeAt(i) === 45) i++;
    let c = s.charCodeAt(i);
    if (c === 48) i++;
    else if (c >= 49 && c <= 57) {
      do i++;
      while ((c = s.charCodeAt(i)) >= 48 && c <= 57);
    } else {
      this.i = i;
      this.unexpected('in numeric literal');
    }
    if (s.charCodeAt(i) === 46) {
      i++;
      c = s.charCodeAt(i);
      if (!(c >= 48 && c <= 57)) {
        this.i = i;
        this.unexpected('after decimal point in numeric literal');
      }
      while ((c = s.charCodeAt(i)) >= 48 && c <= 57) i++;
    }
    c = s.charCodeAt(i);
    if (c === 101 || c === 69) {
      i++;
      c = s.charCodeAt(i);
      if (c === 43 || c === 45) i++;
      c = s.charCodeAt(i);
      if (!(c >= 48 && c <= 57)) {
        this.i = i;
        this.unexpected('in exponent of numeric literal');
      }
      while ((c = s.charCodeAt(i)) >= 48 && c <= 57) i++;
    }
    this.i = i;
    return Number(s.slice(start, i));
  }

  private string(): string {
    const s = this.s;
    const start = ++this.i;
    let i = start;
    for (;;) {
      const c = s.charCodeAt(i);
      if (c === 34) {
        this.i = i + 1;
        return s.slice(start, i);
      }
      if (c === 92) break; // escapes: slow path
      if (c < 32 || Number.isNaN(c)) {
        this.i = i;
        if (i >= s.length) this.fail('unexpected end of JSON input');
        this.unexpected('in string literal');
      }
      i++;
    }
    let out = s.slice(start, i);
    for (;;) {
      const c = s.charCodeAt(i);
      if (c === 34) {
        this.i = i + 1;
        return out;
      }
      if (Number.isNaN(c)) {
        this.i = i;
        this.fail('unexpected end of JSON input');
      }
      if (c < 32) {
        this.i = i;
        this.unexpected('in string literal');
      }
      if (c !== 92) {
        out += s[i++];
        continue;
      }
      const e = s[i + 1];
      i += 2;
      switch (e) {
        case '"':
        case '\\':
        case '/':
          out += e;
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          const hex = s.slice(i, i + 4);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) {
            let k = 0;
            while (k < hex.length && /[0-9a-fA-F]/.test(hex[k])) k++;
            this.i = i + k;
            this.unexpected('in \\u hexadecimal character escape');
          }
          out += String.fromCharCode(parseInt(hex, 16));
          i += 4;
          break;
        }
        default:
          this.i = i - 1;
          this.unexpected('in string escape code');
      }
    }
  }

  private enter(): void {
    if (++this.depth > MAX_JSON_DEPTH) this.fail('exceeded max depth');
  }

  private object(): Record<string, unknown> {
    this.enter();
    this.i++;
    const obj: Record<string, unknown> = {};
    this.ws();
    if (this.s.charCodeAt(this.i) === 125) {
      this.i++;
      this.depth--;
      return obj;
    }
    const stack = this.stack;
    for (;;) {
      if (this.s.charCodeAt(this.i) !== 34) this.unexpected('looking for beginning of object key string');
      const key = this.string();
      this.ws();
      if (this.s.charCodeAt(this.i) !== 58) this.unexpected('after object key');
      this.i++;
      this.ws();
      stack.push(stack.length ? '.' + key : key);
      const v = this.value();
      stack.pop();
      // Values are never undefined, so `!== undefined` is a cheap pre-check before hasOwn.
      if (obj[key] !== undefined && hasOwn.call(obj, key)) {
        this.duplicates.push(stack.length ? stack.join('') + '.' + key : key);
      }
      if (key === '__proto__') Object.defineProperty(obj, key, { value: v, writable: true, enumerable: true, configurable: true });
      else obj[key] = v;
      this.ws();
      const c = this.s.charCodeAt(this.i);
      if (c === 44) {
        this.i++;
        this.ws();
        continue;
      }
      if (c === 125) {
        this.i++;
        this.depth--;
        return obj;
      }
      this.unexpected('after object key:value pair');
    }
  }

  private array(): unknown[] {
    this.enter();
    this.i++;
    const arr: unknown[] = [];
    this.ws();
    if (this.s.charCodeAt(this.i) === 93) {
      this.i++;
      this.depth--;
      return arr;
    }
    const stack = this.stack;
    for (;;) {
      stack.push(`[${arr.length}]`);
      arr.push(this.value());
      stack.pop();
      this.ws();
      const c = this.s.charCodeAt(this.i);
      if (c === 44) {
        this.i++;
        this.ws();
        continue;
      }
      if (c === 93) {
        this.i++;
        this.depth--;
        return arr;
      }
      this.unexpected('after array element');
    }
  }
}

/**
 * Parses `text` as one JSON value and lists duplicated keys by field path.
 * @throws JsonSyntaxError on malformed input (the HTTP layer answers 400 BadRequest).
 */
export function parseJsonStrict(text: string): StrictJsonResult {
  const p = new StrictParser(text);
  try {
    const value = p.parseDocument();
    return { value, duplicates: p.duplicates };
  } catch (e) {
    // The depth limit normally fires first; a smaller host stack must still not crash the caller.
    if (e instanceof RangeError) throw new JsonSyntaxError('exceeded max depth', 0, 1, 1);
    throw e;
  }
}
