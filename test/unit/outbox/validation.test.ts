import { describe, expect, it } from 'vitest';
import {
  checkAction,
  checkSample,
  checkStateTimestamp,
  checkText,
} from '../../../src/outbox/index.js';

const NOW = Date.UTC(2025, 5, 15, 12, 0, 0);
const iso = (ms: number) => new Date(ms).toISOString();
const DAY = 86_400_000;

describe('checkText', () => {
  it('takes 450 characters counted as code points and refuses 451', () => {
    expect(checkText('é'.repeat(450), 'notes')).toEqual({ ok: true, value: 'é'.repeat(450) });
    expect(checkText('😀'.repeat(450), 'notes').ok).toBe(true); // 900 UTF-16 units
    expect(checkText('x'.repeat(451), 'notes')).toEqual({
      ok: false,
      reason: 'notes is 451 characters long; at most 450 are allowed',
    });
  });

  it('treats absent and empty as no notes, unless required', () => {
    expect(checkText(undefined, 'notes')).toEqual({ ok: true, value: undefined });
    expect(checkText(null, 'notes')).toEqual({ ok: true, value: undefined });
    expect(checkText('', 'reason', { isRequired: true })).toMatchObject({ ok: false });
    expect(checkText('   ', 'reason', { isRequired: true })).toMatchObject({
      reason: 'reason is empty',
    });
    expect(checkText(42, 'notes')).toMatchObject({ reason: 'notes is not text' });
  });
});

describe('checkStateTimestamp', () => {
  it('allows a minute of skew into the future and up to 7 days back', () => {
    expect(checkStateTimestamp(iso(NOW + 59_000), NOW).ok).toBe(true);
    expect(checkStateTimestamp(iso(NOW - 7 * DAY + 1000), NOW).ok).toBe(true);
    expect(checkStateTimestamp(iso(NOW + 61_000), NOW)).toMatchObject({
      reason: 'state timestamp is in the future',
    });
    expect(checkStateTimestamp(iso(NOW - 7 * DAY - 1000), NOW)).toMatchObject({
      reason: 'state timestamp is older than 7 days (stale)',
    });
  });

  it('normalizes offsets to canonical UTC and refuses what is not a timestamp', () => {
    expect(checkStateTimestamp('2025-06-15T13:00:00+02:00', NOW)).toEqual({
      ok: true,
      value: '2025-06-15T11:00:00.000Z',
    });
    expect(checkStateTimestamp('yesterday', NOW)).toMatchObject({ ok: false });
    expect(checkStateTimestamp(1718450000, NOW)).toMatchObject({ ok: false });
  });
});

describe('checkAction', () => {
  it('checks each kind with its own members', () => {
    expect(checkAction({ kind: 'accept', notes: 'ETA 20' }, NOW)).toEqual({
      ok: true,
      value: { kind: 'accept', notes: 'ETA 20' },
    });
    expect(checkAction({ kind: 'decline' }, NOW)).toEqual({ ok: true, value: { kind: 'decline' } });
    expect(checkAction({ kind: 'state', stateName: 'en_route', at: iso(NOW) }, NOW)).toEqual({
      ok: true,
      value: { kind: 'state', name: 'en_route', at: iso(NOW) },
    });
    expect(
      checkAction({ kind: 'change_request', at: iso(NOW + DAY), reason: 'crew late' }, NOW),
    ).toEqual({
      ok: true,
      value: { kind: 'change_request', at: iso(NOW + DAY), reason: 'crew late' },
    });
    expect(checkAction({ kind: 'best_time', at: iso(NOW + DAY) }, NOW).ok).toBe(true);
  });

  it('gives a reason for every kind of bad row', () => {
    const reason = (input: Parameters<typeof checkAction>[0]) => {
      const checked = checkAction(input, NOW);
      return checked.ok ? null : checked.reason;
    };
    expect(reason({ kind: 'cancel' })).toMatch(/^unknown kind; expected one of accept/);
    expect(reason({ kind: null })).toMatch(/^unknown kind/);
    expect(reason({ kind: 'accept', notes: 'x'.repeat(451) })).toMatch(/451 characters/);
    expect(reason({ kind: 'state', stateName: 'parked', at: iso(NOW) })).toMatch(
      /^unknown state name; expected one of en_route, arrived/,
    );
    expect(reason({ kind: 'state', at: iso(NOW) })).toBe('state name is missing');
    expect(reason({ kind: 'state', stateName: 'arrived' })).toBe('state timestamp is missing');
    expect(reason({ kind: 'change_request', at: iso(NOW) })).toBe('reason is missing');
    expect(reason({ kind: 'change_request', reason: 'r' })).toBe('at (agreed_dt) is missing');
    expect(reason({ kind: 'best_time', at: 'soon' })).toBe(
      'at (proposed_agreed_dt) is not an ISO-8601 timestamp',
    );
  });
});

describe('checkSample', () => {
  it('takes the four required numbers and an optional speed', () => {
    expect(checkSample({ lat: 41.8, lng: -87.6, alt: 180, timestamp: 1718452800.5 })).toEqual({
      ok: true,
      value: { lat: 41.8, lng: -87.6, alt: 180, timestamp: 1718452800.5 },
    });
    expect(
      checkSample({ lat: 1, lng: 2, alt: 3, speed: 12.5, timestamp: 1718452800, extra: 'x' }),
    ).toEqual({ ok: true, value: { lat: 1, lng: 2, alt: 3, speed: 12.5, timestamp: 1718452800 } });
    expect(checkSample({ lat: 1, lng: 2, alt: 3, speed: null, timestamp: 1718452800 }).ok).toBe(
      true,
    );
  });

  it('names every missing or non-numeric member, never the value', () => {
    expect(checkSample({ lat: '41.8', lng: null, timestamp: 1718452800 })).toEqual({
      ok: false,
      reason: 'lat is not a number, lng is missing, alt is missing',
    });
    expect(checkSample({ lat: 1, lng: 2, alt: 3, speed: 'fast', timestamp: 1 })).toMatchObject({
      reason: 'speed is not a number',
    });
    expect(checkSample([1, 2, 3])).toMatchObject({ reason: 'a sample must be an object' });
  });

  it('refuses out-of-range coordinates and millisecond timestamps', () => {
    expect(checkSample({ lat: 91, lng: 0, alt: 0, timestamp: 1718452800 })).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^lat: /),
    });
    expect(checkSample({ lat: 0, lng: 0, alt: 0, timestamp: 1718452800000 })).toMatchObject({
      reason: expect.stringContaining('timestamp: expected Unix epoch seconds'),
    });
  });
});
