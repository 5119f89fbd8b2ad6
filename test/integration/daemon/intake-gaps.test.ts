import { afterEach, describe, expect, it } from 'vitest';
import { startIntakeLedger } from '../../../src/daemon/intake-ledger.js';
import { readStatus } from '../../../src/ops/status.js';
import { captureLogger } from '../../helpers/api.js';
import { execute, queryAll } from '../../helpers/engine.js';
import { startMirror, type MirrorFixture } from '../../helpers/mirror.js';

let mirror: MirrorFixture;
afterEach(async () => mirror?.close());

const status = (m: MirrorFixture) =>
  readStatus({
    db: m.db,
    nowMs: m.clock.now(),
    pollCron: '0 * * * * *',
    staleAfterCycles: 3,
    isPollingOn: false,
    hasWebhooks: true,
  });

/** Open requests with pickup ahead, as the ledger judges them at risk. */
async function openRequests(m: MirrorFixture, since: number): Promise<string[]> {
  const rows = await queryAll<{ request_id: string }>(
    m.db,
    `SELECT request_id FROM requests WHERE unavailable_at IS NULL
       AND list_state IN ('awaiting', 'accepted')
       AND coalesce(transport_agreed_for_time, transport_pickup_time) > @since`,
    { since: new Date(since).toISOString() },
  );
  return rows.map((row) => row.request_id);
}

describe('the ledger of intake gaps', () => {
  it('records a restart within the service retries quietly, alarms a longer one with the requests at risk, and clears on ack', async () => {
    mirror = await startMirror({ requests: 80 });
    await mirror.cycle();
    const { log, lines } = captureLogger();
    const start = () =>
      startIntakeLedger({ store: mirror.store, clock: mirror.clock, log, alarmSeconds: 90 });

    // First start: no heartbeat before it, no gap.
    await (await start()).stop();
    expect((await status(mirror)).intake_gaps.last).toEqual([]);

    // Down for 20 s: recorded, not alarmed.
    mirror.clock.advance(20_000);
    await (await start()).stop();
    const short = (await status(mirror)).intake_gaps;
    expect(short.unreviewed).toBe(0);
    expect(short.last[0]).toMatchObject({ seconds: 20, is_alarmed: false, reason: 'daemon_down' });

    // Down for 100 s; one open request gets an event after the gap began: no longer at risk.
    const gapStart = mirror.clock.now();
    const open = await openRequests(mirror, gapStart);
    expect(open.length).toBeGreaterThan(3);
    mirror.clock.advance(100_000);
    await execute(
      mirror.db,
      `INSERT INTO webhook_events (event_id, envelope, service_request_id, payload_json, received_at)
       VALUES ('e1', 'v2', @request_id, '{}', @received_at)`,
      { request_id: open[0], received_at: new Date(mirror.clock.now()).toISOString() },
    );
    await (await start()).stop();
    const report = await status(mirror);
    expect(report.intake_gaps.unreviewed).toBe(1);
    const gap = report.intake_gaps.last[0]!;
    expect(gap).toMatchObject({ seconds: 100, is_alarmed: true, reviewed_at: null });
    expect([...gap.request_ids].sort()).toEqual(open.slice(1).sort());
    const warnings = lines
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line.level === 40);
    expect(warnings).toHaveLength(1);
    const named = warnings[0]!.requestIds as string[];
    expect(named).toEqual(gap.request_ids.slice(0, 50));
    expect(warnings[0]!.requestsAtRisk).toBe(open.length - 1);

    // Acknowledged: no longer unreviewed, kept in the ledger.
    await mirror.store.transaction((tx) => tx.intakeGaps.acknowledge(tx.now()));
    const after = (await status(mirror)).intake_gaps;
    expect(after.unreviewed).toBe(0);
    expect(after.last[0]).toMatchObject({ is_alarmed: true, reviewed_at: expect.any(String) });
  });
});
