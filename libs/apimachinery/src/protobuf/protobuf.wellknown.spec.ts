import { WireValueError, formatGoDuration, formatMicroTime, formatTime, parseGoDuration, parseRfc3339 } from './protobuf.wellknown.js';

describe('RFC 3339 times (metav1.Time / MicroTime JSON)', () => {
  it('parses UTC and offsets to epoch seconds, keeping nanoseconds', () => {
    expect(parseRfc3339('2024-01-02T03:04:05Z')).toEqual({ seconds: 1704164645, nanos: 0 });
    expect(parseRfc3339('2024-01-02T05:04:05+02:00')).toEqual({ seconds: 1704164645, nanos: 0 });
    expect(parseRfc3339('2024-01-02T03:04:05.123456789Z')).toEqual({ seconds: 1704164645, nanos: 123456789 });
    expect(parseRfc3339('2024-01-02T03:04:05.5Z')).toEqual({ seconds: 1704164645, nanos: 500000000 });
    expect(parseRfc3339('1969-12-31T23:59:59Z')).toEqual({ seconds: -1, nanos: 0 });
  });

  it('rejects what Go rejects', () => {
    for (const bad of ['2024-01-02', '2024-01-02T03:04:05', '2024-13-02T03:04:05Z', 'yesterday', '2024-01-02 03:04:05Z']) {
      expect(() => parseRfc3339(bad)).toThrow(WireValueError);
    }
  });

  it('formats Time at second precision and MicroTime with 6 digits, in UTC', () => {
    expect(formatTime({ seconds: 1704164645, nanos: 999999999 })).toBe('2024-01-02T03:04:05Z');
    expect(formatMicroTime({ seconds: 1704164645, nanos: 123456789 })).toBe('2024-01-02T03:04:05.123456Z');
    expect(formatMicroTime({ seconds: 1704164645, nanos: 0 })).toBe('2024-01-02T03:04:05.000000Z');
  });
});

describe('Go durations (metav1.Duration JSON)', () => {
  it.each([
    [0, '0s'],
    [1, '1ns'],
    [1500, '1.5µs'],
    [500e6, '500ms'],
    [1.5e9, '1.5s'],
    [90e9, '1m30s'],
    [3600e9, '1h0m0s'],
    [3723.25e9, '1h2m3.25s'],
    [-2e9, '-2s'],
  ])('%d ns <-> %s', (ns, text) => {
    expect(formatGoDuration(ns)).toBe(text);
    expect(parseGoDuration(text)).toBe(ns);
  });

  it('parses the other spellings Go accepts', () => {
    expect(parseGoDuration('1.5h')).toBe(5400e9);
    expect(parseGoDuration('2h45m')).toBe(9900e9);
    expect(parseGoDuration('300us')).toBe(300e3);
    expect(parseGoDuration('.5s')).toBe(0.5e9);
    expect(parseGoDuration('0')).toBe(0);
    expect(parseGoDuration('+1m')).toBe(60e9);
  });

  it('rejects malformed durations', () => {
    for (const bad of ['', '1', 'abc', '1x', '1h fast', '-', '.s']) {
      expect(() => parseGoDuration(bad)).toThrow(WireValueError);
    }
  });

  it("says why with Go's messages", () => {
    expect(() => parseGoDuration('')).toThrow('time: invalid duration ""');
    expect(() => parseGoDuration('abc')).toThrow('time: invalid duration "abc"');
    expect(() => parseGoDuration('-')).toThrow('time: invalid duration "-"');
    expect(() => parseGoDuration('.s')).toThrow('time: invalid duration ".s"');
    expect(() => parseGoDuration('10')).toThrow('time: missing unit in duration "10"');
    expect(() => parseGoDuration('1s5')).toThrow('time: missing unit in duration "1s5"');
    expect(() => parseGoDuration('10d')).toThrow('time: unknown unit "d" in duration "10d"');
    expect(() => parseGoDuration('1 s')).toThrow('time: unknown unit " s" in duration "1 s"');
    expect(parseGoDuration('5.s')).toBe(5e9);
    expect(parseGoDuration('1500µs')).toBe(1.5e6);
    expect(parseGoDuration('1500μs')).toBe(1.5e6);
  });
});
