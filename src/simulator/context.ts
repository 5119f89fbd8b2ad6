/**
 * What every handler receives: the parts of the simulator it may use, and the parsed request.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Clock } from '../clock.js';
import type { ActionKind, SimResponse } from './http.js';
import type { JsonValue } from './model.js';
import type { Provider } from './provider.js';
import type { TokenIssuer } from './tokens.js';
import type { World } from './world.js';

/** The simulator parts a handler may use. */
export interface HandlerContext {
  world: World;
  provider: Provider;
  tokens: TokenIssuer;
  clock: Clock;
  pageSize: number;
  clientId: string;
  clientSecret: string;
  /** Records a provider action that was answered 2xx. */
  recordAction(kind: ActionKind, requestId: string, body: JsonValue): void;
}

/** One parsed HTTP request as a handler sees it. */
export interface RouteRequest {
  /** The id captured from the path (request or account id), '' when the path has none. */
  id: string;
  query: URLSearchParams;
  /** The raw body text ('' when none). */
  body: string;
  headers: IncomingHttpHeaders;
}

/** An endpoint's handler. */
export type Handler = (ctx: HandlerContext, req: RouteRequest) => SimResponse;
