/**
 * `npm run bench`: every row of issue 16's table, on SQLite and on PostgreSQL, each figure beside
 * its floor, bare cost or reference client measured in the same run. Prints the table; a full run
 * also writes bench/results.json, the table in docs/performance.md and the plots in bench/plots/.
 * Its options: USAGE below (`npm run bench -- --help`).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { backfillCase } from './cases/backfill.js';
import { backfillLatencyCase } from './cases/backfill-latency.js';
import { copyCase } from './cases/copy.js';
import { feedLatencyCase } from './cases/feed-latency.js';
import { firstSyncCase } from './cases/first-sync.js';
import { latencyCase } from './cases/latency.js';
import { pollCase } from './cases/poll.js';
import { settlingCase } from './cases/settling.js';
import { storeCase } from './cases/store.js';
import { webhookCase } from './cases/webhooks.js';
import type { BenchCase, BenchContext } from './lib/context.js';
import { openEngines, type EngineName } from './lib/engines.js';
import { describeMachine } from './lib/machine.js';
import { repoRoot } from './lib/paths.js';
import {
  machineLine,
  markdownTable,
  notMeasured,
  replaceSection,
  summaryTable,
  writeJson,
  type Figure,
  type Results,
} from './lib/report.js';
import { drawPlots } from './plot.js';
import { withTodaysGoal } from './lib/goals.js';

const CASES: BenchCase[] = [
  storeCase,
  pollCase,
  settlingCase,
  firstSyncCase,
  backfillCase,
  copyCase,
  latencyCase,
  backfillLatencyCase,
  webhookCase,
  feedLatencyCase,
];
const ENGINES: EngineName[] = ['sqlite', 'postgres'];

const USAGE = `Usage: npm run bench -- [options]

Options:
  --quick            small sizes, 2 runs: checks the bench itself (printed only)
  --only a,b         some cases (printed only): ${CASES.map((c) => c.name).join(', ')}
  --engines a,b      ${ENGINES.join(', ')} (default both)
  --runs N           runs per figure (default 5)
  --memory           also the backfill under V8 memory flags (what its RSS is made of)
  --no-write         print only
  --json FILE        also write this run's results to FILE (any run, --quick too)
  --render           the table and plots of bench/results.json again, judged by today's goals
                     (bench/lib/goals.ts), without measuring
  --help             this text`;

/** The command line's options; a mistyped one is reported with the usage, not a stack trace. */
function options() {
  try {
    return parseArgs({
      options: {
        quick: { type: 'boolean', default: false },
        memory: { type: 'boolean', default: false },
        only: { type: 'string' },
        engines: { type: 'string' },
        runs: { type: 'string' },
        'no-write': { type: 'boolean', default: false },
        json: { type: 'string' },
        render: { type: 'boolean', default: false },
        help: { type: 'boolean', default: false },
      },
    }).values;
  } catch (error) {
    console.error(`bench: ${(error as Error).message}\n\n${USAGE}`);
    process.exit(2);
  }
}

async function main(): Promise<void> {
  const values = options();
  if (values.help) {
    console.log(USAGE);
    return;
  }
  if (values.render) {
    await render();
    return;
  }
  const names = values.only ? values.only.split(',').map((name) => name.trim()) : null;
  const unknown = (names ?? []).filter((name) => !CASES.some((c) => c.name === name));
  const engineNames = values.engines
    ? (values.engines.split(',').map((name) => name.trim()) as EngineName[])
    : ENGINES;
  const badEngine = engineNames.filter((name) => !ENGINES.includes(name));
  if (unknown.length > 0 || badEngine.length > 0) {
    console.error(
      `unknown ${unknown.length > 0 ? `case ${unknown.join(', ')}` : `engine ${badEngine.join(', ')}`}; cases: ${CASES.map((c) => c.name).join(', ')}; engines: ${ENGINES.join(', ')}`,
    );
    process.exitCode = 2;
    return;
  }
  const cases = CASES.filter((c) => !names || names.includes(c.name));
  const machine = describeMachine();
  const date = new Date().toISOString();
  const details: Record<string, unknown> = {};
  const failures = new Map<string, string>();
  const engines = await openEngines(engineNames);
  const progress = (message: string) => process.stderr.write(`${message}\n`);
  for (const [engine, reason] of Object.entries(engines.unavailable))
    progress(`${engine}: ${reason}`);
  // Ctrl-C: throw the PostgreSQL databases of this run away before going.
  const onSignal = () => {
    progress('interrupted: dropping the databases of this run');
    // Dropping them cuts the connections still at work: their errors no longer matter.
    process.on('uncaughtException', () => undefined);
    process.on('unhandledRejection', () => undefined);
    void engines.close().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  const ctx: BenchContext = {
    runs: values.runs ? Number(values.runs) : values.quick ? 2 : 5,
    isQuick: values.quick,
    isMemoryProfile: values.memory,
    engineNames,
    engines,
    progress,
    detail: (key, value) => {
      details[key] = value;
    },
    failed: (caseName, engine, error) => {
      const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
      progress(`case ${caseName}${engine ? ` on ${engine}` : ''} failed: ${message}`);
      failures.set(`${caseName}@${engine ?? '*'}`, message.split('\n')[0]!);
    },
  };
  const startedMs = performance.now();
  const figures: Figure[] = [];
  try {
    for (const benchCase of cases) {
      const caseStart = performance.now();
      const planned = benchCase.plan(ctx);
      let measured: Figure[] = [];
      try {
        measured = await benchCase.run(ctx);
      } catch (error) {
        ctx.failed(benchCase.name, null, error);
      }
      figures.push(...measured);
      // Every planned figure appears: measured, or not measured with the reason.
      const key = (f: { id: string; engine: EngineName | null; size?: number }) =>
        `${f.id}@${f.engine}@${f.size ?? ''}`;
      const has = new Set(measured.map(key));
      for (const spec of planned) {
        if (has.has(key(spec))) continue;
        const unavailable = spec.engine ? engines.unavailable[spec.engine] : undefined;
        const failure =
          failures.get(`${benchCase.name}@${spec.engine}`) ?? failures.get(`${benchCase.name}@*`);
        figures.push(
          unavailable
            ? notMeasured(spec, unavailable)
            : notMeasured(spec, failure ? `failed: ${failure}` : 'not reported', true),
        );
      }
      progress(`${benchCase.name}: ${((performance.now() - caseStart) / 1000).toFixed(1)} s`);
    }
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await engines.close();
  }
  const durationMs = performance.now() - startedMs;
  const ordered = order(figures);
  const results: Results = {
    date,
    machine,
    durationMs: Math.round(durationMs),
    options: { quick: values.quick, runs: ctx.runs, cases: cases.map((c) => c.name), engineNames },
    figures: ordered,
    details,
  };
  const { heading, table } = present(results);
  console.log(`\n${heading}\n\n${table}\n`);
  const missed = ordered.filter((f) => f.result === 'fail');
  const broken = ordered.filter((f) => f.result === 'error');
  const pending = ordered.filter((f) => f.result === 'pending');
  console.log(
    [
      missed.length === 0 ? 'Every goal measured was met.' : `Goals missed: ${missed.length}.`,
      broken.length > 0 ? `Errors: ${broken.length}.` : '',
      pending.length > 0 ? `Not measured: ${pending.length}.` : '',
    ]
      .filter(Boolean)
      .join(' '),
  );
  if (broken.length > 0) process.exitCode = 1;
  if (values.json) writeJson(values.json, results);
  // Only a full run stands for the project's figures; --quick and --only runs print and go.
  if (values['no-write'] || values.quick || values.only) return;
  const root = repoRoot();
  writeJson(join(root, 'bench', 'results.json'), results);
  await publish(results);
  progress('wrote bench/results.json, the table in docs/performance.md and bench/plots/*.svg');
}

/** Figures by row of issue 16, SQLite before PostgreSQL, then the figures beyond the table. */
function order(figures: Figure[]): Figure[] {
  const engineRank = (f: Figure) => (f.engine === 'sqlite' ? 0 : f.engine === 'postgres' ? 1 : 2);
  return figures
    .map((f, index) => ({ f, index }))
    .sort(
      (a, b) =>
        (a.f.row ?? 99) - (b.f.row ?? 99) || engineRank(a.f) - engineRank(b.f) || a.index - b.index,
    )
    .map(({ f }) => f);
}

function present(results: Results): { heading: string; table: string } {
  const { machine, date, durationMs, options } = results;
  const heading = `Measured ${machineLine(machine, date)}. \`npm run bench\` took ${Math.round(durationMs / 1000)} s${options.quick ? ' (--quick)' : ''}.`;
  return { heading, table: markdownTable(results.figures) };
}

/** The table into docs/performance.md and the plots into bench/plots/. */
async function publish(results: Results): Promise<void> {
  const root = repoRoot();
  const { heading, table } = present(results);
  const doc = join(root, 'docs', 'performance.md');
  if (!(await replaceSection(doc, `${heading}\n\n${table}`)))
    throw new Error(`no results markers in ${doc}`);
  const readme = join(root, 'README.md');
  const summary = `${heading}\n\n${summaryTable(order(results.figures))}`;
  if (!(await replaceSection(readme, summary, 'summary')))
    throw new Error(`no summary markers in ${readme}`);
  drawPlots(results, join(root, 'bench', 'plots'));
}

/** Prints the table of bench/results.json, and writes it and the plots again. */
async function render(): Promise<void> {
  const root = repoRoot();
  const stored = JSON.parse(readFileSync(join(root, 'bench', 'results.json'), 'utf8')) as Results;
  // Judged by today's goals: they may have changed since the run (see lib/goals.ts).
  const results = { ...stored, figures: stored.figures.map(withTodaysGoal) };
  const { heading, table } = present(results);
  console.log(`${heading}\n\n${table}`);
  writeJson(join(root, 'bench', 'results.json'), results);
  await publish(results);
}

await main();
