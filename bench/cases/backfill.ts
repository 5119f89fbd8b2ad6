/**
 * Rows 5 and 8 of issue 16: `transport-sync backfill` as users run it, in a process of its own,
 * against the CLI simulator in another, into a new database of each engine.
 *
 * 5. Requests stored per second (from the run's sync_runs row: the backfill itself, without the
 *    process start) beside the bare rate: the same calls, taken from the simulator's call log,
 *    fetched one after another and JSON-parsed, nothing else (lib/bare.ts). Alternating.
 * 8. The backfill's peak RSS, default flags (VmHWM of the child, reported by a preloaded
 *    module: child/rss-report.ts), at both sizes, and its growth from the small to the large.
 *    Once more at the large size inside a memory cgroup of 1 GiB, the `MemoryMax=` of the
 *    systemd units, where V8 sizes its heap from that limit, as it does where the daemon runs.
 * 5's bound, at the small size: the engine's floor (lib/floor.ts) writing the rows the first
 *    backfill wrote, into a new database, alternating with the other two. A backfill takes at
 *    least as long as its writes and at least as long as its fetch + parse, so bare / max(bare,
 *    floor) is the most row 5 can read while its writes go no faster than the floor's (one
 *    connection, plain statements); bare / (bare + floor) the most when fetching and writing
 *    take turns (as on SQLite, whose writes run on the thread that fetches and parses).
 *
 * The simulator runs with paging churn off (throughput: nothing moves while the backfill pages,
 * so every run and its bare replay make the same calls and find the same requests); drift and
 * second-precision last_updated stay on. The simulator's CPU share is noted beside each rate.
 */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildReport } from '../child/rss-report.js';
import { openDatabase } from '../../src/db/open.js';
import { createBareClient, replayUrls } from '../lib/bare.js';
import {
  differences,
  planFloor,
  readTables,
  writeFloor,
  type FloorPlan,
  type TableRows,
} from '../lib/floor.js';
import { createMemoryCgroup } from '../lib/cgroup.js';
import type { BenchCase, BenchContext } from '../lib/context.js';
import type { BenchDb, EngineHarness, EngineName } from '../lib/engines.js';
import { goalOf } from '../lib/goals.js';
import { runCliChild, startSimProcess, type SimProcess } from '../lib/processes.js';
import {
  engineLabel,
  figure,
  notMeasured,
  specs,
  type Figure,
  type FigureSpec,
} from '../lib/report.js';
import type { SimCall } from '../lib/sim-protocol.js';
import { interleave, median, ratios } from '../lib/stats.js';

const CASE = 'backfill';
const DAY_MS = 86_400_000;
const PAGE_SIZE = 50;
/** Issue 16: at most 160 MB, flat from 10,000 to 100,000 (read here: at most 10 % more). */
const RSS_GOAL_MB = 160;
const RSS_GROWTH_GOAL = 1.1;
/** The units' `MemoryMax=1G`. */
const UNIT_MEMORY_MAX = 2 ** 30;

const sizesOf = (ctx: BenchContext) =>
  ctx.isQuick ? { small: 500, large: 1_500 } : { small: 10_000, large: 100_000 };

function planFor(engine: EngineName, sizes: { small: number; large: number }) {
  const spec = specs(CASE, engine);
  const n = (size: number) => `${size.toLocaleString('en-US')} requests`;
  const rate = (size: number) =>
    spec(
      'backfill.rate',
      5,
      `backfill rate / bare fetch+parse of the same calls, ${n(size)}`,
      'req/s',
      {
        target: goalOf('backfill.rate', engine),
        reference: { name: 'bare', unit: 'req/s' },
        size,
      },
    );
  const rss = (size: number) =>
    spec('backfill.rss', 8, `backfill peak RSS, default flags, ${n(size)}`, 'MB', {
      target: { op: '<=', value: RSS_GOAL_MB },
      size,
    });
  const bound = spec(
    'backfill.bound',
    5,
    `row 5's bound: the engine's floor writing the backfill's rows, against bare fetch+parse of its calls, ${n(sizes.small)}`,
    'ms',
    { reference: { name: 'bare', unit: 'ms' } },
  );
  return [
    rate(sizes.small),
    rate(sizes.large),
    rss(sizes.small),
    rss(sizes.large),
    spec(
      'backfill.rss.cgroup',
      8,
      `backfill peak RSS in a 1 GiB memory cgroup (the units' MemoryMax), ${n(sizes.large)}`,
      'MB',
      { target: { op: '<=', value: RSS_GOAL_MB }, size: sizes.large },
    ),
    spec(
      'backfill.rss.growth',
      8,
      `backfill peak RSS, ${n(sizes.large)} / ${n(sizes.small)}`,
      'MB',
      {
        target: { op: '<=', value: RSS_GROWTH_GOAL },
        reference: { name: n(sizes.small), unit: 'MB' },
      },
    ),
    bound,
  ];
}

/** The simulator spreads pickups 30 days back and 14 ahead of now: cover all of it. */
function backfillArgs(): string[] {
  const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  return [
    'backfill',
    '--from',
    day(Date.now() - 31 * DAY_MS),
    '--to',
    day(Date.now() + 15 * DAY_MS),
  ];
}

/** One backfill run. */
export interface BackfillRun {
  stored: number;
  runMs: number;
  childWallMs: number;
  simCpuMs: number;
  report: ChildReport;
}

/** A new database of the engine, as a user starts: a file path not yet created, or a database. */
async function newDatabase(engine: EngineHarness): Promise<BenchDb> {
  if (engine.name === 'postgres') return engine.create();
  const dir = mkdtempSync(join(tmpdir(), 'transport-sync-bench-backfill-'));
  return {
    engine: 'sqlite',
    location: join(dir, 'mirror.db'),
    open: () => Promise.reject(new Error('not opened by the bench')),
    close: async () => undefined,
    remove: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

async function lastBackfill(location: string) {
  if (!location.startsWith('postgres')) {
    const db = new Database(location, { readonly: true });
    try {
      return db
        .prepare(
          `SELECT started_at, finished_at, requests_new, status FROM sync_runs
           WHERE kind = 'backfill' ORDER BY run_id DESC LIMIT 1`,
        )
        .get() as { started_at: string; finished_at: string; requests_new: number; status: string };
    } finally {
      db.close();
    }
  }
  const db = await openDatabase({ location, shouldMigrate: false });
  try {
    return (await db.read((sql) =>
      sql.get<{ started_at: string; finished_at: string; requests_new: number; status: string }>(
        `SELECT started_at, finished_at, requests_new, status FROM sync_runs
         WHERE kind = 'backfill' ORDER BY run_id DESC LIMIT 1`,
      ),
    ))!;
  } finally {
    await db.close();
  }
}

export async function backfillOnce(
  sim: SimProcess,
  engine: EngineHarness,
  nodeArgs: string[] = [],
  cgroupProcsFile?: string,
  /** Runs on the filled database before it is thrown away. */
  inspect?: (location: string) => Promise<void>,
): Promise<{ run: BackfillRun; urls: string[] }> {
  const database = await newDatabase(engine);
  try {
    await sim.control('POST', '/reset-calls/');
    const cpuBefore = sim.cpuMs();
    const child = await runCliChild(
      backfillArgs(),
      {
        TRANSPORT_AUTH_URL: sim.url,
        TRANSPORT_HUB_URL: sim.url,
        TRANSPORT_BASE_URL: sim.url,
        TRANSPORT_CLIENT_ID: 'demo-client',
        TRANSPORT_CLIENT_SECRET: 'demo-secret',
        TRANSPORT_DB: database.location,
      },
      nodeArgs,
      cgroupProcsFile,
    );
    const simCpuMs = sim.cpuMs() - cpuBefore;
    if (child.code !== 0) throw new Error(`backfill exited ${child.code}: ${child.stderr}`);
    const row = await lastBackfill(database.location);
    if (row.status !== 'ok') throw new Error(`backfill run ended ${row.status}`);
    const urls = replayUrls(sim.url, (await sim.control('GET', '/calls/')) as SimCall[]);
    await inspect?.(database.location);
    return {
      run: {
        stored: Number(row.requests_new),
        runMs: Date.parse(row.finished_at) - Date.parse(row.started_at),
        childWallMs: Math.round(child.wallMs),
        simCpuMs,
        report: child.report,
      },
      urls,
    };
  } finally {
    await database.remove();
  }
}

async function token(url: string): Promise<string> {
  const response = await fetch(`${url}/v2.0/oauth2/token/`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'grant_type=client_credentials&client_id=demo-client&client_secret=demo-secret',
  });
  const body = (await response.json()) as { access_token: string };
  return body.access_token;
}

/** V8 flags tried on the large backfill (--memory): what its RSS is made of. */
const MEMORY_VARIANTS = [
  ['--max-semi-space-size=4'],
  ['--max-semi-space-size=4', '--max-old-space-size=128'],
  ['--max-semi-space-size=1', '--max-old-space-size=64'],
];

/** What one engine's backfills at one size measured. */
interface Measured {
  results: BackfillRun[];
  bareRuns: { ms: number; simCpuMs: number }[];
  calls: number;
  variants: { flags: string; run: BackfillRun }[];
  /** The run inside the units' memory cgroup, or why there was none. */
  inCgroup?: { run: BackfillRun; version: string } | { reason: string };
  /** The floor's runs over the first backfill's rows (row 5's bound), where measured. */
  floor?: { ms: number[]; rows: number };
}

/** Every row of the floor's tables in the database at `location`. */
async function tablesAt(location: string): Promise<TableRows> {
  const db = await openDatabase({ location, shouldMigrate: false });
  try {
    return await readTables(db);
  } finally {
    await db.close();
  }
}

/**
 * The floor's side of row 5's bound: what the first backfill wrote (`capture`, its inspect hook),
 * written again by plain statements into a new database of the engine at each `run`. The first
 * run must end with the backfill's rows.
 */
function boundFloor(engine: EngineHarness) {
  let after: TableRows | undefined;
  let plan: FloorPlan | undefined;
  let copy: BenchDb | undefined;
  const ms: number[] = [];
  return {
    async capture(location: string) {
      after = await tablesAt(location);
    },
    /** A new database for the next run, outside its timing. */
    async prepare() {
      await copy?.remove();
      copy = await engine.create();
      const empty = await copy.open();
      plan ??= planFloor(await readTables(empty), after!);
    },
    async run() {
      ms.push(await writeFloor(await copy!.open(), plan!));
      if (ms.length > 1) return;
      const diff = differences(after!, await readTables(await copy!.open()));
      if (diff.length > 0)
        throw new Error(`the floor did not end as the backfill: ${diff.join('; ')}`);
    },
    async close() {
      await copy?.remove();
    },
    result: () => ({ ms, rows: plan?.rows ?? 0 }),
  };
}

/** What a size measures beyond the backfill and its bare replay. */
interface Extras {
  /** The large backfill again under V8 memory flags (--memory). */
  withVariants: boolean;
  /** Once more inside the units' memory cgroup. */
  withCgroup: boolean;
  /** The floor writing the first backfill's rows (row 5's bound). */
  withBound: boolean;
}

/** Backfill and bare replay (and the floor, with `withBound`), alternating, `runs` times. */
async function measureSize(
  ctx: BenchContext,
  sim: SimProcess,
  engine: EngineHarness,
  requests: number,
  runs: number,
  { withVariants, withCgroup, withBound }: Extras,
): Promise<Measured> {
  ctx.progress(`backfill ${engine.name}: ${requests} requests, ${runs} run(s)`);
  const bare = createBareClient(await token(sim.url));
  const results: BackfillRun[] = [];
  const bareRuns: { ms: number; simCpuMs: number }[] = [];
  const floor = withBound ? boundFloor(engine) : undefined;
  let urls: string[] = [];
  try {
    // The bare replay needs the calls of a backfill, the floor its rows: the first one goes first.
    const first = await backfillOnce(sim, engine, [], undefined, floor?.capture);
    urls = first.urls;
    let pending: BackfillRun | undefined = first.run;
    const arms = [
      async () => {
        if (pending) {
          results.push(pending);
          pending = undefined;
          return;
        }
        const next = await backfillOnce(sim, engine);
        results.push(next.run);
      },
      async () => {
        const cpuBefore = sim.cpuMs();
        const start = performance.now();
        await bare.replay(urls);
        bareRuns.push({ ms: performance.now() - start, simCpuMs: sim.cpuMs() - cpuBefore });
      },
    ];
    if (floor) arms.push(() => floor.run());
    await interleave(runs, arms, async (arm) => {
      if (arm === 2) await floor!.prepare();
    });
  } finally {
    if (bare.retries > 0)
      ctx.progress(
        `  bare replay: ${bare.retries} GET(s) sent again after their connection failed`,
      );
    await bare.close();
    await floor?.close();
  }
  const variants: { flags: string; run: BackfillRun }[] = [];
  if (withVariants) {
    for (const flags of MEMORY_VARIANTS)
      variants.push({ flags: flags.join(' '), run: (await backfillOnce(sim, engine, flags)).run });
  }
  let inCgroup: Measured['inCgroup'];
  if (withCgroup) {
    const cgroup = createMemoryCgroup(UNIT_MEMORY_MAX);
    if ('reason' in cgroup) inCgroup = cgroup;
    else {
      try {
        const { run } = await backfillOnce(sim, engine, [], cgroup.procsFile);
        inCgroup = { run, version: cgroup.version };
        ctx.progress(
          `  ${engine.name} ${requests} in a 1 GiB cgroup: peak RSS ${run.report.maxRssMb} MB`,
        );
      } finally {
        cgroup.remove();
      }
    }
  }
  for (const [i, run] of results.entries()) {
    ctx.progress(
      `  ${engine.name} ${requests}: ${run.stored} stored in ${run.runMs} ms, bare ${Math.round(bareRuns[i]!.ms)} ms, peak RSS ${run.report.maxRssMb} MB`,
    );
  }
  return {
    results,
    bareRuns,
    calls: urls.length,
    variants,
    ...(inCgroup && { inCgroup }),
    ...(floor && { floor: floor.result() }),
  };
}

/** One simulator process of `requests`, every engine's backfills against it. */
async function measureAll(
  ctx: BenchContext,
  requests: number,
  runs: number,
  extras: Extras,
): Promise<Map<EngineName, Measured>> {
  const sim = await startSimProcess([
    '--requests',
    String(requests),
    '--page-size',
    String(PAGE_SIZE),
    '--paging-churn',
    '0',
  ]);
  const out = new Map<EngineName, Measured>();
  try {
    for (const engine of ctx.engines.available) {
      try {
        out.set(engine.name, await measureSize(ctx, sim, engine, requests, runs, extras));
      } catch (error) {
        ctx.failed(CASE, engine.name, error);
      }
    }
  } finally {
    await sim.stop();
  }
  return out;
}

function figuresOf(
  ctx: BenchContext,
  engine: EngineName,
  small: Measured,
  large: Measured,
): Figure[] {
  const sizes = sizesOf(ctx);
  const [rateSmall, rateLarge, rssSmall, rssLarge, rssCgroup, growth, bound] = planFor(
    engine,
    sizes,
  );
  ctx.detail(`backfill.${engine}`, { small, large });
  const figures: Figure[] = [];
  const rssOf = (m: Measured) => m.results.map((r) => r.report.maxRssMb);
  for (const [measured, rateSpec, rssSpec] of [
    [small, rateSmall!, rssSmall!],
    [large, rateLarge!, rssLarge!],
  ] as const) {
    const rates = measured.results.map((r) => (r.stored * 1000) / r.runMs);
    const bareRates = measured.results.map((r, i) => (r.stored * 1000) / measured.bareRuns[i]!.ms);
    const ratioRuns = ratios(
      measured.bareRuns.map((b) => b.ms),
      measured.results.map((r) => r.runMs),
    );
    const simShare = median(measured.results.map((r) => r.simCpuMs / r.runMs));
    const peak = measured.results[0]!.report.peak;
    figures.push(
      figure(rateSpec, median(rates), {
        runs: rates,
        reference: { value: median(bareRates), runs: bareRates },
        ratio: median(ratioRuns),
        ratioRuns,
        note: `${median(measured.results.map((r) => r.stored)).toLocaleString('en-US')} stored, ${measured.calls.toLocaleString('en-US')} calls; simulator busy ${Math.round(simShare * 100)} % of the backfill`,
      }),
      figure(rssSpec, median(rssOf(measured)), {
        runs: rssOf(measured),
        note: `the backfill runs in a worker thread with a heap of its own, capped; the main thread's V8 heap at its peak ${peak.heapTotalMb} MB`,
      }),
    );
  }
  const smallRss = median(rssOf(small));
  const largeRss = median(rssOf(large));
  figures.push(
    figure(growth!, largeRss, {
      reference: { value: smallRss },
      ratio: largeRss / smallRss,
    }),
  );
  figures.push(boundFigure(bound!, small));
  const largeRate = median(large.results.map((r) => (r.stored * 1000) / r.runMs));
  const cgroupRun = large.inCgroup;
  if (cgroupRun && 'run' in cgroupRun) {
    const { run } = cgroupRun;
    figures.push(
      figure(rssCgroup!, run.report.maxRssMb, {
        note: `cgroup ${cgroupRun.version}; the worker's heap sized by V8 from the limit; rate ${Math.round((run.stored * 1000) / run.runMs)} req/s against ${Math.round(largeRate)} without the limit`,
      }),
    );
  } else if (cgroupRun) figures.push(notMeasured(rssCgroup!, cgroupRun.reason));
  for (const { flags, run } of large.variants) {
    figures.push(
      figure(
        specs(CASE, engine)(
          `backfill.rss.flags.${flags}`,
          null,
          `${engineLabel(engine)} backfill of ${sizes.large.toLocaleString('en-US')} with ${flags}: peak RSS`,
          'MB',
        ),
        run.report.maxRssMb,
        {
          note: `heap ${run.report.peak.heapTotalMb} MB; rate ${Math.round((run.stored * 1000) / run.runMs)} req/s against ${Math.round(largeRate)} with default flags`,
        },
      ),
    );
  }
  return figures;
}

/**
 * Row 5's bound: the floor's time beside the bare replay's, run by run. The ratio is bare /
 * max(bare, floor), the most row 5 can read while the writes go no faster than the floor's; the
 * note gives bare / (bare + floor), the most when fetching and writing take turns (better-sqlite3
 * writes on the thread that fetches and parses).
 */
function boundFigure(spec: FigureSpec, measured: Measured): Figure {
  const floor = measured.floor;
  if (!floor || floor.ms.length === 0) return notMeasured(spec, 'no floor run');
  const bare = measured.bareRuns.map((run) => run.ms);
  const overlapped = floor.ms.map((ms, i) => bare[i]! / Math.max(bare[i]!, ms));
  const inSequence = floor.ms.map((ms, i) => bare[i]! / (bare[i]! + ms));
  const ratio = (value: number) => value.toFixed(2);
  return figure(spec, median(floor.ms), {
    runs: floor.ms,
    reference: { value: median(bare), runs: bare },
    ratio: median(overlapped),
    ratioRuns: overlapped,
    note: `${floor.rows.toLocaleString('en-US')} rows; the floor takes ${ratio(median(floor.ms.map((ms, i) => ms / bare[i]!)))} times the bare replay; the most if fetching and writing take turns ${ratio(median(inSequence))}`,
  });
}

export const backfillCase: BenchCase = {
  name: CASE,
  plan: (ctx) => ctx.engineNames.flatMap((engine) => planFor(engine, sizesOf(ctx))),
  async run(ctx) {
    const sizes = sizesOf(ctx);
    const small = await measureAll(ctx, sizes.small, Math.min(ctx.runs, 3), {
      withVariants: false,
      withCgroup: false,
      withBound: true,
    });
    const large = await measureAll(ctx, sizes.large, 1, {
      withVariants: ctx.isMemoryProfile,
      withCgroup: true,
      withBound: false,
    });
    return ctx.engines.available.flatMap((engine) => {
      const s = small.get(engine.name);
      const l = large.get(engine.name);
      return s && l ? figuresOf(ctx, engine.name, s, l) : [];
    });
  },
};
