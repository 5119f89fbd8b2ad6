/**
 * Case 4: the store's throughput without HTTP. Records come from the simulator's generator, parsed
 * by the client's schemas outside the timed part; the timed part is the engine's own write path
 * (normalize, upsert with child rows, change log, run bookkeeping) into a SQLite file.
 */
import { CONTENT_COLUMNS } from '../../src/db/schema/index.js';
import { SQLITE_DIALECT } from '../../src/db/sqlite/connection.js';
import { pick, requestSql } from '../../src/db/store/request-sql.js';
import { silentLogger } from '../../src/log.js';
import { createSimulator } from '../../src/simulator/index.js';
import { createStore, type Store } from '../../src/db/store.js';
import { planBackfill, runBackfill } from '../../src/sync/backfill.js';
import { createCallTally } from '../../src/sync/call-tally.js';
import { normalizeDetail } from '../../src/sync/normalize.js';
import { runPollCycle } from '../../src/sync/poll.js';
import type { SyncClient } from '../../src/sync/ports.js';
import { createApplier } from '../../src/webhooks/applier.js';
import { toEventRow } from '../../src/webhooks/envelope.js';
import { createFetchQueue } from '../../src/webhooks/fetch-queue.js';
import type { BenchContext } from '../lib/context.js';
import { createMemoryClient, parseSnapshot, type ParsedEntry } from '../lib/memory-client.js';
import { benchWindow, fixedClock, NOW_MS, openTempDatabase, POLL_SETTINGS } from '../lib/mirror.js';
import { figure, type Figure } from '../lib/report.js';
import { snapshotOf } from '../lib/snapshot.js';
import { median, round, timed } from '../lib/stats.js';
import { createWebhookBodies } from '../lib/webhook-events.js';

const STORE = '4 store throughput';
const clock = fixedClock();

/** The backfill's write path over `client`: batches of 250 in one transaction each. */
function importAll(store: Store, client: SyncClient, restart: boolean) {
  const { fromMs, toMs } = benchWindow();
  const plan = planBackfill({
    fromMs,
    toMs,
    states: [...POLL_SETTINGS.states],
    chunkHours: POLL_SETTINGS.windowPastHours + POLL_SETTINGS.windowFutureHours,
  });
  const deps = {
    client,
    store,
    clock,
    log: silentLogger(),
    calls: createCallTally(),
    concurrency: 8,
  };
  return runBackfill(deps, plan, { restart });
}

/** The same records, each changed: a new note and a later last_updated. */
function changedEntries(entries: readonly ParsedEntry[], round: number): ParsedEntry[] {
  return entries.map((entry) => {
    const fields = { ...entry.detail.enabled_request_fields, note: `bench edit ${round}` };
    const detail = { ...entry.detail, enabled_request_fields: fields };
    const raw = { ...(entry.raw as Record<string, unknown>), enabled_request_fields: fields };
    const listItem = entry.listItem && {
      ...entry.listItem,
      last_updated_timestamp_utc: new Date(
        Date.parse(entry.listItem.last_updated_timestamp_utc) + round * 1000,
      ).toISOString(),
    };
    return { ...entry, detail, raw, listItem };
  });
}

/**
 * The SQLite floor for the same rows: each record normalized ahead (outside the timing), then
 * written with plain INSERTs of the store's own statements (request, locations, fields, one
 * change row) in transactions of 250; no read, no comparison. What this machine's SQLite can do
 * with these rows at that moment, measured beside our write path.
 */
async function sqliteFloor(entries: readonly ParsedEntry[]): Promise<number> {
  const at = new Date(NOW_MS).toISOString();
  const rows = entries.map((entry) => {
    const normalized = normalizeDetail(entry.detail, entry.listItem ?? { state: entry.state });
    return {
      normalized,
      rawJson: JSON.stringify(entry.raw),
      newValues: pick(normalized.content, [...CONTENT_COLUMNS]),
    };
  });
  const temp = await openTempDatabase();
  try {
    const q = requestSql(SQLITE_DIALECT);
    const statements = {
      upsertRequest: temp.db.sqlite.prepare(q.upsertRequest),
      insertLocation: temp.db.sqlite.prepare(q.insertLocation),
      insertField: temp.db.sqlite.prepare(q.insertField),
      insertChange: temp.db.sqlite.prepare(q.insertChange),
    };
    const start = performance.now();
    for (let i = 0; i < rows.length; i += 250) {
      temp.db.sqlite
        .transaction(() => {
          for (const { normalized, rawJson, newValues } of rows.slice(i, i + 250)) {
            const { content } = normalized;
            statements.upsertRequest.run({
              ...content,
              unavailable_at: null,
              synced_at: at,
              read_at: at,
              first_seen_at: at,
              source: 'backfill',
              content_hash: normalized.contentHash,
              raw_json: rawJson,
            });
            for (const location of normalized.locations) statements.insertLocation.run(location);
            for (const field of normalized.fields) statements.insertField.run(field);
            statements.insertChange.run({
              request_id: content.request_id,
              observed_at: at,
              kind: 'created',
              source: 'backfill',
              changed_columns: CONTENT_COLUMNS.join(','),
              old_state: null,
              new_state: content.list_state,
              old_values_json: null,
              new_values_json: newValues,
            });
          }
        })
        .immediate();
    }
    return performance.now() - start;
  } finally {
    await temp.remove();
  }
}

function perSecond(count: number, ms: number): number {
  return (count * 1000) / ms;
}

/** Case 4: requests per second through each write path, and webhook events per second. */
export async function storeCase(ctx: BenchContext): Promise<Figure[]> {
  const requests = ctx.isQuick ? 2_000 : 5_000;
  ctx.progress(`store: ${requests} requests`);
  const { fromMs, toMs } = benchWindow();
  const sim = createSimulator({
    seed: 11,
    requests,
    pastDays: 2,
    futureDays: 10,
    pageSize: 50,
    clock,
  });
  const entries = parseSnapshot(snapshotOf(sim, fromMs, toMs));
  const count = entries.length;
  const rates = { insert: [] as number[], update: [] as number[], same: [] as number[] };
  const floorRates: number[] = [];
  const ofFloor: number[] = [];
  const pollRates: number[] = [];
  const webhookRates: number[] = [];
  let seeded: Awaited<ReturnType<typeof openTempDatabase>> | undefined;

  try {
    for (let run = 0; run < ctx.runs; run += 1) {
      // Batched (backfill path): new rows into an empty file, then every row changed, then none.
      const temp = await openTempDatabase();
      const store = createStore({ db: temp.db, clock });
      const insert = await timed(() => importAll(store, createMemoryClient(entries), false));
      if (insert.value.counts.requestsNew !== count) throw new Error('not every record was new');
      rates.insert.push(perSecond(count, insert.ms));
      const floorMs = await sqliteFloor(entries);
      floorRates.push(perSecond(count, floorMs));
      ofFloor.push(floorMs / insert.ms);
      const changed = createMemoryClient(changedEntries(entries, run + 1));
      const update = await timed(() => importAll(store, changed, true));
      if (update.value.counts.requestsChanged !== count)
        throw new Error('not every record changed');
      rates.update.push(perSecond(count, update.ms));
      const same = await timed(() => importAll(store, changed, true));
      rates.same.push(perSecond(count, same.ms));
      if (seeded) await seeded.remove();
      seeded = temp;

      // Poll path: every request new, its detail stored in a transaction of its own.
      const pollTemp = await openTempDatabase();
      try {
        const pollStore = createStore({ db: pollTemp.db, clock });
        const deps = {
          client: createMemoryClient(entries),
          store: pollStore,
          clock,
          log: silentLogger(),
          calls: createCallTally(),
          settings: POLL_SETTINGS,
        };
        const poll = await timed(() => runPollCycle(deps));
        const stored = poll.value.counts.requestsNew;
        if (stored !== count) throw new Error(`poll stored ${stored} of ${count}`);
        pollRates.push(perSecond(count, poll.ms));
      } finally {
        await pollTemp.remove();
      }
    }

    // Webhooks: v2.0 events for requests already stored, as the receiver stores them and the
    // applier applies them (validation, normalize, partial upsert, profile, event bookkeeping).
    const store = createStore({ db: seeded!.db, clock });
    const noFetch: SyncClient = {
      ...createMemoryClient([]),
      getRequest: () => Promise.reject(new Error('no fetch expected')),
    };
    const aborter = new AbortController();
    const fetches = createFetchQueue({
      client: noFetch,
      store,
      concurrency: 8,
      signal: aborter.signal,
    });
    const applier = createApplier({
      store,
      fetches,
      clock,
      log: silentLogger(),
      shouldFetchInvalid: false,
    });
    const makeBodies = createWebhookBodies(sim, NOW_MS + 1000);
    const ids = entries.map((entry) => entry.detail.request_id);
    for (let run = 0; run < ctx.runs; run += 1) {
      const bodies = makeBodies(ids).map((text) => Buffer.from(text));
      const receivedAt = store.now();
      const applied = await timed(async () => {
        for (const body of bodies) {
          const row = toEventRow(JSON.parse(body.toString('utf8')), body, receivedAt);
          // One commit per delivery, as the receiver stores a delivery that arrives alone.
          await store.transaction((tx) => tx.events.insert(row));
        }
        applier.wake();
        await applier.idle();
      });
      const failed = seeded!.db.sqlite
        .prepare('SELECT count(*) AS n FROM webhook_events WHERE error IS NOT NULL')
        .get() as { n: number };
      if (failed.n > 0) throw new Error(`${failed.n} webhook events failed to apply`);
      webhookRates.push(perSecond(bodies.length, applied.ms));
    }
    await applier.stop();
    aborter.abort();
  } finally {
    await seeded?.remove();
    await sim.close();
  }

  ctx.detail('store', {
    count,
    ...rates,
    floor: floorRates,
    poll: pollRates,
    webhooks: webhookRates,
  });
  const n = count.toLocaleString('en-US');
  const target = { op: '>=' as const, value: 20_000 };
  ctx.progress(
    `  store: insert ${Math.round(median(rates.insert))}/s, poll ${Math.round(median(pollRates))}/s, webhooks ${Math.round(median(webhookRates))}/s`,
  );
  return [
    figure(STORE, `${n} new requests, batched (backfill path)`, median(rates.insert), 'req/s', {
      target,
      runs: rates.insert,
    }),
    figure(
      STORE,
      `${n} new requests: SQLite floor (plain INSERTs of the same rows)`,
      median(floorRates),
      'req/s',
      {
        runs: floorRates,
      },
    ),
    figure(
      STORE,
      `${n} new requests, batched: rate / SQLite floor`,
      round(median(ofFloor)),
      'ratio',
      {
        runs: ofFloor,
      },
    ),
    figure(STORE, `${n} changed requests, batched`, median(rates.update), 'req/s', {
      target,
      runs: rates.update,
    }),
    figure(STORE, `${n} unchanged requests, batched`, median(rates.same), 'req/s', {
      runs: rates.same,
    }),
    figure(STORE, `${n} new requests, poll path (a transaction each)`, median(pollRates), 'req/s', {
      runs: pollRates,
    }),
    figure(STORE, `${n} webhook v2.0 events (stored + applied)`, median(webhookRates), 'events/s', {
      target,
      runs: webhookRates,
    }),
  ];
}
