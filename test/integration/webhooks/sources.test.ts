import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { RECEIVER_TIMEOUTS } from '../../../src/webhooks/receiver.js';
import { queryAll } from '../../helpers/engine.js';
import { tally } from '../../helpers/outbox.js';
import {
  deliverFrom,
  startWebhookFixture,
  v2Event,
  type WebhookFixture,
} from '../../helpers/webhooks.js';

let hook: WebhookFixture;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await hook?.close();
});

/** Opens a connection from `address` that sends half a request and then nothing. */
function halfSent(
  url: string,
  address: string,
): Promise<{ socket: Socket; closed: Promise<number> }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port), localAddress: address });
    sockets.push(socket);
    socket.on('error', () => undefined);
    socket.resume(); // read what the receiver answers (a 408), so its close is seen
    const openedAt = performance.now();
    const closed = new Promise<number>((done) =>
      socket.once('close', () => done(performance.now() - openedAt)),
    );
    socket.once('connect', () => {
      socket.write(
        'POST /webhooks/ HTTP/1.1\r\nHost: receiver\r\nContent-Type: application/json\r\n',
      );
      resolve({ socket, closed });
    });
    socket.once('error', reject);
  });
}

describe('who may deliver', () => {
  it('answers 403 to sources outside TRANSPORT_WEBHOOK_ALLOW_FROM, stores nothing of theirs, and believes only a trusted proxy', async () => {
    const outcomes: string[] = [];
    hook = await startWebhookFixture({
      requests: 0,
      config: { webhookAllowFrom: ['127.0.0.2/32'], trustedProxies: ['127.0.0.3'] },
      onOutcome: (outcome) => outcomes.push(outcome),
    });
    const direct = (id: string, address: string, headers: Record<string, string> = {}) =>
      deliverFrom(hook.service.url, v2Event(id), address, headers);

    expect((await direct('evt_0001', '127.0.0.1')).status).toBe(403);
    expect((await direct('evt_0002', '127.0.0.2')).status).toBe(200);
    // Not a trusted proxy: its X-Forwarded-For is ignored, its own address decides.
    expect((await direct('evt_0003', '127.0.0.2', { 'x-forwarded-for': '127.0.0.1' })).status).toBe(
      200,
    );
    expect((await direct('evt_0004', '127.0.0.4', { 'x-forwarded-for': '127.0.0.2' })).status).toBe(
      403,
    );
    // Through the trusted proxy, the address it appended decides; what the client wrote to the
    // left of it proves nothing.
    const proxied = (id: string, forwarded: string) =>
      direct(id, '127.0.0.3', { 'x-forwarded-for': forwarded });
    expect((await proxied('evt_0005', '127.0.0.2')).status).toBe(200);
    expect((await proxied('evt_0006', '127.0.0.1')).status).toBe(403);
    expect((await proxied('evt_0007', '127.0.0.2, 127.0.0.1')).status).toBe(403);
    expect((await proxied('evt_0008', '198.51.100.7, 127.0.0.2')).status).toBe(200);

    const stored = await queryAll<{ event_id: string }>(
      hook.db,
      'SELECT event_id FROM webhook_events ORDER BY event_id',
    );
    // Sorted here too: PostgreSQL's collation may order text differently from SQLite's.
    expect(stored.map((row) => row.event_id).sort()).toEqual([
      'evt_0002',
      'evt_0003',
      'evt_0005',
      'evt_0008',
    ]);
    expect(tally(outcomes).get('forbidden')).toBe(4);
  });
});

describe('a receiver that keeps answering while others misbehave', () => {
  it('caps the connections one source holds, closing the rest at accept, and still answers others at once', async () => {
    const outcomes: string[] = [];
    hook = await startWebhookFixture({
      requests: 0,
      config: { webhookMaxConnectionsPerSource: 20 },
      onOutcome: (outcome) => outcomes.push(outcome),
    });
    const held = await Promise.all(
      Array.from({ length: 50 }, () => halfSent(hook.service.url, '127.0.0.2')),
    );
    // The 30 over the cap are closed at once; the 20 within it are still open.
    const closedSoon = await Promise.all(
      held.map(({ closed }) =>
        Promise.race([
          closed.then(() => true),
          new Promise((r) => setTimeout(() => r(false), 1000)),
        ]),
      ),
    );
    expect(closedSoon.filter(Boolean)).toHaveLength(30);
    expect(tally(outcomes).get('too_many_connections')).toBe(30);

    const reply = await hook.post(v2Event('evt_0001'));
    expect(reply.status).toBe(200);
    expect(reply.ms).toBeLessThan(1000);
  });

  it('closes a request that does not arrive whole within seconds, well inside the service budget', async () => {
    hook = await startWebhookFixture({ requests: 0 });
    const { closed } = await halfSent(hook.service.url, '127.0.0.2');
    const ms = await closed;
    // Closed at the header timeout (checked every half second), well before the service's 10 s.
    const { headersTimeout, connectionsCheckingInterval } = RECEIVER_TIMEOUTS;
    expect(ms).toBeGreaterThan(headersTimeout - connectionsCheckingInterval);
    expect(ms).toBeLessThan(headersTimeout + 2 * connectionsCheckingInterval);
    expect(ms).toBeLessThan(6_000);
  }, 15_000);
});
