import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../../src/clock.js';
import { loadConfig } from '../../../src/config/index.js';
import { openDatabase, type MirrorDb } from '../../../src/db/open.js';
import { silentLogger } from '../../../src/log.js';
import { createDaemonOps } from '../../../src/ops/daemon-ops.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/engine.js';
import { tempDir } from '../../helpers/records.js';

let db: MirrorDb | undefined;
let database: TestDatabase | undefined;
afterEach(async () => {
  await db?.close();
  db = undefined;
  await database?.drop();
  database = undefined;
});

/** TRANSPORT_DB of a fresh database on the project's engine (dropped after the test). */
async function freshDatabase(): Promise<string> {
  database = await createTestDatabase();
  return database.location;
}

/** A directory holding a stand-in systemd-notify that appends its arguments to a file. */
function fakeNotifyPath() {
  const dir = tempDir();
  const log = join(dir, 'calls.txt');
  writeFileSync(join(dir, 'systemd-notify'), `#!/bin/sh\nprintf '%s\\n' "$*" >> "${log}"\n`);
  chmodSync(join(dir, 'systemd-notify'), 0o755);
  const calls = () =>
    existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean) : [];
  return { dir, calls };
}

describe('the ops a daemon starts', () => {
  it('serves the endpoint, says READY=1 after it, pings the watchdog, and says STOPPING=1 at stop', async () => {
    const fake = fakeNotifyPath();
    const config = loadConfig({
      env: { TRANSPORT_DB: await freshDatabase(), TRANSPORT_HTTP_LISTEN: '127.0.0.1:0' },
      needsService: false,
    });
    const env = {
      PATH: `${fake.dir}:${process.env.PATH}`,
      NOTIFY_SOCKET: '/run/systemd/notify',
      WATCHDOG_USEC: '100000',
    };
    db = await openDatabase({ location: config.dbPath });
    const ops = createDaemonOps({ config, log: silentLogger(), env });
    const { url } = await ops.start({
      db,
      clock: systemClock,
      progress: { lastProgressAt: () => Date.now() },
    });
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(fake.calls()[0]).toBe('--ready --status=polling on "0 * * * * *"');
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect((await fetch(`${url}/readyz`)).status).toBe(503); // never synced
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toContain('transport_sync_quarantined_records 0');
    expect(metrics).toContain('transport_sync_cycles_total{status="ok"} 0');

    const deadline = Date.now() + 5000;
    while (!fake.calls().includes('WATCHDOG=1') && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(fake.calls()).toContain('WATCHDOG=1');

    await ops.stop();
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
    while (!fake.calls().includes('STOPPING=1') && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(fake.calls()).toContain('STOPPING=1');
  });

  it('starts no endpoint without TRANSPORT_HTTP_LISTEN and sends nothing off systemd', async () => {
    const fake = fakeNotifyPath();
    const config = loadConfig({
      env: { TRANSPORT_DB: await freshDatabase() },
      needsService: false,
    });
    db = await openDatabase({ location: config.dbPath });
    const ops = createDaemonOps({ config, log: silentLogger(), env: { PATH: fake.dir } });
    const started = await ops.start({ db, clock: systemClock });
    expect(started).toMatchObject({ isSharedWithWebhooks: false });
    expect(started.url).toBeUndefined();
    await ops.stop();
    expect(fake.calls()).toEqual([]);
  });

  it('leaves the port to the webhook receiver when both listen on one address, handing it the routes', async () => {
    const config = loadConfig({
      env: {
        TRANSPORT_DB: await freshDatabase(),
        TRANSPORT_HTTP_LISTEN: '18999',
        TRANSPORT_WEBHOOK_LISTEN: '127.0.0.1:18999',
      },
      needsService: false,
    });
    db = await openDatabase({ location: config.dbPath });
    const ops = createDaemonOps({ config, log: silentLogger(), env: {} });
    const { url, routes, isSharedWithWebhooks } = await ops.start({ db, clock: systemClock });
    expect(url).toBeUndefined();
    expect(isSharedWithWebhooks).toBe(true);
    // What the receiver does with them: ops paths first, its own after.
    const server = createServer((req, res) => {
      if (routes(req, res)) return;
      res.writeHead(200).end('webhook');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      expect((await fetch(`${base}/healthz`)).status).toBe(200);
      expect((await fetch(`${base}/readyz`)).status).toBe(503);
      expect(await (await fetch(`${base}/webhooks/`)).text()).toBe('webhook');
    } finally {
      await new Promise((resolve) => server.close(resolve));
      await ops.stop();
    }
  });
});
