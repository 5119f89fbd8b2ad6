import { describe, expect, it } from 'vitest';
import { createDemoSummary, formatOutcomes } from '../../../src/cli/demo-summary.js';
import type { MirrorFacts } from '../../../src/db/store/facts.js';
import { emptyCounts, type RunCounts } from '../../../src/db/store/run-store.js';
import type { CycleResult } from '../../../src/sync/poll.js';

/** Mirror facts with `stored` accepted requests and drift over `members` members. */
function facts(stored: number, drift: { members: number; rows: number } = { members: 0, rows: 0 }) {
  const value: MirrorFacts = {
    requestsByState: { accepted: stored - 1, broadcast: 1 },
    unavailable: 0,
    quarantined: 0,
    schemaDrift: {
      rows: drift.rows,
      members: drift.members,
      missing: Math.max(0, drift.rows - 1),
      type: drift.rows > 0 ? 1 : 0,
      unknown: 0,
      last_seen_at: drift.rows ? '2026-08-20T10:00:00.000Z' : null,
    },
    webhookEvents: { received: 0, pending: 0, failed: 0 },
    outbox: { locations: { pending: 0, failed: 0 }, actions: { pending: 0, failed: 0 } },
  };
  return value;
}

function cycle(runId: number, counts: Partial<RunCounts>, status = 'ok'): CycleResult {
  return {
    runId,
    status: status as CycleResult['status'],
    counts: { ...emptyCounts(), listCalls: 5, ...counts },
    isListComplete: status === 'ok',
    isPollingRetired: false,
  };
}

describe('the demo summary', () => {
  it('prints a line per cycle, and a drift line only when a member not told before drifts', () => {
    const summary = createDemoSummary();
    expect(
      summary.cycle(
        cycle(1, { requestsNew: 250, detailCalls: 155 }),
        facts(250, { members: 6, rows: 24 }),
      ),
    ).toBe(
      'cycle 1 ok: 250 new, 0 changed, 0 unavailable (5 list, 155 detail calls); 250 requests stored\n' +
        'schema drift: 6 members differ from the documented shape (schema_drift holds 24 rows: 23 missing, 1 retyped, 0 unknown)\n',
    );
    // More rows for the same members: a request more shows them, which is nothing new to tell.
    expect(
      summary.cycle(cycle(2, { requestsChanged: 6 }), facts(250, { members: 6, rows: 30 })),
    ).toBe(
      'cycle 2 ok: 0 new, 6 changed, 0 unavailable (5 list, 0 detail calls); 250 requests stored\n',
    );
    expect(summary.tick(facts(251, { members: 7, rows: 31 }))).toBe(
      'schema drift: 7 members differ from the documented shape (schema_drift holds 31 rows: 30 missing, 1 retyped, 0 unknown)\n',
    );
    expect(summary.tick(facts(251, { members: 7, rows: 40 }))).toBe('');
    // A cycle ended by the stop, its facts no longer readable: counted all the same.
    expect(summary.cycle(cycle(3, { requestsNew: 1 }, 'aborted'))).toBe(
      'cycle 3 aborted: 1 new, 0 changed, 0 unavailable (5 list, 0 detail calls)\n',
    );
    expect(summary.final({ elapsedMs: 0, hiddenLogLines: 0 })).toMatch(
      /arrived: {2}251 new requests \(251 by polling, 0 by webhook\); 3 poll cycles \(2 ok\)/,
    );
  });

  it('prints the webhook events of each period once, known outcomes first', () => {
    const summary = createDemoSummary();
    expect(summary.tick()).toBe('');
    for (const outcome of ['unchanged', 'changed', 'new', 'changed', 'fetched'])
      summary.webhook(outcome);
    expect(summary.tick(facts(3))).toBe(
      'webhooks: 5 events (1 new, 2 changed, 1 unchanged, 1 fetched)\n',
    );
    expect(summary.tick(facts(3))).toBe('');
    summary.webhook('new');
    expect(summary.tick()).toBe('webhooks: 1 event (1 new)\n');
  });

  it('closes with what arrived, what changed, what the mirror holds and its drift', () => {
    const summary = createDemoSummary();
    summary.cycle(cycle(1, { requestsNew: 248, requestsChanged: 2 }), facts(248));
    summary.cycle(cycle(2, { requestsChanged: 9, requestsUnavailable: 1 }), facts(248));
    summary.cycle(cycle(3, {}, 'failed'), facts(248));
    for (const outcome of ['new', 'new', 'changed', 'unchanged', 'unavailable'])
      summary.webhook(outcome);
    summary.tick();
    expect(
      summary.final({
        facts: facts(250, { members: 18, rows: 66 }),
        elapsedMs: 40_400,
        hiddenLogLines: 2,
      }),
    ).toBe(
      [
        'demo summary after 40 s:',
        '  arrived:  250 new requests (248 by polling, 2 by webhook); 3 poll cycles (2 ok), 5 webhook events (2 new, 1 changed, 1 unchanged, 1 unavailable)',
        '  changed:  12 changes (11 by polling, 1 by webhook); 2 requests became unavailable',
        '  mirror:   250 requests stored',
        '  drift:    18 members differ from the documented shape (schema_drift holds 66 rows: 65 missing, 1 retyped, 0 unknown)',
        "  log:      2 repeated log lines not shown (set LOG_LEVEL to print the daemon's log)",
        '',
      ].join('\n'),
    );
  });

  it('closes with the last facts it read when the database cannot be read at the end', () => {
    const summary = createDemoSummary();
    summary.webhook('new');
    summary.tick(facts(1, { members: 1, rows: 1 }));
    expect(summary.final({ elapsedMs: 5_000, hiddenLogLines: 0 })).toBe(
      [
        'demo summary after 5 s:',
        '  arrived:  1 new request (0 by polling, 1 by webhook); 0 poll cycles (0 ok), 1 webhook event (1 new)',
        '  changed:  0 changes (0 by polling, 0 by webhook); 0 requests became unavailable',
        '  mirror:   1 request stored',
        '  drift:    1 member differs from the documented shape (schema_drift holds 1 row: 0 missing, 1 retyped, 0 unknown)',
        '',
      ].join('\n'),
    );
    expect(createDemoSummary().final({ elapsedMs: 0, hiddenLogLines: 0 })).not.toMatch(/mirror:/);
  });

  it('orders outcomes it does not know after the known ones, by name', () => {
    expect(
      formatOutcomes(
        new Map([
          ['retrying', 1],
          ['changed', 2],
          ['failed', 3],
        ]),
      ),
    ).toBe('2 changed, 3 failed, 1 retrying');
  });
});
