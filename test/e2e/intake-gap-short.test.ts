import { afterEach, describe, expect, it } from 'vitest';
import { processTracker } from '../helpers/cli.js';
import { sleep, startWebhookDaemonFixture } from '../helpers/webhook-daemon.js';

const processes = processTracker();
afterEach(() => processes.stopAll());

/*
 * A stop within the service's retries, at 5/16 of its pace: the attempts (at once, after 8 s,
 * after 64 s) come at once, after 2.5 s and after 20 s, and the alarm threshold (90 s) is 28 s.
 * The service changes requests while the daemon runs and in the first STOP_MS of the stop; the
 * daemon is then started again, which usually takes less than the 2.5 s to the first retry, so
 * the test waits for that retry, not the last one. The stop is within the retries either way: a
 * slower start waits for the last retry, 22.5 s after the first attempt (hence a minute allowed).
 */
const RETRY_DELAYS_MS = [0, 2_500, 20_000];
const ALARM_SECONDS = 28;
const STOP_MS = 300;

describe('a daemon stopped for less than the service retries while the service keeps sending', () => {
  it('loses no event, thanks to the service retries, and records the gap without alarm', async () => {
    const f = await startWebhookDaemonFixture((p) => processes.track(p), {
      mutateEveryMs: 0,
      retryDelaysMs: RETRY_DELAYS_MS,
      daemonEnv: { TRANSPORT_INTAKE_GAP_ALARM_SECONDS: String(ALARM_SECONDS) },
    });
    const first = await f.startDaemon();
    f.startMutating({ everyMs: 100, perTick: 10 });
    // Intake works before the stop: the receiver has acknowledged events.
    await f.webhookReportWhen(({ stats }) => stats.delivered > 0);
    const stopAskedAt = Date.now();
    first.child.kill('SIGTERM');
    expect((await first.exited).code).toBe(0);
    await sleep(STOP_MS);
    await f.stopMutating();
    const second = await f.startDaemon();
    const listeningAt = Date.now();
    // The events the service sent while nothing listened wait for a retry ...
    expect((await f.webhookReport()).stats.retrying).toBeGreaterThan(0);
    const sent = await f.webhooksSettled();
    expect(sent.stats.events).toBeGreaterThan(40);
    // ... which delivers every one: none lost, each in the mirror.
    expect(sent.stats.lost).toBe(0);
    const [stored] = f.query<{ n: number }>(
      'SELECT count(DISTINCT event_id) AS n FROM webhook_events',
    );
    expect(stored!.n).toBe(sent.stats.events);
    second.child.kill('SIGTERM');
    expect((await second.exited).code).toBe(0);

    const gaps = f.query<{ seconds: number; is_alarmed: number; reason: string }>(
      'SELECT seconds, is_alarmed, reason FROM intake_gaps',
    );
    expect(gaps).toHaveLength(1);
    expect(gaps[0]).toMatchObject({ is_alarmed: 0, reason: 'daemon_down' });
    // From the last heartbeat, written at the stop, to the next start.
    expect(gaps[0]!.seconds).toBeGreaterThanOrEqual(STOP_MS / 1000);
    expect(gaps[0]!.seconds).toBeLessThanOrEqual((listeningAt - stopAskedAt) / 1000);
    expect(gaps[0]!.seconds).toBeLessThan(ALARM_SECONDS);
    const { code, report } = await f.status();
    expect(code).toBe(0);
    expect(report.intake_gaps).toMatchObject({ unreviewed: 0 });
  }, 60_000);
});
