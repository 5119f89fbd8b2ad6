/**
 * Cases 1 to 3 of issue 8, against the simulator in a worker thread over loopback, with a real
 * SQLite file: the idle cycle and its bare cost, changed cycles, and the latency-bound fetch.
 */
import { planChunks } from '../../src/sync/window.js';
import { createBareClient, replayUrls, type BareClient } from '../lib/bare.js';
import type { BenchContext } from '../lib/context.js';
import { createMemoryClient, parseSnapshot } from '../lib/memory-client.js';
import { benchWindow, NOW_MS, openMirror, POLL_SETTINGS, type BenchMirror } from '../lib/mirror.js';
import { figure, type Figure } from '../lib/report.js';
import { startSimWorker, type SimWorker } from '../lib/sim-host.js';
import { median, round, sideBySide, timed } from '../lib/stats.js';

const PAGE_SIZE = 50;
const PARTIAL_STATES = ['accepted', 'completed', 'canceled'] as const;
const IDLE = '1 idle cycle';
const CHANGED = '2 changed cycle';
const LATENCY = '3 latency-bound fetch';

/** A simulator with `requests` requests (all inside the poll window) and a seeded mirror. */
interface PollFixture {
  requests: number;
  sim: SimWorker;
  mirror: BenchMirror;
  bare: BareClient;
  /** Calls an idle cycle should make: one per partial-list state and chunk, plus the pages. */
  expectedListCalls: number;
  /** URLs of the idle cycle's calls, for the bare replay. */
  idleUrls: string[];
  close(): Promise<void>;
}

async function startFixture(ctx: BenchContext, requests: number): Promise<PollFixture> {
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
  const mirror = await openMirror(sim.url);
  const entries = parseSnapshot(await sim.snapshot(fromMs, toMs));
  const seeded = await timed(() => mirror.seed(createMemoryClient(entries, PAGE_SIZE)));
  ctx.progress(
    `  ${requests} requests: seeded ${seeded.value.counts.requestsNew} in ${Math.round(seeded.ms)} ms`,
  );
  // The first cycle over HTTP takes the token and must find nothing to do.
  await sim.resetCalls();
  const warm = await mirror.cycle();
  const { counts } = warm;
  if (counts.detailCalls !== 0 || counts.requestsNew + counts.requestsChanged !== 0) {
    throw new Error(`the warm-up cycle after seeding was not idle: ${JSON.stringify(counts)}`);
  }
  const idleUrls = replayUrls(sim.url, await sim.calls());
  const census = await sim.census(fromMs, toMs);
  const stored = await mirror.store.read((tx) =>
    tx.requests.summariesInWindow(new Date(fromMs).toISOString(), new Date(toMs).toISOString()),
  );
  let expectedListCalls = Math.max(1, Math.ceil((census.awaiting ?? 0) / PAGE_SIZE));
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
  ctx.detail(`poll.${requests}.census`, census);
  const bare = createBareClient(await sim.token());
  return {
    requests,
    sim,
    mirror,
    bare,
    expectedListCalls,
    idleUrls,
    async close() {
      await bare.close();
      await mirror.close();
      await sim.close();
    },
  };
}

async function idleFigures(ctx: BenchContext, fx: PollFixture): Promise<Figure[]> {
  const listCalls: number[] = [];
  const detailCalls: number[] = [];
  const result = await sideBySide(
    ctx.runs,
    async () => {
      const { counts } = await fx.mirror.cycle();
      listCalls.push(counts.listCalls);
      detailCalls.push(counts.detailCalls);
    },
    () => fx.bare.replay(fx.idleUrls),
  );
  const n = fx.requests.toLocaleString('en-US');
  ctx.detail(`idle.${fx.requests}`, { ...result, listCalls, detailCalls });
  ctx.progress(
    `  idle ${n}: cycle ${Math.round(median(result.a))} ms, bare ${Math.round(median(result.b))} ms`,
  );
  return [
    figure(IDLE, `${n} requests: list calls per cycle`, median(listCalls), 'calls', {
      target: { op: '==', value: fx.expectedListCalls },
      note: 'one per partial-list state + awaiting pages',
    }),
    figure(IDLE, `${n} requests: detail calls per cycle`, Math.max(...detailCalls), 'calls', {
      target: { op: '==', value: 0 },
    }),
    figure(IDLE, `${n} requests: wall time`, median(result.a), 'ms', { runs: result.a }),
    figure(IDLE, `${n} requests: bare fetch + parse of the same calls`, median(result.b), 'ms', {
      runs: result.b,
    }),
    figure(IDLE, `${n} requests: wall / bare`, round(median(result.ratios)), 'ratio', {
      target: { op: '<=', value: 1.5 },
      runs: result.ratios,
    }),
  ];
}

/** Changes `share` of the fixture's requests (partial-list states) before each cycle. */
async function changedFigures(
  ctx: BenchContext,
  fx: PollFixture,
  share: number,
): Promise<Figure[]> {
  const { fromMs, toMs } = benchWindow();
  const count = Math.round(fx.requests * share);
  const ids = await fx.sim.pick([...PARTIAL_STATES], count, fromMs, toMs);
  const walls: number[] = [];
  const bares: number[] = [];
  const perChanged: number[] = [];
  const listCalls: number[] = [];
  const detailCalls: number[] = [];
  for (let run = 0; run < ctx.runs; run += 1) {
    await fx.sim.change(ids);
    await fx.sim.resetCalls();
    const cycle = await timed(() => fx.mirror.cycle());
    const { counts } = cycle.value;
    if (counts.requestsChanged !== count) {
      throw new Error(`changed ${count} requests, the cycle stored ${counts.requestsChanged}`);
    }
    walls.push(cycle.ms);
    listCalls.push(counts.listCalls);
    detailCalls.push(counts.detailCalls);
    perChanged.push(counts.detailCalls / count);
    // The bare cost of the same calls: lists one after another, details 8 at a time.
    const calls = await fx.sim.calls();
    const lists = replayUrls(
      fx.sim.url,
      calls.filter((call) => call.endpoint !== 'detail'),
    );
    const details = replayUrls(
      fx.sim.url,
      calls.filter((call) => call.endpoint === 'detail'),
    );
    const bare = await timed(async () => {
      await fx.bare.replay(lists);
      await fx.bare.replay(details, POLL_SETTINGS.concurrency);
    });
    bares.push(bare.ms);
  }
  const n = fx.requests.toLocaleString('en-US');
  const label = `${n} requests, ${Math.round(share * 100)}% (${count}) changed`;
  const ratios = walls.map((wall, i) => wall / bares[i]!);
  ctx.detail(`changed.${fx.requests}.${share}`, { walls, bares, listCalls, detailCalls });
  ctx.progress(`  ${label}: cycle ${Math.round(median(walls))} ms`);
  return [
    figure(
      CHANGED,
      `${label}: detail calls / changed requests`,
      round(median(perChanged)),
      'ratio',
      {
        target: { op: '==', value: 1 },
        runs: perChanged,
      },
    ),
    figure(CHANGED, `${label}: list calls per cycle`, median(listCalls), 'calls', {
      target: { op: '==', value: fx.expectedListCalls },
    }),
    figure(CHANGED, `${label}: detail calls per cycle`, median(detailCalls), 'calls'),
    figure(CHANGED, `${label}: wall time`, median(walls), 'ms', { runs: walls }),
    figure(CHANGED, `${label}: wall / bare`, round(median(ratios)), 'ratio', {
      runs: ratios,
      note: 'bare: the same calls, details 8 at a time',
    }),
  ];
}

/** Cases 1 and 2: idle cycles at each size, changed cycles at 1,000 and 10,000. */
export async function pollCases(ctx: BenchContext): Promise<Figure[]> {
  const sizes = ctx.isQuick ? [1_000, 5_000] : [1_000, 10_000, 50_000];
  const figures: Figure[] = [];
  const changed: Figure[] = [];
  for (const requests of sizes) {
    ctx.progress(`poll: ${requests} requests`);
    const fx = await startFixture(ctx, requests);
    try {
      // At 50,000 one idle cycle takes seconds, most of it the simulator sorting each page.
      const runs = requests >= 50_000 ? Math.min(ctx.runs, 3) : ctx.runs;
      figures.push(...(await idleFigures({ ...ctx, runs }, fx)));
      if (requests <= 10_000) changed.push(...(await changedFigures(ctx, fx, 0.01)));
      if (requests === sizes[1]) changed.push(...(await changedFigures(ctx, fx, 0.1)));
    } finally {
      await fx.close();
    }
  }
  return [...figures, ...changed];
}

/**
 * Case 3: 1,000 changed requests fetched with 50 ms of simulated latency, 8 at a time. The
 * detail phase (first detail call sent to last answered) against 1,000 x 50 ms / 8.
 */
export async function latencyCase(ctx: BenchContext): Promise<Figure[]> {
  const count = ctx.isQuick ? 200 : 1_000;
  const latencyMs = 50;
  const idealMs = (count * latencyMs) / POLL_SETTINGS.concurrency;
  ctx.progress(`latency: ${count} changed requests, ${latencyMs} ms, concurrency 8`);
  const fx = await startFixture(ctx, count * 2);
  const { fromMs, toMs } = benchWindow();
  const phases: number[] = [];
  const cycles: number[] = [];
  try {
    const ids = await fx.sim.pick([...PARTIAL_STATES], count, fromMs, toMs);
    for (let run = 0; run < ctx.runs; run += 1) {
      await fx.sim.change(ids);
      fx.mirror.detailSpans.length = 0;
      await fx.sim.setLatency(latencyMs);
      const cycle = await timed(() => fx.mirror.cycle());
      await fx.sim.setLatency(0);
      const spans = fx.mirror.detailSpans;
      if (spans.length !== count || cycle.value.counts.requestsChanged !== count) {
        throw new Error(`expected ${count} detail calls, made ${spans.length}`);
      }
      const phase =
        Math.max(...spans.map((span) => span.endMs)) -
        Math.min(...spans.map((span) => span.startMs));
      phases.push(phase);
      cycles.push(cycle.ms);
    }
  } finally {
    await fx.close();
  }
  const ratios = phases.map((phase) => phase / idealMs);
  ctx.detail('latency', { phases, cycles, idealMs });
  const label = `${count.toLocaleString('en-US')} details, ${latencyMs} ms latency, concurrency 8`;
  return [
    figure(LATENCY, `${label}: detail phase`, median(phases), 'ms', { runs: phases }),
    figure(
      LATENCY,
      `${label}: detail phase / ideal (${idealMs.toLocaleString('en-US')} ms)`,
      round(median(ratios)),
      'ratio',
      {
        target: { op: '<=', value: 1.3 },
        runs: ratios,
      },
    ),
    figure(LATENCY, `${label}: whole cycle incl. list calls`, median(cycles), 'ms', {
      runs: cycles,
    }),
  ];
}
