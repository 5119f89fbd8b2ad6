import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ChangeDocument } from '../../src/feed/document.js';
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
import {
  createTestDatabase,
  queryAll,
  reading,
  testEngine,
  type TestDatabase,
} from '../helpers/engine.js';
import { changeDocumentValidator } from '../helpers/feed-schema.js';
import { tempDir } from '../helpers/records.js';
import { standardWebhookProblem } from '../helpers/standard-webhooks.js';

/*
 * The daemon publishing its change feed to an outbound webhook, as a process, on the project's
 * engine: killed with SIGKILL while it polls a simulator that keeps changing, then started again,
 * the receiver still gets every change, signed, and after dropping repeats by webhook-id it holds
 * exactly the feed, in order.
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
});
afterAll(async () => {
  sim.child.kill('SIGTERM');
  await sim.exited;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await database.drop();
});

const daemonEnv = () =>
  serviceEnv(sim.url, {
    TRANSPORT_DB: database.location,
    TRANSPORT_POLL_CRON: '* * * * * *',
    TRANSPORT_FEED_WEBHOOK_URL: receiverUrl,
    TRANSPORT_FEED_WEBHOOK_SECRET_FILE: secretFile,
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

describe('the feed webhook of the daemon', () => {
  it('delivers every change at least once and in order across SIGKILLs', async () => {
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
    const feed = () =>
      reading(database.location, async (db) =>
        (
          await queryAll<{ id: number }>(
            db,
            'SELECT change_id AS id FROM request_changes ORDER BY 1',
          )
        ).map((row) => Number(row.id)),
      );
    const positions = await feed();
    await deliveriesReach(positions.length);
    await new Promise<void>((resolve) => {
      const check = () => {
        if (deliveries.some((d) => d.document.position === positions.at(-1))) resolve();
      };
      onDelivery = check;
      check();
    });
    // /metrics carries the sink's lag, read from the database at scrape.
    const metrics = await (await fetch(`http://127.0.0.1:${monitoring}/metrics`)).text();
    expect(metrics).toMatch(/^transport_sync_feed_lag_changes\{sink="webhook"\} \d+$/m);
    expect(metrics).toMatch(/^transport_sync_feed_lag_seconds\{sink="webhook"\} [\d.]+$/m);
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
    const firsts: number[] = [];
    for (const { document } of deliveries) {
      if (!firsts.includes(document.position)) firsts.push(document.position);
    }
    // Everything up to the last change of the quiet cycle; a later re-read's change, if any,
    // may have gone out too before the stop.
    const atStop = await feed();
    expect(firsts.length).toBeGreaterThanOrEqual(positions.length);
    expect(firsts).toEqual(atStop.slice(0, firsts.length));
    expect(positions.length).toBeGreaterThan(40);
    // A shell's status shows the sinks the daemon publishes to (on PostgreSQL NOTIFY too), the
    // webhook at the last position it delivered, with what committed after it (if any) waiting.
    const status = await runCli(
      ['status', '--json'],
      cleanEnv({ TRANSPORT_DB: database.location }),
    );
    const report = JSON.parse(status.stdout) as { feed_sinks: Record<string, unknown>[] };
    expect(report.feed_sinks.map((lag) => lag.sink)).toEqual(
      testEngine() === 'postgres' ? ['webhook', 'notify'] : ['webhook'],
    );
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
