import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { describeError } from '../errors.js';
import type { Logger } from '../log.js';
import { isObject, toEventRow, type EventRow } from './envelope.js';
import type { EventStore } from './event-store.js';
import type { SignatureVerifier } from './signature.js';

/** What the receiver needs. */
export interface ReceiverDeps {
  path: string;
  maxBodyBytes: number;
  /** Null: unsigned deliveries are accepted (TRANSPORT_WEBHOOK_ALLOW_UNSIGNED, no key). */
  verify: SignatureVerifier | null;
  signatureHeader: string;
  events: EventStore;
  /** Runs work in one write transaction (the store's). */
  transaction: <T>(work: () => T) => T;
  now: () => string;
  log: Logger;
  /** Called after a new event is stored, once the reply is on its way. */
  onStored: () => void;
  /** Serves other paths first when another role shares this address (the monitoring routes). */
  fallback?: (req: IncomingMessage, res: ServerResponse) => boolean;
}

/**
 * The webhook receiver: raw body within a size limit (413), signature over those exact bytes
 * (401), JSON object (400), then one INSERT OR IGNORE and the 2xx. Nothing is applied here: the
 * reply must come well within the service's 10 seconds even in a burst, and the stored row is
 * what the applier works from. A duplicate event_id is acknowledged and not stored again.
 */
export function createReceiver(deps: ReceiverDeps): Server {
  const path = trimSlash(deps.path);
  const insert = createGroupInsert(deps);
  const header = deps.signatureHeader.toLowerCase();
  const server = createServer((req, res) => {
    if (deps.fallback?.(req, res)) return;
    const url = new URL(req.url ?? '/', 'http://receiver');
    if (trimSlash(url.pathname) !== path) return reply(res, 404, 'not found');
    if (req.method !== 'POST') {
      res.setHeader('allow', 'POST');
      return reply(res, 405, 'method not allowed');
    }
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > deps.maxBodyBytes) return tooLarge(res);
    readBody(req, deps.maxBodyBytes).then(
      (body) => (body ? handle(deps, insert, header, req, res, body) : tooLarge(res)),
      () => reply(res, 400, 'unreadable body'),
    );
  });
  // Slow or stalled senders must not hold connections for long.
  server.requestTimeout = 15_000;
  server.headersTimeout = 10_000;
  return server;
}

function handle(
  deps: ReceiverDeps,
  insert: (row: EventRow) => Promise<boolean>,
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
    return reply(res, 401, 'invalid signature');
  }
  let payload: unknown;
  try {
    payload = JSON.parse(body.toString('utf8'));
  } catch {
    return reply(res, 400, 'body is not JSON');
  }
  if (!isObject(payload)) return reply(res, 400, 'body is not a JSON object');
  const row = toEventRow(payload, body, deps.now());
  insert(row).then(
    (isNew) => {
      reply(res, 200, isNew ? 'stored' : 'duplicate');
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
      reply(res, 503, 'not stored; retry');
    },
  );
}

/**
 * Inserts the deliveries that arrive in one turn of the event loop in one transaction (group
 * commit): a burst costs one commit per turn, not one per delivery. Each reply still waits for
 * the commit that holds its event.
 */
function createGroupInsert(deps: ReceiverDeps): (row: EventRow) => Promise<boolean> {
  let pending: { row: EventRow; resolve(isNew: boolean): void; reject(error: unknown): void }[] =
    [];
  const flush = () => {
    const items = pending;
    pending = [];
    try {
      const results = deps.transaction(() => items.map((item) => deps.events.insert(item.row)));
      items.forEach((item, index) => item.resolve(results[index] ?? false));
    } catch (error) {
      for (const item of items) item.reject(error);
    }
  };
  return (row) =>
    new Promise((resolve, reject) => {
      pending.push({ row, resolve, reject });
      if (pending.length === 1) setImmediate(flush);
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

function tooLarge(res: ServerResponse): void {
  // Close the connection: the rest of the oversized body is not read.
  res.setHeader('connection', 'close');
  reply(res, 413, 'body too large');
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
