import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applierFixture, quietApplier } from '../../helpers/applier-fixture.js';
import { queryAll } from '../../helpers/engine.js';
import { webhookData } from '../../helpers/webhooks.js';

/*
 * Webhook events in any delivery order, in any cut into deliveries applied as they come, leave
 * the mirror's state (requests, their locations, the profiles) as applying them in event order
 * does: the service retries and reorders, and the provider's dispatch reads the rows.
 */

const IDS = ['XX-AAAA1111', 'XX-BBBB2222'] as const;
const BASE_MS = Date.parse('2026-11-21T09:00:00.000Z');
const CITIES = ['Columbus', 'Dublin', 'Akron'] as const;
const NAMES = ['Ann', 'Ben', 'Cleo'] as const;

/**
 * One event of the sequence: its request, the seconds since the event before (0: the same
 * second, as same-second edits come), what it says. Event ids are chronological, as the service's
 * are (a later id is never an earlier time).
 */
interface EventSpec {
  request: 0 | 1;
  afterSeconds: number;
  kind: 'data' | 'unavailable';
  city: number;
  name: number;
  state: 'accepted' | 'awaiting';
}

const eventSpec: fc.Arbitrary<EventSpec> = fc.record({
  request: fc.constantFrom(0 as const, 1 as const),
  afterSeconds: fc.integer({ min: 0, max: 2 }),
  kind: fc.constantFrom('data' as const, 'data' as const, 'data' as const, 'unavailable' as const),
  city: fc.integer({ min: 0, max: CITIES.length - 1 }),
  name: fc.integer({ min: 0, max: NAMES.length - 1 }),
  state: fc.constantFrom('accepted' as const, 'awaiting' as const),
});

/** The delivered bodies of the events, in event order. */
function payloadsOf(specs: readonly EventSpec[]): Record<string, unknown>[] {
  let second = 0;
  return specs.map((spec, n) => {
    second += spec.afterSeconds;
    return payloadOf(spec, n, second);
  });
}

/** The delivered body of event number `n`, at `second`. */
function payloadOf(spec: EventSpec, n: number, second: number): Record<string, unknown> {
  const id = IDS[spec.request];
  const timestamp = new Date(BASE_MS + second * 1000).toISOString();
  const isUnavailable = spec.kind === 'unavailable';
  const city = CITIES[spec.city]!;
  return {
    event_id: `EV${String(n).padStart(4, '0')}`,
    event_timestamp: timestamp,
    service_request_id: id,
    action: isUnavailable ? 'unavailable' : 'updated',
    request_status: isUnavailable ? 'UNAVAILABLE' : spec.state === 'accepted' ? 'ASSIGNED' : 'NEW',
    data: isUnavailable
      ? null
      : webhookData({
          service_request_id: id,
          request_current_state: spec.state,
          patient_first_name: NAMES[spec.name],
          pickup_location: {
            address: `1 Main St, ${city}, OH 43215, USA`,
            city,
            country: 'US',
            name: null,
            state: 'OH',
            street: '1 Main St',
            zip: '43215',
            lat: 39.96,
            lng: -82.99,
          },
        }),
  };
}

const fixture = applierFixture('order.db');

/** Stores each delivery as the receiver does, and applies what is stored before the next. */
async function deliver(deliveries: readonly (readonly Record<string, unknown>[])[]) {
  const applier = quietApplier(fixture.store());
  for (const payloads of deliveries) {
    await fixture.storeDelivery(payloads);
    applier.wake();
    await applier.idle();
  }
  await applier.stop();
}

/** The mirror's state: every column but the bookkeeping of when this run wrote it. */
async function state() {
  const db = fixture.db();
  const requests = await queryAll<Record<string, unknown>>(
    db,
    'SELECT * FROM requests ORDER BY request_id',
  );
  const locations = await queryAll<Record<string, unknown>>(
    db,
    `SELECT request_id, role, city, street FROM request_locations ORDER BY request_id, role`,
  );
  const profiles = await queryAll<Record<string, unknown>>(
    db,
    'SELECT * FROM request_profiles ORDER BY request_id',
  );
  const pending = await queryAll(
    db,
    'SELECT event_id FROM webhook_events WHERE processed_at IS NULL',
  );
  return { requests: requests.map(withoutBookkeeping), locations, profiles, pending };
}

/**
 * A row without the columns that say when this mirror first saw or last wrote it. Of the
 * unavailable mark, whether it is set: of several "unavailable" events in a row, one delivered
 * after a later one has been applied is superseded, and the mark keeps the later one's time
 * (either way the change log shows one change to unavailable).
 */
function withoutBookkeeping(row: Record<string, unknown>) {
  const { synced_at: _synced, first_seen_at: _first, unavailable_at: mark, ...rest } = row;
  return { ...rest, isUnavailable: mark !== null };
}

describe('webhook events in any delivery order', () => {
  it('leave the requests, locations and profiles as event order does', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(eventSpec, { minLength: 1, maxLength: 8 }),
        fc.func(fc.integer()),
        fc.array(fc.boolean(), { maxLength: 8 }),
        async (specs, rank, cuts) => {
          const payloads = payloadsOf(specs);
          await fixture.emptied();
          await deliver([payloads]);
          const inOrder = await state();

          // Shuffled by a random rank, cut into deliveries where `cuts` says.
          const shuffled = payloads
            .map((payload, index) => ({ payload, key: rank(index) }))
            .sort((a, b) => a.key - b.key)
            .map(({ payload }) => payload);
          const deliveries: Record<string, unknown>[][] = [[]];
          shuffled.forEach((payload, index) => {
            if (index > 0 && cuts[index]) deliveries.push([]);
            deliveries.at(-1)!.push(payload);
          });
          await fixture.emptied();
          await deliver(deliveries);
          expect(await state()).toEqual(inOrder);
        },
      ),
      { numRuns: 40 },
    );
  }, 120_000);
});
