import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  cleanEnv,
  freePort,
  processTracker,
  runCli,
  serviceEnv,
  startCli,
  startSimulatorProcess,
  type RunningCli,
} from '../helpers/cli.js';
import { tempDir } from '../helpers/records.js';
import { keyPair } from '../helpers/webhooks.js';

const processes = processTracker();
afterEach(() => processes.stopAll());

/** Every v1.0 endpoint the service retired on 2026-08-12. */
const V1_ENDPOINTS = ['list', 'details_list', 'detail', 'locations', 'account'];

async function listCalls(url: string): Promise<number> {
  const calls = (await (await fetch(`${url}/_sim/calls/`)).json()) as { endpoint: string }[];
  return calls.filter((call) => call.endpoint === 'list' || call.endpoint === 'details_list')
    .length;
}

async function retirePolling(url: string): Promise<void> {
  const retire = await fetch(`${url}/_sim/faults/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ gone: V1_ENDPOINTS }),
  });
  expect(retire.status).toBe(200);
}

/** A daemon polling every second against a fresh simulator, with `extra` settings. */
async function startPollingDaemon(extra: Record<string, string> = {}) {
  const sim = await startSimulatorProcess(['--requests', '40']);
  processes.track(sim);
  const dbPath = join(tempDir(), 'mirror.db');
  const env = serviceEnv(sim.url, {
    TRANSPORT_DB: dbPath,
    TRANSPORT_POLL_CRON: '* * * * * *',
    ...extra,
  });
  const daemon: RunningCli = startCli(['run'], env);
  processes.track(daemon);
  await daemon.waitFor(/"msg":"poll cycle finished"/);
  // A shell on the same server: the database, and none of the unit's other settings.
  const shell = cleanEnv({ TRANSPORT_DB: dbPath });
  return { sim, env, daemon, shell };
}

describe('TRANSPORT_POLL=auto (the default) when the service retires v1.0', () => {
  it('without a receiver: says nothing can come in, and is unhealthy everywhere', async () => {
    const monitoring = await freePort();
    const { sim, env, daemon, shell } = await startPollingDaemon({
      TRANSPORT_HTTP_LISTEN: `127.0.0.1:${monitoring}`,
    });
    // Judged by the daemon's schedule (every second), not the shell's default (every minute).
    const before = await runCli(['status', '--json'], shell);
    expect(before.code, before.stdout).toBe(0);
    expect(JSON.parse(before.stdout)).toMatchObject({
      mode: 'polling-only',
      has_intake: true,
      is_polling_on: true,
      settings_source: 'daemon',
      poll_interval_seconds: 1,
      daemon_settings: { poll_mode: 'auto', poll_cron: '* * * * * *' },
    });

    await retirePolling(sim.url);
    await daemon.waitFor(/nothing can bring data in/, 10_000);
    // Cycles are due every second; with the API retired none runs until tomorrow's probe. The
    // checks below run while the ticks pass; the count is compared after at least 2.5 s.
    const afterSwitch = await listCalls(sim.url);
    const switchedAt = Date.now();

    const status = await runCli(['status', '--json'], shell);
    expect(status.code, status.stdout).toBe(1);
    const report = JSON.parse(status.stdout);
    expect(report).toMatchObject({
      mode: 'none',
      has_intake: false,
      is_polling_on: false,
      is_stale: false,
      polling_retired_at: expect.any(String),
    });
    expect(report.problems.join('\n')).toMatch(
      /nothing can bring data in.*TRANSPORT_WEBHOOK_LISTEN/,
    );
    const text = await runCli(['status'], shell);
    expect(text.code).toBe(1);
    expect(text.stdout).toMatch(/^transport-sync status: NO INTAKE/);
    expect(text.stdout).toMatch(/mode {12}none \(as the daemon started at /);

    const ready = await fetch(`http://127.0.0.1:${monitoring}/readyz`);
    expect(ready.status).toBe(503);
    expect(JSON.stringify(await ready.json())).toMatch(/no webhook receiver is configured/);
    const metrics = await (await fetch(`http://127.0.0.1:${monitoring}/metrics`)).text();
    expect(metrics).toMatch(/^transport_sync_mode\{mode="none"\} 1$/m);
    expect(metrics).toMatch(/^transport_sync_mode\{mode="webhooks-only"\} 0$/m);

    const ticksLeftMs = 2_500 - (Date.now() - switchedAt);
    if (ticksLeftMs > 0) await new Promise((resolve) => setTimeout(resolve, ticksLeftMs));
    expect(await listCalls(sim.url)).toBe(afterSwitch);

    daemon.child.kill('SIGTERM');
    const stopped = await daemon.exited;
    expect(stopped.code).toBe(0);
    const said = stopped.stdout
      .split('\n')
      .filter((line) => /nothing can bring data in/.test(line));
    expect(said).toHaveLength(1);
    expect(JSON.parse(said[0]!)).toMatchObject({ level: 50, mode: 'none' });
    expect(env.TRANSPORT_WEBHOOK_LISTEN).toBeUndefined();
  });

  it('with a receiver: switches to webhooks alone, one warning, and a shell sees it so', async () => {
    const keyFile = join(tempDir(), 'webhook-public-key.pem');
    writeFileSync(keyFile, keyPair().publicKeyPem);
    const { sim, daemon, shell } = await startPollingDaemon({
      TRANSPORT_WEBHOOK_LISTEN: '127.0.0.1:0',
      TRANSPORT_WEBHOOK_PUBLIC_KEY_FILE: keyFile,
    });
    await retirePolling(sim.url);
    await daemon.waitFor(/running on webhooks alone/, 10_000);

    // The shell has no TRANSPORT_WEBHOOK_LISTEN: the daemon's record says it receives.
    const status = await runCli(['status', '--json'], shell);
    expect(status.code, status.stdout).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({
      mode: 'webhooks-only',
      has_intake: true,
      is_polling_on: false,
      is_stale: false,
      problems: [],
      settings_source: 'daemon',
      // Unset, the silence watch takes its default on webhooks alone.
      webhook_silence: { silence_minutes: 180, is_silent: false, last_delivery_at: null },
    });
    const text = await runCli(['status'], shell);
    expect(text.stdout).toMatch(/mode {12}webhooks-only/);
    expect(text.stdout).toMatch(/last delivery never/);

    daemon.child.kill('SIGTERM');
    const stopped = await daemon.exited;
    expect(stopped.code).toBe(0);
    expect(stopped.stdout.match(/running on webhooks alone/g)).toHaveLength(1);
    expect(stopped.stdout).not.toMatch(/nothing can bring data in/);
  });
});
