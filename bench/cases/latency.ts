/**
 * Beyond issue 16's table (issue 8's case 3): 1,000 changed requests fetched with 50 ms of
 * simulated latency, 8 at a time. The detail phase (first detail call sent to last answered)
 * against 1,000 x 50 ms / 8: the concurrency is used, not lost to the store. On SQLite only; the
 * calls, not the engine, bound it.
 */
import type { BenchCase, BenchContext } from '../lib/context.js';
import { benchWindow, POLL_SETTINGS } from '../lib/mirror.js';
import { figure, specs } from '../lib/report.js';
import { median, ratios, timed } from '../lib/stats.js';
import { startFixture } from './poll.js';

const CASE = 'latency';
const LATENCY_MS = 50;
const PARTIAL_STATES = ['accepted', 'completed', 'canceled'];

const countOf = (ctx: BenchContext) => (ctx.isQuick ? 200 : 1_000);

function planFor(count: number) {
  const label = `${count.toLocaleString('en-US')} changed details, ${LATENCY_MS} ms latency, concurrency ${POLL_SETTINGS.concurrency}`;
  return specs(CASE, 'sqlite')('latency.phase', null, `${label}: detail phase / ideal`, 'ms', {
    target: { op: '<=', value: 1.3 },
    reference: { name: 'ideal', unit: 'ms' },
  });
}

export const latencyCase: BenchCase = {
  name: CASE,
  plan: (ctx) => (ctx.engineNames.includes('sqlite') ? [planFor(countOf(ctx))] : []),
  async run(ctx) {
    const engine = ctx.engines.get('sqlite');
    if (!engine) return [];
    const count = countOf(ctx);
    const idealMs = (count * LATENCY_MS) / POLL_SETTINGS.concurrency;
    ctx.progress(`latency: ${count} changed requests, ${LATENCY_MS} ms, concurrency 8`);
    const fx = await startFixture(ctx, engine, count * 2);
    const { fromMs, toMs } = benchWindow();
    const phases: number[] = [];
    const cycles: number[] = [];
    try {
      const ids = await fx.sim.pick(PARTIAL_STATES, count, fromMs, toMs);
      for (let run = 0; run < ctx.runs; run += 1) {
        await fx.sim.change(ids);
        fx.mirror.detailSpans.length = 0;
        await fx.sim.setLatency(LATENCY_MS);
        const cycle = await timed(() => fx.mirror.cycle());
        await fx.sim.setLatency(0);
        const spans = fx.mirror.detailSpans;
        const changed = cycle.value.counts.requestsChanged;
        if (spans.length !== count || changed !== count) {
          throw new Error(
            `changed ${count} requests: expected ${count} detail calls storing ${count} changes, made ${spans.length} calls storing ${changed}`,
          );
        }
        phases.push(
          Math.max(...spans.map((span) => span.endMs)) -
            Math.min(...spans.map((span) => span.startMs)),
        );
        cycles.push(cycle.ms);
      }
    } finally {
      await fx.close();
    }
    const ideal = phases.map(() => idealMs);
    const ratioRuns = ratios(phases, ideal);
    ctx.detail('latency', { phases, cycles, idealMs });
    return [
      figure(planFor(count), median(phases), {
        runs: phases,
        reference: { value: idealMs },
        ratio: median(ratioRuns),
        ratioRuns,
        note: `whole cycle incl. list calls ${Math.round(median(cycles)).toLocaleString('en-US')} ms`,
      }),
    ];
  },
};
