import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isSettled, SETTLE_MS } from '../../../src/mirror/settled.js';
import type { StoredSummary } from '../../../src/mirror/observations.js';

/*
 * A stored record is trusted (settled) once it was read a full second after its last_updated:
 * the service writes last_updated to the second, so an earlier read may have missed a second edit
 * within that second. Until then each poll reads the detail again.
 */

const LAST_UPDATED = '2024-04-30T10:15:00.000Z';

function settled(last_updated_timestamp_utc: string | null, read_at: string | null) {
  return isSettled({ last_updated_timestamp_utc, read_at });
}

describe('isSettled', () => {
  it('waits one second, the precision of last_updated', () => {
    expect(SETTLE_MS).toBe(1000);
  });

  it.each([
    ['a second before last_updated', '2024-04-30T10:14:59.000Z', false],
    ['one millisecond before last_updated', '2024-04-30T10:14:59.999Z', false],
    ['at last_updated', '2024-04-30T10:15:00.000Z', false],
    ['one millisecond later', '2024-04-30T10:15:00.001Z', false],
    ['half a second later', '2024-04-30T10:15:00.500Z', false],
    ['one millisecond short of a second later', '2024-04-30T10:15:00.999Z', false],
    ['exactly a second later', '2024-04-30T10:15:01.000Z', true],
    ['a second and one millisecond later', '2024-04-30T10:15:01.001Z', true],
    ['a day later', '2024-05-01T10:15:00.000Z', true],
  ])('read %s: settled is %s', (_when, readAt, expected) => {
    expect(settled(LAST_UPDATED, readAt)).toBe(expected);
  });

  it('counts the second from last_updated itself, not from the start of its second', () => {
    const lastUpdated = '2024-04-30T10:15:00.500Z';
    expect(settled(lastUpdated, '2024-04-30T10:15:01.000Z')).toBe(false);
    expect(settled(lastUpdated, '2024-04-30T10:15:01.499Z')).toBe(false);
    expect(settled(lastUpdated, '2024-04-30T10:15:01.500Z')).toBe(true);
  });

  it('counts across midnight and the turn of the year', () => {
    const lastUpdated = '2024-12-31T23:59:59.500Z';
    expect(settled(lastUpdated, '2025-01-01T00:00:00.499Z')).toBe(false);
    expect(settled(lastUpdated, '2025-01-01T00:00:00.500Z')).toBe(true);
  });

  it('is not settled before the record was read', () => {
    expect(settled(LAST_UPDATED, null)).toBe(false);
  });

  it('is settled without a last_updated, read or not: the next list read decides', () => {
    expect(settled(null, null)).toBe(true);
    expect(settled(null, '2024-04-30T10:15:00.000Z')).toBe(true);
  });

  it('compares instants, whatever form each time is written in', () => {
    expect(settled(LAST_UPDATED, '2024-04-30T10:15:01Z')).toBe(true);
    expect(settled(LAST_UPDATED, '2024-04-30T12:15:01.000+02:00')).toBe(true);
    expect(settled(LAST_UPDATED, '2024-04-30T12:15:00.999+02:00')).toBe(false);
    expect(settled('2024-04-30T12:15:00+02:00', '2024-04-30T10:15:01.000Z')).toBe(true);
    expect(settled('2024-04-30T05:15:00-05:00', '2024-04-30T10:15:00.999Z')).toBe(false);
  });

  it('stays unsettled, to be read again, when either time is not a timestamp', () => {
    expect(settled(LAST_UPDATED, 'not a time')).toBe(false);
    expect(settled(LAST_UPDATED, '')).toBe(false);
    expect(settled('not a time', '2024-05-01T00:00:00.000Z')).toBe(false);
    expect(settled('', '2024-05-01T00:00:00.000Z')).toBe(false);
  });

  it('decides by the two times alone, whatever the state or availability of the row', () => {
    const summary = (overrides: Partial<StoredSummary>): StoredSummary => ({
      request_id: 'R-1001',
      list_state: 'accepted',
      event_dt_utc: '2024-05-01T14:30:00.000Z',
      last_updated_timestamp_utc: LAST_UPDATED,
      unavailable_at: null,
      held_digest: null,
      read_at: '2024-04-30T10:15:00.999Z',
      ...overrides,
    });
    for (const list_state of ['awaiting', 'accepted', 'completed', 'canceled', null]) {
      for (const unavailable_at of [null, '2024-05-02T00:00:00.000Z']) {
        const row = { list_state, unavailable_at };
        expect(isSettled(summary(row)), JSON.stringify(row)).toBe(false);
        expect(isSettled(summary({ ...row, read_at: '2024-04-30T10:15:01.000Z' }))).toBe(true);
      }
    }
  });
});

/** Milliseconds within years the service's records fall in. */
const instantArb = fc.integer({
  min: Date.parse('2000-01-01T00:00:00.000Z'),
  max: Date.parse('2100-01-01T00:00:00.000Z'),
});
const canonical = (ms: number) => new Date(ms).toISOString();

/** The instant `ms` written at a zone offset of `minutes`, e.g. 2024-04-30T12:15:00.000+02:00. */
function atOffset(ms: number, minutes: number): string {
  const local = new Date(ms + minutes * 60_000).toISOString().slice(0, -1);
  const sign = minutes < 0 ? '-' : '+';
  const hours = String(Math.floor(Math.abs(minutes) / 60)).padStart(2, '0');
  return `${local}${sign}${hours}:${String(Math.abs(minutes) % 60).padStart(2, '0')}`;
}
const offsetArb = fc.integer({ min: -12 * 4, max: 14 * 4 }).map((quarters) => quarters * 15);

describe('properties of isSettled', () => {
  it('is settled exactly when the read is at least SETTLE_MS after last_updated', () => {
    fc.assert(
      fc.property(instantArb, fc.integer({ min: -5000, max: 5000 }), (lastUpdated, delay) => {
        const isReadLateEnough = delay >= SETTLE_MS;
        expect(settled(canonical(lastUpdated), canonical(lastUpdated + delay))).toBe(
          isReadLateEnough,
        );
      }),
    );
  });

  it('stays settled for every later read', () => {
    fc.assert(
      fc.property(instantArb, fc.nat(10_000), fc.nat(10_000), (lastUpdated, delay, more) => {
        const readAt = lastUpdated + delay;
        fc.pre(settled(canonical(lastUpdated), canonical(readAt)));
        expect(settled(canonical(lastUpdated), canonical(readAt + more))).toBe(true);
      }),
    );
  });

  it('gives the same answer with either time written at any zone offset', () => {
    fc.assert(
      fc.property(
        instantArb,
        fc.integer({ min: -3000, max: 3000 }),
        offsetArb,
        offsetArb,
        (lastUpdated, delay, lastUpdatedOffset, readOffset) => {
          const readAt = lastUpdated + delay;
          expect(
            settled(atOffset(lastUpdated, lastUpdatedOffset), atOffset(readAt, readOffset)),
          ).toBe(settled(canonical(lastUpdated), canonical(readAt)));
        },
      ),
    );
  });
});
