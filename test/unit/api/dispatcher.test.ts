import http from 'node:http';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createServiceClient, isOutcomeUnknown } from '../../../src/api/index.js';
import { TransportError } from '../../../src/errors.js';
import {
  CLIENT_ID,
  CLIENT_SECRET,
  createFakeClock,
  detailRecord,
  TOKEN,
} from '../../helpers/api.js';

/**
 * The one place the production path runs: Node's fetch with its own dispatcher, or the client's
 * undici Agent, against a loopback server (nock replaces fetch's transport, so it never
 * exercises the dispatcher or the attempt's timers).
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

describe('the real dispatcher (loopback server)', () => {
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
