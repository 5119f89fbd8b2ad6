import { afterEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { openForReading } from '../../../src/db/open.js';
import type { Sql } from '../../../src/db/sql.js';
import { runPollCycle } from '../../../src/sync/poll.js';
import { deferred } from '../../helpers/deferred.js';
import { failSecondTransaction, holdFirstTransaction } from '../../helpers/held-store.js';
import { countRows, execute, queryAll, queryOne, testEngine } from '../../helpers/engine.js';
import { startMirror, type MirrorFixture } from '../../helpers/mirror.js';
import { expectMirrorEqualsTruth, truthInWindow } from '../../helpers/truth.js';

let mirror: MirrorFixture;
afterEach(async () => mirror?.close());

const detailCalls = (m: MirrorFixture) => m.sim.calls.filter((call) => call.endpoint === 'detail');
/** A request's stored content, JSON parsed (PostgreSQL's jsonb reprints it). */
const storedContent = async (m: MirrorFixture, requestId: string) => {
  const row = await queryOne<{ last_updated_timestamp_utc: string; raw_json: string }>(
    m.db,
    'SELECT last_updated_timestamp_utc, raw_json FROM requests WHERE request_id = @requestId',
    { requestId },
  );
  return row && { ...row, raw_json: JSON.parse(row.raw_json) as unknown };
};

/** A fixture that polls awaiting only, over pages of 10 that hold still while read. */
const awaitingOnly = () =>
  startMirror({
    requests: 150,
    pageSize: 10,
    roughness: { pagingChurnRate: 0, driftRate: 0 },
    settings: { states: ['awaiting'] },
  });

/** Whether the fixture's client has yielded a page of the full list yet. */
function trackPaging(m: MirrorFixture): () => boolean {
  let isPaging = false;
  const list = m.client.listRequestDetails.bind(m.client);
  m.client.listRequestDetails = async function* (query) {
    for await (const page of list(query)) {
      isPaging = true;
      yield page;
    }
  };
  return () => isPaging;
}

/**
 * Counts the awaiting records the client checked (those the mirror did not hold as sent: stored,
 * or kept apart); the returned function gives the count since it was last called.
 */
function countCheckedRecords(m: MirrorFixture): () => number {
  let checked = 0;
  const list = m.client.listRequestDetails.bind(m.client);
  m.client.listRequestDetails = async function* (query) {
    for await (const page of list(query)) {
      checked += page.items.length + page.rejected.length;
      yield page;
    }
  };
  return () => {
    const count = checked;
    checked = 0;
    return count;
  };
}

describe('the poll cycle against the simulator', () => {
  it('mirrors the service column by column after the first cycle, and again after rounds of mutations', async () => {
    mirror = await startMirror({ requests: 150 });
    const first = await mirror.cycle();
    expect(first.status).toBe('ok');
    expect(first.counts.requestsNew).toBeGreaterThan(50);
    await expectMirrorEqualsTruth(mirror);

    for (let round = 0; round < 5; round += 1) {
      mirror.clock.advance(60_000);
      mirror.sim.mutate(25);
      const result = await mirror.cycle();
      expect(result.status, result.error).toBe('ok');
      await expectMirrorEqualsTruth(mirror);
    }
    expect(await countRows(mirror.db, 'sync_runs', "status = 'ok'")).toBe(6);
  });

  it('makes one list call per state plus the awaiting pages, and no detail call, when nothing changed', async () => {
    mirror = await startMirror({ requests: 150, pageSize: 40 });
    await mirror.cycle();
    mirror.sim.resetCalls();
    // What the client hands the engine: checked records, and the ids it passed over unchecked.
    const pages: { items: number; known: number; rejected: number }[] = [];
    const ids: string[] = [];
    const rejected: string[] = [];
    const list = mirror.client.listRequestDetails.bind(mirror.client);
    mirror.client.listRequestDetails = async function* (query) {
      for await (const page of list(query)) {
        const pageRejected = page.rejected.map((r) => String(r.requestId));
        rejected.push(...pageRejected);
        ids.push(...page.known, ...pageRejected);
        pages.push({
          items: page.items.length,
          known: page.known.length,
          rejected: page.rejected.length,
        });
        yield page;
      }
    };
    const awaitingBefore = new Set(
      truthInWindow(mirror)
        .filter((t) => t.isVisible && t.listState === 'awaiting')
        .map((t) => t.requestId),
    );
    const idle = await mirror.cycle();
    // Every awaiting record reads as stored: none is checked against the schema again, but
    // for the malformed ones the quarantine holds (those are checked, and kept apart again).
    const sum = (key: 'items' | 'known' | 'rejected') =>
      pages.reduce((total, page) => total + page[key], 0);
    expect(sum('items')).toBe(0);
    expect(sum('known')).toBeGreaterThan(0);
    // Paging churn (one change at most per page served) can hide a record from this pass.
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.filter((id) => !awaitingBefore.has(id))).toEqual([]);
    const pagesServed = mirror.sim.calls.filter((call) => call.endpoint === 'details_list').length;
    expect(awaitingBefore.size - ids.length).toBeLessThanOrEqual(pagesServed);
    const quarantined = await queryAll<{ request_id: string }>(
      mirror.db,
      'SELECT request_id FROM quarantine',
    );
    const quarantinedIds = new Set(quarantined.map((q) => q.request_id));
    expect(rejected.filter((id) => !quarantinedIds.has(id))).toEqual([]);
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
    const run = await queryOne(mirror.db, 'SELECT * FROM sync_runs ORDER BY run_id DESC LIMIT 1');
    expect(run).toMatchObject({
      kind: 'poll',
      status: 'ok',
      detail_calls: 0,
      list_calls: 3 + awaitingPages,
      requests_new: 0,
    });
  });

  it('sends the list calls of a cycle at once once the first is answered, the first awaiting page among them', async () => {
    mirror = await startMirror({ requests: 150, pageSize: 40, settings: { concurrency: 4 } });
    // The answers after the first are held until the other three calls (two partial lists and
    // the first awaiting page) have gone out. Made one after another, the second would wait
    // here for good.
    const started: string[] = [];
    const allSent = deferred();
    let isReleasedByValve = false;
    const send = (name: string) => {
      started.push(name);
      if (started.length === 4) allSent.resolve();
    };
    const listRequests = mirror.client.listRequests.bind(mirror.client);
    mirror.client.listRequests = async (query) => {
      send(query.state);
      const isFirst = started.length === 1;
      const answer = await listRequests(query);
      if (!isFirst) await allSent.promise;
      return answer;
    };
    const listDetails = mirror.client.listRequestDetails.bind(mirror.client);
    mirror.client.listRequestDetails = async function* (query) {
      send(`${query.state} page`);
      for await (const page of listDetails(query)) {
        await allSent.promise;
        yield page;
      }
    };
    // Only for the failure.
    const valve = setTimeout(() => {
      isReleasedByValve = true;
      allSent.resolve();
    }, 10_000);
    try {
      const result = await mirror.cycle();
      expect(isReleasedByValve).toBe(false);
      expect(started[0]).toBe('accepted');
      expect(started.slice(1).sort()).toEqual(['awaiting page', 'canceled', 'completed']);
      expect(result.status, result.error).toBe('ok');
    } finally {
      clearTimeout(valve);
    }
    await expectMirrorEqualsTruth(mirror);
  });

  it('asks one list at a time while the service fails them', async () => {
    mirror = await startMirror({ requests: 100, settings: { concurrency: 4 } });
    await mirror.cycle();
    mirror.sim.setFaults({ errorRate: 1, endpoints: ['list', 'details_list'] });
    let inFlight = 0;
    let mostInFlight = 0;
    const counted = <T>(call: () => Promise<T>): Promise<T> => {
      inFlight += 1;
      mostInFlight = Math.max(mostInFlight, inFlight);
      return call().finally(() => (inFlight -= 1));
    };
    const listRequests = mirror.client.listRequests.bind(mirror.client);
    mirror.client.listRequests = (query) => counted(() => listRequests(query));
    const listDetails = mirror.client.listRequestDetails.bind(mirror.client);
    mirror.client.listRequestDetails = async function* (query) {
      inFlight += 1;
      mostInFlight = Math.max(mostInFlight, inFlight);
      try {
        yield* listDetails(query);
      } finally {
        inFlight -= 1;
      }
    };
    const result = await mirror.cycle();
    expect(result.status).toBe('failed');
    expect(result.error).toMatch(
      /list accepted: .*list completed: .*list canceled: .*list awaiting: /,
    );
    expect(mostInFlight).toBe(1);
  });

  it('takes the list answers in the order of the states, whichever comes first', async () => {
    mirror = await startMirror({ requests: 150, settings: { concurrency: 4 } });
    await mirror.cycle();
    // The first list answers; the two after it fail, the later state's first. The run's error
    // names them in the order of the states all the same.
    const listRequests = mirror.client.listRequests.bind(mirror.client);
    const canceledAnswered = deferred();
    let isReleasedByValve = false;
    mirror.client.listRequests = async (query) => {
      if (query.state === 'completed') {
        await canceledAnswered.promise;
        throw new Error('completed list failed');
      }
      if (query.state === 'canceled') {
        canceledAnswered.resolve();
        throw new Error('canceled list failed');
      }
      return listRequests(query);
    };
    // Only for the failure: lists made one after another would wait here for good.
    const valve = setTimeout(() => {
      isReleasedByValve = true;
      canceledAnswered.resolve();
    }, 10_000);
    try {
      const result = await mirror.cycle();
      expect(isReleasedByValve).toBe(false);
      expect(result.status).toBe('failed');
      expect(result.error).toMatch(/^list completed: .*completed list failed; list canceled: /);
    } finally {
      clearTimeout(valve);
    }
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
    await expectMirrorEqualsTruth(mirror);
    const change = (await queryOne<Record<string, string>>(
      mirror.db,
      "SELECT old_state, new_state, changed_columns FROM request_changes WHERE request_id = @id AND kind = 'updated'",
      { id: accepted[0] },
    ))!;
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
    const stored = (await queryOne<{ at: string }>(
      mirror.db,
      'SELECT last_updated_timestamp_utc AS at FROM requests WHERE request_id = @id',
      { id: same!.requestId },
    ))!;
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
    const row = (await queryOne(
      mirror.db,
      'SELECT unavailable_at, patient_last_name FROM requests WHERE request_id = @id',
      { id: gone!.requestId },
    ))!;
    expect(row.unavailable_at).toBe(new Date(mirror.clock.now()).toISOString());
    expect(row.patient_last_name).toBe((gone!.detail as Record<string, unknown>).patient_last_name);
    // A later idle cycle does not fetch it again and again: it is no longer "current".
    mirror.sim.resetCalls();
    await mirror.cycle();
    expect(detailCalls(mirror)).toHaveLength(0);
    await expectMirrorEqualsTruth(mirror);
  });

  it('follows a request whose agreed time moves it out of the window, without marking it unavailable', async () => {
    mirror = await startMirror({ requests: 100 });
    await mirror.cycle();
    const [moving] = truthInWindow(mirror).filter((t) => t.isVisible && t.listState === 'accepted');
    const farAway = new Date(mirror.clock.now() + 40 * 24 * 3_600_000).toISOString();
    mirror.sim.world.setAgreedTime(moving!.requestId, farAway);
    const result = await mirror.cycle();
    expect(result.counts.requestsUnavailable).toBe(0);
    const row = await queryOne(
      mirror.db,
      'SELECT unavailable_at, event_dt_utc, transport_agreed_for_time FROM requests WHERE request_id = @id',
      { id: moving!.requestId },
    );
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
    const before = await storedContent(mirror, changed!.requestId);
    expect(before).toBeDefined();
    mirror.sim.setFaults({ errorRate: 1, endpoints: ['detail'] });
    const failed = await mirror.cycle();
    expect(failed.status).toBe('partial');
    expect(failed.counts.requestsFailed).toBe(1);
    // The stored last_updated and content are the old ones, together: the next cycle sees a difference.
    expect(await storedContent(mirror, changed!.requestId)).toEqual(before);
    mirror.sim.setFaults({});
    const retried = await mirror.cycle();
    expect(retried.status).toBe('ok');
    expect(retried.counts.requestsChanged).toBe(1);
    await expectMirrorEqualsTruth(mirror);
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
    expect(await countRows(mirror.db, 'requests', 'unavailable_at IS NOT NULL')).toBe(0);
    expect(
      await countRows(mirror.db, 'sync_runs', "status = 'failed' AND error LIKE 'list %'"),
    ).toBe(1);
  });

  it('goes on fetching details while their records wait to be written', async () => {
    mirror = await startMirror({ requests: 100, settings: { concurrency: 2 } });
    await mirror.cycle();
    const added = mirror.sim.addRequests(20, {
      state: 'accepted',
      eventAt: mirror.clock.now() + 3_600_000,
    });
    // Every write of the cycle after its first detail is held until all 20 details are read.
    let fetched = 0;
    let fetchedAtRelease = 0;
    const gate = deferred();
    const release = () => gate.resolve();
    const held = gate.promise.then(() => (fetchedAtRelease = fetched));
    const getRequest = mirror.client.getRequest.bind(mirror.client);
    mirror.client.getRequest = async (...args) => {
      const result = await getRequest(...args);
      fetched += 1;
      if (fetched === added.length) release();
      return result;
    };
    const { store } = mirror.deps;
    const heldStore: typeof store = {
      ...store,
      async transaction(work, options) {
        if (fetched > 0) await held;
        return store.transaction(work, options);
      },
    };
    // Only for the failure: had each fetch slot waited for its record's commit, two fetches
    // would be all, and the cycle would wait here for good.
    const valve = setTimeout(release, 10_000);
    try {
      const result = await runPollCycle({ ...mirror.deps, store: heldStore });
      expect(result.status, result.error).toBe('ok');
      expect(fetchedAtRelease).toBe(added.length);
      expect(result.counts.requestsNew).toBe(added.length);
    } finally {
      clearTimeout(valve);
    }
    await expectMirrorEqualsTruth(mirror);
  });

  it("answers the awaiting pass from the cycle's summaries: no read of its own, and no record text", async () => {
    // Without paging churn, one cycle reads every record (churn can hide one from a pass).
    mirror = await startMirror({ requests: 150, pageSize: 20, roughness: { pagingChurnRate: 0 } });
    // What each cycle asks the mirror of its requests: the window's summaries (which hold the
    // digests the pass compares), and any comparison of a record's text (requests.sameRaw).
    let summaryReads = 0;
    let comparedTexts = 0;
    const { store } = mirror;
    const countingStore: typeof store = {
      ...store,
      read: (work) =>
        store.read((tx) =>
          work({
            ...tx,
            requests: {
              ...tx.requests,
              summariesInWindow: (from, to) => {
                summaryReads += 1;
                return tx.requests.summariesInWindow(from, to);
              },
              sameRaw: (records, listState) => {
                comparedTexts += records.length;
                return tx.requests.sameRaw(records, listState);
              },
            },
          }),
        ),
    };
    const checkedPerCycle = countCheckedRecords(mirror);
    const cycle = () => runPollCycle({ ...mirror.deps, store: countingStore });
    const first = await cycle();
    expect(first.status, first.error).toBe('ok');
    expect(first.counts.requestsNew).toBeGreaterThan(20);
    // A first sync holds nothing: every awaiting record is stored without a question.
    expect([summaryReads, comparedTexts]).toEqual([1, 0]);
    expect(checkedPerCycle()).toBeGreaterThan(20);
    await expectMirrorEqualsTruth(mirror);

    mirror.clock.advance(60_000);
    mirror.sim.mutate(20);
    const second = await cycle();
    expect(second.status, second.error).toBe('ok');
    expect([summaryReads, comparedTexts]).toEqual([2, 0]);
    // Only what changed, and the malformed records kept apart, are checked again.
    const quarantined = await countRows(mirror.db, 'quarantine');
    expect(checkedPerCycle()).toBeLessThanOrEqual(20 + quarantined);
    await expectMirrorEqualsTruth(mirror);
  });

  it('records the digests a mirror from before them lacks without a change, then passes the records over', async () => {
    mirror = await startMirror({ requests: 150, pageSize: 20, roughness: { pagingChurnRate: 0 } });
    const first = await mirror.cycle();
    expect(first.status, first.error).toBe('ok');
    // As a mirror migrated from a version without requests.received_digest holds its rows.
    await execute(mirror.db, 'UPDATE requests SET received_digest = NULL');
    const changes = await countRows(mirror.db, 'request_changes');
    const checkedPerCycle = countCheckedRecords(mirror);

    const upgraded = await mirror.cycle();
    expect(upgraded.status, upgraded.error).toBe('ok');
    expect(upgraded.counts.requestsChanged + upgraded.counts.requestsNew).toBe(0);
    expect(await countRows(mirror.db, 'request_changes')).toBe(changes);
    const held = "list_state = 'awaiting' AND unavailable_at IS NULL";
    const digested = await countRows(
      mirror.db,
      'requests',
      `${held} AND received_digest IS NOT NULL`,
    );
    expect(checkedPerCycle()).toBeGreaterThanOrEqual(digested);
    expect(digested).toBeGreaterThan(10);

    // Each record stored with its digest is now passed over unchecked.
    const idle = await mirror.cycle();
    expect(idle.status, idle.error).toBe('ok');
    const quarantined = await countRows(mirror.db, 'quarantine');
    expect(checkedPerCycle()).toBeLessThanOrEqual(quarantined);
    await expectMirrorEqualsTruth(mirror);
  });

  it('parses no awaiting page it read the cycle before, but the page of a record rewritten since', async () => {
    mirror = await startMirror({ requests: 150, pageSize: 20, roughness: { pagingChurnRate: 0 } });
    const first = await mirror.cycle();
    expect(first.status, first.error).toBe('ok');
    // The full list's pages that went through JSON.parse.
    const parse = vi.spyOn(JSON, 'parse');
    onTestFinished(() => parse.mockRestore());
    const pagesParsed = () => {
      const count = parse.mock.calls.filter(
        ([text]) => typeof text === 'string' && text.includes('"results"'),
      ).length;
      parse.mockClear();
      return count;
    };
    const checkedPerCycle = countCheckedRecords(mirror);
    const idle = await mirror.cycle();
    expect(idle.status, idle.error).toBe('ok');
    expect(idle.counts.listCalls).toBeGreaterThan(5);
    expect(pagesParsed()).toBe(0);
    const quarantined = await countRows(mirror.db, 'quarantine');
    expect(checkedPerCycle()).toBeLessThanOrEqual(quarantined);

    // As a webhook's write leaves an awaiting row: its content no longer the text last received.
    const { request_id: rewritten } = (await queryOne<{ request_id: string }>(
      mirror.db,
      `SELECT request_id FROM requests WHERE list_state = 'awaiting' AND unavailable_at IS NULL
         AND received_digest IS NOT NULL ORDER BY request_id LIMIT 1`,
    ))!;
    await execute(mirror.db, 'UPDATE requests SET received_digest = NULL WHERE request_id = @id', {
      id: rewritten,
    });
    const again = await mirror.cycle();
    expect(again.status, again.error).toBe('ok');
    expect(pagesParsed()).toBe(1);
    expect(checkedPerCycle()).toBeLessThanOrEqual(1 + quarantined);
    expect(
      await countRows(mirror.db, 'requests', 'request_id = @id AND received_digest IS NOT NULL', {
        id: rewritten,
      }),
    ).toBe(1);
    await expectMirrorEqualsTruth(mirror);
  });

  it.skipIf(testEngine() !== 'postgres')(
    'writes the next awaiting page while the one before it commits on PostgreSQL',
    async () => {
      mirror = await awaitingOnly();
      // The first page's transaction is held until another starts.
      const held = holdFirstTransaction(mirror.store, trackPaging(mirror));
      // Only for the failure: written one page at a time, the cycle would wait here for good.
      const valve = setTimeout(held.release, 10_000);
      try {
        const result = await runPollCycle({ ...mirror.deps, store: held.store });
        expect(result.status, result.error).toBe('ok');
        expect(result.counts.requestsNew).toBeGreaterThan(20);
        expect(held.startedWhileHeld()).toBeGreaterThan(0);
      } finally {
        clearTimeout(valve);
      }
      await expectMirrorEqualsTruth(mirror);
    },
  );

  it('ends the awaiting pass with the error of a page that failed once the page before it has committed', async () => {
    mirror = await awaitingOnly();
    // On PostgreSQL the first page's transaction is held until the second, written beside it,
    // has failed; on SQLite the second follows the first.
    const isBeside = testEngine() === 'postgres';
    const failing = failSecondTransaction(mirror.store, trackPaging(mirror), isBeside);
    const valve = setTimeout(failing.release, 10_000);
    try {
      const result = await runPollCycle({ ...mirror.deps, store: failing.store });
      expect(result.status).not.toBe('ok');
      expect(result.error).toContain('disk full');
      expect(failing.started()).toBe(2);
      // No write outlives the cycle.
      expect(failing.isFirstSettled()).toBe(true);
    } finally {
      clearTimeout(valve);
    }
    // The first page committed, and stays.
    expect(await countRows(mirror.db, 'requests')).toBe(10);
  });

  it('is not blocked by a reader holding a read transaction, and does not block it', async () => {
    mirror = await startMirror({ requests: 100 });
    await mirror.cycle();
    // Another process's reader: a read-only connection of its own, holding one snapshot (a read
    // transaction) while the cycle writes.
    const reader = await openForReading({ location: mirror.dbPath });
    const requests = (sql: Sql) =>
      sql.get<{ n: number }>('SELECT count(*) AS n FROM requests').then((row) => row!.n);
    try {
      const seenBefore = await reader.read(
        async (sql) => {
          const before = await requests(sql);
          mirror.sim.addRequests(10, {
            state: 'accepted',
            eventAt: mirror.clock.now() + 3_600_000,
          });
          const result = await mirror.cycle();
          expect(result.status).toBe('ok');
          expect(result.counts.requestsNew).toBe(10);
          expect(await requests(sql)).toBe(before);
          return before;
        },
        { isSnapshot: true },
      );
      expect(await reader.read(requests)).toBe(seenBefore + 10);
    } finally {
      await reader.close();
    }
  });
});
