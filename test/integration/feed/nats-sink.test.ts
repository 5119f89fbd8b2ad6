import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, nanos, type NatsConnection } from '@nats-io/transport-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../../src/clock.js';
import { openDatabase, type MirrorDb } from '../../../src/db/open.js';
import { createStore, type Store } from '../../../src/db/store.js';
import type { ChangeDocument } from '../../../src/feed/document.js';
import { createNatsSink, streamNameFor } from '../../../src/feed/nats-sink.js';
import { startPublisher, type PublisherTiming } from '../../../src/feed/publisher.js';
import { createFeedReader } from '../../../src/feed/reader.js';
import { silentLogger } from '../../../src/log.js';
import { caught } from '../../helpers/api.js';
import {
  createMigratedTestDatabase,
  execute,
  queryAll,
  testEngine,
  type TestDatabase,
} from '../../helpers/engine.js';
import { feedPositions, requestIds, writeRequests } from '../../helpers/feed.js';
import { changeDocumentValidator } from '../../helpers/feed-schema.js';
import {
  deleteStream,
  natsClient,
  natsUrl,
  startOwnNatsServer,
  streamMessages,
} from '../../helpers/nats.js';
import { tempDir } from '../../helpers/records.js';
import { createTestCa } from '../../helpers/tls-certs.js';

/*
 * The NATS JetStream sink and its publisher against a real nats-server: every change lands in
 * the stream once, in position order, with Nats-Msg-Id = its position, through a restart that
 * forgot its cursor and through the server going away.
 */

const FAST: PublisherTiming = { pollMs: 5, backoffMs: 5, maxBackoffMs: 50, batchSize: 7 };

let database: TestDatabase;
let db: MirrorDb;
let store: Store;
let subject: string;
let nc: NatsConnection | undefined;

function publish(servers: string) {
  return startPublisher({
    // A publish to a server that is away fails after a second, not ten.
    sink: createNatsSink({
      servers: [servers],
      subject,
      isPhiIncluded: false,
      timeoutMs: 1_000,
      maxAgeDays: 180,
    }),
    store,
    reader: createFeedReader(db),
    clock: systemClock,
    log: silentLogger(),
    timing: FAST,
  });
}

/** The positions the stream holds on the subject, in stream order, each checked. */
async function storedPositions(connection: NatsConnection): Promise<number[]> {
  const validator = changeDocumentValidator();
  const messages = await streamMessages(connection, streamNameFor(subject), subject);
  return messages.map((message) => {
    const document = message.json<ChangeDocument>();
    validator.expectValid(document);
    expect(document.request).not.toHaveProperty('patient_first_name');
    expect(message.header.get('Nats-Msg-Id')).toBe(String(document.position));
    return document.position;
  });
}

beforeEach(async () => {
  database = await createMigratedTestDatabase();
  db = await openDatabase({ location: database.location });
  store = createStore({ db, clock: systemClock });
  // A subject, and so a stream, of this test's own on the shared server.
  subject = `transport_sync_test.${randomBytes(6).toString('hex')}.changes`;
});
afterEach(async () => {
  if (nc) {
    await deleteStream(nc, streamNameFor(subject));
    await nc.close();
    nc = undefined;
  }
  await db.close();
  await database.drop();
});

describe('the NATS JetStream sink', () => {
  it('publishes every change once, in order, into a stream it creates', async () => {
    const url = await natsUrl();
    nc = await natsClient(url);
    await writeRequests(store, requestIds('AAAA', 5), '2026-11-26T09:00:00.000Z');
    const publisher = publish(url);
    await writeRequests(store, requestIds('BBBB', 20), '2026-11-26T09:01:00.000Z');
    await publisher.caughtUp();
    expect(publisher.state()).toMatchObject({ sink: 'nats', failures: 0 });
    await publisher.stop();

    const positions = await feedPositions(db);
    expect(positions).toHaveLength(25);
    expect(await storedPositions(nc)).toEqual(positions);
    expect(
      await queryAll(db, "SELECT value FROM sync_state WHERE key = 'feed_cursor:nats'"),
    ).toEqual([{ value: String(positions.at(-1)) }]);
    // The stream it made keeps a message as long as the mirror keeps the change.
    const info = await (await jetstreamManager(nc)).streams.info(streamNameFor(subject));
    expect(info.config).toMatchObject({
      subjects: [subject],
      max_age: nanos(180 * 24 * 60 * 60 * 1000),
    });
  });

  it('stores nothing twice when its cursor was lost, beyond the duplicate window', async () => {
    const url = await natsUrl();
    nc = await natsClient(url);
    // The operator's stream, with a duplicate window far shorter than a daemon's restart.
    const manager = await jetstreamManager(nc);
    await manager.streams.add({
      name: streamNameFor(subject),
      subjects: [subject],
      duplicate_window: 100_000_000, // 100 ms, in nanoseconds
    });
    await writeRequests(store, requestIds('AAAA', 9), '2026-11-26T09:00:00.000Z');
    const first = publish(url);
    await first.caughtUp();
    await first.stop();
    await new Promise((resolve) => setTimeout(resolve, 200));
    // Killed after publishing, before its cursor was saved: it starts over from 0.
    await store.transaction((tx) => tx.feedCursors.set('nats', 0, '2026-11-26T09:02:00.000Z'));
    await writeRequests(store, requestIds('BBBB', 3), '2026-11-26T09:03:00.000Z');
    const second = publish(url);
    await second.caughtUp();
    await second.stop();

    expect(await storedPositions(nc)).toEqual(await feedPositions(db));
  });

  it('stops, saying so, when the stream holds another change at its position (a restore)', async () => {
    const url = await natsUrl();
    nc = await natsClient(url);
    await writeRequests(store, requestIds('AAAA', 5), '2026-11-26T09:00:00.000Z');
    const first = publish(url);
    await first.caughtUp();
    await first.stop();
    const published = await feedPositions(db);
    // A backup taken after the second change, restored: its cursor, and positions given again.
    const kept = published[1]!;
    await execute(db, 'DELETE FROM request_changes WHERE change_id > @kept', { kept });
    await execute(
      db,
      testEngine() === 'postgres'
        ? "SELECT setval(pg_get_serial_sequence('request_changes', 'change_id'), @kept)"
        : "UPDATE sqlite_sequence SET seq = @kept WHERE name = 'request_changes'",
      { kept },
    );
    await store.transaction((tx) => tx.feedCursors.set('nats', kept, '2026-11-26T09:05:00.000Z'));
    await writeRequests(store, requestIds('BBBB', 3), '2026-11-26T09:06:00.000Z');
    expect((await feedPositions(db)).slice(2)).toEqual(published.slice(2));

    const after = publish(url);
    await expect.poll(() => after.state().failures, { timeout: 20_000 }).toBeGreaterThan(0);
    const state = after.state();
    await after.stop();
    expect(state.lastError).toMatch(/is position \d+ of a change this database does not hold/);
    // Nothing was counted as delivered: the new changes wait, and the stream is as it was.
    expect(state.position).toBe(kept);
    expect(await storedPositions(nc)).toEqual(published);
    const documents = await streamMessages(nc, streamNameFor(subject), subject);
    expect(documents.map((m) => m.json<ChangeDocument>().request_id)).toEqual(
      requestIds('AAAA', 5),
    );
  });

  it('delivers the backlog in order once a server that went away is back', async () => {
    const server = await startOwnNatsServer();
    try {
      await writeRequests(store, requestIds('AAAA', 4), '2026-11-26T09:00:00.000Z');
      const publisher = publish(server.url);
      await publisher.caughtUp();
      await server.stop();
      await writeRequests(store, requestIds('BBBB', 12), '2026-11-26T09:01:00.000Z');
      // It tries, fails and backs off while the server is away.
      await expect.poll(() => publisher.state().failures, { timeout: 20_000 }).toBeGreaterThan(0);
      await server.start();
      await publisher.caughtUp();
      expect(publisher.state()).toMatchObject({ failures: 0, lastError: null });
      await publisher.stop();

      nc = await natsClient(server.url);
      expect(await storedPositions(nc)).toEqual(await feedPositions(db));
    } finally {
      await nc?.close();
      nc = undefined;
      await server.stop();
    }
  });

  it('verifies the server against TRANSPORT_FEED_NATS_CA_FILE, and refuses a server it cannot verify', async () => {
    const dir = tempDir();
    const ca = createTestCa(dir);
    // By name, as operators reach their servers (the client verifies the name it dialed).
    const { certFile, keyFile } = ca.issue('nats', ['DNS:localhost']);
    const server = await startOwnNatsServer(['--tls', '--tlscert', certFile, '--tlskey', keyFile]);
    const tlsUrl = server.url.replace('nats://127.0.0.1', 'tls://localhost');
    try {
      await writeRequests(store, requestIds('AAAA', 3), '2026-11-26T09:00:00.000Z');
      const sinkOf = (caFile?: string) =>
        createNatsSink({
          servers: [tlsUrl],
          subject,
          ...(caFile && { caFile }),
          isPhiIncluded: false,
          timeoutMs: 2_000,
        });
      // Without the private CA, the system's CAs do not vouch for it: no connection.
      const untrusted = sinkOf();
      await expect(untrusted.probe()).rejects.toThrow(/cannot reach JetStream/);
      await untrusted.close();
      const trusted = sinkOf(ca.caFile);
      expect(await trusted.probe()).toMatch(/JetStream on/);
      await trusted.close();
      const publisher = startPublisher({
        sink: sinkOf(ca.caFile),
        store,
        reader: createFeedReader(db),
        clock: systemClock,
        log: silentLogger(),
        timing: FAST,
      });
      await publisher.caughtUp();
      await publisher.stop();
      nc = await connect({ servers: tlsUrl, tls: { caFile: ca.caFile } });
      expect(await storedPositions(nc)).toEqual(await feedPositions(db));
    } finally {
      if (nc) await deleteStream(nc, streamNameFor(subject));
      await nc?.close();
      nc = undefined;
      await server.stop();
    }
  });

  it('refuses, at start, a credentials file it cannot read', async () => {
    const missing = join(tempDir(), 'absent.creds');
    const error = await caught(
      Promise.resolve().then(() =>
        createNatsSink({
          servers: ['nats://127.0.0.1:4222'],
          subject,
          credsFile: missing,
          isPhiIncluded: false,
        }),
      ),
    );
    expect(error.code).toBe('feed.file_unreadable');
    expect(error.message).toContain('TRANSPORT_FEED_NATS_CREDS_FILE');
  });
});
