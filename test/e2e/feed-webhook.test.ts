import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ChangeDocument } from '../../src/feed/document.js';
import { streamNameFor } from '../../src/feed/nats-sink.js';
import {
  cleanEnv,
  freePort,
  processTracker,
  runCli,
  serviceEnv,
  startCli,
  startSimulatorProcess,
  type RunningCli,
} from '../helpers/cli.js';
import { createTestDatabase, testEngine, type TestDatabase } from '../helpers/engine.js';
import { feedCursorsAt, feedPositionsAt } from '../helpers/feed-history.js';
import { changeDocumentValidator } from '../helpers/feed-schema.js';
import { firstArrivals } from '../helpers/feed.js';
import { deleteStream, natsClient, natsUrl, streamMessages } from '../helpers/nats.js';
import { tempDir } from '../helpers/records.js';
import { standardWebhookProblem } from '../helpers/standard-webhooks.js';

/*
 * The daemon publishing its change feed to every sink, as a process, on the project's engine:
 * the outbound webhook, NATS JetStream, and on PostgreSQL NOTIFY. Killed with SIGKILL while it
 * polls a simulator that keeps changing, then started again, each sink still gets every change:
 * the webhook's receiver and NOTIFY's listener after dropping repeats by position hold exactly
 * the feed, in order; the NATS stream holds it once, in order, without dropping anything.
 */

const SECRET = `whsec_${Buffer.alloc(32, 5).toString('base64')}`;
const processes = processTracker();
afterEach(() => processes.stopAll());

let sim: RunningCli & { url: string };
let database: TestDatabase;
let server: Server;
let receiverUrl: string;
let secretFile: string;
const deliveries: { id: string; document: ChangeDocument; problem: string | null }[] = [];
let onDelivery = () => {};
let nats: NatsConnection;
let natsServer: string;
const natsSubject = `transport_sync_e2e.${randomBytes(6).toString('hex')}.changes`;
/** NOTIFY payloads heard, on PostgreSQL. */
const notified: { position: number; request_id: string; kind: string }[] = [];
let listener: pg.Client | undefined;

beforeAll(async () => {
  sim = await startSimulatorProcess([
    '--requests',
    '150',
    '--mutate-every',
    '100',
    '--mutate-per-tick',
    '3',
  ]);
  database = await createTestDatabase();
  const folder = tempDir();
  secretFile = join(folder, 'feed-secret');
  writeFileSync(secretFile, SECRET, { mode: 0o600 });
  server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      deliveries.push({
        id: String(request.headers['webhook-id']),
        document: JSON.parse(body) as ChangeDocument,
        problem: standardWebhookProblem(SECRET, request.headers, body),
      });
      response.writeHead(200).end();
      onDelivery();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/changes`;
  natsServer = await natsUrl();
  nats = await natsClient(natsServer);
  if (testEngine() === 'postgres') {
    listener = new pg.Client({ connectionString: database.location });
    await listener.connect();
    listener.on('notification', (message) => notified.push(JSON.parse(message.payload ?? '')));
    await listener.query('LISTEN transport_sync_changes');
  }
});
afterAll(async () => {
  sim.child.kill('SIGTERM');
  await sim.exited;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await deleteStream(nats, streamNameFor(natsSubject));
  await nats.close();
  await listener?.end();
  await database.drop();
});

/** The sinks the daemon publishes to, in the order status lists them. */
const sinkNames = () =>
  testEngine() === 'postgres' ? ['webhook', 'nats', 'notify'] : ['webhook', 'nats'];

const daemonEnv = () =>
  serviceEnv(sim.url, {
    TRANSPORT_DB: database.location,
    TRANSPORT_POLL_CRON: '* * * * * *',
    TRANSPORT_FEED_WEBHOOK_URL: receiverUrl,
    TRANSPORT_FEED_WEBHOOK_SECRET_FILE: secretFile,
    TRANSPORT_FEED_NATS_URL: natsServer,
    TRANSPORT_FEED_NATS_SUBJECT: natsSubject,
  });

/** Resolves once the receiver holds `count` deliveries in all. */
function deliveriesReach(count: number): Promise<void> {
  return new Promise((resolve) => {
    const check = () => {
      if (deliveries.length < count) return;
      onDelivery = () => {};
      resolve();
    };
    onDelivery = check;
    check();
  });
}

describe('the change feed of the daemon', () => {
  it('reaches every sink at least once and in order across SIGKILLs', async () => {
    for (let kill = 0; kill < 3; kill += 1) {
      const daemon = processes.track(startCli(['run'], daemonEnv()));
      // Killed while it delivers: a few changes after the ones it had sent before.
      await deliveriesReach(deliveries.length + 5 + kill * 7);
      daemon.child.kill('SIGKILL');
      await daemon.exited;
    }
    await fetch(`${sim.url}/_sim/stop-mutating/`, { method: 'POST' });
    const monitoring = await freePort();
    const daemon = processes.track(
      startCli(['run'], { ...daemonEnv(), TRANSPORT_HTTP_LISTEN: `127.0.0.1:${monitoring}` }),
    );
    await daemon.waitFor(/"msg":"poll cycle finished"/);
    const feed = () => feedPositionsAt(database.location);
    const positions = await feed();
    await deliveriesReach(positions.length);
    await new Promise<void>((resolve) => {
      const check = () => {
        if (deliveries.some((d) => d.document.position === positions.at(-1))) resolve();
      };
      onDelivery = check;
      check();
    });
    // The other sinks have caught up too: their cursors, read as status reads them.
    await expect
      .poll(
        async () => {
          const cursors = await feedCursorsAt(database.location);
          return sinkNames().filter((sink) => (cursors[sink] ?? 0) < positions.at(-1)!);
        },
        { timeout: 20_000 },
      )
      .toEqual([]);
    // /metrics carries each sink's lag, read from the database at scrape.
    const metrics = await (await fetch(`http://127.0.0.1:${monitoring}/metrics`)).text();
    for (const sink of sinkNames()) {
      expect(metrics).toMatch(
        new RegExp(`^transport_sync_feed_lag_changes\\{sink="${sink}"\\} \\d+$`, 'm'),
      );
      expect(metrics).toMatch(
        new RegExp(`^transport_sync_feed_lag_seconds\\{sink="${sink}"\\} [\\d.]+$`, 'm'),
      );
    }
    daemon.child.kill('SIGTERM');
    expect((await daemon.exited).code).toBe(0);

    const validator = changeDocumentValidator();
    for (const delivery of deliveries) {
      expect(delivery.problem).toBeNull();
      expect(delivery.id).toBe(String(delivery.document.position));
      validator.expectValid(delivery.document);
    }
    // Each position first arrives in feed order; a repeat (a kill before the cursor was saved)
    // is a position already seen.
    const firsts = firstArrivals(deliveries.map((d) => d.document.position));
    // Everything up to the last change of the quiet cycle; a later re-read's change, if any,
    // may have gone out too before the stop.
    const atStop = await feed();
    expect(firsts.length).toBeGreaterThanOrEqual(positions.length);
    expect(firsts).toEqual(atStop.slice(0, firsts.length));
    expect(positions.length).toBeGreaterThan(40);
    // The NATS stream holds every change once, in feed order, each its document.
    const stored = await streamMessages(nats, streamNameFor(natsSubject), natsSubject);
    const storedPositions = stored.map((message) => {
      const document = message.json<ChangeDocument>();
      validator.expectValid(document);
      expect(message.header.get('Nats-Msg-Id')).toBe(String(document.position));
      return document.position;
    });
    expect(storedPositions.length).toBeGreaterThanOrEqual(positions.length);
    expect(storedPositions).toEqual(atStop.slice(0, storedPositions.length));
    // NOTIFY, heard by a listener connected all along: every change, in order, after repeats.
    if (listener) {
      const heard = firstArrivals(notified.map((payload) => payload.position));
      expect(heard.length).toBeGreaterThanOrEqual(positions.length);
      expect(heard).toEqual(atStop.slice(0, heard.length));
      expect(Object.keys(notified[0] ?? {}).sort()).toEqual(['kind', 'position', 'request_id']);
    }
    // A shell's status shows the sinks the daemon publishes to (on PostgreSQL NOTIFY too), the
    // webhook at the last position it delivered, with what committed after it (if any) waiting.
    const status = await runCli(
      ['status', '--json'],
      cleanEnv({ TRANSPORT_DB: database.location }),
    );
    const report = JSON.parse(status.stdout) as { feed_sinks: Record<string, unknown>[] };
    expect(report.feed_sinks.map((lag) => lag.sink)).toEqual(sinkNames());
    const delivered = Math.max(...deliveries.map((d) => d.document.position));
    expect(report.feed_sinks[0]).toMatchObject({
      sink: 'webhook',
      position: delivered,
      last_position: atStop.at(-1),
      lag_changes: atStop.filter((position) => position > delivered).length,
    });
  });

  it('refuses to start with a secret that is not whsec_ and base64 (exit 2), naming the setting', async () => {
    const bad = join(tempDir(), 'bad-secret');
    writeFileSync(bad, 'hunter2', { mode: 0o600 });
    const result = await runCli(['run'], {
      ...daemonEnv(),
      TRANSPORT_FEED_WEBHOOK_SECRET_FILE: bad,
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^transport-sync: error: TRANSPORT_FEED_WEBHOOK_SECRET_FILE/m);
    expect(result.stderr).not.toContain('hunter2');
    // Without any secret: never unsigned.
    const unsigned = await runCli(['run'], {
      ...daemonEnv(),
      TRANSPORT_FEED_WEBHOOK_SECRET_FILE: '',
    });
    expect(unsigned.code).toBe(2);
    expect(unsigned.stderr).toMatch(
      /^transport-sync: error: TRANSPORT_FEED_WEBHOOK_URL is set without a signing secret/m,
    );
    expect(unsigned.stderr).toMatch(/hint: .*TRANSPORT_FEED_WEBHOOK_SECRET_FILE/);
  });
});
