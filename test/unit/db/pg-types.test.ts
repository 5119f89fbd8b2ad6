import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isoFromPostgres } from '../../../src/db/postgres/types.js';

describe('isoFromPostgres', () => {
  it('gives what a UTC session sends as canonical ISO, the fraction cut to milliseconds', () => {
    expect(isoFromPostgres('2026-01-28 21:48:06.123+00')).toBe('2026-01-28T21:48:06.123Z');
    expect(isoFromPostgres('2026-01-28 21:48:06+00')).toBe('2026-01-28T21:48:06.000Z');
    expect(isoFromPostgres('2026-01-28 21:48:06.5+00')).toBe('2026-01-28T21:48:06.500Z');
    expect(isoFromPostgres('2026-01-28 21:48:06.123999+00')).toBe('2026-01-28T21:48:06.123Z');
  });

  it('reads every instant of years 1 to 9999 as a Date would', () => {
    const min = new Date('0001-01-01T00:00:00.000Z').getTime();
    const max = new Date('9999-12-31T23:59:59.999Z').getTime();
    fc.assert(
      fc.property(
        fc.integer({ min, max }),
        fc.integer({ min: 0, max: 999 }),
        fc.integer({ min: 0, max: 6 }),
        (ms, micros, width) => {
          const iso = new Date(ms).toISOString();
          const fraction = `${iso.slice(20, 23)}${String(micros).padStart(3, '0')}`.slice(0, width);
          const text = `${iso.slice(0, 10)} ${iso.slice(11, 19)}${width ? `.${fraction}` : ''}+00`;
          const expected = new Date(Date.parse(`${text.replace(' ', 'T').slice(0, -3)}Z`));
          expect(isoFromPostgres(text), text).toBe(expected.toISOString());
        },
      ),
      { numRuns: 5_000 },
    );
  });

  it('still reads other offsets, and leaves what is not a time as it came', () => {
    expect(isoFromPostgres('2026-01-28 23:48:06.123+02')).toBe('2026-01-28T21:48:06.123Z');
    expect(isoFromPostgres('2026-01-28 21:18:06+05:30')).toBe('2026-01-28T15:48:06.000Z');
    expect(isoFromPostgres('2026-01-28 21:48:06.123')).toBe('2026-01-28T21:48:06.123Z');
    expect(isoFromPostgres('infinity')).toBe('infinity');
  });
});
