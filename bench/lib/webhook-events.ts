import type { Clock } from '../../src/clock.js';
import type { Simulator } from '../../src/simulator/index.js';
import { createRandom } from '../../src/simulator/random.js';
import { createEventFactory } from '../../src/simulator/webhook-events.js';

/** The data members a v2.0 event's edit touches, cycled so every kind of edit appears. */
const EDITS = ['note', 'location', 'service_level', 'patient'] as const;

/**
 * Makes v2.0 webhook bodies (JSON text, as the service sends them) for one edit of each id, with
 * the simulator's own event factory: the data objects the receiver sees in production. Event
 * ids and timestamps move forward 1 ms per event from `startMs`.
 */
export function createWebhookBodies(
  sim: Simulator,
  startMs: number,
): (ids: readonly string[]) => string[] {
  let nowMs = startMs;
  const clock: Clock = { now: () => nowMs, sleep: async () => undefined };
  const factory = createEventFactory({ world: sim.world, clock, rng: createRandom(17) });
  return (ids) =>
    ids.map((id, i) => {
      nowMs += 1;
      return JSON.stringify(factory.v2(sim.world.editRequest(id, EDITS[i % EDITS.length])));
    });
}

/**
 * Makes v2.0 webhook bodies for `count` requests new to the simulator, and so to a mirror filled
 * from it before: a broadcast each (awaiting), as the service sends when it offers one. Each
 * makes exactly one change in the mirror, its `new`. Event ids and timestamps move forward 1 ms
 * per event from `startMs`.
 */
export function createNewRequestBodies(
  sim: Simulator,
  startMs: number,
): (count: number) => { ids: string[]; bodies: string[] } {
  let nowMs = startMs;
  const clock: Clock = { now: () => nowMs, sleep: async () => undefined };
  const factory = createEventFactory({ world: sim.world, clock, rng: createRandom(23) });
  return (count) => {
    const summaries = sim.world.createRequests(count, { state: 'awaiting' });
    const bodies = summaries.map((summary) => {
      nowMs += 1;
      return JSON.stringify(factory.v2(summary));
    });
    return { ids: summaries.map((summary) => summary.requestId), bodies };
  };
}
