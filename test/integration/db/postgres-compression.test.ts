import { describe, expect, it } from 'vitest';
import { createStore } from '../../../src/db/store.js';
import { systemClock } from '../../../src/clock.js';
import { toEventRow } from '../../../src/webhooks/envelope.js';
import { openedMigratedDatabase } from '../../helpers/engine.js';
import { webhookData } from '../../helpers/webhooks.js';

/*
 * The large JSON columns are compressed with lz4 where the server has it (drizzle/postgres,
 * 0005_lz4_compression.sql), and the migration passes on a server without it: the throwaway
 * server the tests start when none is named (test/setup/postgres-server.ts) is built without lz4.
 * PostgreSQL's alone: left out of the sqlite project (vitest.config.ts).
 */

const { db } = openedMigratedDatabase();

/** Whether this server was built with lz4: only then may a setting name it. */
async function hasLz4(): Promise<boolean> {
  try {
    await db().transaction((sql) => sql.run('SET LOCAL default_toast_compression = lz4'));
    return true;
  } catch {
    return false;
  }
}

describe('the large JSON columns on PostgreSQL', () => {
  it('are set to lz4 where the server has it, and left to the default where not', async () => {
    const columns = await db().read((sql) =>
      sql.all<{ name: string; method: string }>(
        `SELECT c.relname || '.' || a.attname AS name, a.attcompression AS method
         FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
         WHERE (c.relname, a.attname) IN (('webhook_events', 'payload_json'), ('requests', 'raw_json'))
         ORDER BY 1`,
      ),
    );
    const method = (await hasLz4()) ? 'l' : '';
    expect(columns).toEqual([
      { name: 'requests.raw_json', method },
      { name: 'webhook_events.payload_json', method },
    ]);
  });

  it('store a delivery as it came, compressed with lz4 where the server has it', async () => {
    const store = createStore({ db: db(), clock: systemClock });
    const payload = {
      event_id: 'EV-LZ4-1',
      event_timestamp: '2026-11-28T09:00:00.000Z',
      service_request_id: 'XX-LZ4LZ4LZ',
      action: 'updated',
      request_status: 'NEW',
      // Past the 2 KB at which PostgreSQL compresses a value.
      data: webhookData({ service_request_id: 'XX-LZ4LZ4LZ', note: 'a long note '.repeat(400) }),
    };
    const body = Buffer.from(JSON.stringify(payload));
    await store.transaction((tx) => tx.events.insert(toEventRow(payload, body, tx.now())));
    const stored = await db().read((sql) =>
      sql.get<{ method: string | null; payload: unknown }>(
        `SELECT pg_column_compression(payload_json) AS method, payload_json AS payload
         FROM webhook_events WHERE event_id = 'EV-LZ4-1'`,
      ),
    );
    expect(stored?.method).toBe((await hasLz4()) ? 'lz4' : 'pglz');
    expect(JSON.parse(String(stored?.payload))).toEqual(payload);
  });
});
