/**
 * Every timestamp the service sends passes through `normalizeTimestamp` before it is compared or
 * stored, so `2022-04-28T14:00:00Z`, `2022-04-28T14:00:00.000Z` and `2022-04-28T16:00:00+02:00`
 * are one value: ISO-8601 UTC with milliseconds.
 */

// Date, 'T' or space, time with optional fraction, and a zone (Z or ±hh:mm / ±hhmm / ±hh).
const ISO_DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(Z|z|[+-]\d{2}(?::?\d{2})?)?$/;
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const CANONICAL = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/**
 * Canonical form of an ISO-8601 timestamp, or null when `value` is not one. A timestamp without a
 * zone is taken as UTC: the service documents all its times as UTC.
 */
export function normalizeTimestamp(value: string): string | null {
  // Already canonical (what the schemas return and the store holds): checked field by field,
  // without a Date (every list item and stored row passes here; see isRealCanonical).
  if (CANONICAL.test(value) && isRealCanonical(value)) return value;
  const match = ISO_DATE_TIME.exec(value.trim());
  if (!match) return null;
  const [, y, mo, d, h, mi, s = '00', frac = '', zone = 'Z'] = match;
  const ms = Number((frac + '000').slice(0, 3));
  const base = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s), ms);
  if (
    !isRealDate(Number(y), Number(mo), Number(d)) ||
    Number(h) > 23 ||
    Number(mi) > 59 ||
    Number(s) > 59
  ) {
    return null;
  }
  return new Date(base - zoneOffsetMs(zone)).toISOString();
}

/** Canonical `YYYY-MM-DD`, or null when `value` is not a real calendar date. */
export function normalizeDate(value: string): string | null {
  const trimmed = value.trim();
  const match = ISO_DATE.exec(trimmed) ?? ISO_DATE.exec(trimmed.slice(0, 10));
  if (!match) return null;
  const [, y, mo, d] = match;
  return isRealDate(Number(y), Number(mo), Number(d)) ? `${y}-${mo}-${d}` : null;
}

/** Milliseconds to canonical form. */
export function isoFromMs(ms: number): string {
  return new Date(ms).toISOString();
}

function zoneOffsetMs(zone: string): number {
  if (zone === 'Z' || zone === 'z') return 0;
  const sign = zone.startsWith('-') ? -1 : 1;
  const digits = zone.slice(1).replace(':', '');
  const hours = Number(digits.slice(0, 2));
  const minutes = Number(digits.slice(2, 4) || '0');
  return sign * (hours * 60 + minutes) * 60_000;
}

/** A value of CANONICAL's shape whose date exists and whose time is within the day. */
function isRealCanonical(value: string): boolean {
  const field = (from: number, to: number) => Number(value.slice(from, to));
  const year = field(0, 4);
  const month = field(5, 7);
  const day = field(8, 10);
  return (
    isRealDate(year, month, day) &&
    field(11, 13) <= 23 &&
    field(14, 16) <= 59 &&
    field(17, 19) <= 59
  );
}

/** Days of month `mo` (1-12) in year `y`, by the proleptic Gregorian calendar (as Date has it). */
function daysInMonth(y: number, mo: number): number {
  if (mo === 2) return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0 ? 29 : 28;
  return mo === 4 || mo === 6 || mo === 9 || mo === 11 ? 30 : 31;
}

function isRealDate(y: number, mo: number, d: number): boolean {
  return mo >= 1 && mo <= 12 && d >= 1 && d <= daysInMonth(y, mo);
}
