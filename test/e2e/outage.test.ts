import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { serviceEnv, startCli, startSimulatorProcess, processTracker } from '../helpers/cli.js';
import { tempDir } from '../helpers/records.js';

const processes = processTracker();
afterEach(() => processes.stopAll());

describe('a service that fails permanently', () => {
  it('gets a bounded, backed-off request rate, and the daemon keeps running', async () => {
    const sim = await startSimulatorProcess(['--requests', '30']);
    processes.track(sim);
    const env = serviceEnv(sim.url, {
      TRANSPORT_DB: join(tempDir(), 'outage.db'),
      TRANSPORT_POLL_CRON: '* * * * * *',
    });
    const daemon = startCli(['run'], env);
    processes.track(daemon);
    await daemon.waitFor(/"msg":"poll cycle finished"/);
    await fetch(`${sim.url}/_sim/faults/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ errorRate: 1 }),
    });
    await fetch(`${sim.url}/_sim/reset-calls/`, { method: 'POST' });
    const seconds = 15;
    await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
    const calls = (await (await fetch(`${sim.url}/_sim/calls/`)).json()) as unknown[];
    const perMinute = (calls.length / seconds) * 60;
    console.log(
      `permanent outage: ${calls.length} calls in ${seconds} s with a 1 s schedule (${perMinute.toFixed(0)} per minute)`,
    );
    // Without backoff: 4 list calls a second, each retried 5 times = 1,200 a minute.
    expect(perMinute).toBeLessThan(150);
    expect(daemon.child.exitCode).toBeNull();
  }, 30_000);
});
