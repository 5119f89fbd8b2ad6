import { afterAll, beforeAll } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { openDatabase, type MirrorDb } from '../../src/db/open.js';
import { createStore, type Store } from '../../src/db/store.js';
import { silentLogger } from '../../src/log.js';
import { createApplier, type EventApplier } from '../../src/webhooks/applier.js';
import { toEventRow } from '../../src/webhooks/envelope.js';
import type { FetchQueue } from '../../src/webhooks/fetch-queue.js';
import type { ReceivedEvent } from '../../src/webhooks/handoff.js';
import { createMigratedTestDatabase, execute, type TestDatabase } from './engine.js';

/** For appliers that must never fetch: the events under test all carry their data. */
export const noFetches: FetchQueue = {
  fetch: async () => undefined,
  idle: async () => undefined,
  size: 0,
};

/** An applier of `store`'s stored events that never fetches and logs nothing. */
export function quietApplier(store: Store, applyBatchSize?: number): EventApplier {
  return createApplier({
    store,
    fetches: noFetches,
    clock: systemClock,
    log: silentLogger(),
    shouldFetchInvalid: false,
    ...(applyBatchSize !== undefined && { applyBatchSize }),
  });
}

/** Applies every event `store` holds, as a started daemon's applier would, then stops. */
export async function applyStored(store: Store): Promise<void> {
  const applier = quietApplier(store);
  applier.wake();
  await applier.idle();
  await applier.stop();
}

/** Every table applying webhook events writes, children before their parents. */
const WRITTEN_TABLES = [
  'request_changes',
  'request_locations',
  'request_fields',
  'request_profiles',
  'schema_drift',
  'webhook_events',
  'requests',
  'accounts',
  'facilities',
] as const;

/**
 * A database of the test file's own on the project's engine, opened before its tests and dropped
 * after them, with what the webhook property tests do to it between runs.
 */
export function applierFixture(name: string) {
  let database: TestDatabase;
  let db: MirrorDb;
  let store: Store;
  beforeAll(async () => {
    database = await createMigratedTestDatabase(name);
    db = await openDatabase({ location: database.location });
    store = createStore({ db, clock: systemClock });
  });
  afterAll(async () => {
    await db.close();
    await database.drop();
  });
  return {
    db: () => db,
    store: () => store,
    /** Empties every table the events write. */
    async emptied(): Promise<void> {
      for (const table of WRITTEN_TABLES) await execute(db, `DELETE FROM ${table}`);
    },
    /**
     * Stores one delivery's events, as the receiver does: `hold` is given each new one, parsed
     * from its body, before the commit.
     */
    async storeDelivery(
      payloads: readonly Record<string, unknown>[],
      hold?: (event: ReceivedEvent) => void,
    ): Promise<void> {
      await store.transaction(async (tx) => {
        for (const payload of payloads) {
          const body = Buffer.from(JSON.stringify(payload));
          const row = toEventRow(payload, body, tx.now());
          const parsed = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
          if (await tx.events.insert(row))
            hold?.({ eventId: row.event_id, payload: parsed, bytes: body.length });
        }
      });
    },
  };
}
