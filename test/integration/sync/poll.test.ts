import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { startMirror, type MirrorFixture } from '../../helpers/mirror.js';
import { expectMirrorEqualsTruth, truthInWindow } from '../../helpers/truth.js';

let mirror: MirrorFixture;
afterEach(async () => mirror?.close());

const detailCalls = (m: MirrorFixture) => m.sim.calls.filter((call) => call.endpoint === 'detail');
const count = (m: MirrorFixture, sql: string) =>
  (m.db.sqlite.prepare(sql).get() as { n: number }).n;

describe('the poll cycle against the simulator', () => {
  it('mirrors the service column by column after the first cycle, and again after rounds of mutations', async () => {
    mirror = await startMirror({ requests: 150 });
    const first = await mirror.cycle();
    expect(first.status).toBe('ok');
    expect(first.counts.requestsNew).toBeGreaterThan(50);
    expectMirrorEqualsTruth(mirror);

    for (let round = 0; round < 5; round += 1) {
      mirror.clock.advance(60_000);
      mirror.sim.mutate(25);
      const result = await mirror.cycle();
      expect(result.status, result.error).toBe('ok');
      expectMirrorEqualsTruth(mirror);
    }
    expect(count(mirror, "SELECT count(*) AS n FROM sync_runs WHERE status = 'ok'")).toBe(6);
  });

  it('makes one list call per state plus the awaiting pages, and no detail call, when nothing changed', async () => {
    mirror = await startMirror({ requests: 150, pageSize: 40 });
    await mirror.cycle();
    mirror.sim.resetCalls();
    const idle = await mirror.cycle();
    const awaitingPages = Math.max(
      1,
      Math.ceil(
        truthInWindow(mirror).filter((t) => t.isVisible && t.listState === 'awaiting').length / 40,
      ),
    );
    expect(detailCalls(mirror)).toHaveLength(0);
    expect(mirror.sim.calls.filter((call) => call.endpoint === 'list')).toHaveLength(3);
    expect(mirror.sim.calls.filter((call) => call.endpoint === 'details_list')).toHaveLength(
      awaitingPages,
    );
    expect(idle.counts).toMatchObject({
      detailCalls: 0,
      listCalls: 3 + awaitingPages,
      requestsNew: 0,
      requestsChanged: 0,
    });
    const run = mirror.db.sqlite
      .prepare('SELECT * FROM sync_runs ORDER BY run_id DESC LIMIT 1')
      .get() as Record<string, unknown>;
    expect(run).toMatchObject({
      kind: 'poll',
      status: 'ok',
      detail_calls: 0,
      list_calls: 3 + awaitingPages,
      requests_new: 0,
    });
  });

  it('fetches exactly the changed requests, and records state changes in the change log', async () => {
    mirror = await startMirror({ requests: 150 });
    await mirror.cycle();
    const accepted = truthInWindow(mirror)
      .filter((t) => t.isVisible && t.listState === 'accepted')
      .map((t) => t.requestId);
    // Two changes to one request within one cycle: fetched once, the latest content stored.
    mirror.sim.world.setState(accepted[0]!, 'completed');
    mirror.sim.world.editRequest(accepted[0]!, 'note');
    mirror.sim.world.editRequest(accepted[1]!, 'location');
    mirror.sim.resetCalls();
    const result = await mirror.cycle();
    expect(
      detailCalls(mirror)
        .map((call) => call.requestId)
        .sort(),
    ).toEqual([accepted[0], accepted[1]].sort());
    expect(result.counts.requestsChanged).toBe(2);
    expectMirrorEqualsTruth(mirror);
    const change = mirror.db.sqlite
      .prepare(
        "SELECT old_state, new_state, changed_columns FROM request_changes WHERE request_id = ? AND kind = 'updated'",
      )
      .get(accepted[0]) as Record<string, string>;
    expect(change).toMatchObject({ old_state: 'accepted', new_state: 'completed' });
    expect(change.changed_columns).toContain('list_state');
  });

  it('stores a moved last_updated even when the detail reads the same, so it is not fetched again', async () => {
    mirror = await startMirror({ requests: 100 });
    await mirror.cycle();
    const [same] = truthInWindow(mirror).filter((t) => t.isVisible && t.listState === 'accepted');
    const before = mirror.sim.truth().find((t) => t.requestId === same!.requestId)!;
    mirror.clock.advance(60_000);
    mirror.sim.world.setState(same!.requestId, 'accepted'); // touches last_updated only
    const after = mirror.sim.truth().find((t) => t.requestId === same!.requestId)!;
    expect(after.lastUpdatedTimestampUtc).not.toBe(before.lastUpdatedTimestampUtc);
    expect(after.detail).toEqual(before.detail);
    await mirror.cycle();
    const stored = mirror.db.sqlite
      .prepare('SELECT last_updated_timestamp_utc AS at FROM requests WHERE request_id = ?')
      .get(same!.requestId) as { at: string };
    expect(stored.at).toBe(after.lastUpdatedTimestampUtc);
    // Read in the second of the edit: one more read settles it (see settling.test.ts).
    mirror.clock.advance(60_000);
    mirror.sim.resetCalls();
    await mirror.cycle();
    expect(detailCalls(mirror).map((call) => call.requestId)).toEqual([same!.requestId]);
    mirror.sim.resetCalls();
    await mirror.cycle();
    expect(detailCalls(mirror)).toHaveLength(0);
  });

  it('marks a request that the service stopped showing (403) unavailable, keeping it, and clears the mark if it returns', async () => {
    mirror = await startMirror({ requests: 100 });
    await mirror.cycle();
    const [gone] = truthInWindow(mirror).filter((t) => t.isVisible && t.listState === 'accepted');
    mirror.sim.world.makeUnavailable(gone!.requestId, 'reassigned');
    const result = await mirror.cycle();
    expect(result.counts.requestsUnavailable).toBe(1);
    const row = mirror.db.sqlite
      .prepare('SELECT unavailable_at, patient_last_name FROM requests WHERE request_id = ?')
      .get(gone!.requestId) as Record<string, unknown>;
    expect(row.unavailable_at).toBe(new Date(mirror.clock.now()).toISOString());
    expect(row.patient_last_name).toBe((gone!.detail as Record<string, unknown>).patient_last_name);
    // A later idle cycle does not fetch it again and again: it is no longer "current".
    mirror.sim.resetCalls();
    await mirror.cycle();
    expect(detailCalls(mirror)).toHaveLength(0);
    expectMirrorEqualsTruth(mirror);
  });

  it('follows a request whose agreed time moves it out of the window, without marking it unavailable', async () => {
    mirror = await startMirror({ requests: 100 });
    await mirror.cycle();
    const [moving] = truthInWindow(mirror).filter((t) => t.isVisible && t.listState === 'accepted');
    const farAway = new Date(mirror.clock.now() + 40 * 24 * 3_600_000).toISOString();
    mirror.sim.world.setAgreedTime(moving!.requestId, farAway);
    const result = await mirror.cycle();
    expect(result.counts.requestsUnavailable).toBe(0);
    const row = mirror.db.sqlite
      .prepare(
        'SELECT unavailable_at, event_dt_utc, transport_agreed_for_time FROM requests WHERE request_id = ?',
      )
      .get(moving!.requestId);
    expect(row).toEqual({
      unavailable_at: null,
      event_dt_utc: farAway,
      transport_agreed_for_time: farAway,
    });
  });

  it('retries a failed detail fetch on the next cycle with nothing half-written', async () => {
    mirror = await startMirror({ requests: 100 });
    await mirror.cycle();
    const [changed] = truthInWindow(mirror).filter(
      (t) => t.isVisible && t.listState === 'accepted',
    );
    mirror.sim.world.editRequest(changed!.requestId, 'location');
    const before = mirror.db.sqlite
      .prepare('SELECT last_updated_timestamp_utc, raw_json FROM requests WHERE request_id = ?')
      .get(changed!.requestId);
    mirror.sim.setFaults({ errorRate: 1, endpoints: ['detail'] });
    const failed = await mirror.cycle();
    expect(failed.status).toBe('partial');
    expect(failed.counts.requestsFailed).toBe(1);
    // The stored last_updated and content are the old ones, together: the next cycle sees a difference.
    expect(
      mirror.db.sqlite
        .prepare('SELECT last_updated_timestamp_utc, raw_json FROM requests WHERE request_id = ?')
        .get(changed!.requestId),
    ).toEqual(before);
    mirror.sim.setFaults({});
    const retried = await mirror.cycle();
    expect(retried.status).toBe('ok');
    expect(retried.counts.requestsChanged).toBe(1);
    expectMirrorEqualsTruth(mirror);
  });

  it('infers nothing from an incomplete pass: a failed list call checks and marks nothing', async () => {
    mirror = await startMirror({ requests: 100 });
    await mirror.cycle();
    mirror.sim.setFaults({ errorRate: 1, endpoints: ['list'] });
    mirror.sim.resetCalls();
    const result = await mirror.cycle();
    // Nothing listed is not "everything vanished": no storm of detail calls to check.
    expect(detailCalls(mirror)).toHaveLength(0);
    expect(result.status).toBe('failed');
    expect(result.isListComplete).toBe(false);
    expect(
      count(mirror, 'SELECT count(*) AS n FROM requests WHERE unavailable_at IS NOT NULL'),
    ).toBe(0);
    expect(
      count(
        mirror,
        "SELECT count(*) AS n FROM sync_runs WHERE status = 'failed' AND error LIKE 'list %'",
      ),
    ).toBe(1);
  });

  it('is not blocked by a reader holding a read transaction, and does not block it', async () => {
    mirror = await startMirror({ requests: 100 });
    await mirror.cycle();
    const reader = new Database(mirror.dbPath, { readonly: true });
    reader.exec('BEGIN');
    const seenBefore = (reader.prepare('SELECT count(*) AS n FROM requests').get() as { n: number })
      .n;
    mirror.sim.addRequests(10, { state: 'accepted', eventAt: mirror.clock.now() + 3_600_000 });
    const result = await mirror.cycle();
    expect(result.status).toBe('ok');
    expect(result.counts.requestsNew).toBe(10);
    expect((reader.prepare('SELECT count(*) AS n FROM requests').get() as { n: number }).n).toBe(
      seenBefore,
    );
    reader.exec('COMMIT');
    expect((reader.prepare('SELECT count(*) AS n FROM requests').get() as { n: number }).n).toBe(
      seenBefore + 10,
    );
    reader.close();
  });
});
