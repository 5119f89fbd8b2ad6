import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../../src/clock.js';
import { openDatabase, type MirrorDb } from '../../../src/db/open.js';
import { createStore, type Store } from '../../../src/db/store.js';
import { createNotifySink } from '../../../src/feed/notify-sink.js';
import { startPublisher } from '../../../src/feed/publisher.js';
import { createFeedReader } from '../../../src/feed/reader.js';
import { silentLogger } from '../../../src/log.js';
import { createMigratedTestDatabase, queryAll, type TestDatabase } from '../../helpers/engine.js';
import { writeRequests } from '../../helpers/feed.js';

/*
 * The NOTIFY sink on PostgreSQL (this file is left out of the sqlite project): a listener on the
 * channel hears of every change, in feed order, with its position, request and kind, and never
 * patient data.
 */

let database: TestDatabase;
let db: MirrorDb;
let store: Store;
let listener: pg.Client;
const heard: { position: number; request_id: string; kind: string }[] = [];

beforeEach(async () => {
  database = await createMigratedTestDatabase();
  db = await openDatabase({ location: database.location });
  store = createStore({ db, clock: systemClock });
  heard.length = 0;
  listener = new pg.Client({ connectionString: database.location });
  await listener.connect();
  listener.on('notification', (message) => heard.push(JSON.parse(message.payload!)));
  await listener.query('LISTEN transport_sync_changes');
});
afterEach(async () => {
  await listener.end();
  await db.close();
  await database.drop();
});

/** Resolves once the listener has heard `count` notifications. */
async function heardAtLeast(count: number): Promise<void> {
  while (heard.length < count) {
    await new Promise<void>((resolve) => listener.once('notification', () => resolve()));
  }
}

describe('the NOTIFY sink', () => {
  it('notifies every change in feed order, with its position, request and kind only', async () => {
    await writeRequests(store, ['AAAA0001', 'AAAA0002'], '2026-11-26T09:00:00.000Z');
    const publisher = startPublisher({
      sink: createNotifySink(store, 'transport_sync_changes'),
      store,
      reader: createFeedReader(db),
      clock: systemClock,
      log: silentLogger(),
      timing: { pollMs: 1_000, backoffMs: 10, maxBackoffMs: 100, batchSize: 3 },
    });
    // Written while it runs: the commit wakes it (its own look is a second away).
    store.onChangesCommitted(() => publisher.wake());
    await writeRequests(
      store,
      ['BBBB0001', 'BBBB0002', 'BBBB0003', 'BBBB0004'],
      '2026-11-26T09:00:00.000Z',
    );
    await heardAtLeast(6);
    await publisher.stop();
    const feed = await queryAll<{ position: number; request_id: string }>(
      db,
      'SELECT change_id AS position, request_id FROM request_changes ORDER BY change_id',
    );
    expect(heard).toEqual(
      feed.map((row) => ({
        position: Number(row.position),
        request_id: row.request_id,
        kind: 'new',
      })),
    );
  });
});
