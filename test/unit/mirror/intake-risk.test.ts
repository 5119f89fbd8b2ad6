import { describe, expect, it } from 'vitest';
import {
  isAtRisk,
  parsePollCoverage,
  pollCoverageText,
  reReadAfter,
  type AtRiskFacts,
  type PollCoverage,
} from '../../../src/mirror/intake-risk.js';

/*
 * A gap from 10:00 to 10:05 (our clock). A request is at risk while it is open, its pickup lies
 * after 10:00, and nothing read it from the service at or after 10:05.
 */

const GAP = { started_at: '2024-04-30T10:00:00.000Z', ended_at: '2024-04-30T10:05:00.000Z' };
const JUST_BEFORE_END = '2024-04-30T10:04:59.999Z';
const AT_END = GAP.ended_at;

const request = (overrides: Partial<AtRiskFacts> = {}): AtRiskFacts => ({
  request_id: 'r1',
  list_state: 'accepted',
  unavailable_at: null,
  pickup_at: '2024-04-30T14:00:00.000Z',
  event_dt_utc: '2024-04-30T14:00:00.000Z',
  read_at: '2024-04-30T09:00:00.000Z',
  record_event_at: '2024-04-30T09:30:00.000Z',
  quarantined_at: null,
  ...overrides,
});

/** A complete poll that began at `started_at` over one day around the gap, all states. */
const poll = (overrides: Partial<PollCoverage> = {}): PollCoverage => ({
  started_at: '2024-04-30T10:05:10.000Z',
  window_from: '2024-04-29T10:00:00.000Z',
  window_to: '2024-05-01T10:00:00.000Z',
  states: ['awaiting', 'accepted', 'completed', 'canceled'],
  ...overrides,
});

describe('which open requests a gap puts at risk', () => {
  it('an open request, pickup after the gap began, last read before it ended', () => {
    expect(isAtRisk(request(), GAP, null)).toBe(true);
    expect(isAtRisk(request({ list_state: 'awaiting' }), GAP, null)).toBe(true);
    expect(isAtRisk(request({ read_at: null, record_event_at: null }), GAP, null)).toBe(true);
  });

  it.each([
    ['completed', { list_state: 'completed' }],
    ['canceled', { list_state: 'canceled' }],
    ['of no known state', { list_state: null }],
    ['unavailable', { unavailable_at: '2024-04-30T09:00:00.000Z' }],
    ['picked up before the gap began', { pickup_at: '2024-04-30T09:59:59.999Z' }],
    ['picked up as the gap began', { pickup_at: GAP.started_at }],
    ['with no pickup time', { pickup_at: null }],
  ] as const)('not one %s', (_what, overrides) => {
    expect(isAtRisk(request(overrides), GAP, null)).toBe(false);
  });
});

describe('what takes a request off the list: a read from the service after the gap ended', () => {
  it.each([
    ['a webhook event carrying the record', { record_event_at: AT_END }, 'webhook'],
    ['a detail read (read_at)', { read_at: AT_END }, 'detail'],
    ['a later detail read', { read_at: '2024-04-30T11:00:00.000Z' }, 'detail'],
  ] as const)('%s at or after the end', (_what, overrides, how) => {
    expect(reReadAfter(request(overrides), GAP.ended_at, null)).toBe(how);
    expect(isAtRisk(request(overrides), GAP, null)).toBe(false);
  });

  it.each([
    ['a webhook event', { record_event_at: JUST_BEFORE_END }],
    ['a detail read', { read_at: JUST_BEFORE_END }],
    ['a read during the gap', { read_at: '2024-04-30T10:02:00.000Z' }],
  ] as const)('not %s a millisecond before the end: the rest of the gap may hide one', (_w, o) => {
    expect(isAtRisk(request(o), GAP, null)).toBe(true);
  });

  it('a complete poll that began at or after the end covers its states and window', () => {
    expect(reReadAfter(request(), GAP.ended_at, poll())).toBe('poll');
    expect(isAtRisk(request(), GAP, poll({ started_at: AT_END }))).toBe(false);
    // The window's bounds are inside it, as the poll's own query has them.
    const at = (event_dt_utc: string) => request({ event_dt_utc });
    expect(isAtRisk(at(poll().window_from), GAP, poll())).toBe(false);
    expect(isAtRisk(at(poll().window_to), GAP, poll())).toBe(false);
  });

  it('not a poll that began before the end, even by a millisecond', () => {
    expect(isAtRisk(request(), GAP, poll({ started_at: JUST_BEFORE_END }))).toBe(true);
  });

  it('not for a state the poll did not list', () => {
    const accepted = poll({ states: ['accepted', 'completed'] });
    expect(isAtRisk(request({ list_state: 'accepted' }), GAP, accepted)).toBe(false);
    expect(isAtRisk(request({ list_state: 'awaiting' }), GAP, accepted)).toBe(true);
  });

  it('not outside its window, nor without an event time', () => {
    expect(isAtRisk(request({ event_dt_utc: '2024-05-01T10:00:00.001Z' }), GAP, poll())).toBe(true);
    expect(isAtRisk(request({ event_dt_utc: '2024-04-29T09:59:59.999Z' }), GAP, poll())).toBe(true);
    expect(isAtRisk(request({ event_dt_utc: null }), GAP, poll())).toBe(true);
  });

  it('not for a record the poll had to quarantine instead of storing', () => {
    const quarantined = (quarantined_at: string) => request({ quarantined_at });
    expect(isAtRisk(quarantined(poll().started_at), GAP, poll())).toBe(true);
    expect(isAtRisk(quarantined('2024-04-30T12:00:00.000Z'), GAP, poll())).toBe(true);
    // Quarantined before the poll began, and the poll then found the stored record current.
    expect(isAtRisk(quarantined('2024-04-30T10:05:09.999Z'), GAP, poll())).toBe(false);
  });

  it('a read after the end counts whatever the poll covers', () => {
    const readLater = request({ list_state: 'awaiting', read_at: '2024-04-30T10:06:00.000Z' });
    expect(isAtRisk(readLater, GAP, poll({ states: ['accepted'] }))).toBe(false);
  });
});

describe('the recorded poll coverage', () => {
  it('reads back what was written', () => {
    expect(parsePollCoverage(pollCoverageText(poll()))).toEqual(poll());
  });

  it.each([
    ['nothing', undefined],
    ['an empty value', ''],
    ['text that is not JSON', 'yes'],
    ['JSON null', 'null'],
    ['a time that is no time', JSON.stringify({ ...poll(), started_at: 'soon' })],
    ['states that are not a list', JSON.stringify({ ...poll(), states: 'accepted' })],
    ['a state that is not text', JSON.stringify({ ...poll(), states: [1] })],
    ['a missing window', JSON.stringify({ started_at: poll().started_at, states: [] })],
  ])('is none from %s', (_what, text) => {
    expect(parsePollCoverage(text)).toBeNull();
  });
});
