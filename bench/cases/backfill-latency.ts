/**
 * Beyond issue 16's table: `transport-sync backfill` as users run it, a process of its own with
 * the default settings (TRANSPORT_CONCURRENCY 4), over the simulator's whole range with 50 ms
 * added to every call, against the ideal: its calls x 50 ms / 4, every call slot busy from the
 * first call to the last. What the service's latency, not the engine, makes of a backfill: a
 * window's passes are mostly one call after another, so the windows imported at once are what
 * fill the slots (src/sync/backfill.ts). SQLite only; the calls bound it.
 */
import { windowsAtOnce } from '../../src/sync/backfill.js';
import type { BenchCase, BenchContext } from '../lib/context.js';
import { startSimProcess } from '../lib/processes.js';
import { figure, specs } from '../lib/report.js';
import { median, ratios } from '../lib/stats.js';
import { backfillOnce, type BackfillRun } from './backfill.js';

const CASE = 'backfill-latency';
const LATENCY_MS = 50;
/** TRANSPORT_CONCURRENCY's default: the backfill runs without it set. */
const CONCURRENCY = 4;

const sizeOf = (ctx: BenchContext) => (ctx.isQuick ? 500 : 2_000);

function planFor(requests: number) {
  return specs(CASE, 'sqlite')(
    'backfill.latency',
    null,
    `backfill of ${requests.toLocaleString('en-US')} requests, ${LATENCY_MS} ms a call, concurrency ${CONCURRENCY}: wall / ideal`,
    'ms',
    { reference: { name: 'ideal', unit: 'ms' } },
  );
}

export const backfillLatencyCase: BenchCase = {
  name: CASE,
  plan: (ctx) => (ctx.engineNames.includes('sqlite') ? [planFor(sizeOf(ctx))] : []),
  async run(ctx) {
    const engine = ctx.engines.get('sqlite');
    if (!engine) return [];
    const requests = sizeOf(ctx);
    const runs = Math.min(ctx.runs, 2);
    ctx.progress(`backfill-latency: ${requests} requests, ${LATENCY_MS} ms a call, ${runs} run(s)`);
    const sim = await startSimProcess([
      '--requests',
      String(requests),
      '--page-size',
      '50',
      '--paging-churn',
      '0',
      '--latency',
      String(LATENCY_MS),
    ]);
    const done: BackfillRun[] = [];
    const idealMs: number[] = [];
    try {
      for (let run = 0; run < runs; run += 1) {
        const { run: result, urls } = await backfillOnce(sim, engine);
        done.push(result);
        idealMs.push((urls.length * LATENCY_MS) / CONCURRENCY);
        ctx.progress(
          `  ${result.stored} stored in ${result.runMs} ms, ${urls.length} calls, ideal ${idealMs.at(-1)} ms`,
        );
      }
    } finally {
      await sim.stop();
    }
    const wallMs = done.map((run) => run.runMs);
    const ratioRuns = ratios(wallMs, idealMs);
    return [
      figure(planFor(requests), median(wallMs), {
        runs: wallMs,
        reference: { value: median(idealMs), runs: idealMs },
        ratio: median(ratioRuns),
        ratioRuns,
        note: `${median(done.map((run) => run.stored)).toLocaleString('en-US')} stored; ${windowsAtOnce(CONCURRENCY)} windows at once`,
      }),
    ];
  },
};
