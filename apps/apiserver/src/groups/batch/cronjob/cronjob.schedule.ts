/**
 * The cron schedule syntax of CronJobs (robfig/cron v3 ParseStandard, the parser Kubernetes
 * validates and runs schedules with): five fields (minute, hour, day of month, month, day of
 * week) of `*`, `?`, numbers or names, ranges `a-b`, steps `/n` and lists `a,b`; or a
 * descriptor (@yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly, @every
 * <duration>); optionally after a TZ= or CRON_TZ= prefix naming the time zone.
 *
 * `parseCronSchedule` gives a schedule whose `next(t)` is the first activation strictly after
 * the instant t (in milliseconds), evaluated on the wall clock of the schedule's time zone; none
 * within five years is `undefined` (a schedule such as `0 0 31 2 *` never fires). Day of month
 * and day of week combine as robfig's do: when either field starts with `*` (or `?`) and has no
 * step, a day must match both; otherwise matching either is enough. Pure.
 */
import { DateTime } from 'luxon';

interface Bounds {
  min: number;
  max: number;
  names?: Record<string, number>;
}

/** The values one field allows, and whether it was written as `*`/`?` without a step. */
interface FieldSet {
  values: Set<number>;
  star: boolean;
}

export interface CronSchedule {
  /** The IANA zone (or 'system') the fields are read in. */
  readonly zone: string;
  /** The first activation strictly after `afterMs`, or undefined when there is none within five years. */
  next(afterMs: number): number | undefined;
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
/** The descriptors as the five fields they stand for. */
const DESCRIPTORS: Record<string, string> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};
// A Go duration such as 1h30m or 90s (time.ParseDuration).
const GO_DURATION = /^([0-9]+(\.[0-9]*)?(ns|us|µs|ms|s|m|h))+$/;
const UNIT_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const FIVE_YEARS_MS = 5 * 366 * 24 * 3600 * 1000;

/** parseIntOrName: a name of the field, else a non-negative integer. */
function value(expr: string, b: Bounds): number | string {
  const named = b.names?.[expr.toLowerCase()];
  if (named !== undefined) return named;
  if (!/^[0-9]+$/.test(expr)) return `failed to parse int from ${expr}: strconv.Atoi: parsing "${expr}": invalid syntax`;
  return Number(expr);
}

/** getRange: one element of a field's list, added to `into`; an error text when it does not parse. */
function range(expr: string, b: Bounds, into: FieldSet): string | undefined {
  const [rangePart, step, ...extra] = expr.split('/');
  if (extra.length) return `too many slashes: ${expr}`;
  let start: number;
  let end: number;
  let star = false;
  const bounds = rangePart.split('-');
  if (bounds.length > 2) return `too many hyphens: ${expr}`;
  if (rangePart === '*' || rangePart === '?') {
    start = b.min;
    end = b.max;
    star = true;
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
  let every = 1;
  if (step !== undefined) {
    const n = /^[0-9]+$/.test(step) ? Number(step) : NaN;
    if (Number.isNaN(n)) return `failed to parse int from ${step}: strconv.Atoi: parsing "${step}": invalid syntax`;
    if (n === 0) return `step of range should be a positive number: ${expr}`;
    // "N/step" means N to the field's maximum.
    if (bounds.length === 1 && rangePart !== '*' && rangePart !== '?') end = b.max;
    every = n;
    if (n > 1) star = false;
  }
  if (start < b.min) return `beginning of range (${start}) below minimum (${b.min}): ${expr}`;
  if (end > b.max) return `end of range (${end}) above maximum (${b.max}): ${expr}`;
  if (start > end) return `beginning of range (${start}) beyond end of range (${end}): ${expr}`;
  for (let v = start; v <= end; v += every) into.values.add(v);
  if (star) into.star = true;
  return undefined;
}

/** A Go duration in milliseconds (already matched by GO_DURATION). */
function goDurationMs(d: string): number {
  let ms = 0;
  for (const m of d.matchAll(/([0-9]+(?:\.[0-9]*)?)(ns|us|µs|ms|s|m|h)/g)) ms += Number(m[1]) * UNIT_MS[m[2]];
  return ms;
}

/** Whether a zone name is one this runtime knows (Go's time.LoadLocation, roughly). */
export function knownTimeZone(zone: string): boolean {
  return DateTime.now().setZone(zone).isValid;
}

/** The five fields as value sets; an error text when one does not parse. */
function fieldSets(spec: string): FieldSet[] | string {
  const fields = spec.split(/\s+/);
  if (fields.length !== FIELDS.length) return `expected exactly 5 fields, found ${fields.length}: [${fields.join(' ')}]`;
  const sets: FieldSet[] = [];
  for (let i = 0; i < fields.length; i++) {
    const set: FieldSet = { values: new Set(), star: false };
    for (const part of fields[i].split(',')) {
      const err = range(part, FIELDS[i], set);
      if (err) return err;
    }
    sets.push(set);
  }
  return sets;
}

/** The next activation of five field sets after an instant, on the wall clock of `zone`. */
function nextOfFields([minute, hour, dom, month, dow]: FieldSet[], zone: string, afterMs: number): number | undefined {
  const dayMatches = (d: DateTime): boolean => {
    const domMatch = dom.values.has(d.day);
    const dowMatch = dow.values.has(d.weekday % 7);
    return dom.star || dow.star ? domMatch && dowMatch : domMatch || dowMatch;
  };
  // Whole minutes only: the first candidate is the minute after the one `afterMs` falls in.
  let d = DateTime.fromMillis(afterMs, { zone }).startOf('minute').plus({ minutes: 1 });
  const limit = afterMs + FIVE_YEARS_MS;
  while (d.toMillis() <= limit) {
    if (!month.values.has(d.month)) d = d.startOf('month').plus({ months: 1 });
    else if (!dayMatches(d)) d = d.startOf('day').plus({ days: 1 });
    else if (!hour.values.has(d.hour)) d = d.startOf('hour').plus({ hours: 1 });
    else if (!minute.values.has(d.minute)) d = d.plus({ minutes: 1 });
    else return d.toMillis();
  }
  return undefined;
}

/**
 * Parses a schedule; `defaultZone` applies unless the schedule names one with TZ= or CRON_TZ=.
 * Returns robfig's error text when it does not parse.
 */
export function parseCronSchedule(schedule: string, defaultZone = 'system'): CronSchedule | string {
  let spec = schedule.trim();
  if (spec === '') return 'empty spec string';
  let zone = defaultZone;
  if (spec.startsWith('TZ=') || spec.startsWith('CRON_TZ=')) {
    const i = spec.search(/\s/);
    const name = (i < 0 ? spec : spec.slice(0, i)).slice(spec.indexOf('=') + 1);
    if (i < 0 || !knownTimeZone(name)) return `provided bad location ${name}: unknown time zone ${name}`;
    zone = name;
    spec = spec.slice(i).trim();
  }
  if (spec.startsWith('@every ')) {
    const d = spec.slice('@every '.length).trim();
    if (!GO_DURATION.test(d)) return `failed to parse duration ${spec}: time: invalid duration "${d}"`;
    // robfig: at least a second, and whole seconds; the next activation keeps the instant's second.
    const every = Math.max(1000, Math.floor(goDurationMs(d) / 1000) * 1000);
    return { zone, next: (afterMs) => Math.floor(afterMs / 1000) * 1000 + every };
  }
  if (spec.startsWith('@')) {
    const fields = DESCRIPTORS[spec];
    if (!fields) return `unrecognized descriptor: ${spec}`;
    spec = fields;
  }
  const sets = fieldSets(spec);
  if (typeof sets === 'string') return sets;
  return { zone, next: (afterMs) => nextOfFields(sets, zone, afterMs) };
}

/** The error of a cron schedule as robfig's ParseStandard reports it; undefined when it parses. */
export function cronScheduleError(schedule: string): string | undefined {
  const parsed = parseCronSchedule(schedule);
  return typeof parsed === 'string' ? parsed : undefined;
}
