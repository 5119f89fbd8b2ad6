import { afterEach, describe, expect, it } from 'vitest';
import { processTracker, runCli } from '../helpers/cli.js';
import { sleep, startWebhookDaemonFixture, waitUntil } from '../helpers/webhook-daemon.js';

const processes = processTracker();
afterEach(() => processes.stopAll());

/*
 * The 90 s outage of test/slow/intake-gap-real-time.test.ts at 1/80 of the service's pace: its
 * attempts (at once, after 8 s, after 64 s) come at once, after 100 ms and after 800 ms, and the
 * alarm threshold (90 s: the retry span plus a margin) is the smallest there is, 1 s. A stop of
 * 1.1 s, plus the daemon's start, outlasts both, as 90 s does at the service's pace.
 */
const RETRY_DELAYS_MS = [0, 100, 800];
const ALARM_SECONDS = 1;
const STOP_MS = 1_100;

/** Open requests, pickup ahead, with no event received since `since`: what the ledger names. */
const OPEN_SINCE = `SELECT request_id FROM requests r WHERE unavailable_at IS NULL
  AND list_state IN ('awaiting', 'accepted')
  AND coalesce(transport_agreed_for_time, transport_pickup_time) > @since
  AND NOT EXISTS (SELECT 1 FROM webhook_events e
                  WHERE e.service_request_id = r.request_id AND e.received_at >= @since)`;

describe('a daemon stopped for longer than the service retries while the service keeps sending', () => {
  it('alarms the gap: status exits 1 naming the open requests whose events were lost, until gaps --ack', async () => {
    const f = await startWebhookDaemonFixture((p) => processes.track(p), {
      requests: 120,
      mutateEveryMs: 0,
      retryDelaysMs: RETRY_DELAYS_MS,
      daemonEnv: { TRANSPORT_INTAKE_GAP_ALARM_SECONDS: String(ALARM_SECONDS) },
    });
    const first = await f.startDaemon();
    // The service starts changing requests once the daemon listens: an event lost from here
    // on was lost in the stop, not before the daemon first started.
    f.startMutating({ everyMs: 100, perTick: 3 });
    const openSince = (since: string) =>
      f.query<{ request_id: string }>(OPEN_SINCE, { since }).map((row) => row.request_id);
    // The mirror holds open requests whose events the stop can swallow (it learns of them by
    // webhook alone: v1.0 is retired).
    await waitUntil(
      () => openSince(new Date().toISOString()).length >= 12,
      15_000,
      () => 'the mirror never held 12 open requests',
    );
    first.child.kill('SIGTERM');
    expect((await first.exited).code).toBe(0);
    const stoppedAt = new Date().toISOString();
    await sleep(STOP_MS);
    const second = await f.startDaemon();
    // The stop is over; no new change from here takes a request out of those at risk.
    await f.stopMutating();
    // The gap is judged once the events stored before the stop are applied.
    await second.waitFor(/"msg":"intake gap longer than the service retries/);

    // Events sent early in the stop spent all three attempts while it lasted.
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
    expect(gaps.last[0]!.seconds).toBeGreaterThanOrEqual(STOP_MS / 1000);
    expect(gaps.last[0]!.seconds).toBeGreaterThan(ALARM_SECONDS);
    // Of those, the ones the mirror holds as open, pickup ahead, with no event since the stop.
    // Read after status: events still arrive, and can only take requests out of this set.
    const lostAndOpen = openSince(stoppedAt).filter((id) => lostIds.has(id));
    expect(lostAndOpen.length).toBeGreaterThan(0);

    for (const id of lostAndOpen) expect(gaps.last[0]!.request_ids, id).toContain(id);
    second.child.kill('SIGTERM');
    const stopped = await second.exited;
    expect(stopped.code).toBe(0);
    expect(stopped.stdout).toMatch(/"msg":"intake gap longer than the service retries/);

    // The service answers v1.0 polls again, and one `sync` reads the mirror against it: each
    // request it covered (its states, its window) is off the list, the lost ones among them.
    const faults = await fetch(`${f.sim.url}/_sim/faults/`, { method: 'POST', body: '{}' });
    expect(await faults.json()).toEqual({});
    const sync = await runCli(['sync'], f.env);
    expect(sync.code, sync.stderr).toBe(0);
    const [run] = f.query<{ window_from: string; window_to: string }>(
      "SELECT window_from, window_to FROM sync_runs WHERE kind = 'poll' AND status = 'ok' ORDER BY run_id DESC LIMIT 1",
    );
    const inWindow = new Set(
      f
        .query<{ request_id: string }>(
          'SELECT request_id FROM requests WHERE event_dt_utc BETWEEN ? AND ?',
          run!.window_from,
          run!.window_to,
        )
        .map((row) => row.request_id),
    );
    const gapsAfter = await runCli(['gaps', '--json'], f.env);
    expect(gapsAfter.code, gapsAfter.stderr).toBe(1);
    const after = JSON.parse(gapsAfter.stdout) as { last: { request_ids: string[] }[] };
    const stillAtRisk = after.last[0]!.request_ids;
    expect(lostAndOpen.filter((id) => inWindow.has(id)).length).toBeGreaterThan(0);
    for (const id of stillAtRisk) expect(inWindow.has(id), id).toBe(false);

    const ack = await runCli(['gaps', '--ack'], f.env);
    expect(ack.code, ack.stderr).toBe(0);
    expect(ack.stdout).toMatch(/acknowledged 1 gap/);
    expect((await f.status()).code).toBe(0);
  }, 60_000);
});
