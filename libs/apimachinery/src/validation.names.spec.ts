import {
  generateName,
  GENERATE_NAME_ALPHABET,
  isDNS1035Label,
  isDNS1123Label,
  isDNS1123Subdomain,
  isQualifiedName,
  isValidLabelValue,
  nameIsDNSSubdomain,
  nameIsPathSegment,
  regexError,
} from './validation.names.js';

describe('validation.names (apimachinery/pkg/util/validation)', () => {
  it('renders RegexError with Go quirks (double space before "or")', () => {
    expect(regexError('m', 'f', 'a', 'b')).toBe("m (e.g. 'a',  or 'b', regex used for validation is 'f')");
    expect(regexError('m', 'f')).toBe("m (regex used for validation is 'f')");
  });

  it('DNS-1123 subdomain: exact message and length', () => {
    expect(isDNS1123Subdomain('example.com')).toEqual([]);
    expect(isDNS1123Subdomain('Foo')).toEqual([
      "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    ]);
    expect(isDNS1123Subdomain('a'.repeat(253))).toEqual([]);
    expect(isDNS1123Subdomain('a'.repeat(254))).toEqual(['must be no more than 253 characters']);
    expect(isDNS1123Subdomain('-a')).toHaveLength(1);
    expect(isDNS1123Subdomain('a..b')).toHaveLength(1);
  });

  it('DNS-1123 label: dots get their own message', () => {
    expect(isDNS1123Label('my-name')).toEqual([]);
    expect(isDNS1123Label('a.b')).toEqual(['must not contain dots']);
    expect(isDNS1123Label('a_b')[0]).toContain("(e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')");
    expect(isDNS1123Label('a'.repeat(64))).toEqual(['must be no more than 63 characters']);
  });

  it('DNS-1035 label must start with a letter', () => {
    expect(isDNS1035Label('abc-1')).toEqual([]);
    expect(isDNS1035Label('1abc')[0]).toMatch(/^a DNS-1035 label must consist/);
  });

  it('qualified names: prefix and name parts', () => {
    expect(isQualifiedName('app')).toEqual([]);
    expect(isQualifiedName('example.com/My_Name.1')).toEqual([]);
    expect(isQualifiedName('/a')).toEqual(['prefix part must be non-empty']);
    expect(isQualifiedName('a/')).toEqual([
      'name part must be non-empty',
      "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
    ]);
    expect(isQualifiedName('Bad_Prefix/a')[0]).toMatch(/^prefix part a lowercase RFC 1123 subdomain/);
    expect(isQualifiedName('a/b/c')[0]).toMatch(
      /^a qualified name must consist.* with an optional DNS subdomain prefix and '\/' \(e\.g\. 'example\.com\/MyName'\)$/,
    );
    expect(isQualifiedName('a'.repeat(64))).toEqual(['name part must be no more than 63 characters']);
  });

  it('label values may be empty, at most 63 chars', () => {
    expect(isValidLabelValue('')).toEqual([]);
    expect(isValidLabelValue('v1.2_x-y')).toEqual([]);
    expect(isValidLabelValue('-x')[0]).toMatch(/^a valid label must be an empty string or consist of/);
    expect(isValidLabelValue('a'.repeat(64))).toEqual(['must be no more than 63 characters']);
  });

  it('generateName prefixes may end in a dash; full names may not', () => {
    expect(nameIsDNSSubdomain('web-', true)).toEqual([]);
    expect(nameIsDNSSubdomain('web-', false)).toHaveLength(1);
  });

  it('path segment names reject . .. / %', () => {
    expect(nameIsPathSegment('..', false)).toEqual(["may not be '..'"]);
    expect(nameIsPathSegment('a/b%', false)).toEqual(["may not contain '/'", "may not contain '%'"]);
    expect(nameIsPathSegment('ok', false)).toEqual([]);
  });

  it('generateName appends 5 chars of the Kubernetes alphabet and truncates the base to 58', () => {
    let n = 0;
    const seq = (k: number): number => n++ % k;
    expect(generateName('web-', seq)).toBe('web-bcdfg');
    const long = generateName('x'.repeat(80), () => GENERATE_NAME_ALPHABET.length - 1);
    expect(long).toBe('x'.repeat(58) + '99999');
    expect(long).toHaveLength(63);
    for (let i = 0; i < 50; i++) expect(generateName('a-')).toMatch(/^a-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
  });
});
