import { parseGoDuration } from './duration.js';

describe('parseGoDuration', () => {
  it('reads what Go time.ParseDuration reads', () => {
    expect(parseGoDuration('0')).toBe(0);
    expect(parseGoDuration('-0')).toBe(0);
    expect(parseGoDuration('90s')).toBe(90_000);
    expect(parseGoDuration('1m0s')).toBe(60_000);
    expect(parseGoDuration('1h2m3.5s')).toBe(3_723_500);
    expect(parseGoDuration('1.5h')).toBe(5_400_000);
    expect(parseGoDuration('.5s')).toBe(500);
    expect(parseGoDuration('5.s')).toBe(5000);
    expect(parseGoDuration('300ms')).toBe(300);
    expect(parseGoDuration('1500us')).toBe(1.5);
    expect(parseGoDuration('1500µs')).toBe(1.5);
    expect(parseGoDuration('1500μs')).toBe(1.5);
    expect(parseGoDuration('2000000ns')).toBe(2);
    expect(parseGoDuration('-2s')).toBe(-2000);
    expect(parseGoDuration('+2s')).toBe(2000);
  });

  it("fails with Go's messages", () => {
    expect(() => parseGoDuration('')).toThrow('time: invalid duration ""');
    expect(() => parseGoDuration('abc')).toThrow('time: invalid duration "abc"');
    expect(() => parseGoDuration('-')).toThrow('time: invalid duration "-"');
    expect(() => parseGoDuration('.s')).toThrow('time: invalid duration ".s"');
    expect(() => parseGoDuration('10')).toThrow('time: missing unit in duration "10"');
    expect(() => parseGoDuration('1s5')).toThrow('time: missing unit in duration "1s5"');
    expect(() => parseGoDuration('10d')).toThrow('time: unknown unit "d" in duration "10d"');
    expect(() => parseGoDuration('1 s')).toThrow('time: unknown unit " s" in duration "1 s"');
  });
});
