/**
 * Case 5: `transport-sync backfill` as users run it, in its own process, against the CLI
 * simulator in another: requests per second against the bare rate of fetching and parsing the
 * same pages, and the backfill's peak RSS alone (getrusage of the child).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { ChildReport } from '../child/rss-report.js';
import { createBareClient, replayUrls } from '../lib/bare.js';
import type { BenchContext } from '../lib/context.js';
import { runCliChild, startSimProcess, type SimProcess } from '../lib/processes.js';
import { figure, type Figure } from '../lib/report.js';
import type { SimCall } from '../lib/sim-protocol.js';
import { median, round, timed } from '../lib/stats.js';

const BACKFILL = '5 backfill';
const DAY_MS = 86_400_000;
const PAGE_SIZE = 50;

/** One backfill run and the bare replay of its calls. */
interface BackfillRun {
  stored: number;
  runMs: number;
  childWallMs: number;
  bareMs: number;
  calls: number;
  simCpuMs: number;
  simCpuBareMs: number;
  report: ChildReport;
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

async function runOnce(
  sim: SimProcess,
  ctx: BenchContext,
  nodeArgs: string[] = [],
): Promise<BackfillRun> {
  const dir = mkdtempSync(join(tmpdir(), 'transport-sync-bench-backfill-'));
  const dbPath = join(dir, 'mirror.db');
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
        TRANSPORT_RATE_LIMIT_PER_SEC: '0',
        TRANSPORT_DB: dbPath,
        LOG_LEVEL: 'warn',
      },
      nodeArgs,
    );
    const simCpuMs = sim.cpuMs() - cpuBefore;
    if (child.code !== 0) throw new Error(`backfill exited ${child.code}: ${child.stderr}`);
    const db = new Database(dbPath, { readonly: true });
    const run = db
      .prepare(
        `SELECT started_at, finished_at, requests_new FROM sync_runs
         WHERE kind = 'backfill' ORDER BY run_id DESC LIMIT 1`,
      )
      .get() as { started_at: string; finished_at: string; requests_new: number };
    db.close();
    const runMs = Date.parse(run.finished_at) - Date.parse(run.started_at);
    const calls = (await sim.control('GET', '/calls/')) as SimCall[];
    const urls = replayUrls(sim.url, calls);
    const bare = createBareClient(await token(sim.url));
    const cpuBareBefore = sim.cpuMs();
    const bareRun = await timed(() => bare.replay(urls));
    const simCpuBareMs = sim.cpuMs() - cpuBareBefore;
    await bare.close();
    ctx.progress(
      `  backfill: ${run.requests_new} in ${runMs} ms, bare ${Math.round(bareRun.ms)} ms, peak RSS ${child.report.maxRssMb} MB ${nodeArgs.join(' ')}`,
    );
    return {
      stored: run.requests_new,
      runMs,
      childWallMs: Math.round(child.wallMs),
      bareMs: Math.round(bareRun.ms),
      calls: urls.length,
      simCpuMs,
      simCpuBareMs,
      report: child.report,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
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

/** Runs the backfill `runs` times against a simulator of `requests` requests. */
async function measure(
  ctx: BenchContext,
  requests: number,
  runs: number,
  variants: { label: string; nodeArgs: string[] }[] = [],
) {
  ctx.progress(`backfill: ${requests} requests, ${runs} run(s)`);
  const sim = await startSimProcess([
    '--requests',
    String(requests),
    '--page-size',
    String(PAGE_SIZE),
  ]);
  try {
    const results: BackfillRun[] = [];
    for (let run = 0; run < runs; run += 1) results.push(await runOnce(sim, ctx));
    const experiments: Record<string, BackfillRun> = {};
    for (const variant of variants)
      experiments[variant.label] = await runOnce(sim, ctx, variant.nodeArgs);
    return { results, experiments };
  } finally {
    await sim.stop();
  }
}

function summarize(results: BackfillRun[]) {
  const rates = results.map((r) => (r.stored * 1000) / r.runMs);
  const bareRates = results.map((r) => (r.stored * 1000) / r.bareMs);
  const ratios = results.map((r) => r.bareMs / r.runMs);
  const rss = results.map((r) => r.report.maxRssMb);
  return { rates, bareRates, ratios, rss, stored: median(results.map((r) => r.stored)) };
}

/**
 * V8 flags tried on the large backfill (--memory) to see what its RSS is made of: a smaller young
 * generation, a capped old space, and both capped hard (the live heap: what is really retained).
 */
const MEMORY_VARIANTS = [
  { label: 'max-semi-space-size=4', nodeArgs: ['--max-semi-space-size=4'] },
  {
    label: 'max-semi-space-size=4 --max-old-space-size=128',
    nodeArgs: ['--max-semi-space-size=4', '--max-old-space-size=128'],
  },
  {
    label: 'max-semi-space-size=1 --max-old-space-size=64',
    nodeArgs: ['--max-semi-space-size=1', '--max-old-space-size=64'],
  },
];

/** Case 5 at 10,000 and 100,000 requests. */
export async function backfillCase(ctx: BenchContext): Promise<Figure[]> {
  const small = ctx.isQuick ? 2_000 : 10_000;
  const large = ctx.isQuick ? 20_000 : 100_000;
  const smallRuns = await measure(ctx, small, Math.min(ctx.runs, 3));
  const largeRuns = await measure(ctx, large, 1, ctx.isMemoryProfile ? MEMORY_VARIANTS : []);
  const s = summarize(smallRuns.results);
  const l = summarize(largeRuns.results);
  ctx.detail('backfill', { small: smallRuns, large: largeRuns });
  const label = (n: number) => `${n.toLocaleString('en-US')} requests`;
  const figures: Figure[] = [];
  for (const [n, sum, all] of [
    [small, s, smallRuns.results],
    [large, l, largeRuns.results],
  ] as const) {
    const simCpuShare = median(all.map((r) => r.simCpuMs / r.runMs));
    figures.push(
      figure(
        BACKFILL,
        `${label(n)} (${sum.stored.toLocaleString('en-US')} stored): rate`,
        median(sum.rates),
        'req/s',
        {
          runs: sum.rates,
        },
      ),
      figure(
        BACKFILL,
        `${label(n)}: bare fetch + parse rate of the same calls`,
        median(sum.bareRates),
        'req/s',
        {
          runs: sum.bareRates,
        },
      ),
      figure(BACKFILL, `${label(n)}: rate / bare rate`, round(median(sum.ratios)), 'ratio', {
        target: { op: '>=', value: 0.8 },
        runs: sum.ratios,
      }),
      figure(
        BACKFILL,
        `${label(n)}: simulator CPU / backfill wall time`,
        round(simCpuShare),
        'ratio',
        {
          note: 'share of the run the simulator process was busy',
        },
      ),
      figure(BACKFILL, `${label(n)}: peak RSS of the backfill process`, median(sum.rss), 'MB', {
        ...(n === large && { target: { op: '<=' as const, value: 200 } }),
        runs: sum.rss,
      }),
    );
  }
  figures.push(
    figure(
      BACKFILL,
      `peak RSS ${label(large)} / ${label(small)}`,
      round(median(l.rss) / median(s.rss)),
      'ratio',
      {
        target: { op: '<=', value: 1.3 },
      },
    ),
  );
  const base = largeRuns.results[0]!;
  figures.push(
    figure(
      BACKFILL,
      `${label(large)}: V8 heap at its peak (total / used)`,
      base.report.peak.heapTotalMb,
      'MB',
      {
        note: `used ${base.report.peak.heapUsedMb} MB; RSS outside the heap ${round(base.report.maxRssMb - base.report.peak.heapTotalMb, 0)} MB`,
      },
    ),
  );
  for (const [name, run] of Object.entries(largeRuns.experiments)) {
    figures.push(
      figure(BACKFILL, `${label(large)} with --${name}: peak RSS`, run.report.maxRssMb, 'MB', {
        note: `heap ${run.report.peak.heapTotalMb} MB; rate ${Math.round((run.stored * 1000) / run.runMs)} req/s vs ${Math.round((base.stored * 1000) / base.runMs)}`,
      }),
    );
  }
  return figures;
}
