/**
 * Row 11 of issue 16 (issue 15's `copy`): `transport-sync copy --to postgres://...` of a SQLite
 * mirror of 100,000 requests (10,000 with --quick) into a new PostgreSQL database, as a process of
 * its own: rows per second and time, and it must end with every table equal (exit code 0). Its
 * peak RSS (VmHWM of the whole process, the copy's worker thread included, default flags; issue
 * 22 asks for at most 200 MB at 100,000 requests).
 *
 * The mirror is filled without HTTP: the simulator's records through the backfill's write path
 * (requests, locations, fields, accounts, facilities, the change log, drift, runs, checkpoints),
 * then v2.0 webhook events for 5 % of the requests, stored and applied (webhook_events,
 * request_profiles, more change log).
 */
import { silentLogger } from '../../src/log.js';
import { createStore } from '../../src/db/store.js';
import { createSimulator } from '../../src/simulator/index.js';
import type { SyncClient } from '../../src/sync/ports.js';
import { createApplier } from '../../src/webhooks/applier.js';
import { toEventRow } from '../../src/webhooks/envelope.js';
import { createFetchQueue } from '../../src/webhooks/fetch-queue.js';
import type { BenchCase, BenchContext } from '../lib/context.js';
import { sqliteEngine } from '../lib/engines.js';
import { createMemoryClient, parseSnapshot } from '../lib/memory-client.js';
import { fixedClock, NOW_MS, seedStore } from '../lib/mirror.js';
import { runCliChild } from '../lib/processes.js';
import { figure, specs } from '../lib/report.js';
import { snapshotOf } from '../lib/snapshot.js';
import { timed } from '../lib/stats.js';
import { createWebhookBodies } from '../lib/webhook-events.js';

const CASE = 'copy';
const DAY_MS = 86_400_000;
/** Issue 22: at most 200 MB at 100,000 requests. */
const RSS_GOAL_MB = 200;

const sizeOf = (ctx: BenchContext) => (ctx.isQuick ? 10_000 : 100_000);

function planFor(requests: number) {
  const spec = specs(CASE, 'postgres');
  const n = `${requests.toLocaleString('en-US')}-request SQLite mirror`;
  return {
    rate: spec('copy.rate', 11, `\`copy\` of a ${n} into PostgreSQL: rows per second`, 'rows/s', {
      size: requests,
    }),
    time: spec('copy.time', 11, `\`copy\` of a ${n} into PostgreSQL: time`, 's', {
      size: requests,
    }),
    equal: spec('copy.equal', 11, `\`copy\` of a ${n}: tables not equal at the end`, 'tables', {
      target: { op: '==', value: 0 },
      size: requests,
    }),
    rss: spec('copy.rss', 11, `\`copy\` of a ${n} into PostgreSQL: peak RSS, default flags`, 'MB', {
      target: { op: '<=', value: RSS_GOAL_MB },
      size: requests,
    }),
  };
}

export const copyCase: BenchCase = {
  name: CASE,
  plan: (ctx) => (ctx.engineNames.includes('postgres') ? Object.values(planFor(sizeOf(ctx))) : []),
  async run(ctx) {
    const postgres = ctx.engines.get('postgres');
    const sqlite = ctx.engines.get('sqlite') ?? sqliteEngine();
    if (!postgres) return [];
    const requests = sizeOf(ctx);
    const plan = planFor(requests);
    const clock = fixedClock();
    ctx.progress(`copy: filling a SQLite mirror of ${requests} requests`);
    const sim = createSimulator({ seed: 3, requests, pageSize: 50, clock });
    const source = await sqlite.create();
    let target: Awaited<ReturnType<typeof postgres.create>> | undefined;
    try {
      const range = { fromMs: NOW_MS - 40 * DAY_MS, toMs: NOW_MS + 20 * DAY_MS };
      const entries = parseSnapshot(snapshotOf(sim, range.fromMs, range.toMs));
      const store = createStore({ db: await source.open(), clock });
      const filled = await timed(() => seedStore(store, createMemoryClient(entries), clock, range));
      const ids = entries.filter((_, i) => i % 20 === 0).map((entry) => entry.detail.request_id);
      const bodies = createWebhookBodies(sim, NOW_MS + 1000)(ids);
      await store.transaction(async (tx) => {
        for (const body of bodies)
          await tx.events.insert(toEventRow(JSON.parse(body), Buffer.from(body), tx.now()));
      });
      const noFetch: SyncClient = {
        ...createMemoryClient([]),
        getRequest: () => Promise.reject(new Error('no fetch expected')),
      };
      const aborter = new AbortController();
      const applier = createApplier({
        store,
        fetches: createFetchQueue({
          client: noFetch,
          store,
          concurrency: 8,
          signal: aborter.signal,
        }),
        clock,
        log: silentLogger(),
        shouldFetchInvalid: false,
      });
      applier.wake();
      await applier.idle();
      await applier.stop();
      aborter.abort();
      await source.close();
      ctx.progress(
        `  ${filled.value.counts.requestsNew} requests in ${Math.round(filled.ms)} ms, ${bodies.length} webhook events applied`,
      );

      target = await postgres.create();
      ctx.progress(`copy: transport-sync copy into ${target.location}`);
      const child = await runCliChild(['copy', '--db', source.location, '--to', target.location], {
        LOG_LEVEL: 'warn',
      });
      const tables = [...child.stdout.matchAll(/^\s+(\w+)\s+(\d+) rows\s+checksum \S+\s+(.+)$/gm)];
      const rows = tables.reduce((sum, match) => sum + Number(match[2]), 0);
      const unequal = tables.filter((match) => match[3]!.trim() !== 'equal').length;
      if (tables.length === 0)
        throw new Error(
          `copy exited ${child.code} without a table report: ${child.stdout}${child.stderr}`,
        );
      const seconds = child.wallMs / 1000;
      ctx.detail('copy', {
        requests,
        rows,
        wallMs: child.wallMs,
        code: child.code,
        stdout: child.stdout,
        report: child.report,
      });
      ctx.progress(
        `  copy exited ${child.code}: ${rows} rows in ${seconds.toFixed(1)} s, ${unequal} tables not equal`,
      );
      const note = `${rows.toLocaleString('en-US')} rows in ${tables.length} tables; exit code ${child.code}`;
      const { peak } = child.report;
      return [
        figure(plan.rate, rows / seconds, { note }),
        figure(plan.time, seconds),
        figure(plan.equal, child.code === 0 ? unequal : Math.max(1, unequal), {
          note: child.code === 0 ? 'every table equal' : `exit code ${child.code}`,
        }),
        figure(plan.rss, child.report.maxRssMb, {
          note: `main thread's V8 heap at its peak ${peak.heapTotalMb} MB; the copy runs in a worker thread with a heap of its own, capped`,
        }),
      ];
    } finally {
      await target?.remove();
      await source.remove();
      await sim.close();
    }
  },
};
