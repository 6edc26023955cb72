/**
 * The cron schedule syntax the cronjob controller accepts (robfig/cron v3 ParseStandard, the
 * parser Kubernetes validates schedules with): five fields (minute, hour, day of month, month,
 * day of week) of `*`, `?`, numbers or names, ranges `a-b`, steps `/n` and lists `a,b`; or a
 * descriptor (@yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly, @every
 * <duration>); optionally after a TZ= or CRON_TZ= prefix. Returns robfig's error text, or
 * undefined for a valid schedule. Pure.
 */

interface Bounds {
  min: number;
  max: number;
  names?: Record<string, number>;
}

const MONTHS: Record<string, number> = { jan: 1, feb: 2, mar: 3, apr: 4, may: 5, jun: 6, jul: 7, aug: 8, sep: 9, oct: 10, nov: 11, dec: 12 };
const DAYS: Record<string, number> = { sun: 0, mon: 1, tue: 2, wed: 3, thu: 4, fri: 5, sat: 6 };
const FIELDS: readonly Bounds[] = [
  { min: 0, max: 59 },
  { min: 0, max: 23 },
  { min: 1, max: 31 },
  { min: 1, max: 12, names: MONTHS },
  { min: 0, max: 6, names: DAYS },
];
const DESCRIPTORS = new Set(['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly']);
// A Go duration such as 1h30m or 90s (time.ParseDuration).
const GO_DURATION = /^([0-9]+(\.[0-9]*)?(ns|us|µs|ms|s|m|h))+$/;

/** parseIntOrName: a name of the field, else a non-negative integer. */
function value(expr: string, b: Bounds): number | string {
  const named = b.names?.[expr.toLowerCase()];
  if (named !== undefined) return named;
  if (!/^[0-9]+$/.test(expr)) return `failed to parse int from ${expr}: strconv.Atoi: parsing "${expr}": invalid syntax`;
  return Number(expr);
}

/** getRange: one element of a field's list. */
function range(expr: string, b: Bounds): string | undefined {
  const [rangePart, step, ...extra] = expr.split('/');
  if (extra.length) return `too many slashes: ${expr}`;
  let start: number;
  let end: number;
  const bounds = rangePart.split('-');
  if (bounds.length > 2) return `too many hyphens: ${expr}`;
  if (rangePart === '*' || rangePart === '?') {
    start = b.min;
    end = b.max;
  } else {
    const s = value(bounds[0], b);
    if (typeof s === 'string') return s;
    start = s;
    end = s;
    if (bounds.length === 2) {
      const e = value(bounds[1], b);
      if (typeof e === 'string') return e;
      end = e;
    }
  }
  if (step !== undefined) {
    const n = /^[0-9]+$/.test(step) ? Number(step) : NaN;
    if (Number.isNaN(n)) return `failed to parse int from ${step}: strconv.Atoi: parsing "${step}": invalid syntax`;
    if (n === 0) return `step of range should be a positive number: ${expr}`;
    // "N/step" means N to the field's maximum.
    if (bounds.length === 1 && rangePart !== '*' && rangePart !== '?') end = b.max;
  }
  if (start < b.min) return `beginning of range (${start}) below minimum (${b.min}): ${expr}`;
  if (end > b.max) return `end of range (${end}) above maximum (${b.max}): ${expr}`;
  if (start > end) return `beginning of range (${start}) beyond end of range (${end}): ${expr}`;
  return undefined;
}

/** The error of a cron schedule as robfig's ParseStandard reports it; undefined when it parses. */
export function cronScheduleError(schedule: string): string | undefined {
  let spec = schedule.trim();
  if (spec === '') return 'empty spec string';
  if (spec.startsWith('TZ=') || spec.startsWith('CRON_TZ=')) {
    const i = spec.search(/\s/);
    if (i < 0) return `provided bad location ${spec.slice(spec.indexOf('=') + 1)}: unknown time zone ${spec.slice(spec.indexOf('=') + 1)}`;
    spec = spec.slice(i).trim();
  }
  if (spec.startsWith('@')) {
    if (DESCRIPTORS.has(spec)) return undefined;
    if (spec.startsWith('@every ')) {
      const d = spec.slice('@every '.length).trim();
      return GO_DURATION.test(d) ? undefined : `failed to parse duration ${spec}: time: invalid duration "${d}"`;
    }
    return `unrecognized descriptor: ${spec}`;
  }
  const fields = spec.split(/\s+/);
  if (fields.length !== FIELDS.length) return `expected exactly 5 fields, found ${fields.length}: [${fields.join(' ')}]`;
  for (let i = 0; i < fields.length; i++) {
    for (const part of fields[i].split(',')) {
      const err = range(part, FIELDS[i]);
      if (err) return err;
    }
  }
  return undefined;
}
