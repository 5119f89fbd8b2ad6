import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';
import type { CallEvent, RetryEvent } from '../api/index.js';
import type { CycleResult } from '../sync/poll.js';

/*
 * Prometheus metrics with prom-client: the de-facto Node client (text exposition format, default
 * process metrics, histograms) and small, so we do not hand-write an exposition format that
 * scrapers are strict about. Every name starts with `transport_sync_`; the default process
 * metrics keep their standard names (process_*, nodejs_*) so stock dashboards work.
 */

/** Seconds: a cycle lists a few states and fetches what changed, usually well under a minute. */
const CYCLE_BUCKETS = [0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];
/** Seconds of one attempt against the service. */
const CALL_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** The daemon's metrics and the hooks that feed them. */
export interface Metrics {
  registry: Registry;
  /** After each poll cycle: counts it by status and observes its duration. */
  observeCycle(
    result: Pick<CycleResult, 'status' | 'counts'> & Partial<CycleResult>,
    durationMs: number,
  ): void;
  /** The service client's onCall hook: every attempt, by endpoint and status code. */
  onCall(event: CallEvent): void;
  /** The service client's onRetry hook. */
  onRetry(event: RetryEvent): void;
  /** The service client's onRateLimitedMs hook: time spent waiting on rate limits. */
  onRateLimitedMs(ms: number): void;
  /** One webhook event handled, by its result (stored, duplicate, applied, invalid, ...). */
  recordWebhook(result: string): void;
}

/** Creates a registry with the counters and histograms, plus the default process metrics. */
export function createMetrics({
  isDefaultMetricsOn = true,
}: { isDefaultMetricsOn?: boolean } = {}): Metrics {
  const registry = new Registry();
  if (isDefaultMetricsOn) collectDefaultMetrics({ register: registry });
  const registers = [registry];

  const cycles = new Counter({
    name: 'transport_sync_cycles_total',
    help: 'Poll cycles by how they ended (ok, partial, failed, aborted).',
    labelNames: ['status'] as const,
    registers,
  });
  // Zero samples from the start, so rate() and alerts see a cycle status before it first occurs.
  for (const status of ['ok', 'partial', 'failed', 'aborted']) cycles.inc({ status }, 0);
  const cycleSeconds = new Histogram({
    name: 'transport_sync_cycle_duration_seconds',
    help: 'Duration of poll cycles.',
    labelNames: ['status'] as const,
    buckets: CYCLE_BUCKETS,
    registers,
  });
  const cycleRequests = new Counter({
    name: 'transport_sync_cycle_requests_total',
    help: 'Requests handled by poll cycles, by outcome (new, changed, unchanged, unavailable, failed, quarantined).',
    labelNames: ['outcome'] as const,
    registers,
  });
  const driftSeen = new Counter({
    name: 'transport_sync_schema_drift_members_total',
    help: 'Drifted members (missing, retyped or unknown) in the records poll cycles stored.',
    registers,
  });
  const calls = new Counter({
    name: 'transport_sync_service_calls_total',
    help: 'Attempts of calls to the service by endpoint and HTTP status code ("none" when no response arrived).',
    labelNames: ['endpoint', 'code'] as const,
    registers,
  });
  const callSeconds = new Histogram({
    name: 'transport_sync_service_call_duration_seconds',
    help: 'Duration of one attempt of a call to the service, by endpoint.',
    labelNames: ['endpoint'] as const,
    buckets: CALL_BUCKETS,
    registers,
  });
  const retries = new Counter({
    name: 'transport_sync_retries_total',
    help: 'Calls to the service retried, by endpoint.',
    labelNames: ['endpoint'] as const,
    registers,
  });
  const rateLimited = new Counter({
    name: 'transport_sync_rate_limited_seconds_total',
    help: 'Seconds spent waiting on rate limits (our own pacing and the service answering 429).',
    registers,
  });
  const webhooks = new Counter({
    name: 'transport_sync_webhook_events_total',
    help: 'Webhook events by result.',
    labelNames: ['result'] as const,
    registers,
  });

  return {
    registry,
    observeCycle(result, durationMs) {
      cycles.inc({ status: result.status });
      cycleSeconds.observe({ status: result.status }, durationMs / 1000);
      const { counts } = result;
      const outcomes = {
        new: counts.requestsNew,
        changed: counts.requestsChanged,
        unchanged: counts.requestsUnchanged,
        unavailable: counts.requestsUnavailable,
        failed: counts.requestsFailed,
        quarantined: counts.requestsQuarantined,
      };
      if (counts.schemaDrift > 0) driftSeen.inc(counts.schemaDrift);
      for (const [outcome, n] of Object.entries(outcomes)) {
        if (n > 0) cycleRequests.inc({ outcome }, n);
      }
    },
    onCall(event) {
      calls.inc({ endpoint: event.endpoint, code: event.status === null ? 'none' : event.status });
      callSeconds.observe({ endpoint: event.endpoint }, event.durationMs / 1000);
    },
    onRetry(event) {
      retries.inc({ endpoint: event.endpoint });
    },
    onRateLimitedMs(ms) {
      if (ms > 0) rateLimited.inc(ms / 1000);
    },
    recordWebhook(result) {
      webhooks.inc({ result });
    },
  };
}
