import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { FeedSinkLag } from '../../src/db/store/feed-cursor-store.js';
import { streamNameFor } from '../../src/feed/nats-sink.js';
import {
  cleanEnv,
  processTracker,
  runCli,
  serviceEnv,
  startCli,
  startSimulatorProcess,
  type RunningCli,
} from '../helpers/cli.js';
import { createTestDatabase, testEngine, type TestDatabase } from '../helpers/engine.js';
import { ageFeed, feedCursorsAt, feedPositionsAt } from '../helpers/feed-history.js';
import { startFeedReceiver, type FeedReceiver } from '../helpers/feed-receiver.js';
import { firstArrivals } from '../helpers/feed.js';
import { changeDocumentValidator } from '../helpers/feed-schema.js';
import { natsClient, startOwnNatsServer, streamMessages } from '../helpers/nats.js';
import { streamReaches } from '../helpers/nats-watch.js';
import { tempDir } from '../helpers/records.js';

/*
 * Both sinks of the change feed away for ten minutes, as processes: the daemon polls a simulator
 * that keeps changing requests and publishes to an outbound webhook and to NATS JetStream. The
 * receiver answers 503 and the nats-server is stopped while hundreds of changes pile up and the
 * history ages past retention; `transport-sync prune` meanwhile deletes only what both sinks took.
 * Back, each gets the backlog, in order. Ten minutes of wall clock is the point (the backoff
 * reaches its one-minute ceiling, the log stays quiet), so `npm run test:long` runs it, apart.
 */

/** How long both sinks stay away. */
const OUTAGE_MS = 10 * 60_000;
/** Back, a sink is retried within a minute (the backoff's ceiling), then takes the backlog. */
const RECOVERY_MS = 3 * 60_000;
const SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
const FAILED = 'feed sink delivery failed; retrying';

const processes = processTracker();
afterEach(() => processes.stopAll());

let sim: RunningCli & { url: string };
let database: TestDatabase;
let receiver: FeedReceiver;
let nats: Awaited<ReturnType<typeof startOwnNatsServer>>;
let secretFile: string;
// A subject, and so a stream, of this test's own.
const subject = `transport_sync_test.${randomBytes(6).toString('hex')}.changes`;

beforeAll(async () => {
  // Two mutations a second: a backlog of about a thousand changes in ten minutes.
  const mutating = ['--mutate-every', '1000', '--mutate-per-tick', '2'];
  sim = processes.track(await startSimulatorProcess(['--requests', '150', ...mutating]));
  database = await createTestDatabase();
  secretFile = join(tempDir(), 'feed-secret');
  writeFileSync(secretFile, SECRET, { mode: 0o600 });
  receiver = await startFeedReceiver(SECRET);
  nats = await startOwnNatsServer();
});
afterAll(async () => {
  await receiver.close();
  await nats.stop();
  await database.drop();
});

const daemonEnv = () =>
  serviceEnv(sim.url, {
    TRANSPORT_DB: database.location,
    TRANSPORT_POLL_CRON: '* * * * * *',
    TRANSPORT_FEED_WEBHOOK_URL: receiver.url,
    TRANSPORT_FEED_WEBHOOK_SECRET_FILE: secretFile,
    TRANSPORT_FEED_NATS_URL: nats.url,
    TRANSPORT_FEED_NATS_SUBJECT: subject,
  });

const positionsNow = () => feedPositionsAt(database.location);

/** The daemon's complete log lines from the `from`-th on, parsed. */
function logLines(daemon: RunningCli, from = 0): Record<string, unknown>[] {
  return daemon
    .output()
    .stdout.split('\n')
    .slice(from, -1)
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}
const logLength = (daemon: RunningCli) => daemon.output().stdout.split('\n').length - 1;

/** The failure count of each "delivery failed" warning about `sink`, from the `from`-th line. */
const failureWarnings = (daemon: RunningCli, sink: string, from = 0): number[] =>
  logLines(daemon, from)
    .filter((line) => line.msg === FAILED && line.sink === sink)
    .map((line) => Number(line.failures));
const failureLine = (sink: string) => new RegExp(`"sink":"${sink}".*"msg":"${FAILED}"`);

/** Resolves once the receiver has taken `position` (or a later one) and NATS has published it. */
async function bothSinksReach(nc: NatsConnection, position: number, timeoutMs: number) {
  await Promise.all([
    receiver.until(
      () => receiver.taken.some((delivery) => delivery.document.position >= position),
      `position ${position}`,
      timeoutMs,
    ),
    streamReaches(nc, subject, position, timeoutMs),
  ]);
}

/**
 * Ages every change so far past retention and runs `transport-sync prune` with the daemon's sink
 * settings: it deletes what every sink took, and nothing after either one's cursor. Resolves to
 * the aged positions and how many went.
 */
async function pruneWhileAway(cursors: Record<string, number>) {
  const aged = await ageFeed(database.location, 400);
  const result = await runCli(['prune'], { ...daemonEnv(), TRANSPORT_RETENTION_DAYS: '180' });
  expect(result.code, result.stderr).toBe(0);
  // NOTIFY, on PostgreSQL, holds retention back too (it is not away: ahead of them).
  const sinks = ['webhook', 'nats', ...(testEngine() === 'postgres' ? ['notify'] : [])];
  const held = Math.min(...sinks.map((sink) => cursors[sink] ?? 0));
  const kept = (await positionsNow()).filter((position) => position <= aged.at(-1)!);
  expect(kept).toEqual(aged.filter((position) => position > held));
  const prunedCount = aged.length - kept.length;
  expect(prunedCount).toBeGreaterThan(0);
  expect(result.stdout).toContain(`, ${prunedCount} request changes\n`);
  return { aged, prunedCount };
}

/** `status --json` shows both sinks where they stopped, with changes waiting for them. */
async function expectStatusLagging(cursors: Record<string, number>) {
  const status = await runCli(['status', '--json'], cleanEnv({ TRANSPORT_DB: database.location }));
  const lags = (JSON.parse(status.stdout) as { feed_sinks: FeedSinkLag[] }).feed_sinks;
  for (const sink of ['webhook', 'nats']) {
    const lag = lags.find((entry) => entry.sink === sink);
    expect(lag, sink).toMatchObject({ position: cursors[sink] });
    expect(lag!.lag_changes, sink).toBeGreaterThan(0);
  }
}

/** Where the daemon's log stood when the sinks went away. */
interface LogMark {
  /** Lines logged before. */
  lines: number;
  /** "Delivery failed" warnings about the webhook before. */
  webhookWarnings: number;
}

/**
 * How the daemon retried while away: the receiver was offered one change all along, the first
 * after its cursor (nothing later), less and less often (the pause doubles to a minute and is
 * at least half of that); the log warned at the first failure of each sink and every tenth
 * after, a handful of lines and not one a retry.
 */
async function expectQuietRetries(daemon: RunningCli, mark: LogMark, firstWaiting: number) {
  const refused = [...receiver.refused];
  expect(new Set(refused)).toEqual(new Set([firstWaiting]));
  expect(refused.length).toBeGreaterThan(1);
  expect(refused.length).toBeLessThanOrEqual(OUTAGE_MS / 30_000 + 8);
  const tenths = Array.from({ length: Math.floor(refused.length / 10) }, (_, i) => (i + 1) * 10);
  // The warning of the last refusal may still be on its way.
  await daemon.waitForLines(failureLine('webhook'), mark.webhookWarnings + 1 + tenths.length);
  const webhook = failureWarnings(daemon, 'webhook', mark.lines);
  expect(webhook.filter((failures) => failures <= refused.length)).toEqual([1, ...tenths]);
  const natsWarnings = failureWarnings(daemon, 'nats', mark.lines);
  expect(natsWarnings).toEqual(natsWarnings.map((_, i) => (i === 0 ? 1 : i * 10)));
  expect(Math.max(webhook.length, natsWarnings.length)).toBeLessThanOrEqual(5);
  return { refused: refused.length, webhookWarnings: webhook, natsWarnings };
}

describe('both feed sinks away for ten minutes', () => {
  it(
    'get the backlog in order once back, and retention keeps it for them meanwhile',
    async () => {
      const daemon = processes.track(startCli(['run'], daemonEnv()));
      let nc = await natsClient(nats.url);
      // Both sinks work at first.
      await receiver.until(() => receiver.taken.length >= 20, 'the first deliveries', 60_000);
      await bothSinksReach(nc, receiver.taken.at(-1)!.document.position, 60_000);
      await nc.close();

      const mark: LogMark = {
        lines: logLength(daemon),
        webhookWarnings: failureWarnings(daemon, 'webhook').length,
      };
      const natsWarnedBefore = failureWarnings(daemon, 'nats').length;
      receiver.setDown(true);
      await nats.stop();
      const outageStartedAt = Date.now();
      // Each fails on the next change the simulator brings, and says so.
      await receiver.until(() => receiver.refused.length > 0, 'a refusal', 60_000);
      await daemon.waitForLines(failureLine('nats'), natsWarnedBefore + 1, { timeoutMs: 60_000 });
      const cursors = await feedCursorsAt(database.location);
      const { aged, prunedCount } = await pruneWhileAway(cursors);
      await expectStatusLagging(cursors);

      await sleep(outageStartedAt + OUTAGE_MS - Date.now());
      const atRestore = await positionsNow();
      expect(await feedCursorsAt(database.location)).toMatchObject({
        webhook: cursors.webhook,
        nats: cursors.nats,
      });
      const backlog = {
        webhook: atRestore.filter((position) => position > cursors.webhook!).length,
        nats: atRestore.filter((position) => position > cursors.nats!).length,
      };
      expect(Math.min(backlog.webhook, backlog.nats)).toBeGreaterThanOrEqual(300);
      const retries = await expectQuietRetries(
        daemon,
        mark,
        atRestore.find((position) => position > cursors.webhook!)!,
      );

      receiver.setDown(false);
      await nats.start();
      nc = await natsClient(nats.url);
      try {
        await bothSinksReach(nc, atRestore.at(-1)!, RECOVERY_MS);
        for (const sink of ['webhook', 'nats']) {
          await daemon.waitFor(new RegExp(`"sink":"${sink}".*"msg":"feed sink delivering again"`));
        }

        // Quiet: no mutation since a poll cycle began, then both sinks up to the last change.
        await fetch(`${sim.url}/_sim/stop-mutating/`, { method: 'POST' });
        const cycle = /"msg":"poll cycle finished/;
        const cycles = daemon
          .output()
          .stdout.split('\n')
          .filter((line) => cycle.test(line)).length;
        await daemon.waitForLines(cycle, cycles + 2, { timeoutMs: 60_000 });
        const quietLast = (await positionsNow()).at(-1)!;
        await bothSinksReach(nc, quietLast, 60_000);
        daemon.child.kill('SIGTERM');
        expect((await daemon.exited).code).toBe(0);

        // The whole feed: what prune deleted (both had it before the outage) and what is kept.
        const feed = [...new Set([...aged, ...(await positionsNow())])].sort((a, b) => a - b);
        const quietLength = feed.indexOf(quietLast) + 1;

        const validator = changeDocumentValidator();
        for (const delivery of receiver.taken) {
          expect(delivery.problem).toBeNull();
          expect(delivery.id).toBe(String(delivery.document.position));
          validator.expectValid(delivery.document);
        }
        const webhookFirsts = firstArrivals(receiver.taken.map((d) => d.document.position));
        expect(webhookFirsts.length).toBeGreaterThanOrEqual(quietLength);
        expect(webhookFirsts).toEqual(feed.slice(0, webhookFirsts.length));

        const messages = await streamMessages(nc, streamNameFor(subject), subject);
        const stored = messages.map((message) => {
          const { position } = message.json<{ position: number }>();
          expect(message.header.get('Nats-Msg-Id')).toBe(String(position));
          return position;
        });
        // Stream order is feed order, each position once.
        expect(stored.length).toBeGreaterThanOrEqual(quietLength);
        expect(stored).toEqual(feed.slice(0, stored.length));

        console.info(
          `feed outage of ${OUTAGE_MS / 60_000} min on ${testEngine()}: piled up ` +
            `${backlog.webhook} changes for the webhook, ${backlog.nats} for NATS; pruned ` +
            `${prunedCount} of ${aged.length} aged; webhook: ${receiver.taken.length} deliveries ` +
            `of ${webhookFirsts.length} positions (${receiver.taken.length - webhookFirsts.length} ` +
            `repeats), ${retries.refused} refused while away, warnings at failures ` +
            `${retries.webhookWarnings.join(',')}; NATS: ${stored.length} messages, warnings at ` +
            `failures ${retries.natsWarnings.join(',')}`,
        );
      } finally {
        await nc.close();
      }
    },
    OUTAGE_MS + 8 * 60_000,
  );
});
