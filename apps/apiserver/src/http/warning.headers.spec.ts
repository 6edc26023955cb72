import { WARNING_ITEM_CHARS, WARNING_TOTAL_CHARS, warningHeaderValues } from './warning.headers.js';

const texts = (values: string[]) => values.map((v) => JSON.parse(v.slice('299 - '.length)) as string);

describe('Warning headers', () => {
  it('quotes each warning once, in order', () => {
    expect(warningHeaderValues(['a "b"', 'c', 'a "b"', ''])).toEqual(['299 - "a \\"b\\""', '299 - "c"']);
  });

  it('keeps warnings whole up to the total, then cuts every one and drops what no longer fits', () => {
    const long = 'x'.repeat(1000);
    const few = [`1${long}`, `2${long}`, `3${long}`, `4${long}`];
    // 4 x 1,001 characters fit in 4,096.
    expect(texts(warningHeaderValues(few))).toEqual(few);
    // A fifth does not: all are written again cut to 256 characters, the fifth too.
    const five = texts(warningHeaderValues([...few, `5${long}`]));
    expect(five.map((t) => t.length)).toEqual([256, 256, 256, 256, 256]);
    expect(five.map((t) => t[0])).toEqual(['1', '2', '3', '4', '5']);
    // Many: cut ones are added until the total is reached, the rest dropped.
    const many = texts(warningHeaderValues(Array.from({ length: 100_000 }, (_, i) => `${i} ${long}`)));
    expect(many).toHaveLength(Math.ceil(WARNING_TOTAL_CHARS / WARNING_ITEM_CHARS));
    expect(many.every((t) => t.length === WARNING_ITEM_CHARS)).toBe(true);
  });

  it('counts and cuts characters, not UTF-16 units', () => {
    const emoji = '😀'.repeat(300);
    const [, cut] = texts(warningHeaderValues(['y'.repeat(WARNING_TOTAL_CHARS), emoji]));
    expect([...cut]).toHaveLength(WARNING_ITEM_CHARS);
  });
});
