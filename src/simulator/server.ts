/**
 * The HTTP server: reads each request, sends control calls aside, records every API call, adds
 * latency, lets the fault injector act, checks the token, and writes the handler's response.
 * Order per call: 404 unknown path, faults (410 gone, 503 token outage, 5xx, 429), 401, 405,
 * handler; drop and truncate act on the handler's response, after the handler ran. Every response
 * carries a Date header from the simulator's clock, as the real service's do from its own, so a
 * client can measure clock skew. Once a response is written, `afterCall` may change the world
 * (paging churn): the client never sees that change in the response that preceded it.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import type { Clock } from '../clock.js';
import { describeError, isTransportError } from '../errors.js';
import type { Logger } from '../log.js';
import { isoFromMs } from '../time.js';
import type { HandlerContext } from './context.js';
import { handleControl, type ControlTarget } from './control.js';
import type { FaultInjector } from './faults.js';
import { isAuthenticated } from './handlers-auth.js';
import {
  codedError,
  json,
  NOT_AUTHENTICATED,
  NOT_FOUND,
  readBody,
  type CallRecord,
  type SimResponse,
} from './http.js';
import { matchRoute } from './routes.js';

const MAX_BODY_BYTES = 1_000_000;

/** What the server needs from the simulator. */
export interface ServerDeps {
  ctx: HandlerContext;
  control: ControlTarget;
  faults: FaultInjector;
  clock: Clock;
  log: Logger;
  /** Current added latency in ms (read per call, so `setLatency` applies at once). */
  latencyMs(): number;
  /** Appends one API call record. */
  record(call: CallRecord): void;
  /** Runs after the response to an API call was written; `client` is its Authorization header. */
  afterCall(client: string, call: CallRecord): void;
}

function encode(response: SimResponse): { buffer: Buffer; contentType: string } {
  if (response.raw)
    return { buffer: Buffer.from(response.raw.text), contentType: response.raw.contentType };
  return {
    buffer: Buffer.from(JSON.stringify(response.body ?? {})),
    contentType: 'application/json',
  };
}

function send(
  res: ServerResponse,
  response: SimResponse,
  nowMs: number,
  mode: 'full' | 'truncate' = 'full',
): void {
  const { buffer, contentType } = encode(response);
  res.writeHead(response.status, {
    ...response.headers,
    // Node would add the host's real time; the service's clock is the simulator's.
    Date: new Date(nowMs).toUTCString(),
    'Content-Type': contentType,
    'Content-Length': String(buffer.length),
  });
  if (mode === 'full') {
    res.end(buffer);
    return;
  }
  // Announce the whole length, send half, then cut the connection: the client sees a body that
  // ends early, as when a proxy or the network fails mid-response.
  res.write(buffer.subarray(0, Math.floor(buffer.length / 2)), () => res.socket?.destroy());
}

/** A node:http server answering as the service does. */
export function createSimulatorServer(deps: ServerDeps): Server {
  const { ctx, clock, log } = deps;

  const api = async (req: IncomingMessage, res: ServerResponse, url: URL, body: string | null) => {
    const method = req.method ?? 'GET';
    const match = matchRoute(url.pathname);
    const call: CallRecord = {
      at: isoFromMs(clock.now()),
      method,
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      status: 0,
      endpoint: match?.route.endpoint ?? 'unknown',
      ...(match?.id ? { requestId: match.id } : {}),
    };
    const { fault, slowMs } = deps.faults.decide(call.endpoint);
    const wait = deps.latencyMs() + slowMs;
    if (wait > 0) await delay(wait);

    let response: SimResponse;
    if (!match) response = NOT_FOUND;
    else if ('response' in fault) {
      response = fault.response;
      call.fault = fault.kind;
    } else if (body === null)
      response = codedError(413, 'Request body too large.', 'common:too_large');
    else if (!match.route.isPublic && !isAuthenticated(ctx, req.headers))
      response = NOT_AUTHENTICATED;
    else {
      const handler = match.route.methods[method];
      if (!handler) {
        const allow = Object.keys(match.route.methods).join(', ');
        response = json(
          405,
          { message: `Method "${method}" not allowed.`, code: 'common:method_not_allowed' },
          { Allow: allow },
        );
      } else {
        response = handler(ctx, {
          id: match.id,
          query: url.searchParams,
          body,
          headers: req.headers,
        });
      }
    }

    if (match && (fault.kind === 'drop' || fault.kind === 'truncate')) {
      call.fault = fault.kind;
      call.status = fault.kind === 'drop' ? 0 : response.status;
      deps.record(call);
      if (fault.kind === 'drop') req.socket.destroy();
      else send(res, response, clock.now(), 'truncate');
    } else {
      call.status = response.status;
      deps.record(call);
      send(res, response, clock.now());
    }
    try {
      deps.afterCall(req.headers.authorization ?? '', call);
    } catch (error) {
      // The response is out; a failure here must not cut the client's keep-alive connection.
      log.error({ err: describeError(error) }, 'simulator after-call change failed');
    }
  };

  const control = (req: IncomingMessage, res: ServerResponse, url: URL, body: string | null) => {
    const path = url.pathname.slice('/_sim'.length).replace(/\/$/, '');
    try {
      send(
        res,
        handleControl(deps.control, req.method ?? 'GET', path, url.searchParams, body ?? ''),
        clock.now(),
      );
    } catch (error) {
      // World operations refuse bad input with a TransportError: that is the caller's mistake.
      const { message } = describeError(error);
      send(
        res,
        json(isTransportError(error) ? 400 : 500, { message, code: 'simulator:error' }),
        clock.now(),
      );
    }
  };

  return createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://simulator.invalid');
      const body = await readBody(req, MAX_BODY_BYTES);
      if (url.pathname === '/_sim' || url.pathname.startsWith('/_sim/')) {
        control(req, res, url, body);
        return;
      }
      await api(req, res, url, body);
    })().catch((error: unknown) => {
      log.error({ err: describeError(error) }, 'simulator request failed');
      if (!res.headersSent)
        send(res, codedError(500, 'A server error occurred.', 'common:server_error'), clock.now());
      else res.destroy();
    });
  });
}
