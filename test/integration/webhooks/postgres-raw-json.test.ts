import { describe, expect, it } from 'vitest';
import { applyV2Event } from '../../../src/webhooks/apply-event.js';
import { toEventRow } from '../../../src/webhooks/envelope.js';
import { applierFixture, applyStored } from '../../helpers/applier-fixture.js';
import { queryAll } from '../../helpers/engine.js';
import { webhookData } from '../../helpers/webhooks.js';

/*
 * On PostgreSQL a webhook write's requests.raw_json is the stored event's data object, read from
 * webhook_events on the server rather than printed again and sent a second time
 * (request-sql.ts, RAW_JSON_OF_EVENT): so it holds the data as the service sent it, down to a
 * number's spelling, through the applier's sets and through an event applied alone.
 * PostgreSQL's alone: left out of the sqlite project (vitest.config.ts).
 */

const fixture = applierFixture('raw-json.db');

/** Stores a delivery whose text spells its pickup's latitude 39.960, as a sender may. */
async function storeSpelled(eventId: string, requestId: string): Promise<Record<string, unknown>> {
  const payload = {
    event_id: eventId,
    event_timestamp: '2026-11-28T09:00:00.000Z',
    service_request_id: requestId,
    action: 'updated',
    request_status: 'NEW',
    data: webhookData({ service_request_id: requestId }),
  };
  const text = JSON.stringify(payload).replace('"lat":39.96,', '"lat":39.960,');
  expect(text).toContain('"lat":39.960,');
  const parsed = JSON.parse(text) as Record<string, unknown>;
  const store = fixture.store();
  await store.transaction((tx) =>
    tx.events.insert(toEventRow(parsed, Buffer.from(text), tx.now())),
  );
  return parsed;
}

const latitudes = () =>
  queryAll<{ request_id: string; lat: string }>(
    fixture.db(),
    `SELECT request_id, raw_json -> 'pickup_location' ->> 'lat' AS lat FROM requests
     ORDER BY request_id`,
  );

describe("a webhook write's raw_json on PostgreSQL", () => {
  it('is the stored data as sent, written in sets by the applier', async () => {
    await fixture.emptied();
    await storeSpelled('EV-1', 'XX-RAW00001');
    await storeSpelled('EV-2', 'XX-RAW00002');
    await applyStored(fixture.store());
    expect(await latitudes()).toEqual([
      { request_id: 'XX-RAW00001', lat: '39.960' },
      { request_id: 'XX-RAW00002', lat: '39.960' },
    ]);
  });

  it('is the stored data as sent, for an event applied alone', async () => {
    await fixture.emptied();
    const payload = await storeSpelled('EV-3', 'XX-RAW00003');
    await fixture
      .store()
      .transaction((tx) => applyV2Event(tx, 'EV-3', payload, { shouldFetchInvalid: false }));
    expect(await latitudes()).toEqual([{ request_id: 'XX-RAW00003', lat: '39.960' }]);
  });
});
