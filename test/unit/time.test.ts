import { describe, expect, it } from 'vitest';
import { normalizeDate, normalizeTimestamp } from '../../src/time.js';

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
