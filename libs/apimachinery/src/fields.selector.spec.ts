import { StatusError } from './errors.js';
import { escapeFieldValue, parseFieldSelector } from './fields.selector.js';

function err(f: () => unknown): StatusError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(StatusError);
    return e as StatusError;
  }
  throw new Error('expected failure');
}

describe('field selectors (k8s.io/apimachinery/pkg/fields)', () => {
  const obj: Record<string, string> = { 'metadata.name': 'a,b=c', 'metadata.namespace': 'default', 'status.phase': 'Running' };
  const get = (f: string): string | undefined => obj[f];

  it('parses =, ==, != and ANDs terms', () => {
    const s = parseFieldSelector('status.phase!=Pending,metadata.namespace==default');
    expect(s.requirements()).toEqual([
      { field: 'metadata.namespace', operator: '==', value: 'default' },
      { field: 'status.phase', operator: '!=', value: 'Pending' },
    ]);
    expect(s.matches(get)).toBe(true);
    expect(parseFieldSelector('status.phase=Pending').matches(get)).toBe(false);
    expect(parseFieldSelector('').isEmpty()).toBe(true);
    expect(parseFieldSelector('a=b,,').requirements()).toHaveLength(1);
  });

  it('unescapes \\, \\= \\\\ in values', () => {
    const s = parseFieldSelector('metadata.name=a\\,b\\=c');
    expect(s.requirements()[0].value).toBe('a,b=c');
    expect(s.matches(get)).toBe(true);
    expect(parseFieldSelector('x=a\\\\').requirements()[0].value).toBe('a\\');
    expect(escapeFieldValue('a\\,=')).toBe('a\\\\\\,\\=');
    expect(parseFieldSelector(`metadata.name=${escapeFieldValue('x=y,z')}`).requirements()[0].value).toBe('x=y,z');
  });

  it('missing fields read as empty', () => {
    expect(parseFieldSelector('spec.nodeName=').matches(get)).toBe(true);
    expect(parseFieldSelector('spec.nodeName!=n1').matches(get)).toBe(true);
  });

  it('errors carry Kubernetes messages', () => {
    expect(err(() => parseFieldSelector('foo')).message).toBe("invalid selector: 'foo'; can't understand 'foo'");
    expect(err(() => parseFieldSelector('a=b\\x')).message).toBe('invalid field selector: invalid escape sequence: \\x');
    expect(err(() => parseFieldSelector('a=b\\')).message).toBe('invalid field selector: invalid escape sequence: \\');
    expect(err(() => parseFieldSelector('a=b=c')).message).toBe('invalid field selector: unescaped character in value: 61');
  });

  it('the caller decides supported fields', () => {
    const s = parseFieldSelector('metadata.name=x,spec.foo=y');
    const e = err(() => s.validateFields(['metadata.name', 'metadata.namespace']));
    expect(e.code).toBe(400);
    expect(e.message).toBe('field label not supported: spec.foo');
    expect(err(() => s.validateDefaultFields()).message).toBe('"spec.foo" is not a known field selector: only "metadata.name", "metadata.namespace"');
    expect(s.validateDefaultFields(['spec.foo'])).toBe(s);
    expect(s.requiresExactMatch('metadata.name')).toBe('x');
  });
});
