import { afterEach, describe, expect, it } from 'vitest';
import { processTracker } from '../helpers/cli.js';
import { sleep, startWebhookDaemonFixture } from '../helpers/webhook-daemon.js';

const processes = processTracker();
afterEach(() => processes.stopAll());

describe('a daemon stopped for 20 s while the service keeps sending', () => {
  it('loses no event, thanks to the service retries, and records the gap without alarm', async () => {
    const f = await startWebhookDaemonFixture((p) => processes.track(p));
    const first = await f.startDaemon();
    await sleep(4_000);
    first.child.kill('SIGTERM');
    expect((await first.exited).code).toBe(0);
    await sleep(20_000);
    const second = await f.startDaemon();
    // The last retry of an event sent as the daemon stopped comes 64 s after its first attempt.
    await sleep(50_000);
    const sent = await f.webhookReport();
    expect(sent.stats.events).toBeGreaterThan(40);
    expect(sent.stats.lost).toBe(0);
    second.child.kill('SIGTERM');
    expect((await second.exited).code).toBe(0);

    const gaps = f.query<{ seconds: number; is_alarmed: number; reason: string }>(
      'SELECT seconds, is_alarmed, reason FROM intake_gaps',
    );
    expect(gaps).toHaveLength(1);
    expect(gaps[0]).toMatchObject({ is_alarmed: 0, reason: 'daemon_down' });
    expect(gaps[0]!.seconds).toBeGreaterThanOrEqual(20);
    expect(gaps[0]!.seconds).toBeLessThan(30);
    const { code, report } = await f.status();
    expect(code).toBe(0);
    expect(report.intake_gaps).toMatchObject({ unreviewed: 0 });
  }, 200_000);
});
