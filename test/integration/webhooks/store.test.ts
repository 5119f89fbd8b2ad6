import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { webhookDataSchema } from '../../../src/api/webhook-schemas.js';
import { systemClock } from '../../../src/clock.js';
import { openDatabase, type MirrorDb } from '../../../src/db/open.js';
import { createStore, type Store } from '../../../src/db/store.js';
import { receivedDigest } from '../../../src/mirror/digest.js';
import type { PartialRequestWrite } from '../../../src/mirror/observations.js';
import { normalizeDetail } from '../../../src/sync/normalize.js';
import { normalizeWebhookData } from '../../../src/webhooks/normalize-webhook.js';
import {
  createMigratedTestDatabase,
  queryAll,
  queryOne,
  type TestDatabase,
} from '../../helpers/engine.js';
import { detailRecord, listFields } from '../../helpers/records.js';
import { parseJsonColumns, webhookData } from '../../helpers/webhooks.js';

let database: TestDatabase;
let db: MirrorDb;
let store: Store;
beforeEach(async () => {
  database = await createMigratedTestDatabase();
  db = await openDatabase({ location: database.location });
  store = createStore({ db, clock: systemClock });
});
afterEach(async () => {
  await db.close();
  await database.drop();
});

const ID = 'K3J9QX2A';
const polled = () =>
  store.transaction((tx) =>
    tx.requests.write({
      normalized: normalizeDetail(detailRecord(), listFields()),
      rawJson: JSON.stringify(detailRecord()),
      source: 'poll',
      observedAt: '2026-11-21T09:00:00.000Z',
    }),
  );

/** A webhook observation of the same request as detailRecord(), with overrides. */
function webhookObservation(
  overrides: Record<string, unknown> = {},
  observedAt = '2026-11-21T10:00:00.000Z',
): PartialRequestWrite {
  const detail = detailRecord();
  const raw = webhookData({
    service_request_id: ID,
    organization_id: 'ACC1',
    account_name: 'Mercy Health',
    pickup_location: { ...detail.pickup_location, id: undefined },
    destination_location: { ...detail.destination_location, id: undefined },
    pickup_date_time: detail.transport_pickup_time,
    agreed_for_time: detail.transport_agreed_for_time,
    patient_first_name: detail.patient_first_name,
    patient_last_name: detail.patient_last_name,
    patient_date_of_birth: detail.patient_dob,
    responder_user_first_name: 'Dana',
    responder_user_last_name: 'Reyes',
    responder_user_email: 'dana@provider.example',
    collection_id: 'COL1',
    is_round_trip_first_trip: true,
    ...overrides,
  });
  const { request } = normalizeWebhookData(webhookDataSchema.parse(raw), 'ASSIGNED');
  return { ...request, rawJson: JSON.stringify(raw), source: 'webhook', observedAt };
}

/** Writes webhookObservation(...) as the applier writes one event. */
const webhook = (overrides: Record<string, unknown> = {}, observedAt?: string) =>
  store.transaction((tx) => tx.requests.writePartial(webhookObservation(overrides, observedAt)));

const get = (sql: string) => queryOne<Record<string, unknown>>(db, sql);

describe('partial writes (webhooks) beside detail writes', () => {
  it('finds nothing new in a webhook that says what the poll stored, and keeps the detail bookkeeping', async () => {
    await polled();
    const before = await get('SELECT * FROM requests');
    expect(await webhook()).toBe('unchanged');
    expect(await get('SELECT * FROM requests')).toEqual(before);
    expect(await get("SELECT location_id FROM request_locations WHERE role = 'pickup'")).toEqual({
      location_id: 'LOC1',
    });
  });

  it.each(['writePartial', 'writePartialMany'] as const)(
    'clears the received digest with the content hash on a change (%s): the next poll compares the record',
    async (method) => {
      await polled();
      expect(await get('SELECT received_digest FROM requests')).toEqual({
        received_digest: receivedDigest(JSON.stringify(detailRecord())),
      });
      const observation = webhookObservation({ collection_id: 'COL2' });
      const outcome = await store.transaction(async (tx) =>
        method === 'writePartial'
          ? tx.requests.writePartial(observation)
          : (await tx.requests.writePartialMany([observation]))[0],
      );
      expect(outcome).toBe('changed');
      expect(await get('SELECT content_hash, received_digest FROM requests')).toEqual({
        content_hash: null,
        received_digest: null,
      });
    },
  );

  it('on a change keeps the ids of unchanged locations and drops the id of a moved one', async () => {
    await polled();
    const moved = { ...detailRecord().destination_location, id: undefined, street: '1 New St' };
    expect(await webhook({ destination_location: moved })).toBe('changed');
    expect(
      await queryAll(db, 'SELECT role, location_id, street FROM request_locations ORDER BY role'),
    ).toEqual([
      { role: 'destination', location_id: null, street: '1 New St' },
      { role: 'pickup', location_id: 'LOC1', street: '2525 S Michigan Ave' },
    ]);
    expect(
      await get(
        'SELECT last_updated_timestamp_utc, content_hash, facility_id, source FROM requests',
      ),
    ).toEqual({
      last_updated_timestamp_utc: null,
      content_hash: null,
      facility_id: 'F1',
      source: 'webhook',
    });
    expect(
      await get("SELECT changed_columns FROM request_changes WHERE source = 'webhook'"),
    ).toEqual({
      changed_columns: 'last_updated_timestamp_utc,raw_json',
    });
  });

  it('updates an account name without touching what the poll stored of it', async () => {
    await polled();
    await webhook({ account_name: 'Mercy Health System' });
    // JSON columns as values: PostgreSQL reprints jsonb.
    expect(
      parseJsonColumns(
        await get('SELECT name, service_levels_json, facilities_json FROM accounts'),
      ),
    ).toEqual({
      name: 'Mercy Health System',
      service_levels_json: ['ALS', 'BLS'],
      facilities_json: [{ id: 'F1', name: 'Mercy Main' }],
    });
    // The poll's cache must not hide the difference: the next detail restores the polled name.
    await store.transaction((tx) =>
      tx.requests.write({
        normalized: normalizeDetail(
          detailRecord(),
          listFields({ last_updated_timestamp_utc: '2026-11-21T11:00:00Z' }),
        ),
        rawJson: '{}',
        source: 'poll',
        observedAt: '2026-11-21T11:00:00.000Z',
      }),
    );
    expect(await get('SELECT name FROM accounts')).toEqual({ name: 'Mercy Health' });
  });

  it('skips a webhook observed before the last write or before the unavailable mark', async () => {
    await polled();
    expect(await webhook({ service_level_type: 'ALS' }, '2026-11-21T08:59:59.999Z')).toBe('stale');
    await store.transaction((tx) =>
      tx.requests.markUnavailable(ID, '2026-11-21T12:00:00.000Z', 'poll'),
    );
    expect(await webhook({ service_level_type: 'ALS' }, '2026-11-21T11:00:00.000Z')).toBe('stale');
    expect(await get('SELECT unavailable_at FROM requests')).toEqual({
      unavailable_at: '2026-11-21T12:00:00.000Z',
    });
    expect(await webhook({}, '2026-11-21T13:00:00.000Z')).toBe('changed');
    expect(await get('SELECT unavailable_at FROM requests')).toEqual({ unavailable_at: null });
  });

  it('guards the unavailable mark by time only when asked', async () => {
    await polled();
    const early = '2026-11-21T08:00:00.000Z';
    expect(
      await store.transaction((tx) =>
        tx.requests.markUnavailable(ID, early, 'webhook', { isGuarded: true }),
      ),
    ).toBe(false);
    expect(await store.transaction((tx) => tx.requests.markUnavailable(ID, early, 'poll'))).toBe(
      true,
    );
  });
});
