import { Agent, request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import {
  percentile,
  signBody,
  startWebhookFixture,
  v2Event,
  webhookData,
  type WebhookFixture,
} from '../../helpers/webhooks.js';

let hook: WebhookFixture;
let agent: Agent | undefined;
afterEach(async () => {
  await agent?.close();
  await hook?.close();
});

describe('a burst of deliveries', () => {
  // The bound users rely on is each delivery's answer (p99 below). Applying the 1,000 events
  // afterwards takes about 5 s alone on PostgreSQL, but CI runs this beside three other test
  // files on two cores, where it took 20 s: a budget of its own, not the default 30 s.
  it('answers each of 1,000 concurrent deliveries with a 2xx well within 10 s, and stores them all', async () => {
    hook = await startWebhookFixture({ requests: 0 });
    // As a busy service would: many connections at once, every delivery signed.
    agent = new Agent({ connections: 100 });
    const bodies = Array.from({ length: 1000 }, (_, i) => {
      const id = `XX-${String(i % 250).padStart(8, '0')}`;
      return JSON.stringify(
        v2Event(`evt_${String(i).padStart(6, '0')}`, {
          service_request_id: id,
          event_timestamp: new Date(Date.UTC(2026, 10, 21, 10, 0, 0, i)).toISOString(),
          data: webhookData({ service_request_id: id, note: `note ${i}` }),
        }),
      );
    });
    const signatures = bodies.map((body) => signBody(body));
    // The service's clock for a delivery starts when it sends it on a connection, so each of the
    // 100 connections sends its share in turn and a delivery is timed from its own send: waiting
    // in this process for a free connection is not the receiver's latency.
    const CONNECTIONS = 100;
    const replies: { status: number; ms: number }[] = [];
    const started = performance.now();
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async (_, lane) => {
        for (let i = lane; i < bodies.length; i += CONNECTIONS) {
          const sent = performance.now();
          const response = await request(hook.service.url, {
            method: 'POST',
            dispatcher: agent,
            headers: {
              'content-type': 'application/json',
              'x-vectorcare-signature': signatures[i]!,
            },
            body: bodies[i]!,
          });
          await response.body.text();
          replies.push({ status: response.statusCode, ms: performance.now() - sent });
        }
      }),
    );
    const elapsedMs = performance.now() - started;
    expect(replies).toHaveLength(1000);
    expect(replies.every((reply) => reply.status === 200)).toBe(true);
    expect(await hook.count('SELECT count(*) AS n FROM webhook_events')).toBe(1000);
    const times = replies.map((reply) => reply.ms);
    const p50 = percentile(times, 50);
    const p99 = percentile(times, 99);
    console.log(
      `webhook burst: 1000 deliveries, 100 connections: p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, max ${Math.max(...times).toFixed(1)} ms, ${(1000 / (elapsedMs / 1000)).toFixed(0)} events/s`,
    );
    // The service gives up on a delivery after 10 s. Load generator and receiver share this
    // process, beside the rest of the suite on 2 cores, so the bound keeps a margin under the
    // service's limit rather than a guess at this machine's speed (the bench measures the latency
    // itself: a p99 near 0.1 s at concurrency 50).
    expect(p99).toBeLessThan(8_000);

    await hook.service.idle();
    expect(
      await hook.count(
        'SELECT count(*) AS n FROM webhook_events WHERE processed_at IS NULL OR error IS NOT NULL',
      ),
    ).toBe(0);
    expect(await hook.count('SELECT count(*) AS n FROM requests')).toBe(250);
    // The last event of each request (by event_id) is the one its profile holds.
    expect(
      await hook.count(
        "SELECT count(*) AS n FROM request_profiles WHERE note LIKE 'note 7__' OR note LIKE 'note 8__' OR note LIKE 'note 9__'",
      ),
    ).toBe(250);
  }, 90_000);
});
