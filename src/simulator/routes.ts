/**
 * The route table. Every path ends with `/`, as the service requires: the same path without the
 * slash matches nothing and answers 404. Ids in paths are opaque (anything up to the next `/`).
 */
import type { Handler } from './context.js';
import {
  handleAccept,
  handleBestTime,
  handleChangeRequest,
  handleDecline,
  handleLocations,
  handleState,
} from './handlers-actions.js';
import { handleToken } from './handlers-auth.js';
import { handleAccount, handleDetail, handleDetailsList, handleList } from './handlers-read.js';
import type { Endpoint } from './http.js';

/** One endpoint: its path pattern, its handler per method, and whether it needs a token. */
export interface Route {
  endpoint: Endpoint;
  pattern: RegExp;
  methods: Partial<Record<string, Handler>>;
  isPublic: boolean;
}

const route = (
  endpoint: Endpoint,
  pattern: RegExp,
  methods: Partial<Record<string, Handler>>,
  isPublic = false,
): Route => ({ endpoint, pattern, methods, isPublic });

/** All service endpoints. */
export const ROUTES: readonly Route[] = [
  route('token', /^\/v2\.0\/oauth2\/token\/$/, { POST: handleToken }, true),
  route('list', /^\/openapi\/v1\.0\/requests\/$/, { GET: handleList }),
  route('details_list', /^\/openapi\/v1\.0\/request-details\/$/, { GET: handleDetailsList }),
  route('detail', /^\/openapi\/v1\.0\/requests\/([^/]+)\/$/, { GET: handleDetail }),
  route('locations', /^\/openapi\/v1\.0\/requests\/([^/]+)\/locations\/$/, {
    POST: handleLocations,
  }),
  // v2.0 moved the location update to the hub: same body, limit and answers.
  route('locations_v2', /^\/openapi\/v2\.0\/requests\/([^/]+)\/locations\/$/, {
    POST: handleLocations,
  }),
  route('account', /^\/openapi\/v1\.0\/accounts\/([^/]+)\/$/, { GET: handleAccount }),
  route('accept', /^\/openapi\/v2\.0\/requests\/([^/]+)\/accept\/$/, { PUT: handleAccept }),
  route('decline', /^\/openapi\/v2\.0\/requests\/([^/]+)\/decline\/$/, { PUT: handleDecline }),
  route('state', /^\/openapi\/v2\.0\/requests\/([^/]+)\/state\/$/, { POST: handleState }),
  route('change_request', /^\/openapi\/v2\.0\/requests\/([^/]+)\/change-request\/$/, {
    POST: handleChangeRequest,
  }),
  route('best_time', /^\/openapi\/v2\.0\/requests\/([^/]+)\/best-time\/$/, { PUT: handleBestTime }),
];

/** The route for `path` and the id it captures, or null. */
export function matchRoute(path: string): { route: Route; id: string } | null {
  for (const candidate of ROUTES) {
    const match = candidate.pattern.exec(path);
    if (!match) continue;
    let id = match[1] ?? '';
    try {
      id = decodeURIComponent(id);
    } catch {
      // A malformed escape stays as sent; it cannot name a known request anyway.
    }
    return { route: candidate, id };
  }
  return null;
}
