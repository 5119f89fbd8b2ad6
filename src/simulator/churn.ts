/**
 * Paging churn: records move while a client pages through the full list, as they do on the real
 * service, so a pass page by page misses or repeats records. At a paging moment (a full-list page
 * after the first was just served, or the first page right after the same client read the partial
 * list of that state and window) one real change is made through the world, after the response
 * was written: a request appears on the already-read first page, a request on an unread page
 * jumps onto a read one, or a request on a read page vanishes so a later one slips up onto it.
 */
import type { CallRecord } from './http.js';
import { fullListRows, parseFilter, FULL_STATES, type ListFilter } from './handlers-read.js';
import type { MutationSummary } from './model.js';
import type { Random } from './random.js';
import { eventMs } from './serialize.js';
import type { World } from './world.js';

/** Past this, a JavaScript Date is invalid: a window end beyond it cannot hold a request. */
const MAX_DATE_MS = 8.64e15;
const HOUR_SEC = 3600;
/** Clients remembered (by token); a long-running demo must not grow without bound. */
const MAX_CLIENTS = 1000;

type ChurnKind = 'appear' | 'move' | 'vanish';

/** What the churn remembers of a client's last successful call. */
interface LastRead {
  endpoint: CallRecord['endpoint'];
  filter: ListFilter | null;
}

/** Applies paging churn after API calls. */
export interface PagingChurn {
  /** Called once the response to `call` was written; returns the change it made, if any. */
  afterCall(client: string, call: CallRecord): MutationSummary | null;
}

/** A churn over `world`, deciding with `rng` (its own stream) at the current `rate()`. */
export function createPagingChurn({
  world,
  rng,
  pageSize,
  rate,
}: {
  world: World;
  rng: Random;
  pageSize: number;
  rate: () => number;
}): PagingChurn {
  const last = new Map<string, LastRead>();
  // New requests come from a stream of their own, so the seed's data and driver stay the same.
  const freshRng = rng.fork(1);

  const filterOf = (call: CallRecord): ListFilter | null => {
    if (call.endpoint !== 'list' && call.endpoint !== 'details_list') return null;
    const filter = parseFilter(world, new URLSearchParams(call.query), FULL_STATES);
    return 'status' in filter ? null : filter;
  };

  const remember = (client: string, read: LastRead): void => {
    last.delete(client);
    last.set(client, read);
    if (last.size > MAX_CLIENTS) last.delete(last.keys().next().value as string);
  };

  const churn = (filter: ListFilter, page: number): MutationSummary | null => {
    const rows = fullListRows(world, filter);
    const readCount = Math.min(rows.length, page * pageSize);
    const seen = rows.slice(0, readCount);
    const unseen = rows.slice(readCount);
    // A whole second at the newest end of the window (its last hour) and later than the last row
    // read, so the record sorts onto a page already read. Not always the very end: records piled
    // on one instant sort among themselves by id, and some of them onto unread pages.
    const last = seen.at(-1);
    const lowSec = last ? Math.floor(eventMs(last) / 1000) + 1 : filter.gteMs / 1000;
    const highSec = filter.lteMs / 1000;
    const canPlace = lowSec <= highSec && Math.abs(filter.lteMs) <= MAX_DATE_MS;
    const placeMs = () => rng.int(Math.max(lowSec, highSec - HOUR_SEC), highSec) * 1000;
    const kinds: ChurnKind[] = [];
    if (canPlace) kinds.push('appear');
    if (canPlace && unseen.length > 0) kinds.push('move');
    if (seen.length > 0) kinds.push('vanish');
    if (kinds.length === 0) return null;
    switch (rng.pick(kinds)) {
      case 'appear': {
        const options = { state: filter.state, eventAt: placeMs(), rng: freshRng };
        return world.createRequests(1, options)[0] ?? null;
      }
      case 'move': {
        const target = rng.pick(unseen);
        const atMs = placeMs();
        return target.agreedMs === null
          ? world.setPickupTime(target.id, atMs)
          : world.setAgreedTime(target.id, atMs);
      }
      case 'vanish': {
        const target = rng.pick(seen);
        const reason = target.state === 'accepted' ? 'reassigned' : 'canceled';
        return world.makeUnavailable(target.id, reason);
      }
    }
  };

  return {
    afterCall(client, call) {
      // A failed call read nothing: the client will repeat it, and the moment comes then.
      if (call.fault !== undefined || call.status < 200 || call.status >= 300) return null;
      const previous = last.get(client);
      const filter = filterOf(call);
      remember(client, { endpoint: call.endpoint, filter });
      if (call.endpoint !== 'details_list' || filter === null) return null;
      const page = Number(call.query.page || '1');
      const afterPartial =
        previous?.endpoint === 'list' &&
        previous.filter !== null &&
        sameRead(previous.filter, filter);
      if (page < 2 && !afterPartial) return null;
      const p = rate();
      if (p <= 0 || !rng.chance(p)) return null;
      return churn(filter, page);
    },
  };
}

function sameRead(a: ListFilter, b: ListFilter): boolean {
  return a.state === b.state && a.gteMs === b.gteMs && a.lteMs === b.lteMs;
}
