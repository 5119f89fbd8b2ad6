/**
 * `npm run bench`: the six cases of issue 8 against the simulator on loopback. Prints the table;
 * a full run also writes bench/results.json and the table into bench/README.md.
 *
 * Options: --quick (small sizes, 3 runs: checks the bench itself), --only a,b (cases by name:
 * poll, latency, store, backfill, webhooks), --runs N, --memory (backfill memory experiments
 * under V8 flags), --no-write; --quick and --only print only. --render prints the table of
 * bench/results.json and writes it into the README again, without measuring.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { backfillCase } from './cases/backfill.js';
import { latencyCase, pollCases } from './cases/poll.js';
import { storeCase } from './cases/store.js';
import { webhookCase } from './cases/webhooks.js';
import type { BenchCase, BenchContext } from './lib/context.js';
import { describeMachine, type Machine } from './lib/machine.js';
import { repoRoot } from './lib/paths.js';
import {
  machineLine,
  markdownTable,
  pendingFigure,
  replaceSection,
  writeJson,
  type Figure,
} from './lib/report.js';

const CASES: Record<string, BenchCase> = {
  poll: pollCases,
  latency: latencyCase,
  store: storeCase,
  backfill: backfillCase,
  webhooks: webhookCase,
};

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      memory: { type: 'boolean', default: false },
      only: { type: 'string' },
      runs: { type: 'string' },
      'no-write': { type: 'boolean', default: false },
      render: { type: 'boolean', default: false },
    },
  });
  const names = values.only
    ? values.only.split(',').map((name) => name.trim())
    : Object.keys(CASES);
  const unknown = names.filter((name) => !CASES[name]);
  if (unknown.length > 0) {
    console.error(`unknown case ${unknown.join(', ')}; cases: ${Object.keys(CASES).join(', ')}`);
    process.exitCode = 2;
    return;
  }
  if (values.render) {
    await render();
    return;
  }
  const machine = describeMachine();
  const date = new Date().toISOString();
  const details: Record<string, unknown> = {};
  const ctx: BenchContext = {
    runs: values.runs ? Number(values.runs) : values.quick ? 3 : 5,
    isQuick: values.quick,
    isMemoryProfile: values.memory,
    progress: (message) => process.stderr.write(`${message}\n`),
    detail: (key, value) => {
      details[key] = value;
    },
  };
  const startedMs = performance.now();
  const figures: Figure[] = [];
  for (const name of names) {
    const caseStart = performance.now();
    try {
      figures.push(...(await CASES[name]!(ctx)));
    } catch (error) {
      const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
      ctx.progress(`case ${name} failed: ${message}`);
      figures.push(
        pendingFigure(name, 'case failed', '', message.split('\n')[0]!, undefined, 'error'),
      );
    }
    ctx.progress(`${name}: ${((performance.now() - caseStart) / 1000).toFixed(1)} s`);
  }
  const durationMs = performance.now() - startedMs;

  const { heading, table } = present(figures, machine, date, durationMs, values.quick);
  console.log(`\n${heading}\n\n${table}\n`);
  const missed = figures.filter((f) => f.result === 'fail' || f.result === 'error');
  console.log(
    missed.length === 0
      ? 'Every target met.'
      : `Missed: ${missed.map((f) => `${f.caseName}: ${f.name}`).join('; ')}`,
  );
  // Only a full run stands for the project's figures; --quick and --only runs print and go.
  if (values['no-write'] || values.quick || values.only) return;
  const root = repoRoot();
  writeJson(join(root, 'bench', 'results.json'), {
    date,
    machine,
    durationMs: Math.round(durationMs),
    options: { quick: values.quick, runs: ctx.runs, cases: names },
    figures,
    details,
  });
  await replaceSection(join(root, 'bench', 'README.md'), `${heading}\n\n${table}`);
  ctx.progress('wrote bench/results.json and the table in bench/README.md');
}

function present(
  figures: Figure[],
  machine: Machine,
  date: string,
  durationMs: number,
  isQuick: boolean,
): { heading: string; table: string } {
  const heading = `Measured ${machineLine(machine, date)}. \`npm run bench\` took ${Math.round(durationMs / 1000)} s${isQuick ? ' (--quick)' : ''}.`;
  return { heading, table: markdownTable(figures) };
}

/** Prints the table of bench/results.json and writes it into bench/README.md again. */
async function render(): Promise<void> {
  const root = repoRoot();
  const results = JSON.parse(readFileSync(join(root, 'bench', 'results.json'), 'utf8')) as {
    date: string;
    machine: Machine;
    durationMs: number;
    options: { quick: boolean };
    figures: Figure[];
  };
  const { heading, table } = present(
    results.figures,
    results.machine,
    results.date,
    results.durationMs,
    results.options.quick,
  );
  console.log(`${heading}\n\n${table}`);
  await replaceSection(join(root, 'bench', 'README.md'), `${heading}\n\n${table}`);
}

await main();
