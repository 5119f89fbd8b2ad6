import http from 'node:http';
import type https from 'node:https';
import { createRequire } from 'node:module';
import type { Socket } from 'node:net';
import type zlib from 'node:zlib';

// node:https (TLS) and node:zlib are loaded when first needed: a command against a loopback
// simulator needs neither, and they are some 6 ms of a start.
const require = createRequire(import.meta.url);
const loadHttps = () => require('node:https') as typeof https;
const loadZlib = () => require('node:zlib') as typeof zlib;

/*
 * The wire under the service client's HTTP layer (src/api/http.ts) and the feed's webhook sink:
 * node:http and node:https with a keep-alive pool of the caller's own, and an attempt's timers.
 * Node's fetch did this before: it costs some 30 ms to load (undici's bundle inside Node), then
 * its WHATWG streams and Request/Response objects on every call. The same 162 calls replayed
 * took 404 to 495 ms with fetch and 263 to 291 ms over node:http (docs/performance.md). What
 * fetch did that the callers rely on is kept here: gzip and deflate asked for and decoded, no
 * redirect followed, the abort reason thrown as it is.
 */

/** The limits of the pool's connections. */
export interface WireLimits {
  /** From the start of an attempt until the connection is open (TLS included). */
  connectMs: number;
  /** How long an idle connection is kept for the next call (the server's own hint if shorter). */
  keepAliveMs: number;
  /**
   * Certificates to trust instead of Node's roots (PEM): the feed webhook's
   * TRANSPORT_FEED_WEBHOOK_CA_FILE. The service client has none: an operator whose service is
   * reached through a private CA gives it with NODE_EXTRA_CA_CERTS, which Node adds to its roots.
   */
  ca?: string | Buffer;
}

/** One request on the wire. */
export interface WireRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string | undefined;
  signal: AbortSignal;
}

/** A response's headers: what callers read of them. */
export interface ResponseHeaders {
  /** The header's value (repeated ones joined with `, `), or null. */
  get(name: string): string | null;
}

/** A response whose headers arrived; its body is read on demand. */
export interface WireResponse {
  status: number;
  headers: ResponseHeaders;
  /** The whole body, decoded from its content encoding; each chunk touches the stall timer. */
  readBody(timers: AttemptTimers): Promise<Uint8Array>;
}

/** Sends requests over one keep-alive pool. */
export interface Wire {
  send(req: WireRequest): Promise<WireResponse>;
  /** Closes the pool's connections. */
  close(): void;
}

/** The code of undici's connect timeout, kept so that logs and the retry rules read as before. */
export const CONNECT_TIMEOUT_CODE = 'UND_ERR_CONNECT_TIMEOUT';

/** Creates the pool. Its idle connections do not keep the process alive. */
export function createWire(limits: WireLimits): Wire {
  // `timeout` is the idle limit of a pooled connection: the agent sets it on a socket when the
  // socket goes back to the pool (a shorter `Keep-Alive: timeout` of the server's wins there).
  const options = { keepAlive: true, timeout: limits.keepAliveMs };
  const plain = new http.Agent(options);
  let secure: https.Agent | undefined;
  const pools: Pools = {
    http: () => ({ request: http.request, agent: plain }),
    https() {
      const { Agent, request } = loadHttps();
      secure ??= new Agent({ ...options, ...(limits.ca !== undefined && { ca: limits.ca }) });
      return { request, agent: secure };
    },
  };
  return {
    send: (req) => send(req, pools, limits.connectMs),
    close() {
      plain.destroy();
      secure?.destroy();
    },
  };
}

/** Each scheme's request function and its pool. */
interface Pools {
  http(): { request: typeof http.request; agent: http.Agent };
  https(): { request: typeof https.request; agent: https.Agent };
}

function send(req: WireRequest, pools: Pools, connectMs: number): Promise<WireResponse> {
  const { signal } = req;
  if (signal.aborted) return Promise.reject(signal.reason);
  const isHttps = req.url.startsWith('https:');
  const { request, agent } = isHttps ? pools.https() : pools.http();
  return new Promise<WireResponse>((resolve, reject) => {
    const outgoing = request(req.url, {
      method: req.method,
      headers: { 'accept-encoding': 'gzip, deflate', ...req.headers },
      agent,
    });
    let connectTimer: NodeJS.Timeout | undefined;
    const stopConnectTimer = () => clearTimeout(connectTimer);
    // What fetch throws on an abort: the signal's reason itself.
    const onAbort = () => outgoing.destroy(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    outgoing.on('socket', (socket: Socket) => {
      if (!socket.connecting) return; // a pooled connection
      connectTimer = setTimeout(() => outgoing.destroy(connectTimeout(connectMs)), connectMs);
      connectTimer.unref();
      socket.once(isHttps ? 'secureConnect' : 'connect', stopConnectTimer);
    });
    outgoing.on('error', (error) => {
      stopConnectTimer();
      signal.removeEventListener('abort', onAbort);
      reject(error);
    });
    outgoing.on('response', (incoming) => {
      stopConnectTimer();
      resolve({
        status: incoming.statusCode ?? 0,
        headers: headersOf(incoming.headers),
        readBody: (timers) => {
          signal.removeEventListener('abort', onAbort);
          return readIncoming(incoming, timers, signal);
        },
      });
    });
    outgoing.end(req.body);
  });
}

function connectTimeout(ms: number): Error {
  const error = new Error(`no connection within ${ms} ms (${CONNECT_TIMEOUT_CODE})`);
  error.name = 'ConnectTimeoutError';
  return Object.assign(error, { code: CONNECT_TIMEOUT_CODE });
}

function headersOf(raw: http.IncomingHttpHeaders): ResponseHeaders {
  return {
    get(name) {
      const value = raw[name.toLowerCase()];
      if (value === undefined) return null;
      return Array.isArray(value) ? value.join(', ') : value;
    },
  };
}

/** The body's bytes; an abort ends the read with the signal's reason, as fetch's does. */
function readIncoming(
  incoming: http.IncomingMessage,
  timers: AttemptTimers,
  signal: AbortSignal,
): Promise<Uint8Array> {
  return new Promise<Uint8Array>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let isDone = false;
    const onAbort = () => {
      isDone = true;
      reject(signal.reason);
      incoming.destroy();
    };
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    incoming.on('data', (chunk: Buffer) => {
      timers.touch();
      chunks.push(chunk);
      size += chunk.byteLength;
    });
    incoming.on('end', () => {
      isDone = true;
      try {
        const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
        resolve(decoded(bytes, incoming.headers['content-encoding']));
      } catch (error) {
        reject(error);
      }
    });
    incoming.on('error', (error) => {
      isDone = true;
      reject(error);
    });
    incoming.on('close', () => {
      signal.removeEventListener('abort', onAbort);
      // A connection that closed before the body ended, without an error of its own.
      if (!isDone) reject(Object.assign(new Error('the body ended early'), { code: 'ECONNRESET' }));
    });
  });
}

/** A body decoded from its content encoding, as fetch decodes it; an unknown one is left. */
function decoded(bytes: Buffer, encoding: string | undefined): Uint8Array {
  if (encoding === undefined || bytes.byteLength === 0) return bytes;
  switch (encoding.trim().toLowerCase()) {
    case 'gzip':
    case 'x-gzip':
      return loadZlib().gunzipSync(bytes);
    case 'deflate': {
      // The standard says zlib-wrapped; some servers send it raw (the first byte tells).
      const { inflateSync, inflateRawSync } = loadZlib();
      return (bytes[0]! & 0x0f) === 8 ? inflateSync(bytes) : inflateRawSync(bytes);
    }
    case 'br':
      return loadZlib().brotliDecompressSync(bytes);
    default:
      return bytes;
  }
}

/**
 * The limits of one attempt, on one AbortController: the whole attempt's time, and the stall
 * timer of its headers and body (the time until the headers arrive, then the longest wait between
 * two chunks of the body). The caller's own signal aborts it too. A stall aborts with the code
 * undici gives the same timeout, so that logs and the retry rules read as they did when undici
 * kept them.
 *
 * One controller and two plain timers, rather than AbortSignal.timeout and AbortSignal.any: a
 * first sync makes some 170 attempts, and those two cost it about 7 ms of CPU and their garbage
 * (docs/performance.md).
 */
export interface AttemptTimers {
  /** Aborted by either timer or by the caller's signal, with that one's reason. */
  signal: AbortSignal;
  /** From now on, `ms` without progress aborts with `code`. */
  restart(ms: number, code: string): void;
  /** Progress: the wait starts again. */
  touch(): void;
  /** Whether a timer fired (not the caller). */
  readonly isTimedOut: boolean;
  stop(): void;
}

/** Starts an attempt's timers: `attemptMs` in all, `stallMs` without progress (`code`). */
export function attemptTimers(
  attemptMs: number,
  stallMs: number,
  code: string,
  callerSignal?: AbortSignal,
): AttemptTimers {
  const controller = new AbortController();
  let isTimedOut = false;
  const timeOut = (reason: Error) => {
    isTimedOut = true;
    controller.abort(reason);
  };
  const start = (waitMs: number, reason: string) =>
    setTimeout(() => timeOut(stalled(reason, waitMs)), waitMs).unref();
  let stall = start(stallMs, code);
  const whole = setTimeout(() => timeOut(attemptTimeout(attemptMs)), attemptMs).unref();
  const onCallerAbort = () => controller.abort(callerSignal!.reason);
  if (callerSignal?.aborted) onCallerAbort();
  else callerSignal?.addEventListener('abort', onCallerAbort, { once: true });
  return {
    signal: controller.signal,
    restart(waitMs, reason) {
      clearTimeout(stall);
      stall = start(waitMs, reason);
    },
    touch: () => void stall.refresh(),
    get isTimedOut() {
      return isTimedOut;
    },
    stop() {
      clearTimeout(stall);
      clearTimeout(whole);
      callerSignal?.removeEventListener('abort', onCallerAbort);
    },
  };
}

function stalled(code: string, ms: number): Error {
  const error = new Error(`no progress for ${ms} ms (${code})`);
  error.name = 'TimeoutError';
  return Object.assign(error, { code });
}

function attemptTimeout(ms: number): Error {
  const error = new Error(`the attempt took longer than ${ms} ms`);
  error.name = 'TimeoutError';
  return error;
}
