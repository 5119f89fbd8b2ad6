import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { deflateSync, gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { createServiceClient, isOutcomeUnknown } from '../../../src/api/index.js';
import { attemptTimers, createWire } from '../../../src/wire.js';
import { TransportError } from '../../../src/errors.js';
import {
  CLIENT_ID,
  CLIENT_SECRET,
  createFakeClock,
  detailRecord,
  TOKEN,
} from '../../helpers/service-fixtures.js';
import { tempDir } from '../../helpers/records.js';
import { createTestCa } from '../../helpers/tls-certs.js';

/**
 * The one place the production path runs: the client's own connection pool (src/wire.ts)
 * against a loopback server (nock replaces the transport's sockets, so it never exercises the
 * pool, its connect timer or the attempt's timers).
 */

type Handler = (req: http.IncomingMessage, res: http.ServerResponse, n: number) => void;

const servers: http.Server[] = [];

async function serve(handler: Handler): Promise<string> {
  let n = 0;
  const server = http.createServer((req, res) => {
    if (req.url?.startsWith('/v2.0/oauth2/token/')) {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ access_token: TOKEN, token_type: 'bearer', expires_in: 3600 }));
      return;
    }
    n += 1;
    handler(req, res, n);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
}

async function closedPort(): Promise<string> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as net.AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

function client(
  url: string,
  overrides: {
    hubUrl?: string;
    headersMs?: number;
    bodyMs?: number;
    connectMs?: number;
    keepAliveMs?: number;
    maxAttempts?: number;
  } = {},
) {
  return createServiceClient({
    authUrl: url,
    hubUrl: overrides.hubUrl ?? url,
    baseUrl: url,
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    clock: createFakeClock(),
    random: () => 0.5,
    rateLimitPerSec: 0,
    retry: { maxAttempts: overrides.maxAttempts ?? 3 },
    timeouts: {
      ...(overrides.headersMs && { headersMs: overrides.headersMs }),
      ...(overrides.bodyMs && { bodyMs: overrides.bodyMs }),
      ...(overrides.connectMs && { connectMs: overrides.connectMs }),
      ...(overrides.keepAliveMs && { keepAliveMs: overrides.keepAliveMs }),
    },
  });
}

afterEach(async () => {
  await Promise.all(
    servers.splice(0).map((s) => {
      s.closeAllConnections();
      return new Promise<void>((resolve) => s.close(() => resolve()));
    }),
  );
});

describe('the wire (loopback server)', () => {
  it('reads, and retries a body cut short by the server', async () => {
    const url = await serve((_req, res, n) => {
      const body = JSON.stringify(detailRecord('K3J9QX2A'));
      if (n === 1) {
        res.writeHead(200, { 'content-length': String(body.length) });
        res.write(body.slice(0, 20));
        setTimeout(() => res.destroy(), 5);
        return;
      }
      res.setHeader('content-type', 'application/json');
      res.end(body);
    });
    const c = client(url);
    await expect(c.getRequest('K3J9QX2A')).resolves.toMatchObject({ kind: 'ok' });
    await c.close();
  });

  it('an action whose connection drops after sending is not resent', async () => {
    let hits = 0;
    const url = await serve((req) => {
      hits += 1;
      req.socket.destroy();
    });
    const c = client(url);
    const error = await c.accept('K3J9QX2A').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransportError);
    expect((error as TransportError).code).toBe('api.network');
    expect(isOutcomeUnknown(error)).toBe(true);
    expect(hits).toBe(1);
    await c.close();
  });

  it('an action whose connection is refused is retried (it never left)', async () => {
    const tokenUrl = await serve(() => undefined);
    const c = client(tokenUrl, { hubUrl: await closedPort() });
    const error = (await c.accept('K3J9QX2A').catch((e: unknown) => e)) as TransportError;
    expect(error.code).toBe('api.network');
    expect(error.details).toMatchObject({ errno: 'ECONNREFUSED', attempts: 3 });
    expect(isOutcomeUnknown(error)).toBe(false);
    await c.close();
  });

  it('the headers timeout applies', async () => {
    const url = await serve(() => undefined); // never answers
    const c = client(url, { headersMs: 100, maxAttempts: 1 });
    const error = (await c.getRequest('K3J9QX2A').catch((e: unknown) => e)) as TransportError;
    expect(error.code).toBe('api.timeout');
    expect(error.details).toMatchObject({ errno: 'UND_ERR_HEADERS_TIMEOUT', attempts: 1 });
    await c.close();
  });

  it('the body timeout applies to a body that stops coming, not to a slow one', async () => {
    const body = JSON.stringify(detailRecord('K3J9QX2A'));
    const third = Math.ceil(body.length / 3);
    const url = await serve((_req, res, n) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
      res.write(body.slice(0, third));
      if (n === 1) return; // stops for good
      // Three chunks 60 ms apart: each within the limit, the whole body beyond it.
      setTimeout(() => res.write(body.slice(third, 2 * third)), 60);
      setTimeout(() => res.end(body.slice(2 * third)), 120);
    });
    const c = client(url, { bodyMs: 100, maxAttempts: 1 });
    const error = (await c.getRequest('K3J9QX2A').catch((e: unknown) => e)) as TransportError;
    expect(error.code).toBe('api.timeout');
    expect(error.details).toMatchObject({ errno: 'UND_ERR_BODY_TIMEOUT', attempts: 1 });
    await expect(c.getRequest('K3J9QX2A')).resolves.toMatchObject({ kind: 'ok' });
    await c.close();
  });
});

describe('the wire: what fetch did, kept', () => {
  it("a caller's abort ends a call with the caller's reason, waiting for headers or mid-body", async () => {
    let arrive = () => {};
    const arrived = new Promise<void>((resolve) => (arrive = resolve));
    const url = await serve((req, res) => {
      arrive();
      if (req.url?.includes('/headers-never/')) return; // never answers
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"partial": ');
    });
    const wire = createWire({ connectMs: 5_000, keepAliveMs: 1_000 });
    const call = (path: string, signal: AbortSignal) =>
      wire.send({ url: `${url}${path}`, method: 'GET', headers: {}, body: undefined, signal });
    // Waiting for the headers.
    const early = new AbortController();
    const waiting = call('/headers-never/', early.signal);
    await arrived;
    early.abort(new Error('shutting down'));
    await expect(waiting).rejects.toThrow('shutting down');
    // Mid-body: the headers are in, the body stops after its first bytes.
    const late = new AbortController();
    const response = await call('/body-stops/', late.signal);
    const timers = attemptTimers(5_000, 5_000, 'UND_ERR_BODY_TIMEOUT', late.signal);
    const body = response.readBody(timers);
    late.abort(new Error('shutting down'));
    await expect(body).rejects.toThrow('shutting down');
    timers.stop();
    wire.close();
  });

  it('asks for gzip and deflate, and decodes either', async () => {
    const record = detailRecord('K3J9QX2A');
    const encodings: (string | undefined)[] = [];
    const url = await serve((req, res, n) => {
      encodings.push(req.headers['accept-encoding']);
      const json = Buffer.from(JSON.stringify(record));
      const [encoding, body] =
        n === 1 ? ['gzip', gzipSync(json)] : n === 2 ? ['deflate', deflateSync(json)] : ['', json];
      res.writeHead(200, {
        'content-type': 'application/json',
        ...(encoding && { 'content-encoding': encoding }),
      });
      res.end(body);
    });
    const c = client(url);
    for (let i = 0; i < 3; i += 1) {
      const got = await c.getRequest('K3J9QX2A');
      expect(got).toMatchObject({ kind: 'ok', record: { request_id: 'K3J9QX2A' } });
    }
    expect(encodings).toEqual(['gzip, deflate', 'gzip, deflate', 'gzip, deflate']);
    await c.close();
  });

  it('keeps one connection for calls one after another, and closes it once idle', async () => {
    const sockets: net.Socket[] = [];
    const url = await serve((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(detailRecord('K3J9QX2A')));
    });
    servers.at(-1)!.on('connection', (socket: net.Socket) => sockets.push(socket));
    // Long enough for the three calls to follow each other on a busy machine.
    const c = client(url, { keepAliveMs: 1_000 });
    await c.getRequest('K3J9QX2A');
    await c.getRequest('K3J9QX2A');
    // The token call and both reads on one connection.
    expect(sockets).toHaveLength(1);
    // Idle past its limit, the client closes it; the next call opens another.
    await new Promise((resolve) => sockets[0]!.once('close', resolve));
    await c.getRequest('K3J9QX2A');
    expect(sockets).toHaveLength(2);
    await c.close();
  });

  it('gives up on a connection that does not open in time; an action is then retried', async () => {
    // A TLS handshake the server never answers: the TCP connection opens, the TLS one does not.
    const held: net.Socket[] = [];
    const silent = net.createServer((socket) => held.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as net.AddressInfo;
    const tokenUrl = await serve(() => undefined);
    const c = client(tokenUrl, { hubUrl: `https://127.0.0.1:${port}`, connectMs: 100 });
    const error = (await c.accept('K3J9QX2A').catch((e: unknown) => e)) as TransportError;
    expect(error.code).toBe('api.timeout');
    expect(error.details).toMatchObject({ errno: 'UND_ERR_CONNECT_TIMEOUT', attempts: 3 });
    expect(isOutcomeUnknown(error)).toBe(false);
    await c.close();
    held.forEach((socket) => socket.destroy());
    await new Promise<void>((resolve) => silent.close(() => resolve()));
  });

  it('calls a service over HTTPS', async () => {
    const dir = tempDir();
    const ca = createTestCa(dir);
    const { certFile, keyFile } = ca.issue('service');
    const server = https.createServer(
      { cert: readFileSync(certFile), key: readFileSync(keyFile) },
      (_req, res) => res.end(JSON.stringify({ ok: true })),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as net.AddressInfo;
    const wire = createWire({ connectMs: 5_000, keepAliveMs: 1_000, ca: readFileSync(ca.caFile) });
    const response = await wire.send({
      url: `https://127.0.0.1:${port}/x/`,
      method: 'GET',
      headers: {},
      body: undefined,
      signal: new AbortController().signal,
    });
    const stall = attemptTimers(5_000, 5_000, 'UND_ERR_BODY_TIMEOUT');
    const body = Buffer.from(await response.readBody(stall)).toString();
    stall.stop();
    expect([response.status, JSON.parse(body)]).toEqual([200, { ok: true }]);
    // Without the CA, the certificate is refused.
    const strict = createWire({ connectMs: 5_000, keepAliveMs: 1_000 });
    const refused = await strict
      .send({
        url: `https://127.0.0.1:${port}/x/`,
        method: 'GET',
        headers: {},
        body: undefined,
        signal: new AbortController().signal,
      })
      .catch((e: unknown) => e);
    expect((refused as { code?: string }).code).toMatch(/CERT|SELF_SIGNED|UNABLE_TO_VERIFY/);
    wire.close();
    strict.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
});
