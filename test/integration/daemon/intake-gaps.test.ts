import { afterEach, describe, expect, it } from 'vitest';
import { startIntakeLedger } from '../../../src/daemon/intake-ledger.js';
import { readIntakeGapsReport } from '../../../src/ops/intake.js';
import { silentLogger } from '../../../src/log.js';
import { runPollCycle, type PollDeps } from '../../../src/sync/poll.js';
import type { SyncClient } from '../../../src/sync/ports.js';
import { captureLogger } from '../../helpers/api.js';
import { execute, queryAll } from '../../helpers/engine.js';
import { startMirror, type MirrorFixture } from '../../helpers/mirror.js';

let mirror: MirrorFixture;
afterEach(async () => mirror?.close());

/** What `status` shows under the key intake_gaps. */
const status = async (m: MirrorFixture) => ({ intake_gaps: await readIntakeGapsReport(m.db) });

/** Open requests with pickup ahead (of `state`, or both open states), as the mirror holds them. */
async function openRequests(m: MirrorFixture, since: number, state?: string): Promise<string[]> {
  const rows = await queryAll<{ request_id: string }>(
    m.db,
    `SELECT request_id FROM requests WHERE unavailable_at IS NULL
       AND list_state IN ('awaiting', 'accepted')
       AND coalesce(transport_agreed_for_time, transport_pickup_time) > @since
       AND (@state = '' OR list_state = @state)`,
    { since: new Date(since).toISOString(), state: state ?? '' },
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
       VALUES ('e1', 'v2', @request_id, '{"data": {}}', @received_at)`,
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

  it('leaves out the requests a poll read again after the gap, and keeps those no poll read', async () => {
    mirror = await startMirror({ requests: 80 });
    await mirror.cycle();
    const ledger = () =>
      startIntakeLedger({
        store: mirror.store,
        clock: mirror.clock,
        log: silentLogger(),
        alarmSeconds: 90,
      });
    await (await ledger()).stop();
    const gapStart = mirror.clock.now();
    const accepted = await openRequests(mirror, gapStart, 'accepted');
    const awaiting = await openRequests(mirror, gapStart, 'awaiting');
    expect(accepted.length).toBeGreaterThan(3);
    expect(awaiting.length).toBeGreaterThan(1);
    // Changed on the service while the receiver was down: their events are lost.
    const [reRead, failed, unchanged] = accepted;
    const changedAwaiting = awaiting[0]!;
    mirror.clock.advance(50_000);
    for (const id of [reRead!, failed!, changedAwaiting])
      mirror.sim.world.editRequest(id, 'service_level');
    mirror.clock.advance(50_000);
    await (await ledger()).stop();
    const atRisk = async () => {
      const { last } = (await status(mirror)).intake_gaps;
      expect(last[0]).toMatchObject({ is_alarmed: true, reviewed_at: null });
      return [...last[0]!.request_ids].sort();
    };
    const open = [...accepted, ...awaiting].sort();
    expect(await atRisk()).toEqual(open);

    // Polls of the accepted, completed and canceled lists only: awaiting is not read again.
    const poll = (client: SyncClient = mirror.client): Promise<unknown> => {
      const deps: PollDeps = {
        ...mirror.deps,
        client,
        settings: { ...mirror.deps.settings, states: ['accepted', 'completed', 'canceled'] },
      };
      return runPollCycle(deps);
    };
    mirror.clock.advance(2_000);
    // The first fails to fetch one changed request's detail: it reads `reRead` again, but
    // leaves `failed` to retry, so it cannot vouch for the requests it found unchanged.
    const failing: SyncClient = {
      listRequests: (query) => mirror.client.listRequests(query),
      listRequestDetails: (query) => mirror.client.listRequestDetails(query),
      getRequest: (id, options) =>
        id === failed
          ? Promise.reject(new Error('connection reset'))
          : mirror.client.getRequest(id, options),
    };
    expect(await poll(failing)).toMatchObject({ status: 'partial' });
    expect(await atRisk()).toEqual(open.filter((id) => id !== reRead));
    expect(await atRisk()).toContain(unchanged);

    // The next reads `failed` again and completes: every accepted request is off the list, the
    // awaiting ones stay, the one changed in the gap among them.
    expect(await poll()).toMatchObject({ status: 'ok' });
    expect(await atRisk()).toEqual([...awaiting].sort());
    expect(await atRisk()).toContain(changedAwaiting);

    // A cycle of every state: none left.
    mirror.clock.advance(2_000);
    expect(await mirror.cycle()).toMatchObject({ status: 'ok' });
    expect(await atRisk()).toEqual([]);
    const [changed] = await queryAll<{ n: number }>(
      mirror.db,
      `SELECT count(*) AS n FROM request_changes
       WHERE source = 'poll' AND observed_at > @since AND request_id IN (@a, @b, @c)`,
      { since: new Date(gapStart).toISOString(), a: reRead, b: failed, c: changedAwaiting },
    );
    expect(Number(changed!.n)).toBe(3);
  });

  it('leaves out nothing for a poll that began before the gap ended', async () => {
    mirror = await startMirror({ requests: 40 });
    const ledger = () =>
      startIntakeLedger({
        store: mirror.store,
        clock: mirror.clock,
        log: silentLogger(),
        alarmSeconds: 90,
      });
    await (await ledger()).stop();
    const gapStart = mirror.clock.now();
    mirror.clock.advance(100_000);
    // A complete cycle while the receiver is still down (polling alone ran on).
    expect(await mirror.cycle()).toMatchObject({ status: 'ok' });
    const open = await openRequests(mirror, gapStart);
    expect(open.length).toBeGreaterThan(3);
    mirror.clock.advance(1_000);
    await (await ledger()).stop();
    const { last } = (await status(mirror)).intake_gaps;
    expect([...last[0]!.request_ids].sort()).toEqual([...open].sort());
  });

  it('counts the webhook events that carried the record, once they applied', async () => {
    mirror = await startMirror({ requests: 60 });
    await mirror.cycle();
    const ledger = () =>
      startIntakeLedger({
        store: mirror.store,
        clock: mirror.clock,
        log: silentLogger(),
        alarmSeconds: 90,
      });
    await (await ledger()).stop();
    const gapStart = mirror.clock.now();
    const open = await openRequests(mirror, gapStart);
    expect(open.length).toBeGreaterThan(7);
    mirror.clock.advance(100_000);
    const at = (ms: number) => new Date(mirror.clock.now() + ms).toISOString();
    const events: [string, string, string | null, string | null, string | null, string][] = [
      // envelope, payload, request_status, processed_at, error, received_at
      ['v2', '{"data": {}}', 'ACCEPTED', null, null, at(0)], // data, pending: counts
      ['v2', '{"data": null}', 'UNAVAILABLE', at(1), null, at(1)], // the end of it: counts
      ['v1', '{"event": {}}', null, at(1), null, at(1)], // its detail fetched: counts
      ['v2', '{"data": {}}', 'ACCEPTED', null, null, at(-1)], // before the end: not
      ['v2', '{"data": null}', 'ACCEPTED', at(1), null, at(1)], // no record: not
      ['v2', '{"data": {}}', 'ACCEPTED', at(1), 'invalid data', at(1)], // failed: not
      ['v1', '{"event": {}}', null, null, null, at(1)], // fetch not done yet: not
    ];
    for (const [
      index,
      [envelope, payload, status, processedAt, error, receivedAt],
    ] of events.entries()) {
      await execute(
        mirror.db,
        `INSERT INTO webhook_events (event_id, envelope, service_request_id, request_status,
           payload_json, received_at, processed_at, error)
         VALUES (@id, @envelope, @request_id, @status, @payload, @received_at, @processed_at, @error)`,
        {
          id: `e${index}`,
          envelope,
          request_id: open[index],
          status,
          payload,
          received_at: receivedAt,
          processed_at: processedAt,
          error,
        },
      );
    }
    await (await ledger()).stop();
    const { last } = (await status(mirror)).intake_gaps;
    expect([...last[0]!.request_ids].sort()).toEqual(open.slice(3).sort());
  });
});
