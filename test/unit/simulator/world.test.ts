import { describe, expect, it } from 'vitest';
import type { Clock } from '../../../src/clock.js';
import { SERVICE_LEVELS } from '../../../src/simulator/catalog.js';
import {
  createSimulator,
  type MutationSummary,
  type Roughness,
  type TruthRecord,
} from '../../../src/simulator/index.js';

const T0 = Date.UTC(2025, 5, 15, 12, 0, 0);
const CANONICAL = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function frozenClock(ms = T0): Clock & { set(ms: number): void } {
  let now = ms;
  return { now: () => now, sleep: async () => undefined, set: (next) => (now = next) };
}

const build = (seed: number, requests = 200, roughness: Partial<Roughness> = {}) =>
  createSimulator({ seed, requests, clock: frozenClock(), roughness });

describe('simulator data generation', () => {
  // The documented shape: no drifting records.
  const truth = build(1, 200, { driftRate: 0 }).truth();
  const details = truth.map((t) => t.detail as Record<string, unknown>);

  it('is deterministic: same seed, same data; another seed, other data', () => {
    expect(build(1, 200, { driftRate: 0 }).truth()).toEqual(truth);
    expect(build(2, 200, { driftRate: 0 }).truth()).not.toEqual(truth);
  });

  it('generates the requested number of requests with unique 8-character ids', () => {
    expect(truth).toHaveLength(200);
    const ids = truth.map((t) => t.requestId);
    expect(new Set(ids).size).toBe(200);
    expect(ids.every((id) => /^[A-Z0-9]{8}$/.test(id))).toBe(true);
  });

  it('mixes all four states and includes requests no longer available', () => {
    const states = new Set(truth.map((t) => t.listState));
    expect(states).toEqual(new Set(['awaiting', 'accepted', 'completed', 'canceled']));
    expect(truth.some((t) => !t.isVisible)).toBe(true);
    const past = truth.filter((t) => Date.parse(t.eventDtUtc) < T0 - 86_400_000);
    const completed = past.filter((t) => t.listState === 'completed').length;
    expect(completed / past.length).toBeGreaterThan(0.5);
    const awaitingPast = truth.filter(
      (t) =>
        t.isVisible && t.listState === 'awaiting' && Date.parse(t.eventDtUtc) < T0 - 86_400_000,
    );
    expect(awaitingPast).toEqual([]);
  });

  it('gives canonical timestamps in the truth, with created ≤ last updated ≤ now', () => {
    for (const t of truth) {
      expect(t.createdTimestampUtc).toMatch(CANONICAL);
      expect(t.eventDtUtc).toMatch(CANONICAL);
      expect(t.lastUpdatedTimestampUtc).toMatch(CANONICAL);
      expect(t.createdTimestampUtc <= t.lastUpdatedTimestampUtc).toBe(true);
      expect(Date.parse(t.lastUpdatedTimestampUtc)).toBeLessThanOrEqual(T0);
    }
  });

  it('derives the event time from the agreed time, else the requested time', () => {
    for (const t of truth) {
      const agreed = t.detail.transport_agreed_for_time as string | null;
      const pickup = t.detail.transport_pickup_time as string;
      expect(Date.parse(t.eventDtUtc)).toBe(Date.parse(agreed ?? pickup));
      if (t.listState === 'awaiting') expect(agreed).toBeNull();
    }
    expect(truth.some((t) => t.detail.transport_agreed_for_time !== null)).toBe(true);
  });

  it('has the spec detail members, realistic service levels and configurable fields', () => {
    const keys = [
      'request_id',
      'patient_first_name',
      'patient_last_name',
      'patient_dob',
      'pickup_location',
      'destination_location',
      'transport_pickup_time',
      'transport_agreed_for_time',
      'service_level_type',
      'service_type',
      'account',
      'facility',
      'user',
      'enabled_patient_fields',
      'enabled_request_fields',
      'request_current_state',
      'is_round_trip_first_trip',
      'is_round_trip_return_trip',
      'collection_id',
    ];
    for (const d of details) {
      expect(Object.keys(d)).toEqual(keys);
      expect(d.patient_dob).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(SERVICE_LEVELS).toContain(d.service_level_type);
      expect(Object.keys(d.user as object).sort()).toEqual(['email', 'first_name', 'last_name']);
    }
    const fieldNames = new Set(
      details.flatMap((d) => Object.keys(d.enabled_patient_fields as object)),
    );
    expect(fieldNames.size).toBeGreaterThan(6);
    const values = details.flatMap(
      (d) => Object.values(d.enabled_request_fields as object) as unknown[],
    );
    expect(values).toContain(null);
    expect(values.some((v) => Array.isArray(v))).toBe(true);
    expect(values.some((v) => typeof v === 'boolean')).toBe(true);
  });

  it('writes names with apostrophes and diacritics, and leaves some location members null', () => {
    const names = details.map((d) => `${d.patient_first_name} ${d.patient_last_name}`).join('|');
    expect(names).toMatch(/'/);
    expect([...names].some((ch) => ch.charCodeAt(0) > 127)).toBe(true);
    const locations = details.flatMap(
      (d) => [d.pickup_location, d.destination_location] as Record<string, unknown>[],
    );
    expect(locations.some((l) => Object.values(l).includes(null))).toBe(true);
    expect(locations.every((l) => typeof l.id === 'string')).toBe(true);
  });

  it('pairs round-trip legs and groups standing orders by collection id', () => {
    const byCollection = new Map<string, Record<string, unknown>[]>();
    for (const d of details)
      byCollection.set(d.collection_id as string, [
        ...(byCollection.get(d.collection_id as string) ?? []),
        d,
      ]);
    const roundTrips = [...byCollection.values()].filter((g) =>
      g.some((d) => d.is_round_trip_first_trip),
    );
    expect(roundTrips.length).toBeGreaterThan(0);
    for (const group of roundTrips) {
      expect(group.filter((d) => d.is_round_trip_return_trip)).toHaveLength(1);
    }
    const standing = [...byCollection.values()].filter((g) => g.length >= 3);
    expect(standing.length).toBeGreaterThan(0);
    expect(
      new Set(details.map((d) => (d.account as { id: string }).id)).size,
    ).toBeGreaterThanOrEqual(5);
  });

  it('serves timestamps in several ISO-8601 forms', () => {
    const forms = new Set(
      details.map((d) => {
        const ts = d.transport_pickup_time as string;
        return ts.endsWith('+00:00') ? 'offset' : /\.\d{3}Z$/.test(ts) ? 'millis' : 'seconds';
      }),
    );
    expect(forms.size).toBe(3);
  });
});

describe('simulator mutations', () => {
  it('are deterministic from the seed', () => {
    const a = build(3, 100);
    const b = build(3, 100);
    expect(a.mutate(60)).toEqual(b.mutate(60));
    expect(a.truth()).toEqual(b.truth());
  });

  it('move last_updated strictly forward even when the clock stands still, and emit events', () => {
    const sim = build(4, 100, { lastUpdated: 'strict' });
    const emitted: MutationSummary[] = [];
    sim.events.on('mutation', (m: MutationSummary) => emitted.push(m));
    const last = new Map(sim.truth().map((t) => [t.requestId, t.lastUpdatedTimestampUtc]));
    const summaries = sim.mutate(150);
    expect(emitted).toEqual(summaries);
    const kinds = new Set(summaries.map((m) => m.kind));
    for (const kind of [
      'edited',
      'agreed_time',
      'accepted',
      'completed',
      'created',
      'unavailable',
    ]) {
      expect(kinds, kind).toContain(kind);
    }
    for (const m of summaries) {
      const previous = last.get(m.requestId);
      if (previous !== undefined)
        expect(m.lastUpdated > previous, `${m.kind} ${m.requestId}`).toBe(true);
      last.set(m.requestId, m.lastUpdated);
    }
    const truth = new Map(sim.truth().map((t) => [t.requestId, t]));
    for (const [id, lastUpdated] of last)
      expect(truth.get(id)?.lastUpdatedTimestampUtc).toBe(lastUpdated);
  });

  it('moves last_updated to the clock time when the clock has moved', () => {
    const clock = frozenClock();
    const sim = createSimulator({ seed: 5, requests: 20, clock });
    const id = sim.truth()[0]?.requestId as string;
    clock.set(T0 + 90_000);
    const summary = sim.world.editRequest(id, 'note');
    expect(summary.lastUpdated).toBe(new Date(T0 + 90_000).toISOString());
    expect(summary.at).toBe(new Date(T0 + 90_000).toISOString());
  });

  it('named mutations do what they say', () => {
    const sim = build(6, 50);
    const find = (id: string) => sim.truth().find((t) => t.requestId === id) as TruthRecord;
    const [id] = sim.addRequests(1, { state: 'awaiting', eventAt: '2025-06-16T08:00:00Z' });
    expect(find(id as string)).toMatchObject({
      listState: 'awaiting',
      isVisible: true,
      eventDtUtc: '2025-06-16T08:00:00.000Z',
    });
    sim.world.setState(id as string, 'accepted');
    expect((find(id as string).detail.user as { email: string }).email).toMatch(
      /@demo-provider\.example$/,
    );
    sim.world.setAgreedTime(id as string, '2025-06-18T10:15:00+02:00');
    expect(find(id as string).eventDtUtc).toBe('2025-06-18T08:15:00.000Z');
    sim.world.setState(id as string, 'completed');
    expect(find(id as string).listState).toBe('completed');
    sim.world.makeUnavailable(id as string);
    expect(find(id as string).isVisible).toBe(false);
    expect(() => sim.world.setState('NOPE', 'accepted')).toThrow(/no request NOPE/);
    expect(() => sim.world.setAgreedTime(id as string, 'later')).toThrow();
  });

  it('edits change the served detail', () => {
    const sim = build(7, 30);
    const id = sim.truth().find((t) => t.isVisible)?.requestId as string;
    const before = sim.truth().find((t) => t.requestId === id)?.detail;
    sim.world.editRequest(id, 'note');
    const after = sim.truth().find((t) => t.requestId === id)?.detail;
    expect((after?.enabled_request_fields as { note: string }).note).not.toEqual(
      (before?.enabled_request_fields as { note?: string }).note,
    );
  });

  it('adds round trips as pairs sharing a collection id', () => {
    const sim = build(8, 10);
    const ids = sim.addRequests(2, { roundTrip: true });
    expect(ids).toHaveLength(4);
    const details = ids.map(
      (id) => sim.truth().find((t) => t.requestId === id)?.detail as Record<string, unknown>,
    );
    expect(details[0]?.collection_id).toBe(details[1]?.collection_id);
    expect(details[0]?.collection_id).not.toBe(details[2]?.collection_id);
    expect([details[0]?.is_round_trip_first_trip, details[1]?.is_round_trip_return_trip]).toEqual([
      true,
      true,
    ]);
  });
});
