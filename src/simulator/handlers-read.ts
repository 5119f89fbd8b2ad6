/**
 * The v1.0 read endpoints: partial list, full list, request detail and account detail.
 * Lists show only requests the provider can still see; the detail answers 403 for any other id.
 */
import type { Handler } from './context.js';
import {
  codedError,
  FIELD,
  json,
  NOT_FOUND,
  PERMISSION_DENIED,
  type FieldError,
  type SimResponse,
} from './http.js';
import type { RequestState, SimRequest } from './model.js';
import { eventMs, toDetail, toListItem } from './serialize.js';
import type { World } from './world.js';

const DAY_SEC = 24 * 3600;
const PARTIAL_STATES: readonly RequestState[] = ['accepted', 'completed', 'canceled'];
/** States the full list serves. */
export const FULL_STATES: readonly RequestState[] = [
  'awaiting',
  'accepted',
  'completed',
  'canceled',
];

/** The state and window of a list read, in epoch ms. */
export interface ListFilter {
  state: RequestState;
  gteMs: number;
  lteMs: number;
}

/** An integer query parameter, its default when absent or empty, or its errors. */
function epochParam(query: URLSearchParams, name: string, fallback: number): number | FieldError[] {
  const value = query.get(name);
  if (value === null || value === '') return fallback;
  return /^-?\d+$/.test(value.trim()) ? Number(value) : [FIELD.invalidInteger];
}

/** The window and state filter of either list endpoint, or the 400 field map. */
export function parseFilter(
  world: World,
  query: URLSearchParams,
  allowed: readonly RequestState[],
): ListFilter | SimResponse {
  const nowSec = Math.floor(world.now() / 1000);
  const gte = epochParam(query, 'date__gte', nowSec - DAY_SEC);
  const lte = epochParam(query, 'date__lte', nowSec + DAY_SEC);
  const stateValue = query.get('request__state') || 'accepted';
  const errors: Record<string, FieldError[]> = {};
  if (Array.isArray(gte)) errors.date__gte = gte;
  if (Array.isArray(lte)) errors.date__lte = lte;
  if (!(allowed as readonly string[]).includes(stateValue)) {
    errors.request__state = [FIELD.choice(stateValue)];
  }
  if (Object.keys(errors).length > 0) return json(400, errors);
  return {
    state: stateValue as RequestState,
    gteMs: (gte as number) * 1000,
    lteMs: (lte as number) * 1000,
  };
}

/**
 * The requests of each state in list order, rebuilt only when the world changed: a backfill's
 * hundreds of list calls over 100,000 requests each take a binary search, not a scan and a sort
 * (the client's cost, not the simulator's, is what a benchmark should see).
 */
const indexes = new WeakMap<World, { version: number; byState: Map<string, SimRequest[]> }>();

function indexOf(world: World): Map<string, SimRequest[]> {
  const cached = indexes.get(world);
  if (cached && cached.version === world.version()) return cached.byState;
  const byState = new Map<string, SimRequest[]>();
  for (const r of world.all()) {
    const list = byState.get(r.state);
    if (list) list.push(r);
    else byState.set(r.state, [r]);
  }
  for (const list of byState.values()) list.sort(byEvent);
  indexes.set(world, { version: world.version(), byState });
  return byState;
}

/** Visible requests of the filter's state whose event time lies in its window, ascending. */
function select(world: World, filter: ListFilter): SimRequest[] {
  const list = indexOf(world).get(filter.state) ?? [];
  let low = 0;
  let high = list.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (eventMs(list[mid]!) < filter.gteMs) low = mid + 1;
    else high = mid;
  }
  const rows: SimRequest[] = [];
  for (let i = low; i < list.length && eventMs(list[i]!) <= filter.lteMs; i += 1) {
    if (list[i]!.isVisible) rows.push(list[i]!);
  }
  return rows;
}

/** Ascending by event time; ties by id so the order is stable between calls. */
function byEvent(a: SimRequest, b: SimRequest): number {
  return eventMs(a) - eventMs(b) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** What the full list holds for `filter`, in its order (descending by event time), all pages. */
export function fullListRows(world: World, filter: ListFilter): SimRequest[] {
  return select(world, filter).reverse();
}

/** `GET /openapi/v1.0/requests/`: partial items, ascending by event_dt_utc. */
export const handleList: Handler = (ctx, req) => {
  const filter = parseFilter(ctx.world, req.query, PARTIAL_STATES);
  if ('status' in filter) return filter;
  return json(200, select(ctx.world, filter).map(toListItem));
};

/**
 * `GET /openapi/v1.0/request-details/`: detail records, descending by event_dt_utc, paged.
 * A page past the last answers 404 "Invalid page.", as the service's framework (Django REST
 * framework page-number pagination) does; an empty result still has one (empty) page.
 */
export const handleDetailsList: Handler = (ctx, req) => {
  const filter = parseFilter(ctx.world, req.query, FULL_STATES);
  if ('status' in filter) return filter;
  const rows = fullListRows(ctx.world, filter);
  const pages = Math.max(1, Math.ceil(rows.length / ctx.pageSize));
  const pageValue = req.query.get('page') || '1';
  const page = /^\d+$/.test(pageValue) ? Number(pageValue) : NaN;
  if (!Number.isInteger(page) || page < 1 || page > pages) {
    return codedError(404, 'Invalid page.', 'common:not_found');
  }
  const results = rows.slice((page - 1) * ctx.pageSize, page * ctx.pageSize).map((r) =>
    toDetail(r, ctx.world.accountOf(r), {
      includeLocationIds: false,
      excludeFacilities: false,
      drift: ctx.world.driftOf(r),
    }),
  );
  return json(200, { page, pages, results });
};

/** `GET /openapi/v1.0/requests/{id}/`: the detail record; 403 for unknown or unavailable ids. */
export const handleDetail: Handler = (ctx, req) => {
  const request = ctx.world.get(req.id);
  if (!request || !request.isVisible) return PERMISSION_DENIED;
  const exclude = ['true', 'True', '1'].includes(req.query.get('exclude_facilities') ?? '');
  return json(
    200,
    toDetail(request, ctx.world.accountOf(request), {
      includeLocationIds: true,
      excludeFacilities: exclude,
      drift: ctx.world.driftOf(request),
    }),
  );
};

/** `GET /openapi/v1.0/accounts/{id}/`: the requesting organization; 404 when unknown. */
export const handleAccount: Handler = (ctx, req) => {
  const account = ctx.world.accounts.get(req.id);
  if (!account) return NOT_FOUND;
  return json(200, {
    company_name: account.name,
    service_levels: [...account.serviceLevels],
    facilities: account.facilities.map((f) => ({ name: f.name, address: f.address })),
  });
};
