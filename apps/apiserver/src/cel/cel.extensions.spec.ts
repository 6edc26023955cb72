import { describe, expect, it } from '@jest/globals';
import { FIND_ALL_SCAN_LIMIT, celBase, celErrorText } from './cel.environment.js';

// Cases from google/cel-go ext/*_test.go, through the server's shared environment.
const env = celBase().clone().registerVariable('a', 'dyn').registerVariable('b', 'dyn').registerVariable('m', 'dyn');

function evaluate(expr: string, vars: Record<string, unknown> = {}): unknown {
  return env.evaluate(expr, { a: null, b: null, m: null, ...vars }) as unknown;
}

function errorOf(expr: string, vars: Record<string, unknown> = {}): string {
  try {
    evaluate(expr, vars);
  } catch (e) {
    return celErrorText(e);
  }
  return '(no error)';
}

function truths(cases: string[]): void {
  it.each(cases)('%s', (expr) => {
    expect(evaluate(expr)).toBe(true);
  });
}

function errors(cases: [string, string][]): void {
  it.each(cases)('%s fails with %s', (expr, text) => {
    expect(errorOf(expr)).toContain(text);
  });
}

describe('sets', () => {
  truths([
    'sets.contains([], [])',
    'sets.contains([1], [])',
    'sets.contains([1], [1])',
    'sets.contains([1], [1, 1])',
    'sets.contains([1, 1], [1])',
    'sets.contains([2, 1], [1])',
    'sets.contains([1, 2, 3, 4], [2, 3])',
    'sets.contains([1], [1.0, 1])',
    'sets.contains([1, 2], [2u, 2.0])',
    'sets.contains([1, 2u], [2, 2.0])',
    'sets.contains([1, 2.0, 3u], [1.0, 2u, 3])',
    'sets.contains([[1], [2, 3]], [[2, 3.0]])',
    '!sets.contains([1], [2])',
    '!sets.contains([1], [1, 2])',
    '!sets.contains([1], ["1", 1])',
    '!sets.contains([1], [1.1, 1u])',
    'sets.equivalent([], [])',
    'sets.equivalent([1], [1])',
    'sets.equivalent([1], [1, 1])',
    'sets.equivalent([1, 1], [1])',
    'sets.equivalent([1], [1u, 1.0])',
    'sets.equivalent([1, 2, 3], [3u, 2.0, 1])',
    'sets.equivalent([[1.0], [2, 3]], [[1], [2, 3.0]])',
    '!sets.equivalent([2, 1], [1])',
    '!sets.equivalent([1], [1, 2])',
    '!sets.equivalent([1, 2], [2u, 2, 2.0])',
    '!sets.equivalent([1, 2], [1u, 2, 2.3])',
    'sets.intersects([1], [1])',
    'sets.intersects([1], [1, 1])',
    'sets.intersects([1, 1], [1])',
    'sets.intersects([2, 1], [1])',
    'sets.intersects([1], [1, 2])',
    'sets.intersects([1], [1.0, 2])',
    'sets.intersects([1, 2], [2u, 2, 2.0])',
    'sets.intersects([1, 2], [1u, 2, 2.3])',
    'sets.intersects([[1], [2, 3]], [[1, 2], [2, 3.0]])',
    'sets.intersects([{"a": 1}], [{"a": 1.0}])',
    '!sets.intersects([], [])',
    '!sets.intersects([1], [])',
    '!sets.intersects([1], [2])',
    '!sets.intersects([1], ["1", 2])',
    '!sets.intersects([1], [1.1, 2u])',
  ]);
  errors([
    ['sets.contains([1], 1)', 'found no matching overload'],
    ['sets.contains(a, [1])', 'found no matching overload'],
  ]);
});

describe('math', () => {
  truths([
    'math.least(-0.5) == -0.5',
    'math.least(-1) == -1',
    'math.least(1u) == 1u',
    'math.least(42.0, -0.5) == -0.5',
    'math.least(-1, 0) == -1',
    'math.least(-1, -1) == -1',
    'math.least(1u, 42u) == 1u',
    'math.least(42.0, -0.5, -0.25) == -0.5',
    'math.least(-1, 0, 1) == -1',
    'math.least(-1, -1, -1) == -1',
    'math.least(1u, 42u, 0u) == 0u',
    'math.least(1, 1.0) == 1',
    'math.least(1, -2.0) == -2.0',
    'math.least(2, 1u) == 1u',
    'math.least(1.5, 2) == 1.5',
    'math.least(1.5, -2) == -2',
    'math.least(2.5, 1u) == 1u',
    'math.least(1u, 2) == 1u',
    'math.least(1u, -2) == -2',
    'math.least(2u, 2.5) == 2u',
    'math.least(1u, dyn(42)) == 1',
    'math.least(1u, dyn(42), dyn(0.0)) == 0u',
    'math.least([1u, 42u, 0u]) == 0u',
    'math.least([3, 1, 2]) == 1',
    'math.greatest(-0.5) == -0.5',
    'math.greatest(-1) == -1',
    'math.greatest(1u) == 1u',
    'math.greatest(42.0, -0.5) == 42.0',
    'math.greatest(-1, 0) == 0',
    'math.greatest(-1, -1) == -1',
    'math.greatest(1u, 42u) == 42u',
    'math.greatest(42.0, -0.5, -0.25) == 42.0',
    'math.greatest(-1, 0, 1) == 1',
    'math.greatest(-1, -1, -1) == -1',
    'math.greatest(1u, 42u, 0u) == 42u',
    'math.greatest(1, 1.0) == 1',
    'math.greatest(1, -2.0) == 1',
    'math.greatest(2, 1u) == 2',
    'math.greatest(1.5, 2) == 2',
    'math.greatest(1.5, -2) == 1.5',
    'math.greatest(2.5, 1u) == 2.5',
    'math.greatest(1u, 2) == 2',
    'math.greatest(1u, -2) == 1u',
    'math.greatest(2u, 2.5) == 2.5',
    'math.greatest(1u, dyn(42)) == 42.0',
    'math.greatest(1u, dyn(0.0), 0u) == 1',
    'math.greatest([1u, dyn(0.0), 0u]) == 1',
    'math.greatest(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12) == 12',
    'math.greatest(9007199254740993, 9007199254740992.0) == 9007199254740993',
    'math.least(-9007199254740993, -9007199254740992.0) == -9007199254740993',
    'math.greatest(1, 2) + 1 == 3',
    'math.bitAnd(1, 2) == 0',
    'math.bitAnd(1, -1) == 1',
    'math.bitAnd(1, 3) == 1',
    'math.bitOr(1, 2) == 3',
    'math.bitXor(1, 3) == 2',
    'math.bitXor(3, 5) == 6',
    'math.bitNot(1) == -2',
    'math.bitNot(0) == -1',
    'math.bitNot(-1) == 0',
    'math.bitShiftLeft(1, 2) == 4',
    'math.bitShiftLeft(1, 200) == 0',
    'math.bitShiftLeft(-1, 200) == 0',
    'math.bitShiftLeft(1, 63) == -9223372036854775808',
    'math.bitShiftRight(1024, 2) == 256',
    'math.bitShiftRight(1024, 64) == 0',
    'math.bitShiftRight(-1024, 3) == 2305843009213693824',
    'math.bitShiftRight(-1024, 64) == 0',
    'math.bitAnd(1u, 2u) == 0u',
    'math.bitAnd(1u, 3u) == 1u',
    'math.bitOr(1u, 2u) == 3u',
    'math.bitXor(1u, 3u) == 2u',
    'math.bitXor(3u, 5u) == 6u',
    'math.bitNot(1u) == 18446744073709551614u',
    'math.bitNot(0u) == 18446744073709551615u',
    'math.bitShiftLeft(1u, 2) == 4u',
    'math.bitShiftLeft(1u, 200) == 0u',
    'math.bitShiftRight(1024u, 2) == 256u',
    'math.bitShiftRight(1024u, 64) == 0u',
    'math.isNaN(0.0/0.0)',
    '!math.isNaN(1.0/0.0)',
    'math.isFinite(1.0/1.5)',
    '!math.isFinite(1.0/0.0)',
    'math.isInf(1.0/0.0)',
    'math.ceil(1.2) == 2.0',
    'math.ceil(-1.2) == -1.0',
    'math.floor(1.2) == 1.0',
    'math.floor(-1.2) == -2.0',
    'math.round(1.2) == 1.0',
    'math.round(1.5) == 2.0',
    'math.round(-1.5) == -2.0',
    'math.isNaN(math.round(0.0/0.0))',
    'math.round(-1.2) == -1.0',
    'math.trunc(-1.3) == -1.0',
    'math.trunc(1.3) == 1.0',
    'math.sign(-42) == -1',
    'math.sign(0) == 0',
    'math.sign(42) == 1',
    'math.sign(0u) == 0u',
    'math.sign(42u) == 1u',
    'math.sign(-0.3) == -1.0',
    'math.sign(0.0) == 0.0',
    'math.isNaN(math.sign(0.0/0.0))',
    'math.sign(1.0/0.0) == 1.0',
    'math.sign(-1.0/0.0) == -1.0',
    'math.sign(0.3) == 1.0',
    'math.abs(-1) == 1',
    'math.abs(1) == 1',
    'math.abs(-234.5) == 234.5',
    'math.abs(234.5) == 234.5',
    'math.abs(5u) == 5u',
    'math.sqrt(49.0) == 7.0',
    'math.sqrt(0) == 0.0',
    'math.sqrt(1) == 1.0',
    'math.sqrt(25u) == 5.0',
    'math.sqrt(82) == 9.055385138137417',
    'math.sqrt(985.25) == 31.388692231439016',
    'math.isNaN(math.sqrt(-15.34))',
  ]);

  it('keeps static types where cel-go does', () => {
    expect(env.check('math.greatest(1, 2)').type).toBe('int');
    expect(env.check('math.least([1.0, 2.0])').type).toBe('double');
    expect(env.check('math.greatest(1, 2.0)').type).toBe('dyn');
    expect(env.check('math.abs(1u)').type).toBe('uint');
  });

  it('takes a list variable', () => {
    expect(evaluate('math.greatest(a)', { a: [1n, 5n, 3n] })).toBe(5n);
    expect(evaluate('math.least(a, b)', { a: 2.5, b: 2n })).toBe(2n);
  });

  errors([
    ['math.least()', 'math.least() requires at least one argument'],
    ["math.least('hello')", 'math.least() invalid single argument value'],
    ['math.least({})', 'math.least() invalid single argument value'],
    ['math.least(1, true)', 'math.least() simple literal arguments must be numeric'],
    ['math.least(1, 2, true)', 'math.least() simple literal arguments must be numeric'],
    ['math.greatest()', 'math.greatest() requires at least one argument'],
    ['math.greatest(true)', 'math.greatest() invalid single argument value'],
    ['math.greatest([])', 'math.greatest() invalid single argument value'],
    ['math.greatest([1, true])', 'math.greatest() invalid single argument value'],
    ['math.greatest(1, true)', 'math.greatest() simple literal arguments must be numeric'],
    ['math.greatest(1, 2, true)', 'math.greatest() simple literal arguments must be numeric'],
    ["math.least(dyn('string'))", 'no such overload: math.@min'],
    ["math.greatest(dyn('string'))", 'no such overload: math.@max'],
    ['math.greatest(1, "a")', 'math.greatest() simple literal arguments must be numeric'],
    ['math.greatest("a".size(), "b".lowerAscii())', "found no matching overload for 'math.greatest(int, string)'"],
    ['100.greatest(42)', 'found no matching overload'],
    ['math.bitShiftLeft(1, -2) == 4', 'math.bitShiftLeft() negative offset: -2'],
    ['math.bitShiftLeft(1u, -2) == 0u', 'math.bitShiftLeft() negative offset'],
    ['math.bitShiftRight(-1024, -3) == -128', 'math.bitShiftRight() negative offset'],
    ['math.bitShiftRight(1024u, -4) == 1u', 'math.bitShiftRight() negative offset'],
    ['math.abs(-9223372036854775808)', 'integer overflow'],
    ['math.bitOr(dyn(1.2), 1)', "found no matching overload for 'math.bitOr(double, int)'"],
    ["math.bitAnd(2u, dyn(''))", "found no matching overload for 'math.bitAnd(uint, string)'"],
    ['math.bitXor(dyn(1), dyn(1u))', "found no matching overload for 'math.bitXor(int, uint)'"],
    ['math.isInf(dyn(1u))', "found no matching overload for 'math.isInf(uint)'"],
    ['math.round(dyn(1))', "found no matching overload for 'math.round(int)'"],
    ["math.sqrt('')", "found no matching overload for 'math.sqrt(string)'"],
  ]);

  it.each([
    ['math.least(a, b)', { a: [], b: 1n }, 'no such overload: math.@min'],
    ['math.least(b, a)', { a: [], b: 1n }, 'no such overload: math.@min'],
    ['math.least(a)', { a: [] }, 'math.@min(list) argument must not be empty'],
    ['math.least(a)', { a: ['hello'] }, 'no such overload: math.@min'],
    ['math.least(a)', { a: [[], []] }, 'no such overload: math.@min'],
    ['math.least(a)', { a: [1n, true, 2n] }, 'no such overload: math.@min'],
    ['math.greatest(a, b)', { a: [], b: 1n }, 'no such overload: math.@max'],
    ['math.greatest(a)', { a: [] }, 'math.@max(list) argument must not be empty'],
  ])('%s with %p fails at run time', (expr, vars, text) => {
    expect(errorOf(expr, vars)).toContain(text);
  });
});

describe('lists', () => {
  truths([
    'lists.range(4) == [0,1,2,3]',
    'lists.range(0) == []',
    'lists.range(-3) == []',
    '[5,1,2,3].reverse() == [3,2,1,5]',
    '[].reverse() == []',
    '[1].reverse() == [1]',
    "['are', 'you', 'as', 'bored', 'as', 'I', 'am'].reverse() == ['am', 'I', 'as', 'bored', 'as', 'you', 'are']",
    '[false, true, true].reverse().reverse() == [false, true, true]',
    '"abc".reverse() == "cba"',
    '[1,2,3,4].slice(0, 4) == [1,2,3,4]',
    '[1,2,3,4].slice(0, 0) == []',
    '[1,2,3,4].slice(1, 1) == []',
    '[1,2,3,4].slice(4, 4) == []',
    '[1,2,3,4].slice(1, 3) == [2, 3]',
    'dyn([]).flatten() == []',
    'dyn([1,2,3,4]).flatten() == [1,2,3,4]',
    '[1,[2,[3,4]]].flatten() == [1,2,[3,4]]',
    '[1,2,[],[],[3,4]].flatten() == [1,2,3,4]',
    '[1,[2,[3,4]]].flatten(2) == [1,2,3,4]',
    '[[1], [2, 3]].flatten() == [1, 2, 3]',
    '[].sort() == []',
    '[1].sort() == [1]',
    '[4, 3, 2, 1].sort() == [1, 2, 3, 4]',
    '["d", "a", "b", "c"].sort() == ["a", "b", "c", "d"]',
    '[2.5, -1.0, 0.0].sort() == [-1.0, 0.0, 2.5]',
    '[3u, 1u].sort() == [1u, 3u]',
    '[true, false].sort() == [false, true]',
    '[b"b", b"a"].sort() == [b"a", b"b"]',
    '[duration("2s"), duration("1s")].sort() == [duration("1s"), duration("2s")]',
    '[timestamp("2024-01-02T00:00:00Z"), timestamp("2024-01-01T00:00:00Z")].sort()[0] == timestamp("2024-01-01T00:00:00Z")',
    '["\uffff", "\u{1F600}", "a"].sort() == ["a", "\uffff", "\u{1F600}"]',
    '[].sortBy(e, e) == []',
    '["a"].sortBy(e, e) == ["a"]',
    '[-3, 1, -5, -2, 4].sortBy(e, -(e * e)) == [-5, 4, -3, -2, 1]',
    '[-3, 1, -5, -2, 4].map(e, e * 2).sortBy(e, -(e * e)) == [-10, 8, -6, -4, 2]',
    'lists.range(3).sortBy(e, -e) == [2, 1, 0]',
    '["a", "c", "b", "first"].sortBy(e, e == "first" ? "" : e) == ["first", "a", "b", "c"]',
    '[{"name": "foo"}, {"name": "bar"}, {"name": "baz"}].sortBy(e, e.name) == [{"name": "bar"}, {"name": "baz"}, {"name": "foo"}]',
    '[].distinct() == []',
    '[1].distinct() == [1]',
    '[-2, 5, -2, 1, 1, 5, -2, 1].distinct() == [-2, 5, 1]',
    "['c', 'a', 'a', 'b', 'a', 'b', 'c', 'c'].distinct() == ['c', 'a', 'b']",
    '[1, 2.0, "c", 3, "c", 1].distinct() == [1, 2.0, "c", 3]',
    '[1, 1.0, 2].distinct() == [1, 2]',
    '[[1], [1], [2]].distinct() == [[1], [2]]',
    '[1, 2, 3].first().value() == 1',
    "[].first().orValue('test') == 'test'",
    '[1, 2, 3].last().value() == 3',
    "[].last().orValue('test') == 'test'",
  ]);

  it('sorts a budgeted list variable', () => {
    expect(evaluate('a.sort()', { a: ['b', 'c', 'a'] })).toEqual(['a', 'b', 'c']);
    expect(evaluate('a.sortBy(x, x.k)', { a: [{ k: 2n }, { k: 1n }] })).toEqual([{ k: 1n }, { k: 2n }]);
  });

  errors([
    ['[1,2,3,4].slice(3, 0)', 'cannot slice(3, 0), start index must be less than or equal to end index'],
    ['[1,2,3,4].slice(0, 10)', 'cannot slice(0, 10), list is length 4'],
    ['[1,2,3,4].slice(-5, 10)', 'cannot slice(-5, 10), negative indexes not supported'],
    ['[1,2,3,4].slice(-5, -3)', 'cannot slice(-5, -3), negative indexes not supported'],
    ['[1,[2,[3,[4]]]].flatten(-1) == [1,2,3,4]', 'level must be non-negative'],
    ['dyn({}).flatten()', 'found no matching overload'],
    ['["d", 3, 2, "c"].sort()', 'list elements must have the same type'],
    ['[1, 2.0].sort()', 'list elements must have the same type'],
    ['[[1], [2]].sort()', 'list elements must be comparable'],
    ['[{}, {}].sort()', 'list elements must be comparable'],
    ['dyn([[1], [2]]).sort()', 'list elements must be comparable'],
    ['[1, 2].sortBy(e, [e])', 'found no matching overload'],
    ['[1, "a"].sortBy(e, e)', 'list elements must have the same type'],
    ['1.sortBy(e, e)', 'sortBy can only be applied to a list, identifier, comprehension, call or select expression'],
    ['[1].sortBy(e.f, e)', 'argument is not an identifier'],
    ['lists.range(9223372036854775807)', 'cost limit exceeded'],
  ]);
});

describe('base64', () => {
  truths([
    "base64.decode('aGVsbG8=') == b'hello'",
    "base64.decode('aGVsbG8') == b'hello'",
    "base64.decode('') == b''",
    "base64.decode('aGVs\\nbG8=') == b'hello'",
    "base64.encode(b'hello') == 'aGVsbG8='",
    "base64.encode(b'') == ''",
    "base64.encode(b'\\xff\\xfe') == '//4='",
  ]);
  errors([
    ["base64.decode(b'aGVsbG8=') == b'hello'", 'found no matching overload'],
    ["base64.encode('hello') == b'aGVsbG8='", 'found no matching overload'],
    ["base64.decode('a!b=')", 'illegal base64 data at input byte 1'],
    ["base64.decode('aGVsbG8==')", 'illegal base64 data'],
  ]);
});

describe('string conversions of timestamps and durations', () => {
  truths([
    "string(timestamp('2031-01-01T00:00:00.5Z')) == '2031-01-01T00:00:00.5Z'",
    "string(timestamp('2031-01-01T10:00:00+02:00')) == '2031-01-01T08:00:00Z'",
    "string(duration('90m')) == '5400s'",
    "string(duration('1.5s')) == '1.5s'",
    "string(duration('-2ms')) == '-0.002s'",
  ]);
});

describe('regex find and findAll', () => {
  truths([
    "'abc 123'.find('[0-9]+') == '123'",
    "'abc 123'.find('xyz') == ''",
    // Leftmost first, as Go's FindString: the empty match at the start wins.
    "'abc 123'.find('[0-9]*') == ''",
    "'123 abc 456'.findAll('[0-9]+') == ['123', '456']",
    "'123 abc 456'.findAll('[0-9]+', 1) == ['123']",
    "'123 abc 456'.findAll('[0-9]+', 0) == []",
    "'123 abc 456'.findAll('[0-9]+', -1) == ['123', '456']",
    "'123 abc 456'.findAll('xyz') == []",
    // Go's rule for empty matches: none right where the previous match ended.
    "'123 abc 456'.findAll('[0-9]*') == ['123', '', '', '', '', '456']",
    "'ab'.findAll('x*') == ['', '', '']",
    "'héllo wörld'.findAll('[^ ]+') == ['héllo', 'wörld']",
    "'key=value'.find('(?i)VALUE') == 'value'",
    "'aaaa!'.find('(a+)+$') == ''",
  ]);
  errors([
    ["'a'.find('(')", 'Illegal regex: error parsing regexp: missing closing ): `(`'],
    ["'a'.findAll('[a-')", 'Illegal regex: error parsing regexp'],
    ["'a'.find(1)", 'found no matching overload'],
  ]);

  it('bounds the searches of one call: each may read the rest of the string', () => {
    // 'a.*b|a' reads to the end of a run of a's before it settles on each single 'a'.
    expect(evaluate("a.findAll('a.*b|a').size()", { a: 'a'.repeat(4000) })).toBe(4000n);
    expect(FIND_ALL_SCAN_LIMIT).toBeLessThan(5000 * 5000);
    expect(errorOf("a.findAll('a.*b|a').size()", { a: 'a'.repeat(5000) })).toContain('running out of cost budget');
    // A limit ends the searches before the charge grows.
    expect(evaluate("a.findAll('a.*b|a', 3)", { a: 'a'.repeat(100_000) })).toEqual(['a', 'a', 'a']);
  });
});

describe('strings.quote', () => {
  truths([
    'strings.quote("first\\nsecond") == "\\"first\\\\nsecond\\""',
    'strings.quote("bell\\a") == "\\"bell\\\\a\\""',
    'strings.quote("\\bbackspace") == "\\"\\\\bbackspace\\""',
    'strings.quote("\\fform feed") == "\\"\\\\fform feed\\""',
    'strings.quote("carriage \\r return") == "\\"carriage \\\\r return\\""',
    'strings.quote("horizontal tab\\t") == "\\"horizontal tab\\\\t\\""',
    'strings.quote("vertical \\v tab") == "\\"vertical \\\\v tab\\""',
    'strings.quote("double \\\\\\\\ slash") == "\\"double \\\\\\\\\\\\\\\\ slash\\""',
    'strings.quote("two escape sequences \\a\\n") == "\\"two escape sequences \\\\a\\\\n\\""',
    'strings.quote("verbatim") == "\\"verbatim\\""',
    'strings.quote("ends with \\\\") == "\\"ends with \\\\\\\\\\""',
    'strings.quote("\\\\ starts with") == "\\"\\\\\\\\ starts with\\""',
    'strings.quote("printable unicode😀") == "\\"printable unicode😀\\""',
    'strings.quote("mid string \\" quote") == "\\"mid string \\\\\\" quote\\""',
    'strings.quote(\'single-quote with "double quote"\') == "\\"single-quote with \\\\\\"double quote\\\\\\"\\""',
    'strings.quote("size(\'ÿ\')") == "\\"size(\'ÿ\')\\""',
    'strings.quote("завтра") == "\\"завтра\\""',
    'strings.quote("") == "\\"\\""',
    "strings.quote('%s %s').format(['hello', 'world']) == \"\\\"hello world\\\"\"",
  ]);
});

describe('string.format', () => {
  it.each([
    ['no substitution', '[]', 'no substitution'],
    ['str is %s and some more', '["filler"]', 'str is filler and some more'],
    ['%% and also %%', '[]', '% and also %'],
    ['%%%s%%', '["text"]', '%text%'],
    ['%d %d %d, %s %s %s, %d %d %d, %s %s %s', '[1, 2, 3, "A", "B", "C", 4, 5, 6, "D", "E", "F"]', '1 2 3, A B C, 4 5 6, D E F'],
    ['%.3f', '[1.2345]', '1.234'],
    ['%.3f', '[2.0005]', '2.001'],
    ['%.2f', '[1234567.891]', '1,234,567.89'],
    ['%.0f', '[2.5]', '2'],
    ['%.1f', '[-0.04]', '-0.0'],
    ['this is 5 in binary: %b', '[5]', 'this is 5 in binary: 101'],
    ['this is -5 in binary: %b', '[-5]', 'this is -5 in binary: -101'],
    ['unsigned 64 in binary: %b', '[uint(64)]', 'unsigned 64 in binary: 1000000'],
    ['bit set from bool: %b', '[true]', 'bit set from bool: 1'],
    ['%o', '[11]', '13'],
    ['%o', '[-11]', '-13'],
    ['this is an unsigned octal: %o', '[uint(65535)]', 'this is an unsigned octal: 177777'],
    ['%x is 30 in hexadecimal', '[30]', '1e is 30 in hexadecimal'],
    ['%X is 20 in hexadecimal', '[30]', '1E is 20 in hexadecimal'],
    ['%x is -30 in hexadecimal', '[-30]', '-1e is -30 in hexadecimal'],
    ['%X is 6000 in hexadecimal', '[uint(6000)]', '1770 is 6000 in hexadecimal'],
    ['%x', '["Hello world!"]', '48656c6c6f20776f726c6421'],
    ['%X', '["Hello world!"]', '48656C6C6F20776F726C6421'],
    ['%x', '[b"byte string"]', '6279746520737472696e67'],
    ['%x', '[b"\\x00\\x00byte string\\x00"]', '00006279746520737472696e6700'],
    ['%.6e', '[1052.032911275]', '1.052033\u202f×\u202f10⁰³'],
    ['%e', '[2.71828]', '2.718280\u202f×\u202f10⁰⁰'],
    ['%e', '[-0.00012]', '-1.200000\u202f×\u202f10⁻⁰⁴'],
    ['%e', '[0.0]', '0.000000\u202f×\u202f10⁰⁰'],
    ['%f', '[2.71828]', '2.718280'],
    ['%s', '[2.71]', '2.71'],
    ['%s', '[[2.71]]', '[2.710000]'],
    ['%s', '[0.000000002]', '2e-09'],
    ['%s', '[1000000.0]', '1e+06'],
    ['%s', '[123456.5]', '123456.5'],
    ['%s', '[[0.000000002]]', '[0.000000]'],
    ['%f', '["NaN"]', 'NaN'],
    ['%f', '["Infinity"]', '∞'],
    ['%f', '["-Infinity"]', '-∞'],
    ['%s', '[double("NaN")]', 'NaN'],
    ['%s', '[double("Inf")]', '+Inf'],
    ['%s', '[double("-Inf")]', '-Inf'],
    ['%s', '[[double("NaN"),double("+Inf"), double("-Inf")]]', '["NaN", "+Inf", "-Inf"]'],
    ['%d', '[uint(64)]', '64'],
    ['null: %s', '[null]', 'null: null'],
    ['%s', '[999999999999]', '999999999999'],
    ['some bytes: %s', '[b"xyz"]', 'some bytes: xyz'],
    ['type is %s', '[type("test string")]', 'type is string'],
    ['%s', '[timestamp("2023-02-03T23:31:20+00:00")]', '2023-02-03T23:31:20Z'],
    ['%s', '[timestamp("2023-02-03T23:31:20.5Z")]', '2023-02-03T23:31:20.5Z'],
    ['%s', '[duration("1h45m47s")]', '6347s'],
    ['%s', '[duration("1.5s")]', '1.5s'],
    [
      '%s',
      '[["abc", 3.14, null, [9, 8, 7, 6], timestamp("2023-02-03T23:31:20Z")]]',
      '["abc", 3.140000, null, [9, 8, 7, 6], timestamp("2023-02-03T23:31:20Z")]',
    ],
    [
      '%s',
      '[{"key1": b"xyz", "key5": null, "key2": duration("2h"), "key4": true, "key3": 2.71828}]',
      '{"key1":b"xyz", "key2":duration("7200s"), "key3":2.718280, "key4":true, "key5":null}',
    ],
    ['true bool: %s, false bool: %s', '[true, false]', 'true bool: true, false bool: false'],
    ['%s', '[["a\\nb", "\\u00a0"]]', '["a\\nb", "\\u00a0"]'],
    ['%e', '[123456789.0]', '1.234568\u202f×\u202f10⁰⁸'],
    ['%e', '[5e-324]', '4.940656\u202f×\u202f10⁻³²⁴'],
    ['%e', '[9999998.5]', '9.999998\u202f×\u202f10⁰⁶'],
    ['%e', '[9999999.9]', '1.000000\u202f×\u202f10⁰⁷'],
    ['%.2f', '[-1234.5]', '-1,234.50'],
    ['%.3f', '[1e20]', '100,000,000,000,000,000,000.000'],
    ['%s', '[duration("-1.5s")]', '-1.5s'],
    ['%s', '[duration("0s")]', '0s'],
    ['%s', '[duration("2ns")]', '0.000000002s'],
    ['%s', '[1e21]', '1e+21'],
    ['%s', '[-0.0]', '-0'],
    ['%s', '[[1u, true, type(1), b"x"]]', '[1, true, int, b"x"]'],
    ['%s', '[{"a": {"b": [1]}}]', '{"a":{"b":[1]}}'],
    ['%s', '[[duration("1m")]]', '[duration("60s")]'],
  ])('%j.format(%s) == %j', (spec, args, out) => {
    expect(evaluate(`${JSON.stringify(spec)}.format(${args})`)).toBe(out);
  });

  it('formats dynamic values', () => {
    expect(evaluate('"dynamic: %s %s %d %x %.3f".format([a, b, m, m, 4.5])', { a: 'a string', b: 56.8, m: 26n })).toBe('dynamic: a string 56.8 26 1a 4.500');
    expect(evaluate('"%s".format([a])', { a: [6n, 4.2, 'a string'] })).toBe('[6, 4.200000, "a string"]');
  });

  errors([
    ['"%a".format([1])', 'could not parse formatting clause: unrecognized formatting clause "a"'],
    ['"%d %d %d".format([0, 1])', 'index 2 out of range'],
    ['"string is %b".format(["abc"])', 'error during formatting: only integers and bools can be formatted as binary, was given string'],
    ['"%d".format([duration("30m2s")])', 'error during formatting: decimal clause can only be used on integers, was given google.protobuf.Duration'],
    ['"octal: %o".format(["a string"])', 'error during formatting: octal clause can only be used on integers, was given string'],
    ['"double is %x".format([0.5])', 'error during formatting: only integers, byte buffers, and strings can be formatted as hex, was given double'],
    ['"double is %E".format([0.5])', 'could not parse formatting clause: unrecognized formatting clause "E"'],
    ['"null: %d".format([null])', 'error during formatting: decimal clause can only be used on integers, was given null_type'],
    ['"null: %e".format([null])', 'error during formatting: scientific clause can only be used on doubles, was given null_type'],
    ['"null: %f".format([null])', 'error during formatting: fixed-point clause can only be used on doubles, was given null_type'],
    ['"null: %x".format([null])', 'error during formatting: only integers, byte buffers, and strings can be formatted as hex, was given null_type'],
    ['"null: %b".format([null])', 'error during formatting: only integers and bools can be formatted as binary, was given null_type'],
    ['"null: %o".format([null])', 'error during formatting: octal clause can only be used on integers, was given null_type'],
    [
      '"%s".format([optional.of(1)])',
      'error during formatting: string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps, was given optional_type',
    ],
    ['"%s %s".format(["abc"])', 'index 1 out of range'],
    ['"filler %".format([])', 'index 0 out of range'],
    ['"filler %".format([1])', 'unexpected end of string'],
    ['"double is %.34".format([5.0])', 'could not parse formatting clause: error while parsing precision: could not find end of precision specifier'],
    ['"%.2000f".format([1.0])', 'exceeds maximum allowed precision'],
  ]);
});

describe('comprehensions', () => {
  truths([
    '[1, 2, 3, 4].all(i, v, i < 5 && v > 0)',
    '[1, 2, 3, 4].all(i, v, i < v)',
    '[1, 2, 3, 4].all(i, v, i > v) == false',
    'cel.bind(listA, [1, 2, 3, 4], cel.bind(listB, [1, 2, 3, 4, 5], listA.all(i, v, listB[?i].hasValue() && listB[i] == v)))',
    'cel.bind(listA, [1, 2, 3, 4, 5, 6], cel.bind(listB, [1, 2, 3, 4, 5], listA.all(i, v, listB[?i].hasValue() && listB[i] == v))) == false',
    "cel.bind(l, ['hello', 'world', 'hello!', 'worlds'], l.exists(i, v, v.startsWith('hello') && l[?(i+1)].orValue('').endsWith('world')))",
    "cel.bind(l, ['hello', 'world', 'hello!', 'worlds'], l.existsOne(i, v, v.startsWith('hello') && l[?(i+1)].orValue('').endsWith('world')))",
    "cel.bind(l, ['hello', 'goodbye', 'hello!', 'goodbye'], l.exists_one(i, v, v.startsWith('hello') && l[?(i+1)].orValue('') == 'goodbye')) == false",
    '[\'Hello\', \'world\'].transformList(i, v, "[%d]%s".format([i, v.lowerAscii()])) == ["[0]hello", "[1]world"]',
    "['hello', 'world'].transformList(i, v, v.startsWith('greeting'), \"[%d]%s\".format([i, v])) == []",
    '[1, 2, 3].transformList(indexVar, valueVar, (indexVar * valueVar) + valueVar) == [1, 4, 9]',
    '[1, 2, 3].transformList(indexVar, valueVar, indexVar % 2 == 0, (indexVar * valueVar) + valueVar) == [1, 9]',
    "['Hello', 'world'].transformMap(i, v, [v.lowerAscii()]) == {0: ['hello'], 1: ['world']}",
    "['world', 'Hello'].transformMap(i, v, [v.lowerAscii()]).transformList(k, v, v).flatten().sort() == ['hello', 'world']",
    '[1, 2, 3].transformMap(indexVar, valueVar, (indexVar * valueVar) + valueVar) == {0: 1, 1: 4, 2: 9}',
    '[1, 2, 3].transformMap(indexVar, valueVar, indexVar % 2 == 0, (indexVar * valueVar) + valueVar) == {0: 1, 2: 9}',
    "\"key1:value1 key2:value2 key3:value3\".split(\" \").transformMapEntry(i, v, cel.bind(entry, v.split(\":\"), entry.size() == 2 ? {entry[0]: entry[1]} : {})) == {'key1': 'value1', 'key2': 'value2', 'key3': 'value3'}",
    "{'hello': 'world', 'hello!': 'world'}.all(k, v, k.startsWith('hello') && v == 'world')",
    "{'hello': 'world', 'hello!': 'worlds'}.all(k, v, k.startsWith('hello') && v.endsWith('world')) == false",
    "{'hello': 'world', 'hello!': 'worlds'}.exists(k, v, k.startsWith('hello') && v.endsWith('world'))",
    "{'hello': 'world', 'hello!': 'worlds'}.existsOne(k, v, k.startsWith('hello') && v.endsWith('world'))",
    "{'hello': 'world', 'hello!': 'worlds'}.exists_one(k, v, k.startsWith('hello') && v.endsWith('world'))",
    "{'hello': 'world', 'hello!': 'wow, world'}.exists_one(k, v, k.startsWith('hello') && v.endsWith('world')) == false",
    '{\'Hello\': \'world\'}.transformList(k, v, "%s=%s".format([k.lowerAscii(), v])) == ["hello=world"]',
    'dyn({\'Hello\': \'world\'}).transformList(k, v, "%s=%s".format([k.lowerAscii(), v])) == ["hello=world"]',
    "{'hello': 'world'}.transformList(k, v, k.startsWith('greeting'), \"%s=%s\".format([k, v])) == []",
    "{'greeting': 'hello', 'farewell': 'goodbye'}.transformList(k, _, k).sort() == ['farewell', 'greeting']",
    "{'greeting': 'hello', 'farewell': 'goodbye'}.transformList(_, v, v).sort() == ['goodbye', 'hello']",
    "{'hello': 'world', 'goodbye': 'cruel world'}.transformMap(k, v, \"%s, %s!\".format([k, v])) == {'hello': 'hello, world!', 'goodbye': 'goodbye, cruel world!'}",
    "dyn({'hello': 'world', 'goodbye': 'cruel world'}).transformMap(k, v, \"%s, %s!\".format([k, v])) == {'hello': 'hello, world!', 'goodbye': 'goodbye, cruel world!'}",
    "{'hello': 'world', 'goodbye': 'cruel world'}.transformMap(k, v, v.startsWith('world'), \"%s, %s!\".format([k, v])) == {'hello': 'hello, world!'}",
    "{'hello': 'world', 'greetings': 'tacocat'}.transformMapEntry(k, v, {k.reverse(): v.reverse()}) == {'olleh': 'dlrow', 'sgniteerg': 'tacocat'}",
    "{'hello': 'world', 'greetings': 'tacocat'}.transformMapEntry(k, v, v.reverse() == v, {k.reverse(): v.reverse()}) == {'sgniteerg': 'tacocat'}",
    "{'hello': 'world', 'greetings': 'tacocat'}.transformMapEntry(k, v, {}) == {}",
    '{1: 2}.transformMap(k, v, v + 1) == {1: 3}',
    '{1: 1, 2: 2, 3: 3}.all(i, v, i < 5 && v > 0)',
    '!{0: 0}.all(i, v, i < 5 && v > 0)',
    '{1: 2, 3: 4, 5: 6}.transformMap(k, v, k % 3 == 0, v + 1) == {3: 5}',
    '{1: 2}.transformMapEntry(k, v, {v: k}) == {2: 1}',
    '[].transformList(i, v, v) == []',
    '[1].transformList(i, v, i) == [0]',
    '[3, 2, 1].transformList(i, v, v > i, v) == [3, 2]',
    '[].transformMap(k, v, v + 1) == {}',
    '{}.transformMap(k, v, v + 1) == {}',
    "[null, null, 'hello', string].all(i, v, i == 0 || type(v) != int)",
    '[1, 2, 3].existsOne(x, x > 2)',
    '!{"a": 1, "b": 2}.existsOne(k, k != "c")',
    '[1, 2].all(i, v, [1, 2].exists(j, w, j == i && w == v))',
    '[0, 1].all(i, v, i == v || 1 / 0 == 1) == false || true',
    '[1, 0].exists(i, v, 1 / v == 1)',
    '[[1, 2], [3]].all(i, l, l.all(j, v, v > i))',
  ]);

  it('types the results', () => {
    expect(env.check('[1, 2].transformList(i, v, double(v) * 2.0)').type).toBe('list<double>');
    expect(env.check('{"a": 1}.transformMap(k, v, v > 0)').type).toBe('map<string, bool>');
    expect(env.check('[1].all(i, v, v > i)').type).toBe('bool');
    expect(env.check('[3, 1].sortBy(e, -e)').type).toBe('list<int>');
  });

  it('iterates variables', () => {
    expect(evaluate('m.transformList(k, v, k + "=" + v)', { m: { a: 'x', b: 'y' } })).toEqual(['a=x', 'b=y']);
    expect(evaluate('a.exists(i, v, v == "z")', { a: ['x', 'z'] })).toBe(true);
  });

  errors([
    ['[].all(i, i, i < i)', 'duplicate variable name: i'],
    ['[].all(__result__, i, __result__ < i)', 'iteration variable overwrites accumulator variable'],
    ['[].all(j, __result__, __result__ < j)', 'iteration variable overwrites accumulator variable'],
    ['[].all(i.j, k, i.j < k)', 'argument must be a simple name'],
    ['[].all(j, i.k, j < i.k)', 'argument must be a simple name'],
    ['1.all(j, k, j < k)', 'cannot be range'],
    ['[].exists(i.j, k, i.j < k)', 'argument must be a simple name'],
    ["''.exists(j, k, j < k)", 'cannot be range'],
    ['[].existsOne(j, i.k, j < i.k)', 'argument must be a simple name'],
    ['[].exists_one(i.j, k, i.j < k)', 'argument must be a simple name'],
    ["''.existsOne(j, k, j < k)", 'cannot be range'],
    ['[].transformList(i.j, k, i.j + k)', 'argument must be a simple name'],
    ['{}.transformMap(j, i.k, j + i.k)', 'argument must be a simple name'],
    ['{}.transformMapEntry(i.j, k, {k: i.j})', 'argument must be a simple name'],
    ["{}.transformMapEntry(j, k, 'bad filter', {k: j})", 'filter must return bool'],
    ["{'hello': 'world', 'greetings': 'tacocat'}.transformMapEntry(k, v, []) == {}", 'transform must return a map'],
    ['[1, 2].all(i, v, v)', 'predicate must return bool'],
    ['[1, 1].transformMapEntry(i, v, {v: i})', 'insert failed: key 1 already exists'],
    ['[0, 0u].transformMapEntry(i, v, {v: i})', 'insert failed: key 0 already exists'],
    ['[0, 1].all(i, v, 1 / v == 1)', 'division by zero'],
    ['[1, 0].existsOne(i, v, 1 / v == 1)', 'division by zero'],
    ['[1, dyn("a")].exists(i, v, v)', "predicate must return bool, got 'int'"],
  ]);
});
