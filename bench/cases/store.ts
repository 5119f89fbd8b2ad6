/**
 * Rows 1 to 4 of issue 16: the store's write paths without HTTP, each beside its floor.
 *
 * Records come from the simulator's generator, parsed by the client's schemas outside the timed
 * part. Each path runs on a fresh copy of its starting database (empty, or holding the same
 * requests), and so does its floor: the rows that path wrote, written again with plain
 * statements (lib/floor.ts). Path and floor alternate (ABBA); a warm-up run of each comes first,
 * and checks that the floor ends with the same rows as the path.
 *
 * 1. new requests, batched: the backfill's write path (`runBackfill`) into an empty database.
 * 2. changed requests, batched: the same path over a database holding every request, each
 *    record changed (a note and a later last_updated).
 * 3. poll path: `runPollCycle` storing every request new, its details written as the cycle
 *    writes them (concurrent detail writes gathered into sets by src/sync/record-batcher.ts).
 * 4. webhook events stored and applied: v2.0 events (one edit of each request) stored as the
 *    receiver stores a burst (a transaction per 50 deliveries), each handing its new events,
 *    parsed, to the applier before its commit and waking it after; the applier applies them
 *    meanwhile (as src/webhooks/index.ts wires them). Beside it, row 4's bound: the floor of a
 *    durable intake (lib/floor.ts, IntakeFloor), each event stored before it is marked processed.
 */
import { silentLogger } from '../../src/log.js';
import { createSimulator } from '../../src/simulator/index.js';
import { createStore, type Store } from '../../src/db/store.js';
import { createCallTally } from '../../src/sync/call-tally.js';
import { runPollCycle } from '../../src/sync/poll.js';
import type { SyncClient } from '../../src/sync/ports.js';
import { createApplier } from '../../src/webhooks/applier.js';
import { toEventRow } from '../../src/webhooks/envelope.js';
import { createFetchQueue } from '../../src/webhooks/fetch-queue.js';
import { forEachEngine, type BenchCase, type BenchContext } from '../lib/context.js';
import type { BenchDb, DbTemplate, EngineHarness, EngineName } from '../lib/engines.js';
import {
  differences,
  planFloor,
  readTables,
  writeFloor,
  type FloorPlan,
  type TableRows,
} from '../lib/floor.js';
import { createMemoryClient, parseSnapshot, type ParsedEntry } from '../lib/memory-client.js';
import { benchWindow, fixedClock, NOW_MS, POLL_SETTINGS, seedStore } from '../lib/mirror.js';
import { goalOf } from '../lib/goals.js';
import { engineLabel, figure, specs, type Figure, type FigureSpec } from '../lib/report.js';
import { snapshotOf } from '../lib/snapshot.js';
import { interleave, median, ratios } from '../lib/stats.js';
import { createWebhookBodies } from '../lib/webhook-events.js';

const CASE = 'store';
const clock = fixedClock();
/** Deliveries stored per transaction: the receiver's group insert under a burst of 50. */
const DELIVERIES_PER_COMMIT = 50;

const sizeOf = (ctx: BenchContext) => (ctx.isQuick ? 300 : 5_000);

function planFor(engine: EngineName, requests: number) {
  const spec = specs(CASE, engine);
  const floor = { name: `${engineLabel(engine)} floor`, unit: 'req/s' };
  const n = `${requests.toLocaleString('en-US')}-request simulator`;
  return {
    insert: spec('store.new', 1, `store, new requests batched (backfill path), ${n}`, 'req/s', {
      target: goalOf('store.new', engine),
      reference: floor,
      size: requests,
    }),
    update: spec('store.changed', 2, `store, changed requests batched, ${n}`, 'req/s', {
      target: goalOf('store.changed', engine),
      reference: floor,
    }),
    poll: spec('store.poll', 3, `poll path (details through the record batcher), ${n}`, 'req/s', {
      target: goalOf('store.poll', engine),
      reference: floor,
    }),
    webhooks: spec(
      'store.webhooks',
      4,
      `webhook v2.0 events stored + applied (stored ${DELIVERIES_PER_COMMIT} per commit), ${n}`,
      'events/s',
      { target: goalOf('store.webhooks', engine), reference: { ...floor, unit: 'events/s' } },
    ),
    webhooksBound: spec(
      'store.webhooks.bound',
      4,
      `row 4's bound: the floor with each event stored first, unprocessed, ${DELIVERIES_PER_COMMIT} per commit, and marked processed after, against the floor, ${n}`,
      'ms',
      { reference: { name: `${engineLabel(engine)} floor`, unit: 'ms' } },
    ),
  };
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
    return { ...entry, detail, raw, text: JSON.stringify(raw), listItem };
  });
}

/** A store that counts its write transactions. */
function countingStore(store: Store): { store: Store; transactions: () => number } {
  let count = 0;
  return {
    store: {
      ...store,
      transaction: (work) => {
        count += 1;
        return store.transaction(work);
      },
    },
    transactions: () => count,
  };
}

/** One write path: from which database it starts, what it does, how to check it did it all. */
interface WritePath {
  spec: FigureSpec;
  start: DbTemplate;
  /** Rows of the starting database. */
  before: TableRows;
  /** Units (requests or events) it writes. */
  units: number;
  run(db: BenchDb): Promise<string | void>;
  /** Requests whose locations and fields the path rewrites whole. */
  replaced?(before: TableRows, after: TableRows): Set<string>;
  /** Measure the floor of a durable intake too (lib/floor.ts, IntakeFloor), as this figure. */
  intakeBound?: FigureSpec;
}

/**
 * Runs a path and its floor side by side on fresh copies of the starting database. The path goes
 * first: what its first run wrote is the floor's plan. The last floor run must end with the same
 * rows as that path run. Copies are thrown away after the runs, not between them. With
 * `intakeBound`, the intake floor runs as a third arm and must end the same too.
 */
async function measurePath(ctx: BenchContext, path: WritePath): Promise<Figure[]> {
  // A PostgreSQL path run takes seconds (round trips): 3 runs say as much as 5 short ones.
  const runs = path.spec.engine === 'postgres' ? Math.min(ctx.runs, 3) : ctx.runs;
  let notes: string | undefined;
  let after: TableRows | undefined;
  let plan: FloorPlan | undefined;
  const copies: BenchDb[][] = [[], [], []];
  const floorMs: number[] = [];
  const intakeMs: number[] = [];
  const floorArms = [
    async () => {
      floorMs.push(await writeFloor(await copies[1]!.at(-1)!.open(), plan!));
    },
  ];
  if (path.intakeBound)
    floorArms.push(async () => {
      const intake = { perCommit: DELIVERIES_PER_COMMIT };
      intakeMs.push(await writeFloor(await copies[2]!.at(-1)!.open(), plan!, intake));
    });
  try {
    const times = await interleave(
      runs,
      [
        async () => {
          const result = await path.run(copies[0]!.at(-1)!);
          if (typeof result === 'string') notes ??= result;
        },
        ...floorArms,
      ],
      async (arm) => {
        if (arm > 0 && !plan) {
          after = await readTables(await copies[0]!.at(-1)!.open());
          plan = planFloor(path.before, after, {
            replaceChildrenOf: path.replaced?.(path.before, after) ?? new Set(),
          });
        }
        const copy = await path.start.clone();
        await copy.open();
        copies[arm]!.push(copy);
      },
    );
    for (const [arm, name] of [
      [1, 'floor'],
      [2, 'intake floor'],
    ] as const) {
      const last = copies[arm]!.at(-1);
      if (!last) continue;
      const diff = differences(after!, await readTables(await last.open()));
      if (diff.length > 0)
        throw new Error(`the ${name} did not end as the path: ${diff.join('; ')}`);
    }
    const pathMs = times[0]!;
    const rate = (ms: number) => (path.units * 1000) / ms;
    const rates = pathMs.map(rate);
    const floorRates = floorMs.map(rate);
    const ratioRuns = ratios(floorMs, pathMs);
    ctx.detail(`store.${path.spec.id}.${path.spec.engine}`, {
      units: path.units,
      pathMs,
      floorMs,
      ...(path.intakeBound && { intakeFloorMs: intakeMs }),
      floorRows: plan!.rows,
      floorRequests: plan!.requests,
    });
    ctx.progress(
      `  ${path.spec.id} ${path.spec.engine}: ${Math.round(median(rates))}/s, floor ${Math.round(median(floorRates))}/s (${median(ratioRuns).toFixed(2)})`,
    );
    const measured = figure(path.spec, median(rates), {
      runs: rates,
      reference: { value: median(floorRates), runs: floorRates },
      ratio: median(ratioRuns),
      ratioRuns,
      note: `${plan!.rows.toLocaleString('en-US')} rows${notes ? `; ${notes}` : ''}`,
    });
    return path.intakeBound
      ? [measured, intakeBoundFigure(path.intakeBound, floorMs, intakeMs)]
      : [measured];
  } finally {
    for (const copy of copies.flat()) await copy.remove();
  }
}

/**
 * Row 4's bound: the intake floor's time beside the plain floor's, run by run. The ratio is
 * floor / intake floor: the most row 4 can read while its writes go no faster than plain
 * statements and take turns, as they do on SQLite, whose one writer both store and apply.
 */
function intakeBoundFigure(spec: FigureSpec, floorMs: number[], intakeMs: number[]): Figure {
  const ratioRuns = ratios(floorMs, intakeMs);
  return figure(spec, median(intakeMs), {
    runs: intakeMs,
    reference: { value: median(floorMs), runs: floorMs },
    ratio: median(ratioRuns),
    ratioRuns,
    note: `the intake floor takes ${median(ratios(intakeMs, floorMs)).toFixed(2)} times the floor`,
  });
}

/** The backfill's write path over `client`. */
async function importAll(store: Store, client: SyncClient, restart: boolean) {
  return seedStore(store, client, clock, benchWindow(), { restart });
}

async function measureEngine(
  ctx: BenchContext,
  engine: EngineHarness,
  entries: ParsedEntry[],
  bodies: Buffer[],
): Promise<Figure[]> {
  const count = entries.length;
  const plan = planFor(engine.name, sizeOf(ctx));
  ctx.progress(`store ${engine.name}: ${count} requests, ${bodies.length} events`);
  const emptyDb = await engine.create();
  const empty = await engine.template(emptyDb);
  const seededDb = await engine.create();
  const seededStore = createStore({ db: await seededDb.open(), clock });
  const seeded = await importAll(seededStore, createMemoryClient(entries), false);
  if (seeded.counts.requestsNew !== count) throw new Error('seeding stored not every request');
  const full = await engine.template(seededDb);
  const readStart = async (template: DbTemplate) => {
    const copy = await template.clone();
    try {
      return await readTables(await copy.open());
    } finally {
      await copy.remove();
    }
  };
  const nothing = await readStart(empty);
  const everything = await readStart(full);
  const changed = createMemoryClient(changedEntries(entries, 1));
  const contentChanged = (before: TableRows, after: TableRows) => {
    const hashes = new Map(
      (before.get('requests') ?? []).map((row) => [row.request_id, row.content_hash]),
    );
    return new Set(
      (after.get('requests') ?? [])
        .filter((row) => hashes.get(row.request_id) !== row.content_hash)
        .map((row) => String(row.request_id)),
    );
  };

  const paths: WritePath[] = [
    {
      spec: plan.insert,
      start: empty,
      before: nothing,
      units: count,
      async run(db) {
        const store = createStore({ db: await db.open(), clock });
        const result = await importAll(store, createMemoryClient(entries), false);
        if (result.counts.requestsNew !== count)
          throw new Error(`the backfill stored ${result.counts.requestsNew} of ${count} new`);
      },
    },
    {
      spec: plan.update,
      start: full,
      before: everything,
      units: count,
      async run(db) {
        const store = createStore({ db: await db.open(), clock });
        const result = await importAll(store, changed, true);
        if (result.counts.requestsChanged !== count)
          throw new Error(
            `the backfill stored ${result.counts.requestsChanged} of ${count} changed`,
          );
      },
      replaced: contentChanged,
    },
    {
      spec: plan.poll,
      start: empty,
      before: nothing,
      units: count,
      async run(db) {
        const counted = countingStore(createStore({ db: await db.open(), clock }));
        const result = await runPollCycle({
          client: createMemoryClient(entries),
          store: counted.store,
          clock,
          log: silentLogger(),
          calls: createCallTally(),
          settings: POLL_SETTINGS,
        });
        if (result.counts.requestsNew !== count)
          throw new Error(`the poll stored ${result.counts.requestsNew} of ${count} new`);
        return `${counted.transactions()} write transactions`;
      },
    },
    {
      spec: plan.webhooks,
      intakeBound: plan.webhooksBound,
      start: full,
      before: everything,
      units: bodies.length,
      async run(db) {
        const conn = await db.open();
        const store = createStore({ db: conn, clock });
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
        try {
          const receivedAt = store.now();
          for (let i = 0; i < bodies.length; i += DELIVERIES_PER_COMMIT) {
            const received = bodies.slice(i, i + DELIVERIES_PER_COMMIT).map((body) => {
              const text = body.toString('utf8');
              const payload = JSON.parse(text) as Record<string, unknown>;
              return { payload, row: toEventRow(payload, body, receivedAt, text) };
            });
            // As the receiver's group commit stores them (src/webhooks/index.ts): each new one
            // handed to the applier with its parsed body before the commit, the applier woken
            // after it.
            await store.transaction(async (tx) => {
              const isNew = await tx.events.insertMany(received.map(({ row }) => row));
              received.forEach(({ payload, row }, index) => {
                const bytes = row.payload_json.length;
                if (isNew[index]) applier.hold({ eventId: row.event_id, payload, bytes });
              });
            });
            applier.wake();
          }
          await applier.idle();
        } finally {
          await applier.stop();
          aborter.abort();
        }
        const state = await store.read((tx) =>
          tx.sql.get<{ applied: number; failed: number }>(
            `SELECT count(*) FILTER (WHERE processed_at IS NOT NULL AND error IS NULL) AS applied,
                    count(*) FILTER (WHERE error IS NOT NULL) AS failed
             FROM webhook_events`,
          ),
        );
        if (Number(state?.applied) !== bodies.length || Number(state?.failed) > 0)
          throw new Error(
            `${state?.applied} of ${bodies.length} webhook events applied, ${state?.failed} failed`,
          );
      },
    },
  ];
  try {
    const figures: Figure[] = [];
    for (const path of paths) figures.push(...(await measurePath(ctx, path)));
    return figures;
  } finally {
    await empty.remove();
    await full.remove();
  }
}

export const storeCase: BenchCase = {
  name: CASE,
  plan: (ctx) => ctx.engineNames.flatMap((engine) => Object.values(planFor(engine, sizeOf(ctx)))),
  async run(ctx) {
    const requests = sizeOf(ctx);
    const { fromMs, toMs } = benchWindow();
    const sim = createSimulator({
      seed: 11,
      requests,
      pastDays: 2,
      futureDays: 10,
      pageSize: 50,
      clock,
    });
    try {
      const entries = parseSnapshot(snapshotOf(sim, fromMs, toMs));
      // One v2.0 event (an edit) for each request, made once: every run applies the same ones.
      const makeBodies = createWebhookBodies(sim, NOW_MS + 1000);
      const bodies = makeBodies(entries.map((entry) => entry.detail.request_id)).map((text) =>
        Buffer.from(text),
      );
      return await forEachEngine(ctx, CASE, (engine) =>
        measureEngine(ctx, engine, entries, bodies),
      );
    } finally {
      await sim.close();
    }
  },
};
