import { describe, expect, it } from 'vitest';
import type { Clock } from '../../../src/clock.js';
import { LEGACY_FLAG_MEMBERS, OMITTABLE_MEMBERS } from '../../../src/simulator/drift.js';
import {
  createSimulator,
  DEFAULT_ROUGHNESS,
  type MutationSummary,
  type Roughness,
} from '../../../src/simulator/index.js';
import { createRandom } from '../../../src/simulator/random.js';
import { createEventFactory } from '../../../src/simulator/webhook-events.js';

const T0 = Date.UTC(2025, 5, 15, 12, 0, 0);
const UNKNOWN_DETAIL_MEMBERS = ['transport_mileage_estimate', 'requester_department'];

function frozenClock(ms = T0): Clock & { set(ms: number): void } {
  let now = ms;
  return { now: () => now, sleep: async () => undefined, set: (next) => (now = next) };
}

const build = (seed: number, requests: number, roughness: Partial<Roughness> = {}) => {
  const clock = frozenClock();
  return { sim: createSimulator({ seed, requests, clock, roughness }), clock };
};

describe('simulator roughness settings', () => {
  it('are all on by default, and setRoughness changes only what it names', () => {
    expect(DEFAULT_ROUGHNESS).toEqual({
      lastUpdated: 'second',
      pagingChurnRate: 0.3,
      driftRate: 0.1,
      doubleEditRate: 0.3,
    });
    const { sim } = build(1, 5);
    expect(sim.getRoughness()).toEqual(DEFAULT_ROUGHNESS);
    sim.setRoughness({ driftRate: 0, lastUpdated: 'strict' });
    expect(sim.getRoughness()).toEqual({
      ...DEFAULT_ROUGHNESS,
      driftRate: 0,
      lastUpdated: 'strict',
    });
    sim.setRoughness({ pagingChurnRate: undefined });
    expect(sim.getRoughness().pagingChurnRate).toBe(0.3);
    expect(() => sim.setRoughness({ driftRate: 2 })).toThrow();
    expect(() => createSimulator({ requests: 1, roughness: { pagingChurnRate: -1 } })).toThrow();
  });
});

describe('simulator last_updated', () => {
  const twoEdits = (roughness: Partial<Roughness>) => {
    const { sim, clock } = build(5, 40, roughness);
    const id = sim.truth().find((t) => t.isVisible)?.requestId as string;
    clock.set(T0 + 60_000 + 400);
    const first = sim.world.editRequest(id, 'note');
    clock.set(T0 + 60_000 + 900);
    const second = sim.world.editRequest(id, 'patient');
    return { first, second };
  };

  it('is written to the second by default: a second edit in the same second leaves it equal', () => {
    const { first, second } = twoEdits({});
    expect(first.lastUpdated).toBe(new Date(T0 + 60_000).toISOString());
    expect(second.lastUpdated).toBe(first.lastUpdated);
  });

  it("moves forward for every edit under 'strict'", () => {
    const { first, second } = twoEdits({ lastUpdated: 'strict' });
    expect(second.lastUpdated > first.lastUpdated).toBe(true);
  });

  it('is truncated to the whole second for records that write milliseconds', () => {
    const { sim, clock } = build(6, 60);
    const millis = sim
      .truth()
      .find((t) => t.isVisible && /\.\d{3}Z$/.test(t.detail.transport_pickup_time as string));
    expect(millis).toBeDefined();
    clock.set(T0 + 5_678);
    const summary = sim.world.editRequest(millis?.requestId as string, 'note');
    expect(summary.lastUpdated).toBe(new Date(T0 + 5_000).toISOString());
    expect(sim.world.get(millis?.requestId as string)?.lastUpdatedMs).toBe(T0 + 5_000);
  });
});

describe('simulator double edits', () => {
  it('edit a request twice in the same instant without changing the driver targets', () => {
    const single = build(3, 100, { doubleEditRate: 0 }).sim.mutate(60);
    const emitted: MutationSummary[] = [];
    const { sim } = build(3, 100, { doubleEditRate: 1 });
    sim.events.on('mutation', (m: MutationSummary) => emitted.push(m));
    const doubled = sim.mutate(60);
    expect(emitted).toEqual(doubled);
    expect(doubled.length).toBeGreaterThan(single.length);
    const firsts: MutationSummary[] = [];
    for (let i = 0; i < doubled.length; i += 1) {
      const m = doubled[i] as MutationSummary;
      firsts.push(m);
      if (m.kind !== 'edited') continue;
      const twin = doubled[i + 1] as MutationSummary;
      expect(twin).toMatchObject({ kind: 'edited', requestId: m.requestId, at: m.at });
      // Written to the second, the second edit leaves last_updated as the first left it.
      expect(twin.lastUpdated).toBe(m.lastUpdated);
      i += 1;
    }
    const shape = (list: MutationSummary[]) => list.map((m) => `${m.kind} ${m.requestId}`);
    expect(shape(firsts)).toEqual(shape(single));
  });
});

describe('simulator drift', () => {
  const documented = (detail: Record<string, unknown>) =>
    OMITTABLE_MEMBERS.every((name) => name in detail) &&
    UNKNOWN_DETAIL_MEMBERS.every((name) => !(name in detail));

  it('leaves the data of a seed as it was, drifting only the shape', () => {
    const smooth = build(1, 200, { driftRate: 0 }).sim.truth();
    const rough = build(1, 200, { driftRate: 1 }).sim.truth();
    const core = (t: (typeof smooth)[number]) => ({ ...t, detail: undefined });
    expect(rough.map(core)).toEqual(smooth.map(core));
    expect(smooth.every((t) => documented(t.detail))).toBe(true);
    expect(rough.every((t) => !documented(t.detail))).toBe(true);
  });

  it('at rate 1 leaves documented members out and adds unknown ones, stable per request', () => {
    const { sim } = build(2, 200, { driftRate: 1 });
    const details = sim.truth().map((t) => t.detail);
    for (const name of OMITTABLE_MEMBERS) {
      expect(
        details.some((d) => !(name in d)),
        name,
      ).toBe(true);
    }
    for (const name of UNKNOWN_DETAIL_MEMBERS) {
      expect(
        details.some((d) => name in d),
        name,
      ).toBe(true);
    }
    expect(sim.truth()).toEqual(sim.truth());
    sim.setRoughness({ driftRate: 0 });
    expect(sim.truth().every((t) => documented(t.detail))).toBe(true);
  });

  it('drifts about the default share of requests', () => {
    const details = build(4, 400)
      .sim.truth()
      .map((t) => t.detail);
    const share = details.filter((d) => !documented(d)).length / details.length;
    expect(share).toBeGreaterThan(0.04);
    expect(share).toBeLessThan(0.2);
  });

  it('sends the 13 flags of a drifting request in their old string forms in webhook data', () => {
    const { sim, clock } = build(3, 120, { driftRate: 1 });
    const events = createEventFactory({ world: sim.world, clock, rng: createRandom(1) });
    let legacy = 0;
    let extra = 0;
    for (const r of sim.world.all()) {
      const data = events.dataOf(r.id) as Record<string, unknown>;
      const values = LEGACY_FLAG_MEMBERS.map((name) => data[name]);
      if (r.drift.legacyFlags) {
        legacy += 1;
        expect(
          values.every((v) => v === null || ['Yes', 'No', 'Y', 'N'].includes(v as string)),
        ).toBe(true);
        expect(typeof data.pickup_is_home).toBe('string');
      } else {
        expect(values.every((v) => v === null || typeof v === 'boolean')).toBe(true);
      }
      if ('trip_leg_sequence' in data) extra += 1;
    }
    expect(legacy).toBeGreaterThan(0);
    expect(extra).toBeGreaterThan(0);
    sim.setRoughness({ driftRate: 0 });
    for (const r of sim.world.all()) {
      const data = events.dataOf(r.id) as Record<string, unknown>;
      for (const name of LEGACY_FLAG_MEMBERS) {
        expect(data[name] === null || typeof data[name] === 'boolean', name).toBe(true);
      }
      expect(data).not.toHaveProperty('trip_leg_sequence');
    }
  });
});
