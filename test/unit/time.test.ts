import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { normalizeDate, normalizeTimestamp } from '../../src/time.js';

/** Digits as a fixed-width string. */
const digits = (width: number, max: number) =>
  fc.integer({ min: 0, max }).map((n) => String(n).padStart(width, '0'));

/** Year, month, day, hour, minute and second, each a little past its range at times. */
const timeFields = fc.tuple(
  digits(4, 9999),
  digits(2, 13),
  digits(2, 32),
  digits(2, 25),
  digits(2, 61),
  digits(2, 61),
);

describe('normalizeTimestamp', () => {
  it('gives every valid form the service uses one canonical UTC form', () => {
    const canonical = '2022-04-28T14:00:00.000Z';
    for (const form of [
      '2022-04-28T14:00:00Z',
      '2022-04-28T14:00:00.000Z',
      '2022-04-28T14:00:00.000000Z',
      '2022-04-28T14:00:00+00:00',
      '2022-04-28T16:00:00+02:00',
      '2022-04-28T09:30:00-0430',
      '2022-04-28 14:00:00Z',
      '2022-04-28T14:00Z',
      '2022-04-28T14:00:00',
    ]) {
      expect(normalizeTimestamp(form), form).toBe(canonical);
    }
  });

  it('keeps milliseconds and truncates finer fractions', () => {
    expect(normalizeTimestamp('2026-01-28T21:48:06.5Z')).toBe('2026-01-28T21:48:06.500Z');
    expect(normalizeTimestamp('2026-01-28T21:48:06.123999Z')).toBe('2026-01-28T21:48:06.123Z');
  });

  it('crosses day boundaries with offsets', () => {
    expect(normalizeTimestamp('2026-01-01T01:00:00+02:00')).toBe('2025-12-31T23:00:00.000Z');
  });

  it('takes a canonical-looking value as it is exactly when a Date round trip keeps it', () => {
    // Canonical values are checked field by field; Date is the reference for which are real.
    const roundTrips = (value: string) => {
      const ms = Date.parse(value);
      return !Number.isNaN(ms) && new Date(ms).toISOString() === value;
    };
    fc.assert(
      fc.property(fc.tuple(timeFields, digits(3, 999)), ([[y, mo, d, h, mi, s], ms]) => {
        const value = `${y}-${mo}-${d}T${h}:${mi}:${s}.${ms}Z`;
        expect(normalizeTimestamp(value) === value, value).toBe(roundTrips(value));
      }),
      { numRuns: 5_000 },
    );
    for (const leap of ['2024-02-29', '2000-02-29', '0400-02-29'])
      expect(normalizeTimestamp(`${leap}T00:00:00.000Z`)).toBe(`${leap}T00:00:00.000Z`);
    for (const notLeap of ['2023-02-29', '1900-02-29', '2100-02-29'])
      expect(normalizeTimestamp(`${notLeap}T00:00:00.000Z`)).toBeNull();
  });

  it('takes a canonical-looking value with any one character changed only when Date does', () => {
    const roundTrips = (value: string) => {
      const ms = Date.parse(value);
      return !Number.isNaN(ms) && new Date(ms).toISOString() === value;
    };
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 23 }),
        fc.string({ minLength: 1, maxLength: 1, unit: 'binary' }),
        fc.constantFrom('.123Z', 'Z', '+00:00'),
        (at, character, ending) => {
          const value = `2026-11-29T04:31:07${ending}`;
          if (at >= value.length) return;
          const changed = `${value.slice(0, at)}${character}${value.slice(at + 1)}`;
          const result = normalizeTimestamp(changed);
          if (result === changed) expect(roundTrips(changed), changed).toBe(true);
          if (result !== null) expect(roundTrips(result), changed).toBe(true);
        },
      ),
      { numRuns: 5_000 },
    );
  });

  it('gives each spelling of a time what its canonical spelling gives, offsets applied', () => {
    fc.assert(
      fc.property(timeFields, ([y, mo, d, h, mi, s]) => {
        const time = `${y}-${mo}-${d}T${h}:${mi}:${s}`;
        const canonical = normalizeTimestamp(`${time}.000Z`);
        for (const spelling of [`${time}Z`, `${time}+00:00`, `${time}.000+00:00`, `${time}z`])
          expect(normalizeTimestamp(spelling), spelling).toBe(canonical);
        const shifted = (hours: number) =>
          canonical === null ? null : new Date(Date.parse(canonical) - hours * 3_600_000);
        // Shifted out of Date's range of years (0 to 9999 for toISOString's four digits) is
        // not compared.
        for (const [zone, hours] of [
          ['+02:00', 2],
          ['-0430', -4.5],
        ] as const) {
          const expected = shifted(hours);
          if (expected && (expected.getUTCFullYear() < 0 || expected.getUTCFullYear() > 9999))
            continue;
          expect(normalizeTimestamp(`${time}${zone}`), `${time}${zone}`).toBe(
            expected?.toISOString() ?? null,
          );
        }
      }),
      { numRuns: 5_000 },
    );
    // Years before 100 are years, not 1900 to 1999.
    expect(normalizeTimestamp('0050-06-01T10:00:00+02:00')).toBe('0050-06-01T08:00:00.000Z');
    expect(normalizeTimestamp('0050-06-01T10:00:00Z')).toBe('0050-06-01T10:00:00.000Z');
  });

  it('rejects what is not a timestamp', () => {
    for (const bad of [
      '',
      'yesterday',
      '2022-02-30T10:00:00Z',
      '2022-04-28T25:00:00Z',
      '1651154400',
      '2022-04-28',
    ]) {
      expect(normalizeTimestamp(bad), bad).toBeNull();
    }
  });
});

describe('normalizeDate', () => {
  it("accepts real dates and a timestamp's date part", () => {
    expect(normalizeDate('1948-02-29')).toBe('1948-02-29');
    expect(normalizeDate('1950-07-04T00:00:00Z')).toBe('1950-07-04');
  });
  it('rejects impossible dates', () => {
    expect(normalizeDate('1949-02-29')).toBeNull();
    expect(normalizeDate('04/07/1950')).toBeNull();
  });
});
