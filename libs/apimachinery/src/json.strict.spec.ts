import { duplicateFieldMessage, JsonSyntaxError, parseJsonStrict } from './json.strict.js';

function syntax(text: string): JsonSyntaxError {
  try {
    parseJsonStrict(text);
  } catch (e) {
    expect(e).toBeInstanceOf(JsonSyntaxError);
    return e as JsonSyntaxError;
  }
  throw new Error(`expected ${text} to fail`);
}

describe('parseJsonStrict', () => {
  it('parses like JSON.parse', () => {
    const samples = ['{"a":1,"b":[true,false,null,"x\\n\\u00e9\\"",-1.5e3,0]}', '[]', '"s"', ' 12 ', '{"__proto__":{"x":1}}', '{"a":"\\ud83d\\ude00"}'];
    for (const s of samples) expect(parseJsonStrict(s).value).toEqual(JSON.parse(s));
    const proto = parseJsonStrict('{"__proto__":{"x":1}}').value as Record<string, unknown>;
    expect(Object.getPrototypeOf(proto)).toBe(Object.prototype);
    expect(Object.keys(proto)).toEqual(['__proto__']);
  });

  it('reports duplicate keys by field path, last one wins', () => {
    const r = parseJsonStrict('{"metadata":{"name":"a","name":"b"},"spec":{"containers":[{"n":1},{"n":1,"n":2}]},"k":1,"k":2}');
    expect(r.duplicates).toEqual(['metadata.name', 'spec.containers[1].n', 'k']);
    expect((r.value as { metadata: { name: string } }).metadata.name).toBe('b');
    expect(duplicateFieldMessage(r.duplicates[0])).toBe('duplicate field "metadata.name"');
    expect(parseJsonStrict('[{"a":1,"a":1}]').duplicates).toEqual(['[0].a']);
    expect(parseJsonStrict('{"toString":1}').duplicates).toEqual([]);
  });

  it('syntax errors carry Go wording and position', () => {
    const e = syntax('{\n  "a": 1,\n  }');
    expect(e.message).toBe("invalid character '}' looking for beginning of object key string");
    expect([e.line, e.column, e.offset]).toEqual([3, 3, 14]);
    expect(syntax('').message).toBe('unexpected end of JSON input');
    expect(syntax('{"a":1').message).toBe('unexpected end of JSON input');
    expect(syntax('{"a" 1}').message).toBe("invalid character '1' after object key");
    expect(syntax('{"a":1 "b":2}').message).toBe("invalid character '\"' after object key:value pair");
    expect(syntax('[1 2]').message).toBe("invalid character '2' after array element");
    expect(syntax('{} x').message).toBe("invalid character 'x' after top-level value");
    expect(syntax('01').message).toBe("invalid character '1' after top-level value");
    expect(syntax('"a\tb"').message).toBe("invalid character '\\t' in string literal");
    expect(syntax('"\\x"').message).toBe("invalid character 'x' in string escape code");
    expect(syntax('tru').message).toBe('unexpected end of JSON input');
    expect(syntax("'a'").message).toBe("invalid character '\\'' looking for beginning of value");
    expect(syntax('-').message).toBe('unexpected end of JSON input');
    expect(syntax('1.').message).toBe('unexpected end of JSON input');
  });

  it('bounds nesting depth instead of overflowing the stack', () => {
    expect(syntax('['.repeat(20000)).message).toBe('exceeded max depth');
    expect(parseJsonStrict('['.repeat(1000) + ']'.repeat(1000)).duplicates).toEqual([]);
  });
});
