import { StatusError } from './errors.js';
import { labelSelectorFromStruct, LabelSelector, parseLabelSelector } from './labels.selector.js';

function parseErr(s: string): StatusError {
  try {
    parseLabelSelector(s);
  } catch (e) {
    expect(e).toBeInstanceOf(StatusError);
    return e as StatusError;
  }
  throw new Error(`expected ${s} to fail`);
}

describe('label selectors (k8s.io/apimachinery/pkg/labels)', () => {
  const l = { app: 'web', tier: 'front', n: '5' };

  it('empty and blank select everything', () => {
    expect(parseLabelSelector('').isEmpty()).toBe(true);
    expect(parseLabelSelector('   ').matches({})).toBe(true);
  });

  it('equality operators', () => {
    expect(parseLabelSelector('app=web').matches(l)).toBe(true);
    expect(parseLabelSelector('app==web').matches(l)).toBe(true);
    expect(parseLabelSelector('app=db').matches(l)).toBe(false);
    expect(parseLabelSelector('app!=db').matches(l)).toBe(true);
    expect(parseLabelSelector('missing!=x').matches(l)).toBe(true); // absent label satisfies !=
    expect(parseLabelSelector('app=').matches({ app: '' })).toBe(true);
  });

  it('set-based operators and existence', () => {
    expect(parseLabelSelector('app in (db, web)').matches(l)).toBe(true);
    expect(parseLabelSelector('app in (db)').matches(l)).toBe(false);
    expect(parseLabelSelector('app notin (db)').matches(l)).toBe(true);
    expect(parseLabelSelector('zone notin (a)').matches(l)).toBe(true);
    expect(parseLabelSelector('app').matches(l)).toBe(true);
    expect(parseLabelSelector('!app').matches(l)).toBe(false);
    expect(parseLabelSelector('!zone').matches(l)).toBe(true);
    expect(parseLabelSelector('app in ()').requirements[0].values).toEqual(['']);
  });

  it('keywords are identifiers in value position', () => {
    expect(parseLabelSelector('x in (in,notin)').matches({ x: 'notin' })).toBe(true);
    expect(parseLabelSelector('x=in').matches({ x: 'in' })).toBe(true);
  });

  it('gt/lt compare integers', () => {
    expect(parseLabelSelector('n>4').matches(l)).toBe(true);
    expect(parseLabelSelector('n<5').matches(l)).toBe(false);
    expect(parseLabelSelector('app>1').matches(l)).toBe(false);
  });

  it('commas AND requirements; canonical string is sorted by key', () => {
    const s = parseLabelSelector('tier=front,app in (web,api),!zone');
    expect(s.matches(l)).toBe(true);
    expect(s.matches({ ...l, zone: 'a' })).toBe(false);
    expect(s.toString()).toBe('app in (api,web),tier=front,!zone');
  });

  it('syntax errors are 400 with the parser message', () => {
    const e = parseErr('app=web,');
    expect(e.code).toBe(400);
    expect(e.reason).toBe('BadRequest');
    expect(e.message).toBe("found '', expected: identifier after ','");
    expect(parseErr('app in db').message).toBe("unable to parse requirement: found 'db' expected: '('");
    expect(parseErr('app in (a b)').message).toBe("unable to parse requirement: found 'b', expected: ',' or ')'");
    expect(parseErr('a b').message).toBe("unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt");
    expect(parseErr('=x').message).toBe("found '=', expected: !, identifier, or 'end of string'");
    expect(parseErr('a=b c').message).toBe("found 'c', expected: ',' or 'end of string'");
  });

  it('invalid keys and values carry the validation detail', () => {
    expect(parseErr('a@b=c').message).toMatch(/^unable to parse requirement: <nil>: Invalid value: "a@b": name part must consist of alphanumeric characters/);
    expect(parseErr('app=-x').message).toMatch(
      /^unable to parse requirement: values\[0\]\[app\]: Invalid value: "-x": a valid label must be an empty string or consist of/,
    );
    expect(parseErr('n>x').message).toMatch(/values\[0\]: Invalid value: "x": for 'Gt', 'Lt' operators, the value must be an integer/);
  });

  it('metav1.LabelSelector struct form', () => {
    expect(labelSelectorFromStruct(undefined).matches(l)).toBe(false);
    expect(labelSelectorFromStruct({}).matches(l)).toBe(true);
    const s = labelSelectorFromStruct({
      matchLabels: { app: 'web' },
      matchExpressions: [
        { key: 'tier', operator: 'In', values: ['front', 'back'] },
        { key: 'zone', operator: 'DoesNotExist' },
        { key: 'n', operator: 'Exists' },
      ],
    });
    expect(s.matches(l)).toBe(true);
    expect(s.matches({ ...l, tier: 'x' })).toBe(false);
    expect(() => labelSelectorFromStruct({ matchExpressions: [{ key: 'a', operator: 'Gt', values: ['1'] }] })).toThrow(
      '"Gt" is not a valid label selector operator',
    );
    expect(() => labelSelectorFromStruct({ matchExpressions: [{ key: 'a', operator: 'In', values: [] }] })).toThrow(
      "values: Invalid value: []string{}: for 'in', 'notin' operators, values set can't be empty",
    );
    expect(() => labelSelectorFromStruct({ matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] })).toThrow(
      'values set must be empty for exists and does not exist',
    );
  });

  it('nothing() never matches', () => {
    expect(LabelSelector.nothing().matches({})).toBe(false);
    expect(LabelSelector.everything().matches(undefined)).toBe(true);
  });
});
