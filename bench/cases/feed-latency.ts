/**
 * Beyond issue 16's table: how soon a change reaches each sink of the change feed. The daemon
 * runs as users run it (`transport-sync run`, a process of its own) on webhooks alone (the
 * simulator's v1.0 retired, TRANSPORT_POLL=off), with every sink on: the outbound webhook to a
 * receiver in the bench, NATS JetStream on a subject of the run's own, and on PostgreSQL NOTIFY
 * on a channel of the run's own. A sender in a worker thread posts signed v2.0 deliveries at 50
 * events per second for 60 s (10 s with --quick) to a mirror holding 2,000 requests, each the
 * broadcast of a request new to it, so that each makes exactly one change (its `new`), known by
 * its request id. (Edits of stored requests would not do: one that touches only members kept
 * outside the request's row, a note say, may make no change, or a `profile` change beside the
 * request's.) Latency is the time from the delivery's 2xx (seen by the sender) to the change's
 * arrival at the bench (seen by the listener), both as performance.timeOrigin +
 * performance.now(): p50 and p99 per sink. Goals: p99 at most 250 ms for the webhook and NATS,
 * 100 ms for NOTIFY. Every event must arrive at every sink within 30 s of the last 2xx, or the
 * engine's figures are an error.
 *
 * Runs: one 60 s run per engine in a full run, not ctx.runs (five would add some ten minutes to
 * a bench that already takes half an hour; a run holds 3,000 events per sink, its p99 the 30th
 * slowest). With --quick, ctx.runs runs of 10 s, medians reported as elsewhere.
 *
 * Before measuring: the mirror is filled through the backfill path (no HTTP) and every sink's
 * cursor set to the end of the feed, as docs/feed.md tells an operator to, so the seed's changes
 * are not sent; the daemon is ready (its receiver listening, its sinks started) and one warm-up
 * event has reached every sink (connections open, the NATS stream created).
 */
import { generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Clock } from '../../src/clock.js';
import { createStore } from '../../src/db/store.js';
import { createSimulator } from '../../src/simulator/index.js';
import { pollWindow } from '../../src/sync/window.js';
import { isoFromMs } from '../../src/time.js';
import type { Arrival, SinkName } from '../lib/arrival-log.js';
import { forEachEngine, type BenchCase, type BenchContext } from '../lib/context.js';
import { startDaemon } from '../lib/daemon-process.js';
import type { BenchDb, EngineHarness, EngineName } from '../lib/engines.js';
import {
  startNatsListener,
  startNotifyListener,
  startWebhookListener,
  type FeedListener,
} from '../lib/feed-listeners.js';
import { createMemoryClient, parseSnapshot, type ParsedEntry } from '../lib/memory-client.js';
import { fixedClock, POLL_SETTINGS, seedStore } from '../lib/mirror.js';
import type { PacedSendResult } from '../lib/paced-sender-protocol.js';
import { sendPacedInWorker } from '../lib/paced-sender.js';
import { startSimProcess } from '../lib/processes.js';
import { figure, specs, type Figure } from '../lib/report.js';
import { snapshotOf } from '../lib/snapshot.js';
import { median, percentile, round } from '../lib/stats.js';
import { createNewRequestBodies } from '../lib/webhook-events.js';

const CASE = 'feed-latency';
const RATE_PER_SECOND = 50;
/** Requests in the mirror before the events: a mirror in service, not an empty one. */
const SEEDED_REQUESTS = 2_000;
const secondsOf = (ctx: BenchContext) => (ctx.isQuick ? 10 : 60);
const runsOf = (ctx: BenchContext) => (ctx.isQuick ? ctx.runs : 1);
/** The issue's goals for p99, in ms. */
const P99_GOAL_MS: Record<SinkName, number> = { webhook: 250, nats: 250, notify: 100 };
const SINK_LABEL: Record<SinkName, string> = {
  webhook: 'outbound webhook',
  nats: 'NATS',
  notify: 'NOTIFY',
};
const sinksOf = (engine: EngineName): SinkName[] =>
  engine === 'postgres' ? ['webhook', 'nats', 'notify'] : ['webhook', 'nats'];
/** NATS: TRANSPORT_BENCH_NATS_URL, else the server this project's machines run. */
const natsServer = () => process.env.TRANSPORT_BENCH_NATS_URL?.trim() || 'nats://127.0.0.1:4222';
const SIGNATURE_HEADER = 'X-VectorCare-Signature';
/** How long after the last 2xx every change must have reached every sink. */
const ARRIVAL_TIMEOUT_MS = 30_000;
const STARTUP_TIMEOUT_MS = 60_000;

function planFor(engine: EngineName, seconds: number) {
  const spec = specs(CASE, engine);
  const label = (sink: SinkName) =>
    `feed latency at ${RATE_PER_SECOND} events/s for ${seconds} s, incoming webhook's 2xx to the change at the ${SINK_LABEL[sink]} sink`;
  return sinksOf(engine).map((sink) => ({
    sink,
    p50: spec(`feed-latency.${sink}.p50`, null, `${label(sink)}: p50`, 'ms'),
    p99: spec(`feed-latency.${sink}.p99`, null, `${label(sink)}: p99`, 'ms', {
      target: { op: '<=', value: P99_GOAL_MS[sink] },
    }),
  }));
}

/** One sink's figures of one run; the shares come from committed_at, where the sink sends it. */
interface SinkRun {
  p50: number;
  p99: number;
  max: number;
  /** From the 2xx to committed_at: the applier's share. */
  toCommitP50: number | null;
  toCommitP99: number | null;
  /** From committed_at to the arrival: the publisher's and the sink's share. */
  fromCommitP50: number | null;
  fromCommitP99: number | null;
  /** Changes beyond the first of each event's request, by kind (see the case's comment). */
  extras: Record<string, number>;
}

function sinkRun(
  ids: readonly string[],
  answeredAtMs: readonly number[],
  arrivals: Map<string, Arrival>,
  extras: Record<string, number>,
): SinkRun {
  const total: number[] = [];
  const toCommit: number[] = [];
  const fromCommit: number[] = [];
  ids.forEach((id, i) => {
    const arrival = arrivals.get(id)!;
    total.push(arrival.atMs - answeredAtMs[i]!);
    if (arrival.committedAtMs !== null) {
      toCommit.push(arrival.committedAtMs - answeredAtMs[i]!);
      fromCommit.push(arrival.atMs - arrival.committedAtMs);
    }
  });
  const share = (values: number[], p: number) =>
    values.length > 0 ? round(percentile(values, p), 1) : null;
  return {
    p50: round(percentile(total, 50), 1),
    p99: round(percentile(total, 99), 1),
    max: round(Math.max(...total), 1),
    toCommitP50: share(toCommit, 50),
    toCommitP99: share(toCommit, 99),
    fromCommitP50: share(fromCommit, 50),
    fromCommitP99: share(fromCommit, 99),
    extras,
  };
}

/**
 * Fills the mirror through the backfill path and sets every sink's cursor to the end of the
 * feed, so that the daemon sends none of the seed's changes; closes the bench's connection.
 */
async function seedMirror(
  database: BenchDb,
  entries: readonly ParsedEntry[],
  clock: Clock,
  window: { fromMs: number; toMs: number },
  sinks: readonly SinkName[],
): Promise<void> {
  const store = createStore({ db: await database.open(), clock });
  await seedStore(store, createMemoryClient(entries), clock, window);
  const last = await store.read((tx) =>
    tx.sql.get<{ position: number | string | null }>(
      'SELECT max(change_id) AS position FROM request_changes',
    ),
  );
  const position = Number(last?.position ?? 0);
  await store.transaction(async (tx) => {
    for (const sink of sinks) await tx.feedCursors.set(sink, position, isoFromMs(clock.now()));
  });
  await database.close();
}

const sign256 = (body: string, key: KeyObject) =>
  sign('sha256', Buffer.from(body), key).toString('base64');

async function measureEngine(
  ctx: BenchContext,
  engine: EngineHarness,
  simUrl: string,
): Promise<Figure[]> {
  const seconds = secondsOf(ctx);
  const events = RATE_PER_SECOND * seconds;
  const runs = runsOf(ctx);
  const sinks = sinksOf(engine.name);
  ctx.progress(
    `feed-latency ${engine.name}: ${runs} run(s) of ${events} events at ${RATE_PER_SECOND}/s; sinks ${sinks.join(', ')}`,
  );
  // The simulator's world and the seed ten minutes back, the events a second after it: all of
  // it in the past of the daemon's own clock, in order, as the service would have sent it.
  const nowMs = Date.now() - 10 * 60_000;
  const clock = fixedClock(nowMs);
  const window = pollWindow(nowMs, POLL_SETTINGS.windowPastHours, POLL_SETTINGS.windowFutureHours);
  const sim = createSimulator({
    seed: 19,
    requests: SEEDED_REQUESTS,
    pastDays: 2,
    futureDays: 10,
    clock,
  });
  // Undone in reverse order: the daemon first, then its listeners, files and database.
  const cleanups: (() => Promise<void>)[] = [];
  try {
    const entries = parseSnapshot(snapshotOf(sim, window.fromMs, window.toMs));
    const database = await engine.create();
    cleanups.push(() => database.remove());
    await seedMirror(database, entries, clock, window, sinks);

    const dir = mkdtempSync(join(tmpdir(), 'transport-sync-bench-feed-'));
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const publicKeyFile = join(dir, 'service-public.pem');
    writeFileSync(publicKeyFile, publicKey.export({ type: 'spki', format: 'pem' }));
    const secret = `whsec_${randomBytes(32).toString('base64')}`;
    const secretFile = join(dir, 'feed-webhook-secret');
    writeFileSync(secretFile, secret, { mode: 0o600 });

    const tag = `bench_${process.pid}_${engine.name}`;
    const subject = `${tag}.changes`;
    const channel = `${tag}_changes`;
    const webhook = await startWebhookListener(secret);
    const listeners: FeedListener[] = [webhook];
    cleanups.push(async () => {
      for (const listener of listeners) await listener.close();
    });
    listeners.push(await startNatsListener(natsServer(), subject));
    if (sinks.includes('notify'))
      listeners.push(await startNotifyListener(database.location, channel));

    const daemon = startDaemon({
      TRANSPORT_AUTH_URL: simUrl,
      TRANSPORT_HUB_URL: simUrl,
      TRANSPORT_BASE_URL: simUrl,
      TRANSPORT_CLIENT_ID: 'demo-client',
      TRANSPORT_CLIENT_SECRET: 'demo-secret',
      TRANSPORT_DB: database.location,
      TRANSPORT_POLL: 'off',
      TRANSPORT_WEBHOOK_LISTEN: '127.0.0.1:0',
      TRANSPORT_WEBHOOK_PUBLIC_KEY_FILE: publicKeyFile,
      TRANSPORT_FEED_WEBHOOK_URL: webhook.url,
      TRANSPORT_FEED_WEBHOOK_SECRET_FILE: secretFile,
      TRANSPORT_FEED_NATS_URL: natsServer(),
      TRANSPORT_FEED_NATS_SUBJECT: subject,
      ...(sinks.includes('notify') && { TRANSPORT_FEED_PG_CHANNEL: channel }),
      // The seed's changes are months old by the daemon's clock; pruning them would be work in
      // the middle of the measurement that a mirror in service does not do at that moment.
      TRANSPORT_RETENTION_DAYS: '0',
      // As in service: a line per event applied.
      LOG_LEVEL: 'info',
    });
    cleanups.push(() => daemon.stop());
    const [listening] = await daemon.waitForLines(
      /"msg":"webhook receiver listening"/,
      1,
      STARTUP_TIMEOUT_MS,
    );
    const receiverUrl = (JSON.parse(listening!) as { url: string }).url;
    await daemon.waitForLines(/"msg":"feed sink started"/, sinks.length, STARTUP_TIMEOUT_MS);

    const makeBodies = createNewRequestBodies(sim, nowMs + 1000);
    /** Sends `count` new requests at the set rate, and waits until each has reached every sink. */
    const deliver = async (count: number) => {
      const { ids, bodies } = makeBodies(count);
      const deliveries = bodies.map((body) => ({ body, signature: sign256(body, privateKey) }));
      for (const listener of listeners) listener.log.expect(ids);
      const sent = await sendPacedInWorker({
        url: receiverUrl,
        header: SIGNATURE_HEADER,
        ratePerSecond: RATE_PER_SECOND,
        connections: 16,
        deliveries,
      });
      const refused = sent.statuses.filter((status) => status < 200 || status > 299).length;
      if (refused > 0) {
        throw new Error(
          `${refused} of ${count} deliveries got no 2xx (${[...new Set(sent.statuses)].join(', ')}${sent.errors.length > 0 ? `; ${sent.errors.join('; ')}` : ''})`,
        );
      }
      try {
        const arrivals = await Promise.race([
          Promise.all(listeners.map((listener) => listener.log.complete(ARRIVAL_TIMEOUT_MS))),
          daemon.failed,
        ]);
        return { ids, sent, arrivals };
      } catch (error) {
        // The table keeps the first line; the daemon's own account of it goes below.
        throw new Error(`${(error as Error).message}\nthe daemon's last output:\n${daemon.tail()}`);
      }
    };

    await deliver(1);
    const perRun: { sinks: Partial<Record<SinkName, SinkRun>>; sender: SenderRun }[] = [];
    for (let run = 0; run < runs; run += 1) {
      const { ids, sent, arrivals } = await deliver(events);
      const bySink: Partial<Record<SinkName, SinkRun>> = {};
      listeners.forEach((listener, i) => {
        bySink[listener.log.sink] = sinkRun(
          ids,
          sent.answeredAtMs,
          arrivals[i]!,
          listener.log.extras(),
        );
      });
      const sender = senderRun(sent);
      perRun.push({ sinks: bySink, sender });
      ctx.progress(`  run ${run + 1}: ${describeRun(bySink, sender, events)}`);
    }
    ctx.detail(`feed-latency.${engine.name}`, {
      ratePerSecond: RATE_PER_SECOND,
      seconds,
      events,
      runs: perRun,
    });
    return planFor(engine.name, seconds).flatMap(({ sink, p50, p99 }) => {
      const of = (key: 'p50' | 'p99') => perRun.map((r) => r.sinks[sink]![key]);
      const count = events.toLocaleString('en-US');
      const note = `${count} of ${count} arrived in each of ${runs} run${runs === 1 ? '' : 's'}`;
      return [
        figure(p50, round(median(of('p50')), 1), { runs: of('p50') }),
        figure(p99, round(median(of('p99')), 1), { runs: of('p99'), note }),
      ];
    });
  } finally {
    for (const cleanup of cleanups.reverse()) {
      await cleanup().catch((error: unknown) =>
        ctx.progress(`  feed-latency ${engine.name}: cleaning up failed: ${String(error)}`),
      );
    }
    await sim.close();
  }
}

/** How the sender kept its schedule, and how soon the receiver answered. */
interface SenderRun {
  answerP50: number;
  answerP99: number;
  /** How late deliveries went out against the schedule. */
  lateP99: number;
  /** Deliveries started per second, first to last. */
  rate: number;
}

function senderRun(sent: PacedSendResult): SenderRun {
  const answers = sent.answeredAtMs.map((at, i) => at - sent.sentAtMs[i]!);
  const late = sent.sentAtMs.map((at, i) => at - sent.dueAtMs[i]!);
  const spanMs = sent.sentAtMs.at(-1)! - sent.sentAtMs[0]!;
  return {
    answerP50: round(percentile(answers, 50), 1),
    answerP99: round(percentile(answers, 99), 1),
    lateP99: round(percentile(late, 99), 1),
    rate: round(((sent.sentAtMs.length - 1) * 1000) / spanMs, 1),
  };
}

function describeRun(
  sinks: Partial<Record<SinkName, SinkRun>>,
  sender: SenderRun,
  events: number,
): string {
  const parts = Object.entries(sinks).map(([sink, r]) => {
    const shares =
      r.toCommitP99 === null
        ? ''
        : ` [2xx to commit p50 ${r.toCommitP50} / p99 ${r.toCommitP99}, commit to arrival p50 ${r.fromCommitP50} / p99 ${r.fromCommitP99}]`;
    const extras = Object.entries(r.extras).map(([kind, n]) => `${n} ${kind}`);
    const extra = extras.length > 0 ? ` (besides: ${extras.join(', ')})` : '';
    return `${sink} p50 ${r.p50} / p99 ${r.p99} / max ${r.max} ms${shares}${extra}`;
  });
  return `${parts.join('; ')}; ${events} events at ${sender.rate}/s (p99 ${sender.lateP99} ms late), 2xx in p50 ${sender.answerP50} / p99 ${sender.answerP99} ms`;
}

export const feedLatencyCase: BenchCase = {
  name: CASE,
  plan: (ctx) =>
    ctx.engineNames.flatMap((engine) =>
      planFor(engine, secondsOf(ctx)).map((figures) => figures.p99),
    ),
  async run(ctx) {
    // The service's token and hub for the daemon; its v1.0 is retired, as the service's is.
    const sim = await startSimProcess(['--requests', '1', '--retire-v1']);
    try {
      return await forEachEngine(ctx, CASE, (engine) => measureEngine(ctx, engine, sim.url));
    } finally {
      await sim.stop();
    }
  },
};
