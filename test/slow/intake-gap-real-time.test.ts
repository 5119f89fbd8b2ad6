/*
 * The 90 s outage at the service's own pace: the simulator retries at once, after 8 s and after
 * 64 s, and the alarm threshold is the default 90 s. test/e2e/intake-gap-*.test.ts play the same
 * outages at a faster pace; this run keeps the real one honest. `npm run test:slow` runs it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { processTracker, runCli } from '../helpers/cli.js';
import { sleep, startWebhookDaemonFixture } from '../helpers/webhook-daemon.js';

const processes = processTracker();
afterEach(() => processes.stopAll());

describe('a daemon stopped for 90 s while the service keeps sending', () => {
  it('alarms the gap: status exits 1 naming the open requests whose events were lost, until gaps --ack', async () => {
    const f = await startWebhookDaemonFixture((p) => processes.track(p));
    const first = await f.startDaemon();
    await sleep(6_000);
    first.child.kill('SIGTERM');
    expect((await first.exited).code).toBe(0);
    const stoppedAt = new Date().toISOString();
    await sleep(90_000);
    const second = await f.startDaemon();
    // The gap is judged once the events stored before the stop are applied.
    await second.waitFor(/"msg":"intake gap longer than the service retries/);

    // Events sent in the first ~26 s of the stop spent all three attempts while it lasted.
    const sent = await f.webhookReport();
    const lostIds = new Set(sent.lost.map((event) => event.requestId));
    expect(lostIds.size).toBeGreaterThan(0);
    const { code, report } = await f.status();
    expect(code).toBe(1);
    const gaps = report.intake_gaps as {
      unreviewed: number;
      last: { is_alarmed: boolean; seconds: number; request_ids: string[] }[];
    };
    expect(gaps.unreviewed).toBe(1);
    expect(gaps.last[0]).toMatchObject({ is_alarmed: true });
    expect(gaps.last[0]!.seconds).toBeGreaterThanOrEqual(90);
    // Of those, the ones the mirror holds as open, pickup ahead, with no event since the stop.
    // Read after status: events still arrive, and can only take requests out of this set.
    const open = f
      .query<{ request_id: string }>(
        `SELECT request_id FROM requests r WHERE unavailable_at IS NULL
           AND list_state IN ('awaiting', 'accepted')
           AND coalesce(transport_agreed_for_time, transport_pickup_time) > ?
           AND NOT EXISTS (SELECT 1 FROM webhook_events e
                           WHERE e.service_request_id = r.request_id AND e.received_at >= ?)`,
        stoppedAt,
        stoppedAt,
      )
      .map((row) => row.request_id);
    const lostAndOpen = open.filter((id) => lostIds.has(id));
    expect(lostAndOpen.length).toBeGreaterThan(0);

    for (const id of lostAndOpen) expect(gaps.last[0]!.request_ids, id).toContain(id);
    second.child.kill('SIGTERM');
    const stopped = await second.exited;
    expect(stopped.code).toBe(0);
    expect(stopped.stdout).toMatch(/"msg":"intake gap longer than the service retries/);

    const ack = await runCli(['gaps', '--ack'], f.env);
    expect(ack.code, ack.stderr).toBe(0);
    expect(ack.stdout).toMatch(/acknowledged 1 gap/);
    expect((await f.status()).code).toBe(0);
  }, 200_000);
});
