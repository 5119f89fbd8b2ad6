import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Registry } from 'prom-client';
import { describeError } from '../errors.js';
import { listenOn, parseListen as parseListenSetting, stopServer } from '../listen.js';
import type { Logger } from '../log.js';
import type { Readiness } from './freshness.js';

/** Handles a request the ops routes do not serve (e.g. the webhook receiver on a shared port). */
export type FallbackHandler = (req: IncomingMessage, res: ServerResponse) => void;

/** The ops routes as a handler: true when it answered, false for a path that is not its own. */
export type OpsRoutesHandler = (req: IncomingMessage, res: ServerResponse) => boolean;

/** What the ops routes need. */
export interface OpsRoutes {
  metrics: { registry: Registry };
  readiness: () => Promise<Pick<Readiness, 'ready' | 'reason'> & Partial<Readiness>>;
  log: Logger;
}

/** A running ops server. */
export interface OpsServer {
  /** Base URL, e.g. http://127.0.0.1:9464 */
  url: string;
  server: Server;
  stop(): Promise<void>;
}

/**
 * The ops routes as a request handler: `/healthz`, `/readyz`, `/metrics`. Returns false for any
 * other path, so another server (the webhook receiver) can mount them in front of its own
 * routes when both listen on the same address.
 */
export function createOpsHandler({ metrics, readiness, log }: OpsRoutes): OpsRoutesHandler {
  const startedAt = Date.now();
  return (req, res) => {
    const path = new URL(req.url ?? '/', 'http://ops').pathname.replace(/(.)\/+$/, '$1');
    if (path !== '/healthz' && path !== '/readyz' && path !== '/metrics') return false;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('allow', 'GET, HEAD');
      sendJson(res, 405, { error: 'method not allowed' });
      return true;
    }
    if (path === '/healthz') {
      // Answering at all proves the process is alive and its event loop turns.
      sendJson(res, 200, {
        status: 'ok',
        uptime_seconds: Math.floor((Date.now() - startedAt) / 1000),
      });
    } else if (path === '/readyz') {
      readiness().then(
        (state) =>
          sendJson(res, state.ready ? 200 : 503, {
            ready: state.ready,
            reason: state.reason,
            last_success_at: state.lastSuccessAt ?? null,
            freshness_seconds: state.freshnessSeconds ?? null,
            stale_after_seconds: state.staleAfterSeconds ?? null,
          }),
        (error: unknown) => {
          log.error({ err: describeError(error) }, 'readiness check failed');
          sendJson(res, 503, { ready: false, reason: 'the database could not be read' });
        },
      );
    } else {
      metrics.registry.metrics().then(
        (text) => send(res, 200, metrics.registry.contentType, text),
        (error: unknown) => {
          log.error({ err: describeError(error) }, 'metrics collection failed');
          sendJson(res, 500, { error: 'metrics collection failed' });
        },
      );
    }
    return true;
  };
}

/**
 * Starts the monitoring endpoint on TRANSPORT_HTTP_LISTEN (host defaults to 127.0.0.1: metrics
 * are not for the internet). Paths other than the ops routes go to `extraHandler` when given
 * (so the webhook receiver can share this server), else 404.
 */
export async function startOpsServer({
  listen,
  extraHandler,
  ...routes
}: OpsRoutes & { listen: string; extraHandler?: FallbackHandler }): Promise<OpsServer> {
  const handle = createOpsHandler(routes);
  const server = createServer((req, res) => {
    if (handle(req, res)) return;
    if (extraHandler) extraHandler(req, res);
    else sendJson(res, 404, { error: 'not found' });
  });
  // A scraper or probe that stalls must not hold a connection for long.
  server.requestTimeout = 15_000;
  server.headersTimeout = 10_000;
  const url = await listenOn(server, listen, {
    ...OPS_LISTEN,
    code: 'ops.listen_failed',
    what: 'monitoring',
  });
  routes.log.info({ url }, 'monitoring endpoint listening');
  let stopping: Promise<void> | undefined;
  return {
    url,
    server,
    stop() {
      stopping ??= stopServer(server);
      return stopping;
    },
  };
}

const OPS_LISTEN = { envName: 'TRANSPORT_HTTP_LISTEN', example: '127.0.0.1:9464' };

/** TRANSPORT_HTTP_LISTEN as host and port. */
export function parseListen(listen: string): { host: string; port: number } {
  return parseListenSetting(listen, OPS_LISTEN);
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  send(res, status, 'application/json', JSON.stringify(body));
}

function send(res: ServerResponse, status: number, type: string, body: string): void {
  if (res.headersSent) return;
  res.writeHead(status, {
    'content-type': type,
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
  });
  res.end(res.req.method === 'HEAD' ? undefined : body);
}
