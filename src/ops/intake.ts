import type { Connection } from '../db/sql.js';
import { isoFromMs } from '../time.js';
import { readLastDeliveryAt } from '../db/store/facts.js';
import { readIntakeGaps, readRequestsAtRisk } from '../db/store/intake-gap-store.js';

/** Requests named per unreviewed gap in status; the count says how many in all. */
const NAMED_PER_GAP = 200;

/** One gap as `status` shows it (key `intake_gaps.last`). */
export interface IntakeGapReport {
  gap_id: number;
  started_at: string;
  ended_at: string;
  seconds: number;
  reason: string;
  is_alarmed: boolean;
  reviewed_at: string | null;
  /**
   * Open requests, pickup after the gap began, that nothing has read from the service since it
   * ended: counted now for alarmed, unreviewed gaps; as recorded for the others.
   */
  requests_at_risk: number;
  request_ids: string[];
}

/** `status` key `intake_gaps`. */
export interface IntakeGapsReport {
  /** Alarmed gaps nobody has acknowledged yet: status exits 1 while there are any. */
  unreviewed: number;
  last: IntakeGapReport[];
}

/**
 * The last gaps, with the requests still at risk from each alarmed, unreviewed one: judged now,
 * so a request that a poll, a detail fetch or a webhook event read after the gap drops out.
 */
export async function readIntakeGapsReport(db: Connection): Promise<IntakeGapsReport> {
  const { unreviewed, last } = await readIntakeGaps(db);
  const reports: IntakeGapReport[] = [];
  for (const gap of last) {
    const isOpen = gap.is_alarmed === 1 && gap.reviewed_at === null;
    const ids = isOpen ? await readRequestsAtRisk(db, gap.started_at, gap.ended_at) : [];
    reports.push({
      ...gap,
      is_alarmed: gap.is_alarmed === 1,
      requests_at_risk: isOpen ? ids.length : gap.requests_at_risk,
      request_ids: ids.slice(0, NAMED_PER_GAP),
    });
  }
  return { unreviewed, last: reports };
}

/** `status` key `webhook_silence`. */
export interface WebhookSilenceReport {
  last_delivery_at: string | null;
  /** The silence watch in minutes (0: not watched). */
  silence_minutes: number;
  /** When the watch began (the daemon's start), or null when unknown. */
  watched_since: string | null;
  /** Within the expected hours, no delivery for silence_minutes or more. */
  is_silent: boolean;
}

/**
 * Webhook silence: no delivery for `minutes` while deliveries are expected (local hours
 * [from, to)). Hours outside that range never count as silent. Quiet time counts from the last
 * delivery or from when the watch began (`sinceMs`, the daemon's start), whichever is later: a
 * receiver just installed has had no chance to hear anything yet.
 */
export async function readWebhookSilence(
  db: Connection,
  {
    minutes,
    hours,
    nowMs,
    sinceMs,
  }: {
    minutes: number;
    hours: readonly [number, number];
    nowMs: number;
    sinceMs?: number | undefined;
  },
): Promise<WebhookSilenceReport> {
  const last = await readLastDeliveryAt(db);
  const hour = new Date(nowMs).getHours();
  const isExpected = hour >= hours[0] && hour < hours[1];
  const quietFrom = Math.max(
    last === null ? Number.NEGATIVE_INFINITY : Date.parse(last),
    sinceMs ?? Number.NEGATIVE_INFINITY,
  );
  return {
    last_delivery_at: last,
    silence_minutes: minutes,
    watched_since: sinceMs === undefined ? null : isoFromMs(sinceMs),
    is_silent: minutes > 0 && isExpected && nowMs - quietFrom >= minutes * 60_000,
  };
}
