import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyV2Event } from '../../../src/webhooks/apply-event.js';
import { applierFixture, applyStored, quietApplier } from '../../helpers/applier-fixture.js';
import { queryAll, queryOne, testEngine } from '../../helpers/engine.js';
import { webhookData } from '../../helpers/webhooks.js';

/*
 * The applier writes a run of events of distinct requests as sets, and an event whose request
 * another event of its batch names alone. Events delivered in any order, applied one at a time
 * (each alone, by applyV2Event) or by the applier in batches of any size, each payload as the
 * receiver parsed it or read back from the table, leave every table the same: the requests, their
 * locations, profiles and accounts, the change log of each request, the drift, and each event's
 * processed mark.
 */

const IDS = ['XX-AAAA1111', 'XX-BBBB2222', 'XX-CCCC3333'];
const BASE_MS = Date.parse('2026-11-21T09:00:00.000Z');
const CITIES = ['Columbus', 'Dublin', 'Akron'] as const;
const ACCOUNTS = ['Mercy General', 'Mercy General Hospital'] as const;

/** What one event says: data (one of which retyped a member), unavailable, nothing, or garbage. */
type Kind = 'data' | 'drifted' | 'unavailable' | 'no-data' | 'bad-envelope';

interface EventSpec {
  request: number;
  /** Seconds since the event before: 0 is a same-second edit. */
  afterSeconds: number;
  kind: Kind;
  city: number;
  account: number;
  state: 'accepted' | 'awaiting';
}

const eventSpec: fc.Arbitrary<EventSpec> = fc.record({
  request: fc.integer({ min: 0, max: IDS.length - 1 }),
  afterSeconds: fc.integer({ min: 0, max: 2 }),
  kind: fc.constantFrom<Kind>(
    'data',
    'data',
    'data',
    'data',
    'drifted',
    'unavailable',
    'no-data',
    'bad-envelope',
  ),
  city: fc.integer({ min: 0, max: CITIES.length - 1 }),
  account: fc.integer({ min: 0, max: ACCOUNTS.length - 1 }),
  state: fc.constantFrom('accepted' as const, 'awaiting' as const),
});

/** The delivered bodies, in event order (a later event_id is never an earlier time). */
function payloadsOf(specs: readonly EventSpec[]): Record<string, unknown>[] {
  let second = 0;
  return specs.map((spec, n) => {
    second += spec.afterSeconds;
    const id = IDS[spec.request]!;
    const city = CITIES[spec.city]!;
    const event_id = `EV${String(n).padStart(4, '0')}`;
    const event_timestamp = new Date(BASE_MS + second * 1000).toISOString();
    if (spec.kind === 'bad-envelope') return { event_id, event_timestamp, action: 42 };
    const isUnavailable = spec.kind === 'unavailable';
    const data = webhookData({
      service_request_id: id,
      request_current_state: spec.state,
      organization_id: 'ORG1',
      account_name: ACCOUNTS[spec.account],
      ...(spec.kind === 'drifted' && { patient_weight_kg: 'heavy' }),
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
    });
    return {
      event_id,
      event_timestamp,
      service_request_id: id,
      action: isUnavailable ? 'unavailable' : 'updated',
      request_status: isUnavailable
        ? 'UNAVAILABLE'
        : spec.state === 'accepted'
          ? 'ASSIGNED'
          : 'NEW',
      data: isUnavailable || spec.kind === 'no-data' ? null : data,
    };
  });
}

const fixture = applierFixture('batches.db');

/** Events in the order they are delivered, cut into deliveries. */
type Deliveries = readonly (readonly Record<string, unknown>[])[];

const { emptied, storeDelivery } = fixture;

/** The reference: after each delivery, each stored event applied alone (applyV2Event). */
async function applyOneByOne(deliveries: Deliveries) {
  await emptied();
  const store = fixture.store();
  for (const delivery of deliveries) {
    await storeDelivery(delivery);
    const { rows, payloads } = await store.read(async (tx) => {
      const rows = await tx.events.pending('', 1000);
      return { rows, payloads: await tx.events.payloads(rows.map((row) => row.event_id)) };
    });
    for (const row of rows) {
      const payload: unknown = JSON.parse(payloads.get(row.event_id)!);
      await store.transaction(async (tx) => {
        const result =
          row.envelope === 'v2'
            ? await applyV2Event(tx, row.event_id, payload, { shouldFetchInvalid: false })
            : { error: 'unrecognized envelope' };
        await tx.events.markProcessed(row.event_id, tx.now(), result.error);
      });
    }
  }
}

/**
 * After each delivery, the applier applies what is stored, `batchSize` per transaction. The events
 * `isHanded` picks are handed over as the receiver parsed them; the others it reads back from the
 * table, as after a restart or from another daemon.
 */
async function applyInBatches(
  deliveries: Deliveries,
  batchSize: number,
  isHanded: (eventId: string) => boolean,
) {
  await emptied();
  const applier = quietApplier(fixture.store(), batchSize);
  for (const delivery of deliveries) {
    await storeDelivery(delivery, (event) => isHanded(event.eventId) && applier.hold(event));
    applier.wake();
    await applier.idle();
  }
  await applier.stop();
}

/** Every table the events write, without the times this run wrote them at. */
async function state() {
  const all = (sql: string) => queryAll<Record<string, unknown>>(fixture.db(), sql);
  const requests = await all('SELECT * FROM requests ORDER BY request_id');
  return {
    requests: requests.map(({ synced_at: _s, first_seen_at: _f, ...rest }) => rest),
    locations: await all(
      'SELECT request_id, role, city, street FROM request_locations ORDER BY request_id, role',
    ),
    profiles: await all('SELECT * FROM request_profiles ORDER BY request_id'),
    accounts: await all('SELECT account_id, name FROM accounts ORDER BY account_id'),
    changes: await all(
      `SELECT request_id, observed_at, kind, changed_columns, old_state, new_state,
         old_values_json, new_values_json
       FROM request_changes ORDER BY request_id, change_id`,
    ),
    drift: await all(
      'SELECT drift_key, request_id, member, problem, count FROM schema_drift ORDER BY drift_key',
    ),
    events: (
      await all(
        'SELECT event_id, processed_at, error, attempts FROM webhook_events ORDER BY event_id',
      )
    ).map((row) => ({ ...row, processed_at: row.processed_at !== null })),
  };
}

describe('webhook events applied in batches', () => {
  it('leave every table as applying them one at a time does, handed over at intake or not', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(eventSpec, { minLength: 1, maxLength: 16 }),
        fc.integer({ min: 1, max: 16 }),
        fc.func(fc.integer()),
        fc.array(fc.boolean(), { maxLength: 16 }),
        fc.func(fc.boolean()),
        async (specs, batchSize, rank, cuts, isHanded) => {
          // Shuffled by a random rank and cut into deliveries where `cuts` says: the service
          // retries and reorders, so a later event may be applied before an earlier one.
          const deliveries: Record<string, unknown>[][] = [[]];
          payloadsOf(specs)
            .map((payload, index) => ({ payload, key: rank(index) }))
            .sort((a, b) => a.key - b.key)
            .forEach(({ payload }, index) => {
              if (index > 0 && cuts[index]) deliveries.push([]);
              deliveries.at(-1)!.push(payload);
            });
          await applyOneByOne(deliveries);
          const oneByOne = await state();
          expect(oneByOne.events.every((event) => event.processed_at)).toBe(true);
          await applyInBatches(deliveries, batchSize, isHanded);
          expect(await state()).toEqual(oneByOne);
        },
      ),
      { numRuns: 80 },
    );
  }, 120_000);

  it("applies a backlog longer than one read whole, in transactions of the engine's batch", async () => {
    await emptied();
    // A backlog, as after a restart: 260 stored events of distinct requests, none handed over.
    const payloads = Array.from({ length: 260 }, (_, n) => ({
      event_id: `EV${String(n).padStart(4, '0')}`,
      event_timestamp: new Date(BASE_MS + n * 1000).toISOString(),
      service_request_id: `XX-${String(n).padStart(8, '0')}`,
      action: 'updated',
      request_status: 'NEW',
      data: webhookData({
        service_request_id: `XX-${String(n).padStart(8, '0')}`,
        request_current_state: 'awaiting',
        organization_id: 'ORG1',
      }),
    }));
    await storeDelivery(payloads);
    const store = fixture.store();
    let transactions = 0;
    await applyStored({
      ...store,
      transaction: (work) => ((transactions += 1), store.transaction(work)),
    });
    const applied = await queryOne<{ n: number }>(
      fixture.db(),
      'SELECT count(*) AS n FROM webhook_events WHERE processed_at IS NOT NULL AND error IS NULL',
    );
    expect(Number(applied?.n)).toBe(260);
    // SQLite: 100, 100 and 60; PostgreSQL, where a transaction costs round trips: 250 and 10.
    expect(transactions).toBe(testEngine() === 'postgres' ? 2 : 3);
  });
});
