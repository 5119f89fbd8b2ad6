import { writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import {
  freePort,
  processTracker,
  serviceEnv,
  startCli,
  startSimulatorProcess,
  type RunningCli,
} from '../helpers/cli.js';
import { tempDir } from '../helpers/records.js';
import { deliverFrom, keyPair, v2Event } from '../helpers/webhooks.js';

const processes = processTracker();
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await processes.stopAll();
});

/** A daemon on webhooks alone (v1.0 retired), verifying with the test's own signing key. */
async function startReceiver(
  settings: Record<string, string>,
  options: { fdLimit?: number } = {},
): Promise<{ daemon: RunningCli; url: string; dbPath: string; metricsUrl: string }> {
  const sim = processes.track(await startSimulatorProcess(['--requests', '5', '--retire-v1']));
  const dir = tempDir();
  const keyFile = join(dir, 'service-public.pem');
  writeFileSync(keyFile, keyPair().publicKeyPem);
  const [port, metricsPort] = [await freePort(), await freePort()];
  const dbPath = join(dir, 'mirror.db');
  const env = serviceEnv(sim.url, {
    TRANSPORT_DB: dbPath,
    TRANSPORT_POLL: 'off',
    TRANSPORT_WEBHOOK_LISTEN: `127.0.0.1:${port}`,
    TRANSPORT_WEBHOOK_PUBLIC_KEY_FILE: keyFile,
    TRANSPORT_HTTP_LISTEN: `127.0.0.1:${metricsPort}`,
    ...settings,
  });
  const daemon = processes.track(startCli(['run'], env, undefined, options));
  await daemon.waitFor(/"msg":"webhook receiver listening"/);
  return {
    daemon,
    url: `http://127.0.0.1:${port}/webhooks/`,
    dbPath,
    metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`,
  };
}

function storedEventIds(dbPath: string): string[] {
  const db = new Database(dbPath, { readonly: true });
  try {
    const rows = db.prepare('SELECT event_id FROM webhook_events ORDER BY event_id').all();
    return (rows as { event_id: string }[]).map((row) => row.event_id);
  } finally {
    db.close();
  }
}

/** Opens a connection from `address` that sends half a request's headers, then nothing. */
function holdHalfSent(url: string, address: string): Promise<void> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port), localAddress: address });
    sockets.push(socket);
    socket.on('error', () => resolve());
    socket.once('connect', () => {
      socket.write('POST /webhooks/ HTTP/1.1\r\nHost: receiver\r\nContent-Length: 2000\r\n');
      resolve();
    });
  });
}

describe('who may deliver, as a running daemon', () => {
  it('answers 403 to a source outside TRANSPORT_WEBHOOK_ALLOW_FROM and stores nothing; behind a trusted proxy the forwarded address decides', async () => {
    const { url, dbPath, metricsUrl } = await startReceiver({
      TRANSPORT_WEBHOOK_ALLOW_FROM: '127.0.0.2/32',
      TRANSPORT_TRUSTED_PROXIES: '127.0.0.3',
    });
    expect((await deliverFrom(url, v2Event('evt_0001'), '127.0.0.1')).status).toBe(403);
    expect((await deliverFrom(url, v2Event('evt_0002'), '127.0.0.2')).status).toBe(200);
    const viaProxy = (id: string, forwarded: string) =>
      deliverFrom(url, v2Event(id), '127.0.0.3', { 'x-forwarded-for': forwarded });
    expect((await viaProxy('evt_0003', '127.0.0.1')).status).toBe(403);
    expect((await viaProxy('evt_0004', '127.0.0.2')).status).toBe(200);
    expect(storedEventIds(dbPath)).toEqual(['evt_0002', 'evt_0004']);
    const metrics = await (await fetch(metricsUrl)).text();
    expect(metrics).toMatch(/^transport_sync_webhook_events_total\{result="forbidden"\} 2$/m);
  }, 30_000);
});

describe('a receiver under a flood of half-sent requests', () => {
  it('with 1,024 descriptors and 2,000 half-sent requests held open by one source, acknowledges a signed delivery from another in under a second', async () => {
    const { daemon, url, dbPath } = await startReceiver({}, { fdLimit: 1024 });
    for (let batch = 0; batch < 20; batch += 1) {
      await Promise.all(Array.from({ length: 100 }, () => holdHalfSent(url, '127.0.0.2')));
    }
    const reply = await timed(() => deliverFrom(url, v2Event('evt_0001'), '127.0.0.1'));
    expect(reply.result.status).toBe(200);
    expect(reply.ms).toBeLessThan(1_000);
    expect(storedEventIds(dbPath)).toEqual(['evt_0001']);
    expect(daemon.child.exitCode).toBeNull();
    expect(daemon.output().stdout).not.toMatch(/EMFILE/);
  }, 60_000);
});

async function timed<T>(work: () => Promise<T>): Promise<{ result: T; ms: number }> {
  const started = performance.now();
  const result = await work();
  return { result, ms: performance.now() - started };
}
