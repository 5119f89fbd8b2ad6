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
