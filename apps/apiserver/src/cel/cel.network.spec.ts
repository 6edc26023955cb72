import { describe, expect, it } from '@jest/globals';
import { Optional } from '@marcbachmann/cel-js';
import { celBase } from './cel.environment.js';

function run(expr: string): unknown {
  return celBase().clone().evaluate(expr, {}) as unknown;
}

/** The message of the evaluation error, or fails when the expression evaluates. */
function evalError(expr: string): string {
  try {
    run(expr);
  } catch (e) {
    return String((e as Error).message).split('\n')[0]!;
  }
  throw new Error(`${expr} evaluated without error`);
}

function compileError(expr: string): string {
  const r = celBase().clone().check(expr);
  expect(r.valid).toBe(false);
  return String(r.error?.message).split('\n')[0]!;
}

/** An optional's content: undefined for none. */
function optionalValue(v: unknown): unknown {
  expect(v).toBeInstanceOf(Optional);
  const o = v as Optional;
  return o.hasValue() ? o.value() : undefined;
}

describe('CEL IP library (kube library/ip.go)', () => {
  // kube's ip_test.go TestIP, one row each.
  it.each([
    ['ip("192.168.0.1") == ip("192.168.0.1")', true],
    ['isIP("192.168.0.1")', true],
    ['isIP("192.168.0.1.0")', false],
    ['ip.isCanonical("127.0.0.1")', true],
    ['ip("192.168.0.1").family()', 4n],
    ['ip("0.0.0.0").isUnspecified()', true],
    ['ip("127.0.0.1").isUnspecified()', false],
    ['ip("127.0.0.1").isLoopback()', true],
    ['ip("1.2.3.4").isLoopback()', false],
    ['ip("224.0.0.1").isLinkLocalMulticast()', true],
    ['ip("224.0.1.1").isLinkLocalMulticast()', false],
    ['ip("169.254.169.254").isLinkLocalUnicast()', true],
    ['ip("192.168.0.1").isLinkLocalUnicast()', false],
    ['ip("192.168.0.1").isGlobalUnicast()', true],
    ['ip("255.255.255.255").isGlobalUnicast()', false],
    ['ip("2001:db8::68") == ip("2001:db8::68")', true],
    ['isIP("2001:db8::68")', true],
    ['isIP("2001:db8:::68")', false],
    ['ip.isCanonical("2001:db8::68")', true],
    ['ip.isCanonical("2001:DB8::68")', false],
    ['ip("2001:db8::68").family()', 6n],
    ['ip("::").isUnspecified()', true],
    ['ip("::1").isUnspecified()', false],
    ['ip("::1").isLoopback()', true],
    ['ip("2001:db8::abcd").isLoopback()', false],
    ['ip("ff02::1").isLinkLocalMulticast()', true],
    ['ip("fd00::1").isLinkLocalMulticast()', false],
    ['ip("fe80::1").isLinkLocalUnicast()', true],
    ['ip("fd80::1").isLinkLocalUnicast()', false],
    ['ip("2001:db8::abcd").isGlobalUnicast()', true],
    ['ip("ff00::1").isGlobalUnicast()', false],
    ['string(ip("192.168.0.1"))', '192.168.0.1'],
    ['type(ip("192.168.0.1")) == net.IP', true],
  ])('%s', (expr, want) => {
    expect(run(expr)).toBe(want);
  });

  it.each([
    ['ip("192.168.0.1.0")', 'IP Address "192.168.0.1.0" parse error during conversion from string: ParseAddr("192.168.0.1.0"): IPv4 address too long'],
    ['ip.isCanonical("127.0.0.1.0")', 'IP Address "127.0.0.1.0" parse error during conversion from string: ParseAddr("127.0.0.1.0"): IPv4 address too long'],
    [
      'ip("2001:db8:::68")',
      'IP Address "2001:db8:::68" parse error during conversion from string: ParseAddr("2001:db8:::68"): each colon-separated field must have at least one digit (at ":68")',
    ],
    [
      'ip.isCanonical("2001:db8:::68")',
      'IP Address "2001:db8:::68" parse error during conversion from string: ParseAddr("2001:db8:::68"): each colon-separated field must have at least one digit (at ":68")',
    ],
  ])('%s fails as in kube', (expr, want) => {
    expect(evalError(expr)).toBe(want);
  });

  it('passing a CIDR to isIP is a compile error', () => {
    expect(compileError('isIP(cidr("192.168.0.0/24"))')).toContain('no matching overload');
    expect(compileError('ip(1)')).toContain('no matching overload');
    expect(compileError('ip("1.2.3.4").family(1)')).toContain('no matching overload');
  });

  describe("netip's syntax and kube's rejections", () => {
    const parseError = (s: string, detail: string): string =>
      `IP Address ${JSON.stringify(s)} parse error during conversion from string: ParseAddr(${JSON.stringify(s)}): ${detail}`;
    it.each([
      ['010.0.0.1', 'IPv4 field has octet with leading zero'],
      ['1.2.3.00', 'IPv4 field has octet with leading zero'],
      ['256.0.0.1', 'IPv4 field has value >255'],
      ['1.2.3', 'IPv4 address too short'],
      ['1..2.3', 'IPv4 field must have at least one digit (at ".2.3")'],
      ['1.2.3.', 'IPv4 field must have at least one digit (at ".")'],
      ['1.2.3.4x', 'unexpected character (at "x")'],
      ['1.2.3.4/24', 'unexpected character (at "/24")'],
      ['', 'unable to parse IP'],
      ['localhost', 'unable to parse IP'],
      ['%eth0', 'missing IPv6 address'],
      ['fe80::1%', 'zone must be a non-empty string'],
      ['2001:db8::12345', 'each group must have 4 or less digits (at "12345")'],
      ['1:2:3:4:5:6:7', 'address string too short'],
      ['1:2:3:4:5:6:7:8:9', 'trailing garbage after address (at "9")'],
      ['1:2:3:4:5:6:7:8::', 'the :: must expand to at least one field of zeros'],
      ['1::2::3', 'multiple :: in address (at ":3")'],
      ['1:2:3:4::5:6:7:8', 'the :: must expand to at least one field of zeros'],
      ['1:2', 'address string too short'],
      ['1:', 'colon must be followed by more characters (at ":")'],
      ['1:2:3:4:5:6:7:8x', 'unexpected character, want colon (at "x")'],
      ['1:2:1.2.3.4', 'embedded IPv4 address must replace the final 2 fields of the address (at "1.2.3.4")'],
      ['::1.2.3.04', 'IPv4 field has octet with leading zero'],
      ['1:2:3:4:5:6:7:1.2.3.4', 'embedded IPv4 address must replace the final 2 fields of the address (at "1.2.3.4")'],
    ])('ip(%j)', (s, detail) => {
      expect(evalError(`ip(${JSON.stringify(s)})`)).toBe(parseError(s, detail));
      expect(run(`isIP(${JSON.stringify(s)})`)).toBe(false);
    });

    it('rejects zones and IPv4-mapped IPv6 addresses', () => {
      expect(evalError('ip("fe80::1%eth0")')).toBe('IP address "fe80::1%eth0" with zone value is not allowed');
      expect(evalError('ip("::ffff:1.2.3.4")')).toBe('IPv4-mapped IPv6 address "::ffff:1.2.3.4" is not allowed');
      expect(evalError('ip("::ffff:c0a8:1")')).toBe('IPv4-mapped IPv6 address "::ffff:c0a8:1" is not allowed');
      expect(evalError('ip.isCanonical("fe80::1%eth0")')).toBe('IP address "fe80::1%eth0" with zone value is not allowed');
      for (const s of ['fe80::1%eth0', '::ffff:1.2.3.4', '::ffff:c0a8:1']) expect(run(`isIP("${s}")`)).toBe(false);
      // Not mapped: the IPv4-compatible form and a neighbour of ::ffff:0:0/96.
      expect(run('string(ip("::1.2.3.4"))')).toBe('::102:304');
      expect(run('string(ip("::fffe:1.2.3.4"))')).toBe('::fffe:102:304');
    });

    it("quotes the input as Go's %q does", () => {
      expect(evalError('ip("1.2.3.é")')).toBe(parseError('1.2.3.é', 'unexpected character (at "é")'));
      expect(evalError('ip("1.2.3.4\\n")')).toBe(
        'IP Address "1.2.3.4\\n" parse error during conversion from string: ParseAddr("1.2.3.4\\n"): unexpected character (at "\\n")',
      );
      expect(evalError('ip("1.2.3.4\\u00ad\\"")')).toBe(
        'IP Address "1.2.3.4\\u00ad\\"" parse error during conversion from string: ParseAddr("1.2.3.4\\u00ad\\""): unexpected character (at "\\u00ad\\"")',
      );
    });
  });

  it.each([
    ['2001:0db8:0:0:1:0:0:1', '2001:db8::1:0:0:1'],
    ['2001:db8:0:0:1:0:0:0', '2001:db8:0:0:1::'],
    ['2001:DB8::ABCD', '2001:db8::abcd'],
    ['2001:db8::0:0:0:abcd', '2001:db8::abcd'],
    ['2001:db8:0:1:1:1:1:1', '2001:db8:0:1:1:1:1:1'],
    ['0:0:0:0:0:0:0:0', '::'],
    ['0:0:0:0:0:0:0:1', '::1'],
    ['1:0:0:0:0:0:0:0', '1::'],
    ['fe80::0001', 'fe80::1'],
    ['1.2.3.4', '1.2.3.4'],
    ['0.0.0.0', '0.0.0.0'],
  ])('string(ip(%j)) is %j, the canonical form', (s, want) => {
    expect(run(`string(ip("${s}"))`)).toBe(want);
    expect(run(`ip.isCanonical("${s}")`)).toBe(s === want);
  });

  it.each([
    ['ip("::1") == ip("0:0::1")', true],
    ['ip("1.2.3.4") == ip("::102:304")', false],
    ['ip("1.2.3.4") != ip("1.2.3.5")', true],
    ['[ip("1.2.3.4"), ip("::1")] == [ip("1.2.3.4"), ip("::0:1")]', true],
    ['ip("10.0.0.1") in [ip("10.0.0.2"), ip("10.0.0.1")]', true],
    ['dyn(ip("::1")) == ip("::1")', true],
    ['type(ip("::1")) == net.CIDR', false],
    ['ip("0.0.0.0").isGlobalUnicast()', false],
    ['ip("::").isGlobalUnicast()', false],
    ['ip("127.0.0.1").isGlobalUnicast()', false],
    ['ip("224.0.0.1").isGlobalUnicast()', false],
    ['ip("169.254.0.1").isGlobalUnicast()', false],
    ['ip("fe80::1").isGlobalUnicast()', false],
    ['ip("10.0.0.1").isGlobalUnicast()', true],
    ['ip("fd00::1").isGlobalUnicast()', true],
    ['ip("127.255.255.255").isLoopback()', true],
    ['ip("::2").isLoopback()', false],
    ['ip("224.0.0.255").isLinkLocalMulticast()', true],
    ['ip("ff12::1").isLinkLocalMulticast()', true],
    ['ip("ff01::1").isLinkLocalMulticast()', false],
    ['ip("febf::1").isLinkLocalUnicast()', true],
    ['ip("fec0::1").isLinkLocalUnicast()', false],
    ['ip("169.255.0.1").isLinkLocalUnicast()', false],
  ])('%s', (expr, want) => {
    expect(run(expr)).toBe(want);
  });
});

describe('CEL CIDR library (kube library/cidr.go)', () => {
  // kube's cidr_test.go TestCIDR, one row each.
  it.each([
    ['cidr(dyn("192.168.0.0/24")) == cidr("192.168.0.0/24")', true],
    ['cidr("192.168.0.0/24").containsIP(ip("192.168.0.1"))', true],
    ['cidr("192.168.0.0/24").containsIP(ip("192.168.1.1"))', false],
    ['cidr("192.168.0.0/24").containsIP("192.168.0.1")', true],
    ['cidr("192.168.0.0/24").containsIP("192.168.1.1")', false],
    ['cidr("192.168.0.0/24").containsCIDR(cidr("192.168.0.0/25"))', true],
    ['cidr("192.168.0.0/24").containsCIDR(cidr("192.168.0.0/23"))', false],
    ['cidr("192.168.0.0/24").containsCIDR("192.168.0.0/25")', true],
    ['cidr("192.168.0.0/24").containsCIDR("192.168.0.0/23")', false],
    ['cidr("192.168.0.0/24").ip() == ip("192.168.0.0")', true],
    ['cidr("192.168.0.0/24").masked() == cidr("192.168.0.0/24")', true],
    ['cidr("192.168.0.1/24").masked() == cidr("192.168.0.0/24")', true],
    ['cidr("192.168.0.0/24").prefixLength()', 24n],
    ['cidr("2001:db8::/32") == cidr("2001:db8::/32")', true],
    ['cidr("2001:db8::/32").containsIP(ip("2001:db8::1"))', true],
    ['cidr("2001:db8::/32").containsIP(ip("2001:dc8::1"))', false],
    ['cidr("2001:db8::/32").containsIP("2001:db8::1")', true],
    ['cidr("2001:db8::/32").containsIP("2001:dc8::1")', false],
    ['cidr("2001:db8::/32").containsCIDR(cidr("2001:db8::/33"))', true],
    ['cidr("2001:db8::/32").containsCIDR(cidr("2001:db8::/31"))', false],
    ['cidr("2001:db8::/32").containsCIDR("2001:db8::/33")', true],
    ['cidr("2001:db8::/32").containsCIDR("2001:db8::/31")', false],
    ['cidr("2001:db8::/32").ip() == ip("2001:db8::")', true],
    ['cidr("2001:db8::/32").masked() == cidr("2001:db8::/32")', true],
    ['cidr("2001:db8:1::/32").masked() == cidr("2001:db8::/32")', true],
    ['cidr("2001:db8::/32").prefixLength()', 32n],
    ['string(cidr("192.168.0.0/24"))', '192.168.0.0/24'],
    ['type(cidr("192.168.0.0/24")) == net.CIDR', true],
  ])('%s', (expr, want) => {
    expect(run(expr)).toBe(want);
  });

  it.each([
    [
      'cidr("192.168.0.0/")',
      'network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix("192.168.0.0/"): bad bits after slash: ""',
    ],
    [
      'cidr("2001:db8::/")',
      'network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix("2001:db8::/"): bad bits after slash: ""',
    ],
  ])('%s fails as in kube', (expr, want) => {
    expect(evalError(expr)).toBe(want);
  });

  it('cidr(int) is a compile error', () => {
    expect(compileError('cidr(192168)')).toContain('no matching overload');
    expect(compileError('cidr("10.0.0.0/8").containsIP(1)')).toContain('no matching overload');
    expect(compileError('isCIDR(ip("10.0.0.1"))')).toContain('no matching overload');
  });

  describe('parsing', () => {
    const prefixError = (s: string, detail: string): string =>
      `network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix(${JSON.stringify(s)}): ${detail}`;
    it.each([
      ['10.0.0.0/33', 'prefix length out of range'],
      ['::/129', 'prefix length out of range'],
      ['10.0.0.0/024', 'bad bits after slash: "024"'],
      ['10.0.0.0/+8', 'bad bits after slash: "+8"'],
      ['10.0.0.0/-1', 'bad bits after slash: "-1"'],
      ['10.0.0.0/99999999999999999999', 'bad bits after slash: "99999999999999999999"'],
      ['10.0.0.0/1000', 'prefix length out of range'],
      ['10.0.0.0', "no '/'"],
      ['010.0.0.0/8', 'ParseAddr("010.0.0.0"): IPv4 field has octet with leading zero'],
      ['fe80::1%eth0/64', 'IPv6 zones cannot be present in a prefix'],
      ['/8', 'ParseAddr(""): unable to parse IP'],
    ])('cidr(%j)', (s, detail) => {
      expect(evalError(`cidr(${JSON.stringify(s)})`)).toBe(prefixError(s, detail));
      expect(run(`isCIDR(${JSON.stringify(s)})`)).toBe(false);
    });

    it('rejects IPv4-mapped IPv6 networks', () => {
      expect(evalError('cidr("::ffff:1.2.3.0/120")')).toBe(
        'network address parse error during conversion from string: IPv4-mapped IPv6 address "::ffff:1.2.3.0/120" is not allowed',
      );
      expect(run('isCIDR("::ffff:1.2.3.0/120")')).toBe(false);
    });

    it.each(['10.0.0.0/8', '10.0.0.1/8', '0.0.0.0/0', '::/0', '2001:db8::1/128', '10.0.0.0/0'])('isCIDR(%j)', (s) => {
      expect(run(`isCIDR("${s}")`)).toBe(true);
    });
  });

  it('keeps the host bits of a non-canonical CIDR, as kube does', () => {
    expect(run('string(cidr("192.168.0.1/24"))')).toBe('192.168.0.1/24');
    expect(run('string(cidr("192.168.0.1/24").masked())')).toBe('192.168.0.0/24');
    expect(run('string(cidr("192.168.0.1/24").ip())')).toBe('192.168.0.1');
    expect(run('cidr("192.168.0.1/24").ip().family()')).toBe(4n);
    expect(run('cidr("192.168.0.0/24") == cidr("192.168.0.0/24").masked()')).toBe(true);
    expect(run('cidr("192.168.0.1/24") == cidr("192.168.0.1/24").masked()')).toBe(false);
    expect(run('string(cidr("2001:DB8:0:0:1::/32"))')).toBe('2001:db8:0:0:1::/32');
    expect(run('string(cidr("2001:db8:ffff:1::/33").masked())')).toBe('2001:db8:8000::/33');
    expect(run('string(cidr("10.1.2.3/0").masked())')).toBe('0.0.0.0/0');
    expect(run('cidr("::1/128").ip().family()')).toBe(6n);
  });

  it.each([
    // kube's fix of containsCIDR (kubernetes#130450): the other network is masked too.
    ['cidr("192.168.0.0/16").containsCIDR(cidr("192.168.10.0/24"))', true],
    ['cidr("192.168.0.0/16").containsCIDR("192.168.0.1/32")', true],
    ['cidr("192.168.1.0/24").containsCIDR(cidr("192.168.2.0/24"))', false],
    ['cidr("192.168.0.5/16").containsCIDR("192.168.200.7/17")', true],
    ['cidr("10.0.0.0/8").containsCIDR("10.0.0.0/8")', true],
    ['cidr("0.0.0.0/0").containsCIDR("::/0")', false],
    ['cidr("::/0").containsCIDR("0.0.0.0/0")', false],
    ['cidr("::/0").containsCIDR("2001:db8::/32")', true],
    ['cidr("0.0.0.0/0").containsIP("255.255.255.255")', true],
    ['cidr("0.0.0.0/0").containsIP("::1")', false],
    ['cidr("::/0").containsIP("1.2.3.4")', false],
    ['cidr("10.0.0.1/8").containsIP("10.255.0.0")', true],
    ['cidr("10.0.0.1/32").containsIP("10.0.0.1")', true],
    ['cidr("10.0.0.1/32").containsIP("10.0.0.0")', false],
    ['cidr("10.0.0.0/8") == cidr("10.0.0.0/8")', true],
    ['cidr("10.0.0.0/8") == cidr("10.0.0.0/16")', false],
    ['cidr("10.0.0.0/8") != cidr("10.0.0.1/8")', true],
    ['cidr(dyn("2001:db8::/32")).containsIP(dyn("2001:db8::1"))', true],
    ['cidr("2001:db8::/32").containsIP(dyn(ip("2001:db8::1")))', true],
    ['cidr("2001:db8::/32").prefixLength() == 32', true],
  ])('%s', (expr, want) => {
    expect(run(expr)).toBe(want);
  });

  it('containsIP of a string that is no IP answers no such overload, containsCIDR the parse error (as kube)', () => {
    expect(evalError('cidr("10.0.0.0/8").containsIP("10.0.0.01")')).toBe('no such overload');
    expect(evalError('cidr("10.0.0.0/8").containsCIDR("10.0.0.0/33")')).toBe(
      'network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix("10.0.0.0/33"): prefix length out of range',
    );
  });
});

describe('CEL format library (kube library/format.go)', () => {
  const DNS1123_LABEL_ERR =
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
  const DNS1123_SUBDOMAIN_ERR =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
  const DNS1035_LABEL_ERR =
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";

  // kube's format_test.go TestFormat.
  it.each([
    ['format.dns1123Label().validate("my-label-name")', undefined],
    ['format.dns1123Subdomain().validate("apiextensions.k8s.io")', undefined],
    ['format.qualifiedName().validate("apiextensions.k8s.io/v1beta1")', undefined],
    ['format.dns1123LabelPrefix().validate("my-label-prefix-")', undefined],
    ['format.dns1123SubdomainPrefix().validate("mysubdomain.prefix.-")', undefined],
    ['format.dns1035LabelPrefix().validate("my-label-prefix-")', undefined],
    ['format.uri().validate("http://example.com")', undefined],
    ['format.uuid().validate("123e4567-e89b-12d3-a456-426614174000")', undefined],
    ['format.byte().validate("aGVsbG8=")', undefined],
    ['format.date().validate("2021-01-01")', undefined],
    ['format.datetime().validate("2021-01-01T00:00:00Z")', undefined],
    ['format.dns1123Label().validate("contains a space")', [DNS1123_LABEL_ERR]],
    ['format.dns1123Subdomain().validate("contains a space")', [DNS1123_SUBDOMAIN_ERR]],
    ['format.dns1035Label().validate("contains a space")', [DNS1035_LABEL_ERR]],
    [
      'format.qualifiedName().validate("contains a space")',
      [
        "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
      ],
    ],
    ['format.dns1123LabelPrefix().validate("contains a space-")', [DNS1123_LABEL_ERR]],
    ['format.dns1123SubdomainPrefix().validate("contains a space-")', [DNS1123_SUBDOMAIN_ERR]],
    ['format.dns1035LabelPrefix().validate("contains a space-")', [DNS1035_LABEL_ERR]],
    ['format.dns1123Label().validate("my-label-name")', undefined],
    ['format.dns1123Subdomain().validate("example.com")', undefined],
    ['format.dns1035Label().validate("my-label-name")', undefined],
    ['format.qualifiedName().validate("my.name")', undefined],
    ['format.byte().validate("aGVsbG8")', ['invalid base64']],
    ['format.date().validate("2020-01-01")', undefined],
    ['format.date().validate("2020-01-32")', ['invalid date']],
    ['format.datetime().validate("2020-01-01T00:00:00Z")', undefined],
    ['format.datetime().validate("2020-01-32T00:00:00Z")', ['invalid datetime']],
    ['format.labelValue().validate("my-cool-label-Value")', undefined],
    [
      'format.labelValue().validate("my-cool-label-Value!!\\n\\n!!!")',
      [
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
      ],
    ],
  ])('%s', (expr, want) => {
    expect(optionalValue(run(expr))).toEqual(want);
  });

  const NAMES = [
    'dns1123Label',
    'dns1123Subdomain',
    'dns1035Label',
    'qualifiedName',
    'dns1123LabelPrefix',
    'dns1123SubdomainPrefix',
    'dns1035LabelPrefix',
    'labelValue',
    'uri',
    'uuid',
    'byte',
    'date',
    'datetime',
  ];

  it('format.named finds every constant format, and only those', () => {
    expect(run('format.named("unknown").hasValue()')).toBe(false);
    expect(run('format.named("DNS1123Label").hasValue()')).toBe(false);
    for (const lhs of NAMES) {
      expect(run(`format.named("${lhs}").hasValue()`)).toBe(true);
      expect(run(`format.named("${lhs}").value() == format.${lhs}()`)).toBe(true);
      for (const rhs of NAMES.filter((n) => n !== lhs)) expect(run(`format.${lhs}() == format.${rhs}()`)).toBe(false);
    }
  });

  it('types: optional<kubernetes.NamedFormat>, optional<list<string>>', () => {
    const env = celBase().clone();
    expect(String(env.check('format.named("uri")').type)).toBe('optional<kubernetes.NamedFormat>');
    expect(String(env.check('format.uri()').type)).toBe('kubernetes.NamedFormat');
    expect(String(env.check('format.uri().validate("x")').type)).toBe('optional<list<string>>');
    expect(compileError('format.uri().validate(1)')).toContain('no matching overload');
    expect(compileError('format.named(1)')).toContain('no matching overload');
    expect(compileError('format.nope()')).toContain('no matching overload');
  });

  it('is used as kube documents it (rule and messageExpression)', () => {
    expect(run('!format.dns1123Label().validate("ok-name").hasValue()')).toBe(true);
    expect(run('format.dns1123Label().validate("Bad_Name").value().join("\\n")')).toBe(DNS1123_LABEL_ERR);
    expect(run('format.named("dns1035Label").value().validate("1abc").value()')).toEqual([DNS1035_LABEL_ERR]);
    expect(run('format.named("x").orValue(format.uuid()) == format.uuid()')).toBe(true);
    expect(optionalValue(run(`format.dns1123Label().validate("${'a'.repeat(64)}")`))).toEqual(['must be no more than 63 characters']);
    expect(optionalValue(run('format.dns1123Label().validate("a.b")'))).toEqual(['must not contain dots']);
  });

  it.each([
    ['format.dns1123LabelPrefix().validate("a-")', undefined],
    ['format.dns1123LabelPrefix().validate("a")', undefined],
    // kube masks the dash and the character before it: "a.-" is checked as "aa".
    ['format.dns1123LabelPrefix().validate("a.-")', undefined],
    ['format.dns1123SubdomainPrefix().validate("a-.-")', undefined],
    ['format.dns1035LabelPrefix().validate("1-")', undefined],
    ['format.dns1035LabelPrefix().validate("1a-")', [DNS1035_LABEL_ERR]],
    ['format.dns1035LabelPrefix().validate("a1-")', undefined],
  ])('%s', (expr, want) => {
    expect(optionalValue(run(expr))).toEqual(want);
  });

  it('a lone "-" for a prefix format fails as kube does (a Go panic reported as an internal error)', () => {
    expect(evalError('format.dns1123LabelPrefix().validate("-")')).toBe('internal error: runtime error: slice bounds out of range [:-1]');
  });

  describe('uri: url.ParseRequestURI', () => {
    it.each([
      'http://example.com',
      'https://user:pass@example.com:8443/a/b?c=d#e',
      'http://[::1]:80/',
      'http://[fe80::1%25en0]/',
      'http://[::ffff:1.2.3.4]/',
      '/absolute/path',
      '//also/a/path',
      '*',
      'mailto:someone@example.com',
      'urn:isbn:0451450523',
      'http://example.com:/',
      'http://ü.example/',
      'http://example.com/a b',
      'HTTP://EXAMPLE.COM',
    ])('%j is valid', (s) => {
      expect(optionalValue(run(`format.uri().validate(${JSON.stringify(s)})`))).toBeUndefined();
    });

    it.each([
      ['', 'empty url'],
      ['example.com', 'invalid URI for request'],
      ['relative/path', 'invalid URI for request'],
      ['://x', 'missing protocol scheme'],
      ['http://exa mple.com/', 'invalid character " " in host name'],
      ['https://a{b}/', 'invalid character "{" in host name'],
      ['http://example.com:abc/', 'invalid port ":abc" after host'],
      ['http://[::1', "missing ']' in host"],
      ['http://[::1]x/', 'invalid port "x" after host'],
      ['http://a[::1]/', 'invalid IP-literal'],
      ['https://[1.2.3.4]/', 'invalid IP-literal'],
      ['https://[v1.x]/', 'invalid host: ParseAddr("v1.x"): unexpected character (at "v1.x")'],
      ['http://[fe80::1%en0]/', 'invalid URL escape "%en"'],
      ['http://[fe80::1%25%0A]/', 'invalid URL escape "%0A"'],
      ['http://ex%41mple.com/', 'invalid URL escape "%41"'],
      ['https://ü@example.com/', 'net/url: invalid userinfo'],
      ['http://us%zzer@example.com/', 'invalid URL escape "%zz"'],
      ['/a%zz', 'invalid URL escape "%zz"'],
      ['/a%2', 'invalid URL escape "%2"'],
      ['https://example.com/%zé', 'invalid URL escape "%z\\xc3"'],
      ['http://example.com/\u0001', 'net/url: invalid control character in URL'],
      ['http://example.com/\t', 'net/url: invalid control character in URL'],
    ])('%j: %s', (s, err) => {
      const quoted = JSON.stringify(s).replace('\\u0001', '\\x01');
      expect(optionalValue(run(`format.uri().validate(${JSON.stringify(s)})`))).toEqual([`parse ${quoted}: ${err}`]);
    });
  });

  it.each([
    ['uuid', '123E4567-E89B-12D3-A456-426614174000', undefined],
    ['uuid', '123e4567e89b12d3a456426614174000', undefined],
    ['uuid', '123e4567-e89b-12d3-a456-42661417400', ['does not match the UUID format']],
    ['uuid', '123e4567-e89b-12d3-a456-426614174000\n', ['does not match the UUID format']],
    ['uuid', '', ['does not match the UUID format']],
    ['byte', '', ['invalid base64']],
    ['byte', 'aGVsbA==', undefined],
    ['byte', 'aGVsbG8h', undefined],
    ['byte', 'a+/=', undefined],
    ['byte', 'aGVsbG8=\n', ['invalid base64']],
    ['byte', 'aGVs_G8=', ['invalid base64']],
    ['date', '2020-02-29', undefined],
    ['date', '2021-02-29', ['invalid date']],
    ['date', '2000-02-29', undefined],
    ['date', '1900-02-29', ['invalid date']],
    ['date', '2021-04-31', ['invalid date']],
    ['date', '2021-13-01', ['invalid date']],
    ['date', '2021-00-01', ['invalid date']],
    ['date', '2021-1-01', ['invalid date']],
    ['date', '21-01-01', ['invalid date']],
    ['date', '2021-01-01T00:00:00Z', ['invalid date']],
    ['datetime', '2021-01-01T23:59:59.999999+01:00', undefined],
    ['datetime', '2021-01-01t10:00:00z', undefined],
    ['datetime', '2021-01-01T10:00:00-07:30', undefined],
    ['datetime', '2021-01-01T24:00:00Z', ['invalid datetime']],
    ['datetime', '2021-01-01T10:60:00Z', ['invalid datetime']],
    ['datetime', '2021-01-01T10:00:00', ['invalid datetime']],
    ['datetime', '2021-01-01 10:00:00Z', ['invalid datetime']],
    ['datetime', '2021-01-01', ['invalid datetime']],
    ['datetime', '', ['invalid datetime']],
    // strfmt checks only the first two parts split at 't' (kube-openapi's quirk).
    ['datetime', '2021-01-01T10:00:00ZT', undefined],
  ])('format.%s().validate(%j)', (name, s, want) => {
    expect(optionalValue(run(`format.${name}().validate(${JSON.stringify(s)})`))).toEqual(want);
  });
});
