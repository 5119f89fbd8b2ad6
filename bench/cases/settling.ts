/**
 * Row 10 of issue 16 (issue 12's bench bullet): what settling costs in detail reads.
 *
 * The simulator is as rough as the service: last_updated written to the second, and 30 % of
 * edits followed by a second edit of the same request in the same instant (doubleEditRate). Its
 * driver makes rounds of random mutations (edits, state changes, new requests, requests gone);
 * the mirror polls until an idle cycle makes no detail call.
 *
 * - At once: the first cycle runs right after the mutations, the simulator's clock held still
 *   meanwhile, so it reads every changed record within the second of its last_updated,
 *   unsettled: the worst case, whatever the cycle's speed. The next cycle, once the clock has
 *   moved on past that second, reads those records again, once.
 * - A while later: the first cycle runs 2.5 s after the mutations (as a cycle mostly does after
 *   an edit): the records it reads are settled at once.
 *
 * The first cycle of a round reads each changed request once: the minimum. Reported: detail
 * reads over the round / that minimum, whose goal is at most 2 (at most one extra read per
 * edit); and the idle cycle at the end, which must make no detail call.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { forEachEngine, type BenchCase, type BenchContext } from '../lib/context.js';
import type { EngineHarness, EngineName } from '../lib/engines.js';
import { createMemoryClient, parseSnapshot } from '../lib/memory-client.js';
import { benchWindow, NOW_MS, openMirror } from '../lib/mirror.js';
import { figure, specs, type Figure } from '../lib/report.js';
import { startSimWorker } from '../lib/sim-host.js';
import { median } from '../lib/stats.js';

const CASE = 'settling';
const REQUESTS = 1_000;
const MUTATIONS = 40;
/** Past the second of any edit, with the Date header's truncation to the second. */
const SETTLE_WAIT_MS = 2_500;
const MAX_CYCLES = 6;

const roundsOf = (ctx: BenchContext) => (ctx.isQuick ? 1 : 3);

function planFor(engine: EngineName) {
  const spec = specs(CASE, engine);
  const label = `${REQUESTS.toLocaleString('en-US')} requests, rounds of ${MUTATIONS} mutations with same-second double edits`;
  return {
    atOnce: spec(
      'settling.at-once',
      10,
      `settling: detail reads per changed request, first read within the edit's second (worst case); ${label}`,
      'reads',
      { target: { op: '<=', value: 2 }, reference: { name: 'one read each', unit: 'reads' } },
    ),
    later: spec(
      'settling.later',
      10,
      `settling: detail reads per changed request, read ${SETTLE_WAIT_MS / 1000} s after the edits`,
      'reads',
      { target: { op: '<=', value: 2 }, reference: { name: 'one read each', unit: 'reads' } },
    ),
    idle: spec(
      'settling.idle',
      10,
      'settling: detail calls of the idle cycle after the rounds',
      'calls',
      {
        target: { op: '==', value: 0 },
      },
    ),
  };
}

async function measureEngine(ctx: BenchContext, engine: EngineHarness): Promise<Figure[]> {
  const plan = planFor(engine.name);
  const { fromMs, toMs } = benchWindow();
  const sim = await startSimWorker({
    seed: 23,
    requests: REQUESTS,
    pastDays: 2,
    futureDays: 10,
    pageSize: 50,
    nowMs: NOW_MS,
    // As rough as the service: 'second' last_updated and double edits (the defaults), said here.
    roughness: { lastUpdated: 'second', doubleEditRate: 0.3 },
  });
  const mirror = await openMirror(sim.url, await engine.create()).catch(async (error) => {
    await sim.close();
    throw error;
  });
  try {
    await mirror.seed(createMemoryClient(parseSnapshot(await sim.snapshot(fromMs, toMs))));
    const first = await mirror.cycle();
    if (first.counts.detailCalls !== 0)
      throw new Error('the first cycle after seeding was not idle');
    const rounds: {
      kind: 'at-once' | 'later';
      mutations: number;
      requests: number;
      reads: number[];
    }[] = [];
    for (let round = 0; round < roundsOf(ctx); round += 1) {
      for (const kind of ['at-once', 'later'] as const) {
        if (kind === 'at-once') await sim.pauseClock(true);
        const made = await sim.mutate(MUTATIONS);
        if (kind === 'later') await sleep(SETTLE_WAIT_MS);
        const reads: number[] = [];
        for (let cycle = 0; cycle < MAX_CYCLES; cycle += 1) {
          const { counts } = await mirror.cycle();
          reads.push(counts.detailCalls);
          if (kind === 'at-once' && cycle === 0) await sim.pauseClock(false);
          if (counts.detailCalls === 0) break;
          // Reads a cycle made 2.5 s after an edit are settled: the next cycle needs no wait.
          if (cycle === 0 && kind === 'at-once') await sleep(SETTLE_WAIT_MS);
          else if (cycle > 1) await sleep(SETTLE_WAIT_MS);
        }
        if (reads.at(-1) !== 0)
          throw new Error(`still reading details after ${MAX_CYCLES} cycles: ${reads.join(', ')}`);
        rounds.push({ kind, ...made, reads });
      }
    }
    const idle = await mirror.cycle();
    ctx.detail(`settling.${engine.name}`, { rounds, idleDetailCalls: idle.counts.detailCalls });
    const figures: Figure[] = [];
    for (const kind of ['at-once', 'later'] as const) {
      const of = rounds.filter((r) => r.kind === kind);
      const minimum = of.map((r) => r.reads[0]!);
      const total = of.map((r) => r.reads.reduce((a, b) => a + b, 0));
      const perRequest = total.map((t, i) => t / Math.max(1, minimum[i]!));
      ctx.progress(
        `  settling ${engine.name} ${kind}: reads by cycle ${of.map((r) => r.reads.join('+')).join(', ')} for ${of.map((r) => `${r.mutations} mutations`).join(', ')}`,
      );
      figures.push(
        figure(kind === 'at-once' ? plan.atOnce : plan.later, median(total), {
          runs: total,
          reference: { value: median(minimum), runs: minimum },
          ratio: median(perRequest),
          ratioRuns: perRequest,
          note: `${median(of.map((r) => r.mutations))} mutations on ${median(of.map((r) => r.requests))} requests per round`,
        }),
      );
    }
    figures.push(figure(plan.idle, idle.counts.detailCalls));
    return figures;
  } finally {
    await mirror.close();
    await sim.close();
  }
}

export const settlingCase: BenchCase = {
  name: CASE,
  plan: (ctx) => ctx.engineNames.flatMap((engine) => Object.values(planFor(engine))),
  run: (ctx) => forEachEngine(ctx, CASE, (engine) => measureEngine(ctx, engine)),
};
