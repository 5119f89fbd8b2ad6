import { MAX_NOTES_LENGTH } from '../api/actions.js';
import { locationSampleSchema, STATE_NAMES, type StateName } from '../api/schemas.js';
import { normalizeTimestamp } from '../time.js';

/**
 * Every check that can be made before an action leaves, in one place: the CLI refuses with exit 2
 * and the outbox drainer marks the row failed, from the same reasons. Reasons name the member and
 * the rule, never the value (a note or a position may be patient data).
 */

/** How far ahead of our clock a state timestamp may be: the service allows a minute of skew. */
export const FUTURE_SKEW_MS = 60_000;
/** The oldest state timestamp the service takes. */
export const MAX_STATE_AGE_MS = 7 * 24 * 3_600_000;
/** The action kinds of outbox_actions.kind. */
export const ACTION_KINDS = ['accept', 'decline', 'state', 'change_request', 'best_time'] as const;

/** An action kind. */
export type ActionKind = (typeof ACTION_KINDS)[number];

/** A checked value, or why it is refused. */
export type Checked<T> = { ok: true; value: T } | { ok: false; reason: string };

/** A checked provider action, ready for the service client. */
export type OutboxAction =
  | { kind: 'accept' | 'decline'; notes?: string }
  | { kind: 'state'; name: StateName; at: string }
  | { kind: 'change_request'; at: string; reason: string }
  | { kind: 'best_time'; at: string };

/** An action as an outbox_actions row (or the CLI's arguments) holds it: anything may be wrong. */
export interface ActionInput {
  kind: unknown;
  notes?: unknown;
  stateName?: unknown;
  at?: unknown;
  reason?: unknown;
}

/** A checked GPS sample. */
export interface Sample {
  lat: number;
  lng: number;
  alt: number;
  speed?: number;
  timestamp: number;
}

const ok = <T>(value: T): Checked<T> => ({ ok: true, value });
const refuse = (reason: string): Checked<never> => ({ ok: false, reason });
const isMissing = (value: unknown) => value === undefined || value === null;

/** Notes or a reason: text of at most 450 characters (code points, as the service counts). */
export function checkText(
  value: unknown,
  member: string,
  { isRequired = false } = {},
): Checked<string | undefined> {
  if (isMissing(value) || value === '') {
    return isRequired ? refuse(`${member} is missing`) : ok(undefined);
  }
  if (typeof value !== 'string') return refuse(`${member} is not text`);
  if (isRequired && value.trim() === '') return refuse(`${member} is empty`);
  const length = [...value].length;
  if (length > MAX_NOTES_LENGTH) {
    return refuse(
      `${member} is ${length} characters long; at most ${MAX_NOTES_LENGTH} are allowed`,
    );
  }
  return ok(value);
}

/** A state name the service knows. */
export function checkStateName(value: unknown): Checked<StateName> {
  if (isMissing(value) || value === '') return refuse('state name is missing');
  if (typeof value === 'string' && (STATE_NAMES as readonly string[]).includes(value)) {
    return ok(value as StateName);
  }
  return refuse(`unknown state name; expected one of ${STATE_NAMES.join(', ')}`);
}

/** An ISO-8601 timestamp, in canonical UTC form. */
export function checkTimestamp(value: unknown, member: string): Checked<string> {
  if (isMissing(value) || value === '') return refuse(`${member} is missing`);
  const iso = typeof value === 'string' ? normalizeTimestamp(value) : null;
  return iso === null ? refuse(`${member} is not an ISO-8601 timestamp`) : ok(iso);
}

/**
 * A state update's timestamp: not in the future and not older than 7 days, as the service
 * requires. A stale one only gets older, so the refusal is final.
 */
export function checkStateTimestamp(value: unknown, nowMs: number): Checked<string> {
  const checked = checkTimestamp(value, 'state timestamp');
  if (!checked.ok) return checked;
  const ms = Date.parse(checked.value);
  if (ms > nowMs + FUTURE_SKEW_MS) return refuse('state timestamp is in the future');
  if (ms < nowMs - MAX_STATE_AGE_MS) return refuse('state timestamp is older than 7 days (stale)');
  return checked;
}

/** Checks one action; `nowMs` bounds state timestamps. */
export function checkAction(input: ActionInput, nowMs: number): Checked<OutboxAction> {
  switch (input.kind) {
    case 'accept':
    case 'decline': {
      const notes = checkText(input.notes, 'notes');
      if (!notes.ok) return notes;
      return ok(
        notes.value === undefined ? { kind: input.kind } : { kind: input.kind, notes: notes.value },
      );
    }
    case 'state': {
      const name = checkStateName(input.stateName);
      if (!name.ok) return name;
      const at = checkStateTimestamp(input.at, nowMs);
      return at.ok ? ok({ kind: 'state', name: name.value, at: at.value }) : at;
    }
    case 'change_request': {
      const at = checkTimestamp(input.at, 'at (agreed_dt)');
      if (!at.ok) return at;
      const reason = checkText(input.reason, 'reason', { isRequired: true });
      if (!reason.ok) return reason;
      return ok({ kind: 'change_request', at: at.value, reason: reason.value as string });
    }
    case 'best_time': {
      const at = checkTimestamp(input.at, 'at (proposed_agreed_dt)');
      return at.ok ? ok({ kind: 'best_time', at: at.value }) : at;
    }
    default:
      return refuse(`unknown kind; expected one of ${ACTION_KINDS.join(', ')}`);
  }
}

const SAMPLE_MEMBERS = ['lat', 'lng', 'alt', 'timestamp'] as const;

/**
 * One GPS sample: lat, lng, alt and timestamp (Unix seconds) present and numbers, speed a number
 * when present; ranges as the client's schema has them, so the client never refuses a sample
 * that passed here.
 */
export function checkSample(value: unknown): Checked<Sample> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return refuse('a sample must be an object');
  }
  const record = value as Record<string, unknown>;
  const problems: string[] = [];
  for (const member of SAMPLE_MEMBERS) {
    const memberValue = record[member];
    if (isMissing(memberValue)) problems.push(`${member} is missing`);
    else if (typeof memberValue !== 'number' || !Number.isFinite(memberValue)) {
      problems.push(`${member} is not a number`);
    }
  }
  if (
    !isMissing(record.speed) &&
    (typeof record.speed !== 'number' || !Number.isFinite(record.speed))
  ) {
    problems.push('speed is not a number');
  }
  if (problems.length > 0) return refuse(problems.join(', '));
  const parsed = locationSampleSchema.safeParse(record);
  if (!parsed.success) {
    return refuse(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join(', '));
  }
  const { lat, lng, alt, speed, timestamp } = parsed.data;
  return ok({ lat, lng, alt, timestamp, ...(typeof speed === 'number' && { speed }) });
}
