import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerOptions,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { Socket } from 'node:net';
import type { SecureContextOptions } from 'node:tls';
import { describeError } from '../errors.js';
import type { Logger } from '../log.js';
import type { EventRow } from '../db/schema/index.js';
import { isObject, toEventRow } from './envelope.js';
import type { PayloadHandoff, ReceivedEvent } from './handoff.js';
import type { SignatureVerifier } from './signature.js';
import {
  createSourcePolicy,
  DEFAULT_MAX_CONNECTIONS_PER_SOURCE,
  type SourcePolicy,
} from './sources.js';
import { MIN_TLS_VERSION } from './tls.js';

/**
 * How long a delivery may take to arrive. The service sends a few KB at once and gives up after
 * 10 s, so a request still incomplete after a few seconds is not the service: it only holds a
 * descriptor. Checked every half second.
 */
export const RECEIVER_TIMEOUTS = {
  headersTimeout: 3_000,
  requestTimeout: 5_000,
  connectionsCheckingInterval: 500,
  keepAliveTimeout: 5_000,
} as const;

/** Connections from sources outside the allowlist held at once to answer them 403. */
const MAX_FORBIDDEN_HELD = 16;

/** Why a delivery was refused, as counted in transport_sync_webhook_events_total{result}. */
export type Refusal =
  | 'forbidden'
  | 'too_many_connections'
  | 'unauthorized'
  | 'too_large'
  | 'bad_request'
  | 'not_stored';

/** What the receiver needs. */
export interface ReceiverDeps {
  path: string;
  maxBodyBytes: number;
  /** Null: unsigned deliveries are accepted (TRANSPORT_WEBHOOK_ALLOW_UNSIGNED, no key). */
  verify: SignatureVerifier | null;
  signatureHeader: string;
  /**
   * Stores deliveries in one write transaction; true for each one not stored before. Calls
   * `beforeCommit` inside it, once it knows which are new.
   */
  storeEvents: (
    rows: readonly EventRow[],
    beforeCommit: (isNew: readonly boolean[]) => void,
  ) => Promise<boolean[]>;
  now: () => string;
  log: Logger;
  /**
   * Given each new delivery's parsed body before its commit, and told which to let go of when
   * the commit fails (the applier's handoff.ts).
   */
  handoff?: PayloadHandoff;
  /** Called after a new event is stored, once the reply is on its way. */
  onStored: () => void;
  /** Called for each delivery or connection refused, with why. */
  onRefused?: (why: Refusal) => void;
  /** Called when storing failed (503), and when storing works again after that. */
  onStoreHealth?: (isStoring: boolean) => void;
  /** Who may deliver, and how many connections each peer may hold (default: anyone, capped). */
  sources?: SourcePolicy;
  /** Certificate and key: the receiver speaks HTTPS (TLS 1.2 or later). */
  tls?: SecureContextOptions;
  /** Serves other paths first when another role shares this address (the monitoring routes). */
  fallback?: (req: IncomingMessage, res: ServerResponse) => boolean;
}

/**
 * The webhook receiver: a source allowed (403, see sources.ts), raw body within a size limit
 * (413), signature over those exact bytes
 * (401), JSON object (400), then one INSERT OR IGNORE and the 2xx. Nothing is applied here: the
 * reply must come well within the service's 10 seconds even in a burst, and the stored row is
 * what the applier works from. A duplicate event_id is acknowledged and not stored again.
 */
export function createReceiver(deps: ReceiverDeps): Server | HttpsServer {
  const path = trimSlash(deps.path);
  const insert = createGroupInsert(deps);
  const header = deps.signatureHeader.toLowerCase();
  const sources =
    deps.sources ??
    createSourcePolicy({ maxConnectionsPerSource: DEFAULT_MAX_CONNECTIONS_PER_SOURCE });
  const refuse = (res: ServerResponse, why: Refusal, status: number, message: string) => {
    deps.onRefused?.(why);
    reply(res, status, message);
  };
  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    const { source, isAllowed } = sources.sourceOf(req);
    if (!isAllowed) {
      // Counted in /metrics (result "forbidden"), where a burst raises an alert; one line each
      // at info would let any stranger fill the journal.
      deps.log.debug({ source }, 'request from a source outside TRANSPORT_WEBHOOK_ALLOW_FROM');
      res.setHeader('connection', 'close');
      return refuse(res, 'forbidden', 403, 'source not allowed');
    }
    if (deps.fallback?.(req, res)) return;
    const url = new URL(req.url ?? '/', 'http://receiver');
    if (trimSlash(url.pathname) !== path) return reply(res, 404, 'not found');
    if (req.method !== 'POST') {
      res.setHeader('allow', 'POST');
      return reply(res, 405, 'method not allowed');
    }
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > deps.maxBodyBytes) return tooLarge(res, refuse);
    readBody(req, deps.maxBodyBytes).then(
      (body) => (body ? handle(deps, insert, header, req, res, body) : tooLarge(res, refuse)),
      () => refuse(res, 'bad_request', 400, 'unreadable body'),
    );
  };
  const options: ServerOptions = { ...RECEIVER_TIMEOUTS };
  const server: Server | HttpsServer = deps.tls
    ? createHttpsServer({ ...options, ...deps.tls, minVersion: MIN_TLS_VERSION }, onRequest)
    : createHttpServer(options, onRequest);
  // A peer over its connection cap is closed at accept, before a byte is read or a handshake is
  // spent on it. A source outside the allowlist gets its 403 without its body being read, from
  // at most MAX_FORBIDDEN_HELD connections at a time: beyond that it too is closed at accept.
  let forbiddenHeld = 0;
  server.on('connection', (socket: Socket) => {
    const peer = socket.remoteAddress;
    const verdict = sources.admit(peer);
    if (verdict === 'too_many_connections') {
      deps.onRefused?.(verdict);
      socket.destroy();
      return;
    }
    socket.once('close', () => sources.release(peer));
    if (verdict !== 'forbidden') return;
    if (forbiddenHeld >= MAX_FORBIDDEN_HELD) {
      deps.onRefused?.('forbidden');
      socket.destroy();
      return;
    }
    forbiddenHeld += 1;
    socket.once('close', () => (forbiddenHeld -= 1));
  });
  // A connection idle this long after its last request is closed (keep-alive is for bursts).
  server.timeout = RECEIVER_TIMEOUTS.requestTimeout;
  return server;
}

function handle(
  deps: ReceiverDeps,
  insert: (delivery: Delivery) => Promise<boolean>,
  header: string,
  req: IncomingMessage,
  res: ServerResponse,
  body: Buffer,
): void {
  const signature = req.headers[header];
  if (deps.verify && !deps.verify(body, Array.isArray(signature) ? signature[0] : signature)) {
    deps.log.warn(
      { reason: signature ? 'bad' : 'missing', bytes: body.length },
      'webhook signature rejected',
    );
    deps.onRefused?.('unauthorized');
    return reply(res, 401, 'invalid signature');
  }
  const text = body.toString('utf8');
  let payload: unknown;
  try {
    payload = JSON.parse(text);
  } catch {
    deps.onRefused?.('bad_request');
    return reply(res, 400, 'body is not JSON');
  }
  if (!isObject(payload)) {
    deps.onRefused?.('bad_request');
    return reply(res, 400, 'body is not a JSON object');
  }
  const row = toEventRow(payload, body, deps.now(), text);
  insert({ row, event: { eventId: row.event_id, payload, bytes: body.length } }).then(
    (isNew) => {
      reply(res, 200, isNew ? 'stored' : 'duplicate');
      deps.onStoreHealth?.(true);
      deps.log.debug(
        {
          eventId: row.event_id,
          action: row.action ?? row.event_type,
          status: row.request_status,
          requestId: row.service_request_id,
          isNew,
        },
        'webhook received',
      );
      if (isNew) deps.onStored();
    },
    (error: unknown) => {
      // Not stored, so not acknowledged: the service retries.
      deps.log.error({ eventId: row.event_id, err: describeError(error) }, 'webhook not stored');
      deps.onRefused?.('not_stored');
      deps.onStoreHealth?.(false);
      reply(res, 503, 'not stored; retry');
    },
  );
}

/** A delivery to store: its row, and its body as parsed. */
interface Delivery {
  row: EventRow;
  event: ReceivedEvent;
}

/**
 * Inserts the deliveries that arrive in one turn of the event loop in one transaction (group
 * commit): a burst costs one commit per turn, not one per delivery. Each reply still waits for
 * the commit that holds its event. The new ones are handed over before the commit; a commit
 * that fails drops them again.
 */
function createGroupInsert(deps: ReceiverDeps): (delivery: Delivery) => Promise<boolean> {
  let pending: {
    delivery: Delivery;
    resolve(isNew: boolean): void;
    reject(error: unknown): void;
  }[] = [];
  let isFlushing = false;
  const store = async (deliveries: readonly Delivery[]): Promise<boolean[]> => {
    let held: string[] = [];
    // A transaction run again (a write conflict) hands over anew what it finds new.
    const handOver = (isNew: readonly boolean[]) => {
      deps.handoff?.drop(held);
      const fresh = deliveries.filter((_, index) => isNew[index]);
      held = fresh.map(({ event }) => event.eventId);
      for (const { event } of fresh) deps.handoff?.hold(event);
    };
    try {
      return await deps.storeEvents(
        deliveries.map(({ row }) => row),
        handOver,
      );
    } catch (error) {
      deps.handoff?.drop(held);
      throw error;
    }
  };
  // Deliveries that arrive while a commit runs go together into the next one.
  const flush = async () => {
    while (pending.length > 0) {
      const items = pending;
      pending = [];
      try {
        const results = await store(items.map((item) => item.delivery));
        items.forEach((item, index) => item.resolve(results[index] ?? false));
      } catch (error) {
        if (items.length === 1) items[0]!.reject(error);
        // One delivery the engine refuses must not fail the others that shared its commit:
        // each goes alone, and only the one at fault is answered 503.
        else
          for (const item of items) {
            await store([item.delivery]).then(
              (results) => item.resolve(results[0] ?? false),
              item.reject,
            );
          }
      }
    }
    isFlushing = false;
  };
  return (delivery) =>
    new Promise((resolve, reject) => {
      pending.push({ delivery, resolve, reject });
      if (isFlushing) return;
      isFlushing = true;
      setImmediate(() => void flush());
    });
}

/** The body, or null once it exceeds `limit` (reading stops there). */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.removeAllListeners('data');
        req.pause();
        resolve(null);
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function tooLarge(
  res: ServerResponse,
  refuse: (res: ServerResponse, why: Refusal, status: number, message: string) => void,
): void {
  // Close the connection: the rest of the oversized body is not read.
  res.setHeader('connection', 'close');
  refuse(res, 'too_large', 413, 'body too large');
}

function reply(res: ServerResponse, status: number, message: string): void {
  if (res.headersSent) return;
  const body = JSON.stringify(status < 300 ? { status: message } : { error: message });
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
}

function trimSlash(path: string): string {
  return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
}
