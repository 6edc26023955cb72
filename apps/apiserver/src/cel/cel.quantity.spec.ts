/**
 * kube's quantity, URL and semver CEL libraries, through the shared environment. Cases follow
 * k8s.io/apiserver/pkg/cel/library (quantity_test.go, semver_test.go) and the URL rules of
 * apiextensions-apiserver's schema/cel validation_test.go.
 */
import { describe, expect, it } from '@jest/globals';
import { celBase } from './cel.environment.js';

const run = (expr: string): unknown => celBase().evaluate(expr, {}) as unknown;
const check = (expr: string) => celBase().check(expr);

/** Expressions that must evaluate to true. */
function allTrue(cases: string[]): void {
  it.each(cases)('%s', (expr) => {
    expect(run(expr)).toBe(true);
  });
}

/** Expressions whose evaluation must fail with an error matching the pattern. */
function errors(cases: [string, RegExp | string][]): void {
  it.each(cases)('%s fails', (expr, pattern) => {
    expect(() => run(expr)).toThrow(pattern);
  });
}

describe('quantity library', () => {
  describe('values', () => {
    it.each<[string, unknown]>([
      ['isQuantity("20")', true],
      ['isQuantity("20M")', true],
      ['isQuantity("20Mi")', true],
      ['isQuantity("20Mo")', false],
      ['isQuantity("10Mm")', false],
      ['isQuantity("1,3G")', false],
      ['isQuantity("200K")', false],
      ['isQuantity("Three")', false],
      // kube's doc lists "Mi" as invalid, but resource.ParseQuantity reads a bare suffix as zero.
      ['isQuantity("Mi")', true],
      ['quantity("Mi") == quantity("0")', true],
      ['quantity("200M") == quantity("200M")', true],
      ['quantity("200M") == quantity("0.3G")', false],
      ['quantity("50M").isLessThan(quantity("50Mi"))', true],
      ['quantity("50M").isLessThan(quantity("100M"))', true],
      ['quantity("100M").isLessThan(quantity("50M"))', false],
      ['quantity("50Mi").isGreaterThan(quantity("50M"))', true],
      ['quantity("150Mi").isGreaterThan(quantity("100Mi"))', true],
      ['quantity("50M").isGreaterThan(quantity("100M"))', false],
      ['quantity("200M").compareTo(quantity("0.2G"))', 0n],
      ['quantity("50M").compareTo(quantity("50Mi"))', -1n],
      ['quantity("50Mi").compareTo(quantity("50M"))', 1n],
      ['quantity("50k").add(quantity("20")) == quantity("50.02k")', true],
      ['quantity("50k").add(20).isLessThan(quantity("50020"))', false],
      ['quantity("50k").sub(quantity("20")) == quantity("49.98k")', true],
      ['quantity("50k").sub(20) == quantity("49980")', true],
      ['quantity("50k").sub(20000) == quantity("30k")', true],
      ['quantity("50k").add(20).sub(quantity("100k")).asInteger()', -49980n],
      ['quantity("50k").add(20).sub(quantity("100k")).sub(-50000).asInteger()', 20n],
      ['quantity("50k").asInteger()', 50000n],
      ['quantity("50000000G").isInteger()', true],
      ['quantity("50k").isInteger()', true],
      ['quantity("50").isInteger()', true],
      ['quantity("9999999999999999999999999999999999999G").isInteger()', false],
      ['quantity("50.703k").asApproximateFloat()', 50703],
      ['quantity("50k").sub(20000).asApproximateFloat()', 30000],
      ['quantity("1Mi").asApproximateFloat()', 1048576],
      ['quantity("1e400").asApproximateFloat()', Infinity],
      ['quantity("-1e400").asApproximateFloat()', -Infinity],
      ['quantity("-1.5").sign()', -1n],
      ['quantity("0").sign()', 0n],
      ['quantity("1n").sign()', 1n],
      ['sign(quantity("-2Gi"))', -1n],
      ['quantity("1").sign() + 1', 2n],
      // Equality is by value, as resource.Quantity.Equal.
      ['quantity("1") == quantity("1000m")', true],
      ['quantity("1") != quantity("1001m")', true],
      ['[quantity("1")] == [quantity("1000m")]', true],
      ['quantity("1Ki") == quantity("1024")', true],
      // kube's isInteger looks at its int64 form: a negative decimal scale or a decimal value is not an integer.
      ['quantity("1000m").isInteger()', false],
      ['quantity("1.0").isInteger()', false],
      ['quantity("1k").isInteger()', true],
      ['quantity("1.5Gi").isInteger()', false],
      ['quantity("0.5").add(quantity("0.5")).isInteger()', false],
      ['quantity("1e19").isInteger()', false],
      ['quantity("-999999999999999999").asInteger()', -999999999999999999n],
      // More than 18 digits take the decimal form, which never converts.
      ['quantity("-9223372036854775808").isInteger()', false],
      // Overflowing the int64 form switches to exact decimals.
      ['quantity("9223372036854775807").add(1) == quantity("9223372036854775808")', true],
      ['quantity("9223372036854775807").add(1).isInteger()', false],
      ['quantity("9223372036854775807").add(1).sub(1).compareTo(quantity("9223372036854775807"))', 0n],
      ['quantity("1.5Gi").asApproximateFloat()', 1610612736],
      ['quantity("0.1").add(quantity("0.2")) == quantity("0.3")', true],
      // Values are rounded up to nano units, as the API server parses them.
      ['quantity("0.0000000001") == quantity("1n")', true],
    ])('%s', (expr, want) => {
      expect(run(expr)).toBe(want);
    });

    it('parses like the API server (12Mi)', () => {
      expect(run('quantity("12Mi") == quantity("12582912")')).toBe(true);
      expect(run('quantity("12Mi").asInteger()')).toBe(12582912n);
    });
  });

  describe('equality', () => {
    allTrue([
      'quantity("200M") == quantity("0.2G") && quantity("0.2G") == quantity("200M")',
      'quantity("2M") == quantity("0.002G") && quantity("2000k") == quantity("2M") && quantity("0.002G") == quantity("2000k")',
    ]);
  });

  describe('errors', () => {
    errors([
      ['quantity("10Mo")', /^quantities must match the regular expression/],
      ['quantity("10Mm")', "unable to parse quantity's suffix"],
      ['quantity("")', /quantities must match the regular expression/],
      ['quantity("9999999999999999999999999999999999999G").asInteger()', 'cannot convert value to integer'],
      ['quantity("1.5").asInteger()', 'cannot convert value to integer'],
      ['quantity("1e19").asInteger()', 'cannot convert value to integer'],
    ]);

    it('absorbs an error in a logical or', () => {
      expect(run('quantity("bad") == quantity("1") || true')).toBe(true);
    });
  });

  describe('types', () => {
    it('type-checks the functions', () => {
      expect(check('quantity("1").sign() + 1')).toMatchObject({ valid: true, type: 'int' });
      expect(check('quantity("1").add(1)')).toMatchObject({ valid: true, type: 'kubernetes.Quantity' });
      expect(check('quantity("1").asApproximateFloat()')).toMatchObject({ valid: true, type: 'double' });
      expect(check('quantity("1").isInteger() && isQuantity("1")')).toMatchObject({ valid: true, type: 'bool' });
    });

    it.each([
      'quantity(1)',
      'isQuantity([1, 2, 3])',
      'quantity("1").add(1.5)',
      'quantity("1").compareTo(semver("1.0.0"))',
      'quantity("1").isLessThan(1)',
      'quantity("1") == 1',
    ])('%s does not type-check', (expr) => {
      expect(check(expr).valid).toBe(false);
    });

    it('hides the internal representation', () => {
      expect(() => run('quantity("1").amount')).toThrow();
    });
  });
});

describe('URL library', () => {
  describe('components', () => {
    allTrue([
      "url('/path').getScheme() == ''",
      "url('https://example.com/').getScheme() == 'https'",
      "url('HTTPS://example.com/').getScheme() == 'https'",
      "url('https://example.com:80/').getHost() == 'example.com:80'",
      "url('https://example.com/').getHost() == 'example.com'",
      "url('https://[::1]:80/').getHost() == '[::1]:80'",
      "url('https://[::1]/').getHost() == '[::1]'",
      "url('/path').getHost() == ''",
      "url('https://example.com:80/').getHostname() == 'example.com'",
      "url('https://127.0.0.1/').getHostname() == '127.0.0.1'",
      "url('https://127.0.0.1:80/').getHostname() == '127.0.0.1'",
      "url('https://[::1]/').getHostname() == '::1'",
      "url('https://[::1]:80/').getHostname() == '::1'",
      "url('https://[fe80::1%25en0]:8080/').getHostname() == 'fe80::1%en0'",
      "url('/path').getHostname() == ''",
      "url('https://example.com:80/').getPort() == '80'",
      "url('https://example.com/').getPort() == ''",
      "url('https://example.com:/').getPort() == ''",
      "url('https://example.com:/').getHost() == 'example.com:'",
      "url('https://[::1]:/').getPort() == ''",
      "url('https://[::1]:/').getHostname() == '::1'",
      "url('/path').getPort() == ''",
      "url('https://example.com/path').getEscapedPath() == '/path'",
      "url('https://example.com/with space/').getEscapedPath() == '/with%20space/'",
      "url('https://example.com/path with spaces/').getEscapedPath() == '/path%20with%20spaces/'",
      "url('https://example.com').getEscapedPath() == ''",
      "url('https://example.com/a%2Fb').getEscapedPath() == '/a%2Fb'",
      "url('https://example.com/%7Efoo').getEscapedPath() == '/%7Efoo'",
      "url('https://example.com/caf\u00e9').getEscapedPath() == '/caf%C3%A9'",
      "url('*').getEscapedPath() == '*'",
      "url('https://example.com/path?k1=a&k2=b&k2=c').getQuery() == { 'k1': ['a'], 'k2': ['b', 'c']}",
      "url('https://example.com/path?key with spaces=value with spaces').getQuery() == { 'key with spaces': ['value with spaces']}",
      "url('https://example.com/path?').getQuery() == {}",
      "url('https://example.com/path').getQuery() == {}",
      "url('/p?a=b+c&a=%zz&d&x;y=1&&e=%41').getQuery() == {'a': ['b c'], 'd': [''], 'e': ['A']}",
      "url('/p?k=1&k=2').getQuery()['k'][1] == '2'",
      "'k' in url('/p?k=1').getQuery() && size(url('/p?k=1&j=2').getQuery()) == 2",
      "url('https://user:pass@kubernetes.io:80/docs/home?k1=a&k2=b&k2=c#anchor').getScheme() == 'https'",
      "url('https://user:pass@kubernetes.io:80/docs/home?k1=a&k2=b&k2=c#anchor').getHost() == 'kubernetes.io:80'",
      "url('https://user:pass@kubernetes.io:80/docs/home?k1=a&k2=b&k2=c#anchor').getHostname() == 'kubernetes.io'",
      "url('https://user:pass@kubernetes.io:80/docs/home?k1=a&k2=b&k2=c#anchor').getPort() == '80'",
      "url('https://user:pass@kubernetes.io:80/docs/home?k1=a&k2=b&k2=c#anchor').getEscapedPath() == '/docs/home'",
      "url('https://user:pass@kubernetes.io:80/docs/home?k1=a&k2=b&k2=c#anchor').getQuery() == {'k1': ['a'], 'k2': ['b', 'c']}",
      "url('https:://kubernetes.io/').getHostname() != 'test'",
      "url('mailto:someone@example.com').getScheme() == 'mailto'",
    ]);
  });

  describe('isURL', () => {
    it.each<[string, boolean]>([
      ['https://user:pass@example.com:80/path?query=val#fragment', true],
      ['/path', true],
      ['/absolute-path', true],
      ['*', true],
      ['mailto:someone@example.com', true],
      ['https://[::1]:80/', true],
      ['https://a:b:c/', false],
      ['../relative-path', false],
      ['relative', false],
      ['', false],
      [':foo', false],
      ['https://exa mple.com/', false],
      ['https://example.com#frag', false],
      ['https://[1.2.3.4]/', false],
      ['https://[::1/', false],
      ['https://a[::1]/', false],
      ['https://example.com/%zz', false],
      ['https://us er@example.com/', false],
      ['https://example.com/\u0001', false],
    ])('isURL(%j) is %s', (s, want) => {
      expect(run(`isURL(${JSON.stringify(s)})`)).toBe(want);
    });
  });

  describe('equality', () => {
    allTrue([
      "url('https://example.com/a?b=c#d') == url('https://example.com/a?b=c#d')",
      "url('https://EXAMPLE.com/a') != url('https://example.com/a')",
      "url('HTTPS://example.com/a') == url('https://example.com/a')",
      "url('https://example.com/a') != url('https://example.com/b')",
      "url('https://example.com/a b') == url('https://example.com/a%20b')",
    ]);
  });

  describe('errors', () => {
    errors([
      ["url('https://a:b:c/')", 'URL parse error during conversion from string: parse "https://a:b:c/": invalid port ":c" after host'],
      ["url('../relative-path')", 'URL parse error during conversion from string: parse "../relative-path": invalid URI for request'],
      ["url('')", 'URL parse error during conversion from string: parse "": empty url'],
      ["url(':x')", 'parse ":x": missing protocol scheme'],
      ["url('https://[::1/')", `parse "https://[::1/": missing ']' in host`],
      ["url('https://[1.2.3.4]/')", 'parse "https://[1.2.3.4]/": invalid IP-literal'],
      ["url('https://[foo]/')", 'parse "https://[foo]/": invalid host: '],
      ["url('https://exa mple.com/')", 'parse "https://exa mple.com/": invalid character " " in host name'],
      ["url('https://example.com/%zz')", 'parse "https://example.com/%zz": invalid URL escape "%zz"'],
      ["url('https://us er@example.com/')", 'net/url: invalid userinfo'],
      ['url("https://example.com/\\t")', 'parse "https://example.com/\\t": net/url: invalid control character in URL'],
      // Accepted by ParseRequestURI (the fragment reads as part of the query) but not by Parse.
      ["url('http://h/p#frag?x=%zz')", 'parse "http://h/p#frag?x=%zz": invalid URL escape "%zz"'],
    ]);
  });

  describe('types', () => {
    it('type-checks the functions', () => {
      expect(check("url('/a').getQuery()")).toMatchObject({ valid: true });
      expect(check("url('/a').getQuery()['k'][0] + url('/a').getHost()")).toMatchObject({ valid: true, type: 'string' });
      expect(check("isURL('/a')")).toMatchObject({ valid: true, type: 'bool' });
    });

    it.each(['url(1)', 'isURL(1)', "url('/a').getHost(1)", "url('/a') == '/a'", "'/a'.getHost()"])('%s does not type-check', (expr) => {
      expect(check(expr).valid).toBe(false);
    });
  });
});

describe('semver library', () => {
  describe('values', () => {
    it.each<[string, unknown]>([
      ['isSemver("1.2.3-beta.1+build.1")', true],
      ['isSemver("")', false],
      ['isSemver("hello")', false],
      ['isSemver("v1.0.0")', false],
      ['isSemver(" 1.0.0")', false],
      ['isSemver("1. 0.0")', false],
      ['isSemver("1.0.0 ")', false],
      ['isSemver("01.01.01")', false],
      ['isSemver("1")', false],
      ['isSemver("1.1")', false],
      ['isSemver("", true)', false],
      ['isSemver(" 1.0.0", true)', false],
      ['isSemver("1. 0.0", true)', false],
      ['isSemver("1.0.0 ", true)', false],
      ['isSemver("v1.0.0", true)', true],
      ['isSemver("01.01.01", true)', true],
      ['isSemver("1", true)', true],
      ['isSemver("1.1", true)', true],
      ['isSemver("1.1-alpha", true)', false],
      ['isSemver("1.0.0", false)', true],
      ['isSemver("v1.0.0", false)', false],
      ['semver("v01.01", true) == semver("1.1.0")', true],
      ['semver("1.2.03-alpha", true) == semver("1.2.3-alpha")', true],
      ['semver("1.2.0-alpha", true) == semver("1.2.0-alpha")', true],
      ['semver("1.2.3") == semver("1.2.3")', true],
      ['semver("1.2.3") == semver("1.0.0")', false],
      ['semver("1.2.3") == semver("1.2.3+build.5")', true],
      ['semver("1.0.0").isLessThan(semver("1.2.3"))', true],
      ['semver("1.0.0").isLessThan(semver("1.0.0"))', false],
      ['semver("1.2.3").isGreaterThan(semver("1.0.0"))', true],
      ['semver("1.0.0").isGreaterThan(semver("1.0.0"))', false],
      ['semver("1.2.3").compareTo(semver("1.2.3"))', 0n],
      ['semver("1.0.0").compareTo(semver("1.2.3"))', -1n],
      ['semver("1.2.3").compareTo(semver("1.0.0"))', 1n],
      ['semver("1.2.3").compareTo(semver("0.1.2"))', 1n],
      ['semver("1.2.3").major()', 1n],
      ['semver("1.2.3").minor()', 2n],
      ['semver("1.2.3").patch()', 3n],
      ['semver("18446744073709551615.0.0").major()', -1n],
      ['semver("10.0.0").isGreaterThan(semver("9.0.0"))', true],
    ])('%s', (expr, want) => {
      expect(run(expr)).toBe(want);
    });

    // semver.org's precedence example, in increasing order.
    const ordered = [
      '1.0.0-alpha',
      '1.0.0-alpha.1',
      '1.0.0-alpha.beta',
      '1.0.0-beta',
      '1.0.0-beta.2',
      '1.0.0-beta.11',
      '1.0.0-rc.1',
      '1.0.0',
      '1.0.1',
      '1.1.0',
      '2.0.0',
    ];
    it.each(ordered.slice(1).map((v, i): [string, string] => [ordered[i], v]))('%s < %s', (a, b) => {
      expect(run(`semver("${a}").isLessThan(semver("${b}")) && semver("${b}").compareTo(semver("${a}")) == 1`)).toBe(true);
    });
  });

  describe('errors', () => {
    errors([
      ['semver("v1.0")', 'No Major.Minor.Patch elements found'],
      ['semver("")', 'Version string empty'],
      ['semver("01.0.0")', 'Major number must not contain leading zeroes "01"'],
      ['semver("1.01.0")', 'Minor number must not contain leading zeroes "01"'],
      ['semver("1.0.01")', 'Patch number must not contain leading zeroes "01"'],
      ['semver("a.0.0")', 'Invalid character(s) found in major number "a"'],
      ['semver("1.0.x")', 'Invalid character(s) found in patch number "x"'],
      ['semver(".1.0")', 'strconv.ParseUint: parsing "": invalid syntax'],
      ['semver("18446744073709551616.0.0")', 'strconv.ParseUint: parsing "18446744073709551616": value out of range'],
      ['semver("1.0.0-01")', 'Numeric PreRelease version must not contain leading zeroes "01"'],
      ['semver("1.0.0-a..b")', 'Prerelease is empty'],
      ['semver("1.0.0-a_b")', 'Invalid character(s) found in prerelease "a_b"'],
      ['semver("1.0.0+")', 'Build meta data is empty'],
      ['semver("1.0-rc.1", true)', 'Invalid character(s) found in minor number "0-rc"'],
      ['semver("1.0.0+a_b")', 'Invalid character(s) found in build meta data "a_b"'],
      ['semver("1-rc", true)', 'short version cannot contain PreRelease/Build meta data'],
    ]);
  });

  describe('types', () => {
    it('type-checks the functions', () => {
      expect(check('semver("1.2.3").major() + 1')).toMatchObject({ valid: true, type: 'int' });
      expect(check('semver("1.2.3", true).isLessThan(semver("2.0.0"))')).toMatchObject({ valid: true, type: 'bool' });
    });

    it.each(['isSemver([1, 2, 3])', 'semver(1)', 'semver("1.0.0", 1)', 'semver("1.0.0").isLessThan(quantity("1"))', 'semver("1.0.0") == "1.0.0"'])(
      '%s does not type-check',
      (expr) => {
        expect(check(expr).valid).toBe(false);
      },
    );
  });
});
