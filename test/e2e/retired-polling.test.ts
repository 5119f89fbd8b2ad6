import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  processTracker,
  runCli,
  serviceEnv,
  startCli,
  startSimulatorProcess,
} from '../helpers/cli.js';
import { tempDir } from '../helpers/records.js';

const processes = processTracker();
afterEach(() => processes.stopAll());

/** Every v1.0 endpoint the service retired on 2026-08-12. */
const V1_ENDPOINTS = ['list', 'details_list', 'detail', 'locations', 'account'];

async function listCalls(url: string): Promise<number> {
  const calls = (await (await fetch(`${url}/_sim/calls/`)).json()) as { endpoint: string }[];
  return calls.filter((call) => call.endpoint === 'list' || call.endpoint === 'details_list')
    .length;
}

describe('TRANSPORT_POLL=auto (the default) when the service retires v1.0', () => {
  it('switches to webhooks alone: one warning, no tight loop, and status says webhooks-only', async () => {
    const sim = await startSimulatorProcess(['--requests', '40']);
    processes.track(sim);
    const dbPath = join(tempDir(), 'mirror.db');
    const env = serviceEnv(sim.url, { TRANSPORT_DB: dbPath, TRANSPORT_POLL_CRON: '* * * * * *' });
    const daemon = startCli(['run'], env);
    processes.track(daemon);
    await daemon.waitFor(/"msg":"poll cycle finished"/);
    const before = await runCli(['status', '--json'], env);
    expect(JSON.parse(before.stdout)).toMatchObject({ mode: 'polling-only', is_polling_on: true });

    const retire = await fetch(`${sim.url}/_sim/faults/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ gone: V1_ENDPOINTS }),
    });
    expect(retire.status).toBe(200);
    await daemon.waitFor(/running on webhooks alone/, 10_000);
    // Cycles are due every second; with the API retired none runs until tomorrow's probe. The
    // status checks below run while the ticks pass; the count is compared after at least 2.5 s.
    const afterSwitch = await listCalls(sim.url);
    const switchedAt = Date.now();

    const status = await runCli(['status', '--json'], env);
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({
      mode: 'webhooks-only',
      is_polling_on: false,
      is_stale: false,
      polling_retired_at: expect.any(String),
    });
    const text = await runCli(['status'], env);
    expect(text.stdout).toMatch(/mode {12}webhooks-only/);
    const ticksLeftMs = 2_500 - (Date.now() - switchedAt);
    if (ticksLeftMs > 0) await new Promise((resolve) => setTimeout(resolve, ticksLeftMs));
    expect(await listCalls(sim.url)).toBe(afterSwitch);

    daemon.child.kill('SIGTERM');
    const stopped = await daemon.exited;
    expect(stopped.code).toBe(0);
    expect(stopped.stdout.match(/running on webhooks alone/g)).toHaveLength(1);
  });
});
