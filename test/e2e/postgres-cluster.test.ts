import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/open.js';
import type { ChangeDocument } from '../../src/feed/document.js';
import { streamNameFor } from '../../src/feed/nats-sink.js';
import { createSimulator, type Simulator } from '../../src/simulator/index.js';
import { freePort, processTracker, runCli, serviceEnv, startCli } from '../helpers/cli.js';
import {
  countRows,
  createTestDatabase,
  queryAll,
  testEngine,
  type TestDatabase,
} from '../helpers/engine.js';
import { feedCursorsAt } from '../helpers/feed-history.js';
import { feedPositions } from '../helpers/feed.js';
import { deleteStream, natsClient, natsUrl, streamMessages } from '../helpers/nats.js';
import { tempDir } from '../helpers/records.js';
import { expectMirrorEqualsWebhookTruth } from '../helpers/webhook-truth.js';

/*
 * Several daemons on one PostgreSQL database: each receives webhooks, one leads (applies them,
 * publishes the change feed). The simulator delivers to both in turn, as a load balancer in front
 * of them would, and leaves a receiver that refused a connection out of the rotation for a while.
 * Runs in the postgres project only (its name says so).
 */

const processes = processTracker();
let sim: Simulator | undefined;
let database: TestDatabase | undefined;
afterEach(async () => {
  await processes.stopAll();
  sim?.webhooks?.close();
  await sim?.close();
  await database?.drop();
});

const leading = /"msg":"leading: polling, applying events, draining the outbox"/;

describe('two daemons sharing one PostgreSQL database', () => {
  it('lose no acknowledged event when the leader is killed mid-burst: the other leads within 30 s and applies each event once', async () => {
    expect(testEngine()).toBe('postgres');
    database = await createTestDatabase();
    const dir = tempDir();
    const keyFile = join(dir, 'service-public.pem');
    const [portA, portB] = [await freePort(), await freePort()];
    sim = createSimulator({
      seed: 11,
      // Every request comes through webhooks: the mirror is to hold each the burst shows.
      requests: 0,
      webhooks: {
        url: `http://127.0.0.1:${portA}/webhooks/,http://127.0.0.1:${portB}/webhooks/`,
        concurrency: 8,
      },
    });
    writeFileSync(keyFile, sim.webhooks!.publicKeyPem);
    const { url } = await sim.listen(0, '127.0.0.1');
    // Both publish the feed to NATS when they lead; the stream is to hold it once, in order.
    const natsServer = await natsUrl();
    const nats = await natsClient(natsServer);
    const subject = `transport_sync_cluster.${randomBytes(6).toString('hex')}.changes`;
    const envOf = (port: number) =>
      serviceEnv(url, {
        TRANSPORT_DB: database!.location,
        TRANSPORT_POLL: 'off',
        TRANSPORT_WEBHOOK_LISTEN: `127.0.0.1:${port}`,
        TRANSPORT_WEBHOOK_PUBLIC_KEY_FILE: keyFile,
        TRANSPORT_FEED_NATS_URL: natsServer,
        TRANSPORT_FEED_NATS_SUBJECT: subject,
      });
    const first = processes.track(startCli(['run'], envOf(portA)));
    await first.waitFor(leading, 20_000);
    const second = processes.track(startCli(['run'], envOf(portB)));
    await second.waitFor(/"msg":"joined the daemons on this database"/, 20_000);
    expect(second.output().stdout).not.toMatch(leading);

    // A burst of 1,000 events; the leader is killed once about a third are acknowledged.
    sim.mutate(1000);
    while (sim.webhooks!.stats.delivered < 300) await sleep(10);
    // The first leader has published part of the feed: the second is to go on from its cursor.
    const natsCursor = async () => (await feedCursorsAt(database!.location)).nats ?? 0;
    await expect.poll(natsCursor, { timeout: 20_000 }).toBeGreaterThan(0);
    first.child.kill('SIGKILL');
    const killedAt = Date.now();
    await second.waitFor(leading, 30_000);
    const takeoverMs = Date.now() - killedAt;
    expect(takeoverMs).toBeLessThan(30_000);

    await sim.webhooks!.idle();
    const db = await openDatabase({ location: database.location, shouldMigrate: false });
    try {
      for (let wait = 0; wait < 120; wait += 1) {
        if ((await countRows(db, 'webhook_events', 'processed_at IS NULL')) === 0) break;
        await sleep(250);
      }
      const stats = sim.webhooks!.stats;
      expect(stats.lost).toBe(0);
      const acknowledged = [...sim.webhooks!.acknowledgedEventIds];
      expect(acknowledged.length).toBeGreaterThanOrEqual(1000);
      const rows = await queryAll<{
        event_id: string;
        processed_at: string | null;
        error: string | null;
        attempts: number;
      }>(db, 'SELECT event_id, processed_at, error, attempts FROM webhook_events');
      const stored = new Map(rows.map((row) => [row.event_id, row]));
      // Every acknowledged event stored, applied, and applied once: one attempt, no error.
      for (const id of acknowledged) {
        expect(stored.get(id), id).toMatchObject({ error: null, attempts: 1 });
        expect(stored.get(id)!.processed_at, id).not.toBeNull();
      }
      expect(await expectMirrorEqualsWebhookTruth({ db, sim })).toBeGreaterThan(30);

      // The feed: the new leader went on from the NATS sink's saved cursor, so the stream holds
      // every change once, in feed order, whoever published it.
      const positions = await feedPositions(db);
      await expect.poll(natsCursor, { timeout: 30_000 }).toBeGreaterThanOrEqual(positions.at(-1)!);
      const published = await streamMessages(nats, streamNameFor(subject), subject);
      expect(published.map((message) => message.json<ChangeDocument>().position)).toEqual(
        positions,
      );

      const status = await runCli(['status', '--json'], envOf(portB));
      const cluster = (
        JSON.parse(status.stdout) as {
          cluster: {
            leader: { pid: number } | null;
            members: { pid: number; is_leader: boolean }[];
          };
        }
      ).cluster;
      expect(cluster.leader?.pid).toBe(second.child.pid);
      expect(cluster.members.find((m) => m.pid === second.child.pid)?.is_leader).toBe(true);
      console.log(
        `cluster: ${acknowledged.length} events acknowledged (${stats.attempts} attempts), leader killed, the other led after ${takeoverMs} ms`,
      );
    } finally {
      await db.close();
      await deleteStream(nats, streamNameFor(subject));
      await nats.close();
    }
  }, 180_000);
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
