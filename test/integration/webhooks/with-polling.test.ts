import { afterEach, describe, expect, it } from 'vitest';
import { createServiceClient } from '../../../src/api/index.js';
import { openDatabase } from '../../../src/db/open.js';
import type { Connection } from '../../../src/db/sql.js';
import { createStore } from '../../../src/db/store.js';
import { silentLogger } from '../../../src/log.js';
import { createCallTally } from '../../../src/sync/call-tally.js';
import { runPollCycle, type PollDeps } from '../../../src/sync/poll.js';
import { normalizeTimestamp } from '../../../src/time.js';
import { createMigratedTestDatabase, queryAll } from '../../helpers/engine.js';
import { truthInWindow } from '../../helpers/truth.js';
import { startWebhookFixture, type WebhookFixture } from '../../helpers/webhooks.js';

let hook: WebhookFixture;
let closeOther: (() => Promise<void>) | undefined;
afterEach(async () => {
  await closeOther?.();
  await hook?.close();
});

type Row = Record<string, unknown>;

/** A second, polling-only mirror of the same simulator, on its own database (same engine). */
async function pollingOnlyMirror(h: WebhookFixture) {
  const database = await createMigratedTestDatabase('polling-only.db');
  const db = await openDatabase({ location: database.location });
  const store = createStore({ db, clock: h.clock });
  const calls = createCallTally();
  const url = h.sim.url!;
  const client = createServiceClient({
    authUrl: url,
    hubUrl: url,
    baseUrl: url,
    clientId: 'demo-client',
    clientSecret: 'demo-secret',
    clock: h.clock,
    rateLimitPerSec: 0,
    concurrency: 8,
    onCall: (event) => calls.record(event),
  });
  const deps: PollDeps = { ...h.deps, client, store, calls, log: silentLogger() };
  closeOther = async () => {
    await client.close();
    await db.close();
    await database.drop();
  };
  return { db, cycle: () => runPollCycle(deps) };
}

/** Bookkeeping of how and when a row was written differs by path; the content must not. */
const BOOKKEEPING = new Set(['synced_at', 'read_at', 'first_seen_at', 'source', 'unavailable_at']);

function content(row: Row): Row {
  const kept = Object.fromEntries(Object.entries(row).filter(([key]) => !BOOKKEEPING.has(key)));
  return { ...kept, is_unavailable: row.unavailable_at !== null };
}

/** The columns webhooks carry equal the service's last version of the request. */
function expectLastVersion(row: Row, detail: Row): void {
  const time = (value: unknown) => (typeof value === 'string' ? normalizeTimestamp(value) : null);
  expect({
    id: row.request_id,
    agreed: row.transport_agreed_for_time,
    pickup: row.transport_pickup_time,
    level: row.service_level_type,
    state: row.request_current_state,
  }).toEqual({
    id: detail.request_id,
    agreed: time(detail.transport_agreed_for_time),
    pickup: time(detail.transport_pickup_time),
    level: detail.service_level_type,
    state: detail.request_current_state,
  });
}

describe('webhooks together with polling', () => {
  it('converge to the same database as polling alone', async () => {
    hook = await startWebhookFixture({
      requests: 80,
      pollingIsOn: true,
      webhooks: {
        url: 'http://127.0.0.1:9/',
        retryDelaysMs: [0, 20, 100],
        duplicateRate: 0.2,
        reorder: true,
      },
    });
    const alone = await pollingOnlyMirror(hook);
    const sender = hook.sim.webhooks!;
    const settle = async () => {
      await sender.idle();
      await hook.service.idle();
    };
    expect((await alone.cycle()).status).toBe('ok');
    expect((await hook.cycle()).status).toBe('ok');

    for (let round = 0; round < 6; round += 1) {
      hook.clock.advance(60_000);
      hook.sim.mutate(20);
      if (round % 2 === 0)
        hook.sim.addRequests(3, { state: round === 2 ? 'accepted' : 'awaiting' });
      // Webhooks land while the poll runs: the two paths race on the same rows.
      const [withWebhooks] = await Promise.all([hook.cycle(), settle()]);
      expect(withWebhooks.status, withWebhooks.error).toBe('ok');
      expect((await alone.cycle()).status).toBe('ok');
    }
    await settle();
    hook.clock.advance(60_000);
    await alone.cycle();
    await hook.cycle();

    const inWindow = new Set(truthInWindow(hook).map((t) => t.requestId));
    const truths = new Map(hook.sim.truth().map((t) => [t.requestId, t]));
    // Both mirrors are on the same engine, so even JSON columns read back alike: compared as
    // they are, byte for byte.
    const read = (db: Connection, sql: string) => queryAll<Row>(db, sql);
    const aloneRows = new Map(
      (await read(alone.db, 'SELECT * FROM requests')).map((row) => [
        row.request_id as string,
        row,
      ]),
    );
    const bothRows = await read(hook.db, 'SELECT * FROM requests');
    let compared = 0;
    const newerThanPolled = new Set<string>();
    for (const row of bothRows) {
      const id = row.request_id as string;
      const polled = aloneRows.get(id);
      if (!polled) {
        // Seen only by webhooks: a broadcast that came and went between two polls, or one
        // that left the poll window before a poll saw it. Either way, its last version.
        expect(row.unavailable_at !== null || !inWindow.has(id), id).toBe(true);
        expectLastVersion(row, truths.get(id)!.detail as Row);
        continue;
      }
      // Outside the window polling no longer follows a request; webhooks still do.
      if (!inWindow.has(id)) continue;
      if (row.unavailable_at !== null && polled.unavailable_at !== null) {
        // Gone: polling kept what it saw last, webhooks may have seen a change after that.
        // Then the webhook's version must be the service's last one.
        if (row.source === 'webhook') {
          expectLastVersion(row, truths.get(id)!.detail as Row);
          newerThanPolled.add(id);
          continue;
        }
      }
      expect(content(row), id).toEqual(content(polled));
      compared += 1;
    }
    expect(compared).toBeGreaterThan(60);
    for (const id of aloneRows.keys())
      expect(
        bothRows.some((row) => row.request_id === id),
        id,
      ).toBe(true);

    const children = [
      'SELECT * FROM request_locations ORDER BY request_id, role',
      'SELECT * FROM request_fields ORDER BY request_id, scope, name',
    ];
    for (const sql of children) {
      const isCompared = (row: Row) =>
        inWindow.has(row.request_id as string) &&
        aloneRows.has(row.request_id as string) &&
        !newerThanPolled.has(row.request_id as string);
      const expected = (await read(alone.db, sql)).filter(isCompared);
      const actual = (await read(hook.db, sql)).filter(isCompared);
      expect(actual).toEqual(expected);
    }
    const accounts =
      'SELECT account_id, name, service_levels_json, facilities_json FROM accounts ORDER BY account_id';
    const bothAccounts = new Map(
      (await read(hook.db, accounts)).map((row) => [row.account_id, row]),
    );
    for (const account of await read(alone.db, accounts))
      expect(bothAccounts.get(account.account_id)).toEqual(account);
    // And the members only webhooks carry are there too.
    expect(await hook.count('SELECT count(*) AS n FROM request_profiles')).toBeGreaterThan(20);
    expect(
      await hook.count("SELECT count(*) AS n FROM request_changes WHERE source = 'webhook'"),
    ).toBeGreaterThan(20);
    // Fourteen cycles of two mirrors with deliveries racing them: on PostgreSQL, each of their
    // writes a round trip, this takes over 30 s on a busy 2-core machine.
  }, 90_000);
});
