import type { Simulator } from '../../src/simulator/index.js';
import { eventMs, toDetail, toListItem } from '../../src/simulator/serialize.js';
import type { SnapshotEntry } from './sim-protocol.js';

const PARTIAL_STATES = new Set(['accepted', 'completed', 'canceled']);

/**
 * The visible requests with event time in [fromMs, toMs] as the service lists them: the partial
 * list item (where the state has one) and the record as the full list serves it.
 */
export function snapshotOf(sim: Simulator, fromMs: number, toMs: number): SnapshotEntry[] {
  const { world } = sim;
  return world
    .all()
    .filter((r) => r.isVisible && eventMs(r) >= fromMs && eventMs(r) <= toMs)
    .map((r) => ({
      state: r.state,
      eventMs: eventMs(r),
      listItem: PARTIAL_STATES.has(r.state) ? toListItem(r) : null,
      // As the full list serves it, drift included (see handlers-read.ts).
      detail: toDetail(r, world.accountOf(r), {
        includeLocationIds: false,
        excludeFacilities: false,
        drift: world.driftOf(r),
      }),
    }));
}
