import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../../src/clock.js';
import { openDatabase, type MirrorDb } from '../../../src/db/open.js';
import { createStore, type Store } from '../../../src/db/store.js';
import { readFeedLag } from '../../../src/db/store/feed-cursor-store.js';
import { pruneHistory } from '../../../src/db/store/retention.js';
import type { ChangeDocument } from '../../../src/feed/document.js';
import { startPublisher, type PublisherTiming } from '../../../src/feed/publisher.js';
import { createFeedReader } from '../../../src/feed/reader.js';
import { createWebhookSink } from '../../../src/feed/webhook-sink.js';
import { silentLogger } from '../../../src/log.js';
import { captureLogger } from '../../helpers/api.js';
import {
  createMigratedTestDatabase,
  execute,
  queryAll,
  type TestDatabase,
} from '../../helpers/engine.js';
import { feedPositions, writeRequests } from '../../helpers/feed.js';
import { changeDocumentValidator } from '../../helpers/feed-schema.js';
import { tempDir } from '../../helpers/records.js';
import { standardWebhookProblem } from '../../helpers/standard-webhooks.js';
import { createTestCa } from '../../helpers/tls-certs.js';

/*
 * The outbound webhook sink and its publisher against a receiver on loopback that checks every
 * delivery as a Standard Webhooks library would, and fails some: every change arrives, in
 * position order, from the durable cursor, and retention keeps what the sink has not taken.
 */

const SECRET = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;
const FAST: PublisherTiming = { pollMs: 5, backoffMs: 2, maxBackoffMs: 20, batchSize: 7 };

let database: TestDatabase;
let db: MirrorDb;
let store: Store;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let secretFile: string;

/** A receiver that verifies each delivery and answers from `answers` (then 204). */
async function startReceiver() {
  const received: { document: ChangeDocument; problem: string | null }[] = [];
  const answers: number[] = [];
  // Every request, refused or not, and a wait on their count.
  const attempts = { count: 0, onAttempt: () => {} };
  const server: Server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      attempts.count += 1;
      attempts.onAttempt();
      const status = answers.shift() ?? 204;
      if (status < 300) {
        received.push({
          document: JSON.parse(body) as ChangeDocument,
          problem: standardWebhookProblem(SECRET, request.headers, body),
        });
      }
      response.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/feed/`,
    received,
    answers,
    attempts,
    /** Resolves once `count` requests have arrived in all. */
    attemptsReach: (count: number) =>
      new Promise<void>((resolve) => {
        attempts.onAttempt = () => {
          if (attempts.count >= count) resolve();
        };
        attempts.onAttempt();
      }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

beforeEach(async () => {
  database = await createMigratedTestDatabase();
  db = await openDatabase({ location: database.location });
  store = createStore({ db, clock: systemClock });
  receiver = await startReceiver();
  secretFile = join(tempDir(), 'feed-secret');
  writeFileSync(secretFile, `${SECRET}\n`, { mode: 0o600 });
});
afterEach(async () => {
  await receiver.close();
  await db.close();
  await database.drop();
});

function publish(log = silentLogger()) {
  const sink = createWebhookSink(
    { url: receiver.url, secretFile, isPhiIncluded: false },
    systemClock,
  );
  return startPublisher({
    sink,
    store,
    reader: createFeedReader(db),
    clock: systemClock,
    log,
    timing: FAST,
  });
}

describe('the outbound webhook sink', () => {
  it('delivers every change once acknowledged, in order, signed, through refusals and an outage', async () => {
    await writeRequests(
      store,
      ['AAAA0001', 'AAAA0002', 'AAAA0003', 'AAAA0004'],
      '2026-11-26T09:00:00.000Z',
    );
    // Refused at first, then down for a while in the middle of the run.
    receiver.answers.push(503, 500, 204, 204, 429, 503, 503, 502);
    const { log, lines } = captureLogger();
    const publisher = publish(log);
    await writeRequests(
      store,
      Array.from({ length: 20 }, (_, i) => `BBBB${String(i).padStart(4, '0')}`),
      '2026-11-26T09:01:00.000Z',
    );
    await publisher.caughtUp();
    const state = publisher.state();
    await publisher.stop();

    const positions = await feedPositions(db);
    expect(positions).toHaveLength(24);
    // Each was acknowledged once (a refused one is not taken), in position order.
    expect(receiver.received.map((r) => r.document.position)).toEqual(positions);
    const validator = changeDocumentValidator();
    for (const { document, problem } of receiver.received) {
      expect(problem).toBeNull();
      validator.expectValid(document);
      expect(document.request).not.toHaveProperty('patient_first_name');
    }
    expect(state).toMatchObject({ sink: 'webhook', position: positions.at(-1), failures: 0 });
    // The failures were logged once per streak, with the status, never a patient's name.
    const warnings = lines.filter((line) => line.includes('feed sink delivery failed'));
    expect(warnings.length).toBeGreaterThanOrEqual(2);
    expect(warnings.join('')).toMatch(/answered 503/);
    expect(lines.join('')).not.toMatch(/Seán|O'Brien/);
    // The cursor is durable: what the next publisher starts from.
    expect(
      await queryAll(db, "SELECT value FROM sync_state WHERE key = 'feed_cursor:webhook'"),
    ).toEqual([{ value: String(positions.at(-1)) }]);
  });

  it('backs off from a receiver that is down, however often commits wake it', async () => {
    receiver.answers.push(...Array.from({ length: 50 }, () => 503));
    await writeRequests(store, ['AAAA0001'], '2026-11-26T09:00:00.000Z');
    const sink = createWebhookSink(
      { url: receiver.url, secretFile, isPhiIncluded: false },
      systemClock,
    );
    const publisher = startPublisher({
      sink,
      store,
      reader: createFeedReader(db),
      clock: systemClock,
      log: silentLogger(),
      timing: { ...FAST, backoffMs: 60_000, maxBackoffMs: 60_000 },
      random: () => 1,
    });
    await receiver.attemptsReach(1);
    // Commits wake it (as the daemon's do): during a backoff of a minute, none may retry.
    for (let i = 0; i < 10; i += 1) {
      await writeRequests(store, [`WAKE${i}`], '2026-11-26T09:01:00.000Z');
      publisher.wake();
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(receiver.attempts.count).toBe(1);
    expect(publisher.state()).toMatchObject({ failures: 1, position: 0 });
    await publisher.stop();
  });

  it('goes on from its cursor after a restart, sending only what came since', async () => {
    await writeRequests(store, ['AAAA0001', 'AAAA0002'], '2026-11-26T09:00:00.000Z');
    const first = publish();
    await first.caughtUp();
    await first.stop();
    const before = receiver.received.length;
    await writeRequests(store, ['CCCC0001', 'CCCC0002', 'CCCC0003'], '2026-11-26T09:05:00.000Z');
    const second = publish();
    await second.caughtUp();
    await second.stop();
    const sent = receiver.received.slice(before).map((r) => r.document.request_id);
    expect(sent).toEqual(['CCCC0001', 'CCCC0002', 'CCCC0003']);
  });

  it('reports how far behind the sink is: changes waiting and the age of the oldest', async () => {
    await writeRequests(store, ['AAAA0001', 'AAAA0002', 'AAAA0003'], '2026-11-26T09:00:00.000Z');
    const positions = await feedPositions(db);
    await store.transaction((tx) => tx.feedCursors.set('webhook', positions[0]!, tx.now()));
    const [oldest] = await queryAll<{ at: string }>(
      db,
      'SELECT committed_at AS at FROM request_changes WHERE change_id = @id',
      { id: positions[1] },
    );
    const nowMs = Date.parse(oldest!.at) + 90_000;
    const [lag] = await readFeedLag(db, ['webhook'], nowMs);
    expect(lag).toMatchObject({
      sink: 'webhook',
      position: positions[0],
      last_position: positions[2],
      lag_changes: 2,
      lag_seconds: 90,
    });
    // A sink that has taken nothing yet waits for the whole feed.
    expect((await readFeedLag(db, ['nats'], nowMs))[0]).toMatchObject({
      position: 0,
      lag_changes: 3,
      cursor_updated_at: null,
    });
  });

  it('holds back retention: a change the sink has not acknowledged is kept, however old', async () => {
    await writeRequests(
      store,
      ['AAAA0001', 'AAAA0002', 'AAAA0003', 'AAAA0004'],
      '2020-01-01T00:00:00.000Z',
    );
    const positions = await feedPositions(db);
    await execute(
      db,
      "INSERT INTO sync_state (key, value, updated_at) VALUES ('feed_cursor:webhook', @value, @at)",
      { value: String(positions[1]), at: '2026-11-26T09:00:00.000Z' },
    );
    const now = Date.parse('2026-11-26T09:00:00.000Z');
    const counts = await pruneHistory({ db, retentionDays: 30, now, feedSinks: ['webhook'] });
    expect(counts.requestChanges).toBe(2);
    expect(await feedPositions(db)).toEqual(positions.slice(2));
    // A sink with no cursor yet holds everything; without sinks, age alone decides.
    expect(
      (await pruneHistory({ db, retentionDays: 30, now, feedSinks: ['webhook', 'nats'] }))
        .requestChanges,
    ).toBe(0);
    expect((await pruneHistory({ db, retentionDays: 30, now })).requestChanges).toBe(2);
  });
});

describe('the outbound webhook sink over HTTPS', () => {
  it("trusts the receiver's certificate through TRANSPORT_FEED_WEBHOOK_CA_FILE, and only so", async () => {
    const dir = tempDir();
    const ca = createTestCa(dir);
    const { certFile, keyFile } = ca.issue('receiver');
    const bodies: string[] = [];
    const server = createHttpsServer(
      { cert: readFileSync(certFile), key: readFileSync(keyFile) },
      (request, response) => {
        let body = '';
        request.on('data', (chunk) => (body += chunk));
        request.on('end', () => {
          bodies.push(body);
          response.writeHead(204).end();
        });
      },
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/feed/`;
    const document = { position: 1, kind: 'test' } as unknown as ChangeDocument;
    const deliver = async (caFile?: string) => {
      const sink = createWebhookSink(
        { url, secretFile, isPhiIncluded: false, ...(caFile && { caFile }) },
        systemClock,
      );
      const acknowledged: number[] = [];
      try {
        await sink.deliver(
          [document],
          new AbortController().signal,
          (position) => acknowledged.push(position),
          async () => undefined, // the webhook sink looks nothing up
        );
        return acknowledged;
      } finally {
        await sink.close();
      }
    };
    expect(await deliver(ca.caFile)).toEqual([1]);
    expect(JSON.parse(bodies[0]!)).toEqual({ position: 1, kind: 'test' });
    const refused = await deliver().catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: 'feed.delivery_failed' });
    expect(bodies).toHaveLength(1);
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
});
