import { REQUEST_STATES, type RequestState } from '../config/index.js';
import { planBackfill, type BackfillPlan } from '../sync/backfill.js';
import { normalizeDate, normalizeTimestamp } from '../time.js';
import { usageError } from './command.js';

const DAY_MS = 86_400_000;
const MAX_WINDOWS = 100_000;

/**
 * Parses `--from`/`--to` (a date, or an ISO time) and the rest, throwing usage errors (exit 2)
 * before any call is made. A date as `--to` means the end of that day, so `--from 2026-01-01
 * --to 2026-01-31` covers all of January.
 */
export function parseBackfillArgs(args: {
  from?: string;
  to?: string;
  states?: string;
  chunkHours?: string;
}): BackfillPlan {
  if (!args.from || !args.to) throw usageError('--from and --to are required');
  const fromMs = parseBound('from', args.from, 'start');
  const toMs = parseBound('to', args.to, 'end');
  if (fromMs >= toMs) throw usageError(`--from (${args.from}) must be before --to (${args.to})`);
  const states = parseStates(args.states);
  const chunkHours = args.chunkHours === undefined ? 24 : Number(args.chunkHours);
  if (!Number.isInteger(chunkHours) || chunkHours < 1 || chunkHours > 24 * 366) {
    throw usageError(
      `--chunk-hours must be a whole number from 1 to ${24 * 366}, got "${args.chunkHours}"`,
    );
  }
  const plan = planBackfill({ fromMs, toMs, states, chunkHours });
  if (plan.windows.length > MAX_WINDOWS) {
    throw usageError(`the range makes ${plan.windows.length} windows; raise --chunk-hours`);
  }
  return plan;
}

function parseBound(name: string, text: string, edge: 'start' | 'end'): number {
  const date = /^\d{4}-\d{2}-\d{2}$/.test(text.trim()) ? normalizeDate(text) : null;
  if (date) return Date.parse(`${date}T00:00:00.000Z`) + (edge === 'end' ? DAY_MS - 1 : 0);
  const time = normalizeTimestamp(text);
  if (time) return Date.parse(time);
  throw usageError(
    `--${name} must be a date (2026-01-31) or an ISO 8601 time (2026-01-31T08:00:00Z), got "${text}"`,
  );
}

function parseStates(text: string | undefined): RequestState[] {
  if (text === undefined) return [...REQUEST_STATES];
  const states = text
    .split(',')
    .map((part) => part.trim().toLowerCase())
    .filter(Boolean);
  const unknown = states.filter((state) => !(REQUEST_STATES as readonly string[]).includes(state));
  if (states.length === 0 || unknown.length > 0) {
    throw usageError(`--states takes ${REQUEST_STATES.join(', ')}; got "${text}"`);
  }
  return [...new Set(states)] as RequestState[];
}
