import { createServer } from 'node:http';
import { Agent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { listenOn, parseListen, stopServer } from '../../src/listen.js';

const setting = {
  envName: 'TRANSPORT_X_LISTEN',
  example: '127.0.0.1:1',
  code: 'ops.listen_failed',
} as const;
const agents: Agent[] = [];
// Node's fetch takes undici's `dispatcher`, which the DOM RequestInit type does not know.
const withDispatcher = (agent: Agent): RequestInit =>
  ({ dispatcher: agent }) as unknown as RequestInit;
afterEach(async () => {
  await Promise.all(agents.splice(0).map((agent) => agent.destroy()));
});

describe('listening addresses', () => {
  it('reads host:port, [v6]:port and a bare port, and names the setting when it cannot', () => {
    expect(parseListen('8787', setting)).toEqual({ host: '127.0.0.1', port: 8787 });
    expect(parseListen('0.0.0.0:9000', setting)).toEqual({ host: '0.0.0.0', port: 9000 });
    expect(parseListen('[::1]:9000', setting)).toEqual({ host: '::1', port: 9000 });
    expect(() => parseListen('host:99999', setting)).toThrow(/TRANSPORT_X_LISTEN must be/);
  });

  it('reports a port in use with the setting to change', async () => {
    const first = createServer();
    const url = await listenOn(first, '127.0.0.1:0', { ...setting, what: 'tests' });
    const port = new URL(url).port;
    const second = createServer();
    await expect(
      listenOn(second, `127.0.0.1:${port}`, { ...setting, what: 'tests' }),
    ).rejects.toThrow(/cannot listen for tests on 127\.0\.0\.1:\d+.*EADDRINUSE/);
    await stopServer(first);
  });
});

describe('stopping a server', () => {
  it('lets the request in flight finish, and does not wait on a client that keeps sending', async () => {
    // Each answer takes 30 ms and the client sends the next at once on one keep-alive
    // connection, like the service delivering a burst of webhooks.
    let received = 0;
    let onThirdRequest!: () => void;
    const thirdRequest = new Promise<void>((resolve) => (onThirdRequest = resolve));
    const server = createServer((_req, res) => {
      received += 1;
      if (received === 3) onThirdRequest();
      setTimeout(() => res.end('ok'), 30);
    });
    const url = await listenOn(server, '127.0.0.1:0', { ...setting, what: 'tests' });
    const agent = new Agent({ connections: 1, keepAliveTimeout: 60_000 });
    agents.push(agent);
    let sending = true;
    let answered = 0;
    const client = (async () => {
      while (sending) {
        try {
          const res = await fetch(url, withDispatcher(agent));
          if ((await res.text()) === 'ok') answered += 1;
        } catch {
          // Refused or cut once the server is gone: what a sender sees during a stop.
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
      }
    })();
    // Stop while the third request is being answered: the connection is busy, not idle.
    await thirdRequest;
    const startedAt = Date.now();
    await stopServer(server, 500);
    const tookMs = Date.now() - startedAt;
    sending = false;
    await client;
    // server.close() alone waits for as long as the client keeps sending.
    expect(tookMs).toBeLessThan(2_000);
    expect(server.listening).toBe(false);
    // The request in flight when the stop began was answered, not cut.
    expect(answered).toBeGreaterThanOrEqual(3);
  });
});
