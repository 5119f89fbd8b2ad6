/*
 * Which requests an intake gap leaves at risk, decided without I/O. The service has no replay, so
 * an event lost in a gap is lost for good; but whatever the mirror read from the service after the
 * gap ended already holds the change that event carried. A request is at risk while it is open,
 * its pickup lies after the gap began, and nothing has read it from the service since the gap
 * ended: no webhook event that carried its record, no detail read, no complete poll that listed
 * its state and window. src/db/store/intake-gap-store.ts reads the facts in one statement.
 */

/** Key in sync_state of the last poll cycle that listed every state and fetched every detail. */
export const POLL_COVERAGE_KEY = 'last_complete_poll';

/**
 * What the last complete poll cycle (status ok) compared with the service: every stored request of
 * these states with its event time in the window was listed and, if it differed, read again.
 */
export interface PollCoverage {
  /** When the cycle began (canonical ISO, our clock): its lists were read after this. */
  started_at: string;
  window_from: string;
  window_to: string;
  states: string[];
}

/** A stored request as the rule needs it (timestamps canonical ISO, or null). */
export interface AtRiskFacts {
  request_id: string;
  list_state: string | null;
  unavailable_at: string | null;
  /** Agreed time, else requested pickup time. */
  pickup_at: string | null;
  /** What the lists filter on: agreed, else requested pickup, else created. */
  event_dt_utc: string | null;
  /** When the stored detail was read (the service's clock; see mirror/settled.ts). */
  read_at: string | null;
  /** Latest receipt of a webhook event that carried the record (or its end) and applied. */
  record_event_at: string | null;
  /** Latest time a malformed record of this request was quarantined. */
  quarantined_at: string | null;
}

/** A gap's stretch (canonical ISO, our clock). */
export interface GapSpan {
  started_at: string;
  ended_at: string;
}

/** Requests in these states can still change in ways a lost event would hide. */
export const OPEN_STATES = ['awaiting', 'accepted'] as const;

/** How a request was read from the service after a gap ended, or null if it was not. */
export type ReRead = 'webhook' | 'detail' | 'poll' | null;

const ms = (iso: string | null) => (iso === null ? Number.NaN : Date.parse(iso));
const isAtOrAfter = (iso: string | null, bound: string) => ms(iso) >= ms(bound);

/**
 * How the mirror read `facts` from the service at or after `endedAt`. A read before the end says
 * nothing of the events the rest of the gap swallowed. The poll counts only where it looked: its
 * states, its window, and not a record it had to quarantine instead of storing.
 */
export function reReadAfter(
  facts: AtRiskFacts,
  endedAt: string,
  coverage: PollCoverage | null,
): ReRead {
  if (isAtOrAfter(facts.record_event_at, endedAt)) return 'webhook';
  // read_at is a lower bound of the service's read: at or after the end, the read certainly was.
  if (isAtOrAfter(facts.read_at, endedAt)) return 'detail';
  if (coverage && isCoveredBy(facts, coverage, endedAt)) return 'poll';
  return null;
}

function isCoveredBy(facts: AtRiskFacts, coverage: PollCoverage, endedAt: string): boolean {
  if (!isAtOrAfter(coverage.started_at, endedAt)) return false;
  if (facts.list_state === null || !coverage.states.includes(facts.list_state)) return false;
  const at = ms(facts.event_dt_utc);
  if (!(at >= ms(coverage.window_from) && at <= ms(coverage.window_to))) return false;
  return !isAtOrAfter(facts.quarantined_at, coverage.started_at);
}

/**
 * Whether a gap leaves the request at risk: open (awaiting or accepted, available), its pickup
 * after the gap began, and not read from the service since the gap ended.
 */
export function isAtRisk(facts: AtRiskFacts, gap: GapSpan, coverage: PollCoverage | null): boolean {
  if (facts.unavailable_at !== null) return false;
  if (!(OPEN_STATES as readonly (string | null)[]).includes(facts.list_state)) return false;
  if (!(ms(facts.pickup_at) > ms(gap.started_at))) return false;
  return reReadAfter(facts, gap.ended_at, coverage) === null;
}

/** The sync_state value recording a complete poll cycle. */
export function pollCoverageText(coverage: PollCoverage): string {
  return JSON.stringify(coverage);
}

/** The coverage a sync_state value records, or null (none, or a value this version cannot read). */
export function parsePollCoverage(text: string | null | undefined): PollCoverage | null {
  if (!text) return null;
  try {
    const value = JSON.parse(text) as Partial<PollCoverage> | null;
    const isTime = (v: unknown) => typeof v === 'string' && !Number.isNaN(Date.parse(v));
    if (
      value === null ||
      typeof value !== 'object' ||
      !isTime(value.started_at) ||
      !isTime(value.window_from) ||
      !isTime(value.window_to) ||
      !Array.isArray(value.states) ||
      !value.states.every((state) => typeof state === 'string')
    ) {
      return null;
    }
    const { started_at, window_from, window_to, states } = value as PollCoverage;
    return { started_at, window_from, window_to, states };
  } catch {
    return null;
  }
}
