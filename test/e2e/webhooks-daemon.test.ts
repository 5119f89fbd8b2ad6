import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import {
  runCli,
  serviceEnv,
  startCli,
  startSimulatorProcess,
  processTracker,
  freePort,
} from '../helpers/cli.js';
import { tempDir } from '../helpers/records.js';

const processes = processTracker();
afterEach(() => processes.stopAll());

describe('the daemon on webhooks alone', () => {
  it('mirrors requests from signed webhooks with polling off, and serves monitoring on the same port', async () => {
    const port = await freePort();
    const dir = tempDir();
    const keyFile = join(dir, 'service-public.pem');
    const sim = await startSimulatorProcess([
      '--requests',
      '30',
      '--mutate-every',
      '150',
      '--mutate-per-tick',
      '3',
      '--webhook-url',
      `http://127.0.0.1:${port}/webhooks/`,
      '--webhook-public-key-file',
      keyFile,
    ]);
    processes.track(sim);
    const dbPath = join(dir, 'hooks.db');
    const daemon = startCli(
      ['run'],
      serviceEnv(sim.url, {
        TRANSPORT_DB: dbPath,
        TRANSPORT_POLL: 'off',
        TRANSPORT_WEBHOOK_LISTEN: `127.0.0.1:${port}`,
        TRANSPORT_WEBHOOK_PUBLIC_KEY_FILE: keyFile,
        TRANSPORT_HTTP_LISTEN: `127.0.0.1:${port}`,
      }),
    );
    processes.track(daemon);
    await daemon.waitFor(/"msg":"webhook receiver listening"/);
    const deadline = Date.now() + 15_000;
    let applied = 0;
    while (applied < 5 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      const db = new Database(dbPath, { readonly: true });
      applied = (
        db
          .prepare(
            'SELECT count(*) AS n FROM webhook_events WHERE processed_at IS NOT NULL AND error IS NULL',
          )
          .get() as { n: number }
      ).n;
      db.close();
    }
    expect(applied).toBeGreaterThanOrEqual(5);
    const db = new Database(dbPath, { readonly: true });
    const webhookRows = (
      db.prepare("SELECT count(*) AS n FROM requests WHERE source = 'webhook'").get() as {
        n: number;
      }
    ).n;
    const polls = (db.prepare('SELECT count(*) AS n FROM sync_runs').get() as { n: number }).n;
    db.close();
    expect(webhookRows).toBeGreaterThan(0);
    expect(polls).toBe(0);
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(metrics).toMatch(/transport_sync_webhook_events_total\{result="[a-z_]+"\} [1-9]/);
    // An unsigned delivery is refused and stores nothing.
    const forged = await fetch(`http://127.0.0.1:${port}/webhooks/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        event_id: 'zzz-forged',
        event_timestamp: new Date().toISOString(),
        service_request_id: 'X',
        request_status: 'ASSIGNED',
        action: 'BROADCAST_ACCEPTED',
        data: null,
      }),
    });
    expect(forged.status).toBe(401);
    // The service keeps delivering while the daemon stops: the stop must not wait on it.
    daemon.child.kill('SIGTERM');
    const exit = await daemon.exited;
    expect(exit.code, exit.stdout.slice(-3000)).toBe(0);
    expect(exit.stdout).not.toContain('graceful stop took too long');
  });

  it('refuses to start a receiver without a public key (exit 2) unless unsigned deliveries are allowed', async () => {
    const sim = await startSimulatorProcess(['--requests', '5']);
    processes.track(sim);
    const env = serviceEnv(sim.url, {
      TRANSPORT_DB: join(tempDir(), 'nokey.db'),
      TRANSPORT_WEBHOOK_LISTEN: `127.0.0.1:${await freePort()}`,
    });
    const refused = await runCli(['run'], env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/TRANSPORT_WEBHOOK_PUBLIC_KEY_FILE/);
    const trial = startCli(['run'], { ...env, TRANSPORT_WEBHOOK_ALLOW_UNSIGNED: '1' });
    processes.track(trial);
    await trial.waitFor(/"msg":"webhook receiver listening"/);
    expect(trial.output().stdout).toMatch(/"level":40[^\n]*unsigned/i);
  });
});
