import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/index.js';
import { checkService } from '../../../src/ops/doctor-service.js';
import { formatDoctor } from '../../../src/ops/doctor.js';

let server: Server | undefined;
afterEach(async () => {
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

/** A tiny stand-in for the service on loopback: a token, an empty list, and a real Date header. */
async function fakeService(): Promise<string> {
  server = createServer((req, res) => {
    const body = req.url?.startsWith('/v2.0/oauth2/token/')
      ? { access_token: 'tok', token_type: 'Bearer', expires_in: 3600 }
      : [];
    res.writeHead(200, { 'content-type': 'application/json', date: new Date().toUTCString() });
    res.end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function configFor(url: string) {
  return loadConfig({
    env: {
      TRANSPORT_AUTH_URL: url,
      TRANSPORT_HUB_URL: url,
      TRANSPORT_BASE_URL: url,
      TRANSPORT_CLIENT_ID: 'id',
      TRANSPORT_CLIENT_SECRET: 'secret',
    },
    needsService: true,
  });
}

describe("the doctor's service checks", () => {
  it('pass against a service whose clock agrees with ours', async () => {
    const url = await fakeService();
    const results = await checkService(configFor(url));
    expect(results.map((result) => [result.name, result.status])).toEqual([
      ['token endpoint', 'ok'],
      ['list call', 'ok'],
      ['clock', 'ok'],
    ]);
  });

  it('warn when our clock is more than 60 s off the Date header, and say how to fix it', async () => {
    const url = await fakeService();
    const ahead = await checkService(configFor(url), () => Date.now() + 120_000);
    expect(ahead.find((result) => result.name === 'clock')).toMatchObject({
      status: 'warn',
      detail: expect.stringMatching(/^1(19|20|21) s ahead of the service's clock$/),
      hint: expect.stringContaining('timedatectl set-ntp true'),
    });
    const behind = await checkService(configFor(url), () => Date.now() - 90_000);
    expect(behind.find((result) => result.name === 'clock')?.detail).toMatch(/ s behind the /);
    expect(formatDoctor(ahead)).toMatch(
      /^warn {2}clock: .*\n {6}what to do: Turn on time synchronization/m,
    );
  });
});
