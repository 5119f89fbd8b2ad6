/**
 * Rows 6 and 7 of issue 16: idle poll cycles against the simulator in a worker thread over
 * loopback, with the real client and the engine's database.
 *
 * 6. 1,000 requests: the idle cycle's wall time beside the bare fetch + parse of the same calls
 *    (lib/bare.ts), and its calls: one list call per partial-list state and chunk plus the
 *    awaiting pages, and no detail call (issue 12: settling leaves an idle cycle idle).
 * 7. 5,000 requests: our idle cycle beside the reference client's (lib/reference-client.ts) on
 *    the same simulator and the same requests, both already in sync; the bare cost as well.
 *
 * The mirror is seeded from the simulator's records through the backfill path without HTTP; the
 * first cycle over HTTP must then be idle, or the case fails. Arms alternate (ABC, CBA, ...).
 *
 * Every arm first runs WARM_UP_RUNS times untimed, alike: a daemon's idle cycle runs every
 * minute for as long as it runs, so what an operator lives with is the cycle once V8 has compiled
 * it, not its first few runs. Without the warm-up, five timed runs of row 6 read 1.25 to 1.31 of
 * bare in-process on one machine, and 1.11 to 1.14 once 30 had run; the bare replay's few lines
 * are compiled after a run or two, so cold runs weighed on our side only. Row 7's reference
 * client, which had one idle cycle before its timed ones, gets the same warm-up too.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { planChunks } from '../../src/sync/window.js';
import { createBareClient, replayUrls, type BareClient } from '../lib/bare.js';
import { forEachEngine, type BenchCase, type BenchContext } from '../lib/context.js';
import type { EngineHarness, EngineName } from '../lib/engines.js';
import { createMemoryClient, parseSnapshot } from '../lib/memory-client.js';
import { benchWindow, NOW_MS, openMirror, POLL_SETTINGS, type BenchMirror } from '../lib/mirror.js';
import { createReferenceClient } from '../lib/reference-client.js';
import { goalOf } from '../lib/goals.js';
import { figure, specs, type Figure } from '../lib/report.js';
import { startSimWorker, type SimWorker } from '../lib/sim-host.js';
import { interleave, median, ratios, timed } from '../lib/stats.js';

const CASE = 'poll';
/** Untimed runs of every arm before the timed ones (see the comment above). */
const WARM_UP_RUNS = 5;
const PAGE_SIZE = 50;
const PARTIAL_STATES = ['accepted', 'completed', 'canceled'] as const;

const sizesOf = (ctx: BenchContext) =>
  ctx.isQuick ? { idle: 1_000, reference: 1_000 } : { idle: 1_000, reference: 5_000 };

/** A simulator with `requests` requests (all inside the poll window) and a seeded mirror. */
export interface PollFixture {
  requests: number;
  sim: SimWorker;
  mirror: BenchMirror;
  bare: BareClient;
  /** Calls an idle cycle should make: one per partial-list state and chunk, plus the pages. */
  expectedListCalls: number;
  awaitingPages: number;
  /** URLs of the idle cycle's calls, for the bare replay. */
  idleUrls: string[];
  close(): Promise<void>;
}

export async function startFixture(
  ctx: BenchContext,
  engine: EngineHarness,
  requests: number,
): Promise<PollFixture> {
  const { fromMs, toMs } = benchWindow();
  // Pickup times spread over 2 days back and 10 ahead: every request lies in the 3 + 14 day window.
  const sim = await startSimWorker({
    seed: 7,
    requests,
    pastDays: 2,
    futureDays: 10,
    pageSize: PAGE_SIZE,
    nowMs: NOW_MS,
  });
  let mirror: BenchMirror | undefined;
  try {
    mirror = await openMirror(sim.url, await engine.create());
    const entries = parseSnapshot(await sim.snapshot(fromMs, toMs));
    const seeded = await timed(() => mirror!.seed(createMemoryClient(entries, PAGE_SIZE)));
    ctx.progress(
      `  ${engine.name}, ${requests} requests: seeded ${seeded.value.counts.requestsNew} in ${Math.round(seeded.ms)} ms`,
    );
    // The first cycle over HTTP takes the token and must find nothing to do.
    await sim.resetCalls();
    const { counts } = await mirror.cycle();
    if (counts.detailCalls !== 0 || counts.requestsNew + counts.requestsChanged !== 0) {
      throw new Error(`the first cycle after seeding was not idle: ${JSON.stringify(counts)}`);
    }
    const idleUrls = replayUrls(sim.url, await sim.calls());
    const census = await sim.census(fromMs, toMs);
    const stored = await mirror.store.read((tx) =>
      tx.requests.summariesInWindow(new Date(fromMs).toISOString(), new Date(toMs).toISOString()),
    );
    const awaitingPages = Math.max(1, Math.ceil((census.awaiting ?? 0) / PAGE_SIZE));
    let expectedListCalls = awaitingPages;
    for (const state of PARTIAL_STATES) {
      const times = stored
        .filter((row) => row.list_state === state && row.event_dt_utc)
        .map((row) => Date.parse(row.event_dt_utc!));
      expectedListCalls += planChunks(
        { fromMs, toMs },
        times,
        POLL_SETTINGS.listChunkRequests,
      ).length;
    }
    ctx.detail(`poll.${engine.name}.${requests}.census`, census);
    const bare = createBareClient(await sim.token());
    const opened = mirror;
    return {
      requests,
      sim,
      mirror,
      bare,
      expectedListCalls,
      awaitingPages,
      idleUrls,
      async close() {
        await bare.close();
        await opened.close();
        await sim.close();
      },
    };
  } catch (error) {
    await mirror?.close().catch(() => undefined);
    await sim.close();
    throw error;
  }
}

function planFor(engine: EngineName, sizes: { idle: number; reference: number }) {
  const spec = specs(CASE, engine);
  const n = sizes.idle.toLocaleString('en-US');
  const m = sizes.reference.toLocaleString('en-US');
  return {
    idle: spec('poll.idle', 6, `idle cycle, ${n} requests: wall / bare`, 'ms', {
      target: goalOf('poll.idle', engine),
      reference: { name: 'bare fetch + parse', unit: 'ms' },
    }),
    lists: spec('poll.idle.lists', 6, `idle cycle, ${n} requests: list calls`, 'calls'),
    details: spec('poll.idle.details', 6, `idle cycle, ${n} requests: detail calls`, 'calls', {
      target: { op: '==', value: 0 },
    }),
    reference: spec(
      'poll.reference',
      7,
      `idle cycle, ${m} requests: wall vs the reference client`,
      'ms',
      {
        target: goalOf('poll.reference', engine),
        reference: { name: 'reference client', unit: 'ms' },
      },
    ),
  };
}

async function idleFigures(
  ctx: BenchContext,
  engine: EngineHarness,
  fx: PollFixture,
): Promise<Figure[]> {
  const plan = planFor(engine.name, sizesOf(ctx));
  const { requests } = fx;
  {
    const listCalls: number[] = [];
    const detailCalls: number[] = [];
    const arms = [
      async () => {
        const { counts } = await fx.mirror.cycle();
        listCalls.push(counts.listCalls);
        detailCalls.push(counts.detailCalls);
      },
      () => fx.bare.replay(fx.idleUrls),
    ];
    await interleave(WARM_UP_RUNS, arms);
    listCalls.length = 0;
    detailCalls.length = 0;
    const [walls, bares] = await interleave(ctx.runs, arms);
    const ratioRuns = ratios(walls!, bares!);
    ctx.detail(`poll.idle.${engine.name}.${requests}`, {
      walls,
      bares,
      listCalls,
      detailCalls,
    });
    ctx.progress(
      `  idle ${engine.name} ${requests}: cycle ${Math.round(median(walls!))} ms, bare ${Math.round(median(bares!))} ms`,
    );
    return [
      figure(plan.idle, median(walls!), {
        runs: walls,
        reference: { value: median(bares!), runs: bares },
        ratio: median(ratioRuns),
        ratioRuns,
      }),
      figure(
        { ...plan.lists, target: { op: '==', value: fx.expectedListCalls } },
        median(listCalls),
        {
          runs: listCalls,
          note: `3 partial lists + ${fx.awaitingPages} awaiting pages`,
        },
      ),
      figure(plan.details, Math.max(...detailCalls), { runs: detailCalls }),
    ];
  }
}

async function referenceFigures(
  ctx: BenchContext,
  engine: EngineHarness,
  fx: PollFixture,
): Promise<Figure[]> {
  const plan = planFor(engine.name, sizesOf(ctx));
  const { requests } = fx;
  const dir = mkdtempSync(join(tmpdir(), 'transport-sync-bench-reference-'));
  const reference = createReferenceClient({
    url: fx.sim.url,
    dbPath: join(dir, 'reference.db'),
    now: () => NOW_MS,
  });
  try {
    // Its first sync, then an idle cycle: both clients in sync with the same simulator.
    const first = await timed(() => reference.cycle());
    const again = await reference.cycle();
    if (again.detailCalls !== 0)
      throw new Error(`the reference client's second cycle fetched ${again.detailCalls} details`);
    ctx.progress(
      `  reference client: first sync of ${reference.count()} requests in ${Math.round(first.ms)} ms (${first.value.detailCalls} details)`,
    );
    const ourCalls: number[] = [];
    const arms = [
      async () => {
        const { counts } = await fx.mirror.cycle();
        if (counts.detailCalls !== 0) throw new Error('our idle cycle fetched details');
        ourCalls.push(counts.listCalls);
      },
      async () => {
        const counts = await reference.cycle();
        if (counts.detailCalls !== 0) throw new Error("the reference's idle cycle fetched details");
      },
      () => fx.bare.replay(fx.idleUrls),
    ];
    await interleave(WARM_UP_RUNS, arms);
    ourCalls.length = 0;
    const [ours, theirs, bares] = await interleave(ctx.runs, arms);
    const ratioRuns = ratios(ours!, theirs!);
    const bareRatios = ratios(ours!, bares!);
    ctx.detail(`poll.reference.${engine.name}.${requests}`, {
      ours,
      reference: theirs,
      bares,
      ourListCalls: ourCalls,
      referenceListCalls: again.listCalls,
      referenceFirstSyncMs: first.ms,
    });
    ctx.progress(
      `  idle ${engine.name} ${requests}: ours ${Math.round(median(ours!))} ms, reference ${Math.round(median(theirs!))} ms, bare ${Math.round(median(bares!))} ms`,
    );
    const n = requests.toLocaleString('en-US');
    return [
      figure(plan.reference, median(ours!), {
        runs: ours,
        reference: { value: median(theirs!), runs: theirs },
        ratio: median(ratioRuns),
        ratioRuns,
        note: `the reference client keeps its own SQLite table; ${median(ourCalls)} list calls, the reference ${again.listCalls}`,
      }),
      figure(
        {
          ...specs(CASE, engine.name)(
            'poll.reference.bare',
            7,
            `idle cycle, ${n} requests: wall / bare`,
            'ms',
            {
              reference: { name: 'bare fetch + parse', unit: 'ms' },
            },
          ),
        },
        median(ours!),
        {
          runs: ours,
          reference: { value: median(bares!), runs: bares },
          ratio: median(bareRatios),
          ratioRuns: bareRatios,
        },
      ),
    ];
  } finally {
    reference.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export const pollCase: BenchCase = {
  name: CASE,
  plan: (ctx) => ctx.engineNames.flatMap((engine) => Object.values(planFor(engine, sizesOf(ctx)))),
  run: (ctx) =>
    forEachEngine(ctx, CASE, async (engine) => {
      const sizes = sizesOf(ctx);
      ctx.progress(`poll ${engine.name}: idle cycles at ${sizes.idle} and ${sizes.reference}`);
      const figures: Figure[] = [];
      const isShared = sizes.reference === sizes.idle;
      const fx = await startFixture(ctx, engine, sizes.idle);
      try {
        figures.push(...(await idleFigures(ctx, engine, fx)));
        if (isShared) figures.push(...(await referenceFigures(ctx, engine, fx)));
      } finally {
        await fx.close();
      }
      if (!isShared) {
        const large = await startFixture(ctx, engine, sizes.reference);
        try {
          figures.push(...(await referenceFigures(ctx, engine, large)));
        } finally {
          await large.close();
        }
      }
      return figures;
    }),
};
