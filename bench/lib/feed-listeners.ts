/**
 * What a dispatch system runs to follow the change feed, in the bench process: a receiver of the
 * outbound webhook, a NATS subscriber, a PostgreSQL listener. Each notes when a change arrived,
 * by request id, in an ArrivalLog.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import pg from 'pg';
import type { ChangeDocument } from '../../src/feed/document.js';
import { streamNameFor } from '../../src/feed/nats-sink.js';
import { standardWebhookProblem } from '../../test/helpers/standard-webhooks.js';
import { createArrivalLog, type ArrivalLog } from './arrival-log.js';

const now = () => performance.timeOrigin + performance.now();

/** A listener, running. */
export interface FeedListener {
  log: ArrivalLog;
  close(): Promise<void>;
}

const committedMs = (document: Pick<ChangeDocument, 'committed_at'>) =>
  Date.parse(document.committed_at);
const changeOf = (document: Pick<ChangeDocument, 'request_id' | 'kind'>) => ({
  requestId: document.request_id,
  kind: document.kind,
});

/**
 * A receiver of the outbound webhook at `url`: checks each delivery's Standard Webhooks
 * signature under `secret` (one that fails is a problem of the run) and answers 204 at once, so
 * the daemon's next delivery is not held back by the bench.
 */
export async function startWebhookListener(
  secret: string,
): Promise<FeedListener & { url: string }> {
  const log = createArrivalLog('webhook');
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      // Arrived once the body is in; checking and parsing come after the time is taken.
      const atMs = now();
      const body = Buffer.concat(chunks).toString('utf8');
      const problem = standardWebhookProblem(secret, request.headers, body);
      if (problem) {
        log.fail(`a delivery failed the signature check: ${problem}`);
        response.writeHead(401).end();
        return;
      }
      const document = JSON.parse(body) as ChangeDocument;
      log.record(changeOf(document), atMs, committedMs(document));
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/changes`,
    log,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * A core NATS subscription on `subject` (JetStream delivers what it stores to core subscribers
 * too). Closing it also deletes the stream the daemon created for the subject: the subject is
 * the bench run's own, and a stream left behind would make the next daemon skip positions it
 * holds.
 */
export async function startNatsListener(servers: string, subject: string): Promise<FeedListener> {
  const log = createArrivalLog('nats');
  const nc = await connect({ servers, name: 'transport-sync-bench' }).catch((error: unknown) => {
    throw new Error(
      `no NATS server with JetStream to measure on at ${servers} (${(error as Error).message}); set TRANSPORT_BENCH_NATS_URL`,
    );
  });
  nc.subscribe(subject, {
    callback: (error, message) => {
      if (error) {
        log.fail(`the subscription failed: ${error.message}`);
        return;
      }
      const atMs = now();
      const document = message.json<ChangeDocument>();
      log.record(changeOf(document), atMs, committedMs(document));
    },
  });
  // The server knows of the subscription before the daemon publishes anything.
  await nc.flush();
  return {
    log,
    async close() {
      try {
        const manager = await jetstreamManager(nc);
        await manager.streams.delete(streamNameFor(subject)).catch(() => undefined);
      } finally {
        await nc.close();
      }
    },
  };
}

/** LISTEN on `channel` in the mirror's PostgreSQL database; the payload names the request. */
export async function startNotifyListener(
  location: string,
  channel: string,
): Promise<FeedListener> {
  const log = createArrivalLog('notify');
  const client = new pg.Client({ connectionString: location });
  await client.connect();
  client.on('error', (error) => log.fail(`the listening connection failed: ${error.message}`));
  client.on('notification', (message) => {
    const atMs = now();
    if (message.channel !== channel || !message.payload) return;
    const payload = JSON.parse(message.payload) as Pick<ChangeDocument, 'request_id' | 'kind'>;
    log.record(changeOf(payload), atMs, null);
  });
  await client.query(`LISTEN ${client.escapeIdentifier(channel)}`);
  return {
    log,
    close: () => client.end(),
  };
}
