import { afterEach, describe, expect, it } from 'vitest';
import { sqliteOf } from '../../helpers/engine.js';
import { sample } from '../../helpers/metrics.js';
import { openDatabase, type MirrorDb } from '../../../src/db/open.js';
import { emptyCounts } from '../../../src/db/store/run-store.js';
import { createMetrics } from '../../../src/ops/metrics.js';
import { registerDbGauges } from '../../../src/ops/metrics-db.js';
import { LAST_SUCCESS_KEY } from '../../../src/sync/poll.js';

const T0 = Date.UTC(2025, 5, 15, 12, 0, 0);
let db: MirrorDb | undefined;
afterEach(async () => {
  await db?.close();
  db = undefined;
});

describe('the metrics hooks', () => {
  it('count cycles, calls, retries, rate-limited time and webhook results', async () => {
    const metrics = createMetrics({ isDefaultMetricsOn: false });
    const counts = { ...emptyCounts(), requestsNew: 5, requestsChanged: 2 };
    metrics.observeCycle({ runId: 1, status: 'ok', counts, isListComplete: true }, 1500);
    metrics.observeCycle(
      { runId: 2, status: 'failed', counts: emptyCounts(), isListComplete: false },
      200,
    );
    const call = { endpoint: 'requests.list', method: 'GET', attempt: 1, durationMs: 30 };
    metrics.onCall({ ...call, status: 200 });
    metrics.onCall({ ...call, status: 429 });
    metrics.onCall({ ...call, status: null, errorCode: 'api.network' });
    metrics.onRetry({ ...call, status: 429, delayMs: 1000, errorCode: 'api.rate_limited' });
    metrics.onRateLimitedMs(1500);
    metrics.onRateLimitedMs(500);
    metrics.recordWebhook('applied');
    metrics.recordWebhook('applied');
    metrics.recordWebhook('invalid');
    const text = await metrics.registry.metrics();
    expect(sample(text, 'transport_sync_cycles_total{status="ok"}')).toBe(1);
    expect(sample(text, 'transport_sync_cycles_total{status="failed"}')).toBe(1);
    expect(sample(text, 'transport_sync_cycles_total{status="aborted"}')).toBe(0);
    expect(sample(text, 'transport_sync_cycle_duration_seconds_count{status="ok"}')).toBe(1);
    expect(sample(text, 'transport_sync_cycle_duration_seconds_sum{status="ok"}')).toBe(1.5);
    expect(sample(text, 'transport_sync_cycle_requests_total{outcome="new"}')).toBe(5);
    expect(sample(text, 'transport_sync_cycle_requests_total{outcome="changed"}')).toBe(2);
    for (const code of ['200', '429', 'none'])
      expect(
        sample(text, `transport_sync_service_calls_total{endpoint="requests.list",code="${code}"}`),
      ).toBe(1);
    expect(sample(text, 'transport_sync_retries_total{endpoint="requests.list"}')).toBe(1);
    expect(sample(text, 'transport_sync_rate_limited_seconds_total')).toBe(2);
    expect(sample(text, 'transport_sync_webhook_events_total{result="applied"}')).toBe(2);
    expect(sample(text, 'transport_sync_webhook_events_total{result="invalid"}')).toBe(1);
  });

  it('include the default process metrics', async () => {
    const text = await createMetrics().registry.metrics();
    expect(text).toContain('process_cpu_user_seconds_total');
    expect(text).toContain('nodejs_eventloop_lag_seconds');
  });
});

describe('the database gauges', () => {
  it('read requests by state, unavailable, quarantine, pending webhooks, outbox and freshness at scrape', async () => {
    db = await openDatabase({ location: ':memory:' });
    const metrics = createMetrics({ isDefaultMetricsOn: false });
    let now = T0;
    registerDbGauges({
      registry: metrics.registry,
      db,
      now: () => now,
    });
    let text = await metrics.registry.metrics();
    // Never synced: no freshness sample rather than a made-up one.
    expect(sample(text, 'transport_sync_freshness_seconds')).toBeUndefined();
    expect(sample(text, 'transport_sync_quarantined_records')).toBe(0);

    const insert = sqliteOf(db).prepare(
      `INSERT INTO requests (request_id, list_state, unavailable_at, synced_at, first_seen_at, source, raw_json)
       VALUES (?, ?, ?, 'x', 'x', 'poll', '{}')`,
    );
    insert.run('A', 'accepted', null);
    insert.run('B', 'accepted', null);
    insert.run('C', 'completed', null);
    insert.run('D', 'accepted', '2025-06-15T00:00:00.000Z');
    sqliteOf(db)
      .prepare(
        `INSERT INTO quarantine (record_key, source, reason, raw_payload, first_seen_at, last_seen_at)
         VALUES ('q1', 'poll', 'bad', '{}', 'x', 'x')`,
      )
      .run();
    sqliteOf(db)
      .prepare(
        `INSERT INTO webhook_events (event_id, envelope, payload_json, received_at, processed_at)
         VALUES ('e1', 'v2', '{}', 'x', NULL), ('e2', 'v2', '{}', 'x', 'y')`,
      )
      .run();
    sqliteOf(db)
      .prepare("INSERT INTO outbox_actions (request_id, kind) VALUES ('A', 'accept')")
      .run();
    sqliteOf(db)
      .prepare('INSERT INTO sync_state (key, value, updated_at) VALUES (?, ?, ?)')
      .run(LAST_SUCCESS_KEY, new Date(T0 - 30_000).toISOString(), 'x');
    now += 5000; // past the one-second snapshot
    text = await metrics.registry.metrics();
    expect(sample(text, 'transport_sync_requests{state="accepted"}')).toBe(2);
    expect(sample(text, 'transport_sync_requests{state="completed"}')).toBe(1);
    expect(sample(text, 'transport_sync_requests_unavailable')).toBe(1);
    expect(sample(text, 'transport_sync_quarantined_records')).toBe(1);
    expect(sample(text, 'transport_sync_webhook_events_pending')).toBe(1);
    expect(sample(text, 'transport_sync_outbox_rows{kind="actions",status="pending"}')).toBe(1);
    expect(sample(text, 'transport_sync_outbox_rows{kind="locations",status="pending"}')).toBe(0);
    expect(sample(text, 'transport_sync_freshness_seconds')).toBe(35);
    expect(sample(text, 'transport_sync_last_success_timestamp_seconds')).toBe(
      (T0 - 30_000) / 1000,
    );
  });
});
