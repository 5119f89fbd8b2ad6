/**
 * Row 9 of issue 16: a first sync of 300 requests with the daemon's default settings,
 * `transport-sync sync` as a process of its own (no rate cap, concurrency 4, into a new
 * database), beside the reference client's first sync of the same 300 requests, also a process
 * of its own (lib/reference-client.ts, concurrency 8, a new SQLite file). Wall time of each
 * process, start to exit, alternating.
 *
 * The simulator runs in a worker thread on the system clock, its 300 requests spread 2 days back
 * and 10 ahead: all inside the default poll window. Nothing changes in it between runs (no
 * mutations, no paging churn), so every first sync finds the same requests.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { forEachEngine, type BenchCase } from '../lib/context.js';
import type { BenchDb, EngineHarness, EngineName } from '../lib/engines.js';
import { runCliChild, runNodeChild, type ChildRun } from '../lib/processes.js';
import { goalOf } from '../lib/goals.js';
import { figure, specs, type Figure } from '../lib/report.js';
import { startSimWorker } from '../lib/sim-host.js';
import { interleave, median, ratios } from '../lib/stats.js';

const CASE = 'first-sync';
const REQUESTS = 300;

function planFor(engine: EngineName) {
  return specs(CASE, engine)(
    'first-sync',
    9,
    `first sync of ${REQUESTS} requests with default settings (\`transport-sync sync\`)`,
    'ms',
    { target: goalOf('first-sync', engine), reference: { name: 'reference client', unit: 'ms' } },
  );
}

const referenceScript = () => fileURLToPath(new URL('../lib/reference-client.js', import.meta.url));

async function measureEngine(
  engine: EngineHarness,
  url: string,
  runs: number,
  progress: (message: string) => void,
): Promise<Figure[]> {
  const ours: ChildRun[] = [];
  const theirs: { stored: number; detailCalls: number; listCalls: number }[] = [];
  let ourDb: BenchDb | undefined;
  let dir: string | undefined;
  const env = (location: string) => ({
    TRANSPORT_AUTH_URL: url,
    TRANSPORT_HUB_URL: url,
    TRANSPORT_BASE_URL: url,
    TRANSPORT_CLIENT_ID: 'demo-client',
    TRANSPORT_CLIENT_SECRET: 'demo-secret',
    TRANSPORT_DB: location,
  });
  const oursLocation = async () => {
    await ourDb?.remove();
    if (engine.name === 'sqlite') {
      // A path where nothing is yet: the first sync creates and migrates the file, as users see.
      const location = join(mkdtempSync(join(tmpdir(), 'transport-sync-bench-sync-')), 'mirror.db');
      ourDb = {
        engine: 'sqlite',
        location,
        open: () => Promise.reject(new Error('not opened by the bench')),
        close: async () => undefined,
        remove: async () => rmSync(join(location, '..'), { recursive: true, force: true }),
      };
    } else ourDb = await engine.create();
    return ourDb.location;
  };
  let nextLocation = '';
  try {
    const [ourMs, theirMs] = await interleave(
      runs,
      [
        async () => {
          const run = await runCliChild(['sync'], env(nextLocation));
          if (run.code !== 0)
            throw new Error(`transport-sync sync exited ${run.code}: ${run.stdout}${run.stderr}`);
          ours.push(run);
        },
        async () => {
          const run = await runNodeChild(
            referenceScript(),
            ['--url', url, '--db', join(dir!, 'reference.db')],
            {},
          );
          if (run.code !== 0) throw new Error(`reference client exited ${run.code}: ${run.stderr}`);
          theirs.push(JSON.parse(run.stdout) as (typeof theirs)[number]);
        },
      ],
      async (arm) => {
        if (arm === 0) nextLocation = await oursLocation();
        else {
          if (dir) rmSync(dir, { recursive: true, force: true });
          dir = mkdtempSync(join(tmpdir(), 'transport-sync-bench-reference-'));
        }
      },
    );
    const summary = /sync ok: (\d+) seen, (\d+) new.*?(\d+) list and (\d+) detail calls/.exec(
      ours[0]!.stdout,
    );
    const ourNew = Number(summary?.[2]);
    if (!summary || ourNew !== theirs[0]!.stored) {
      throw new Error(
        `the two first syncs stored different requests: ours "${ours[0]!.stdout.trim()}", the reference ${JSON.stringify(theirs[0])}`,
      );
    }
    const ratioRuns = ratios(ourMs!, theirMs!);
    progress(
      `  first sync ${engine.name}: ours ${Math.round(median(ourMs!))} ms, reference ${Math.round(median(theirMs!))} ms (${ourNew} requests; ours ${summary[3]} list + ${summary[4]} detail calls, the reference ${theirs[0]!.listCalls} + ${theirs[0]!.detailCalls})`,
    );
    return [
      figure(planFor(engine.name), median(ourMs!), {
        runs: ourMs,
        reference: { value: median(theirMs!), runs: theirMs },
        ratio: median(ratioRuns),
        ratioRuns,
        note: `process start to exit; ${ourNew} requests stored by each; ours ${summary[3]} list + ${summary[4]} detail calls at concurrency 4, the reference ${theirs[0]!.listCalls} + ${theirs[0]!.detailCalls} at 8`,
      }),
    ];
  } finally {
    await ourDb?.remove();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
}

export const firstSyncCase: BenchCase = {
  name: CASE,
  plan: (ctx) => ctx.engineNames.map(planFor),
  async run(ctx) {
    const sim = await startSimWorker({
      seed: 5,
      requests: REQUESTS,
      pastDays: 2,
      futureDays: 10,
      pageSize: 50,
      nowMs: Date.now(),
      clock: 'real',
    });
    try {
      return await forEachEngine(ctx, CASE, (engine) =>
        measureEngine(engine, sim.url, ctx.runs, ctx.progress),
      );
    } finally {
      await sim.close();
    }
  },
};
