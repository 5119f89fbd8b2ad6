import { describe, expect, it } from 'vitest';
import { sqliteOf } from '../../helpers/engine.js';
import { openDatabase } from '../../../src/db/open.js';
import { createStore } from '../../../src/db/store.js';
import { captureLogger } from '../../helpers/api.js';
import { manualClock } from '../../helpers/simulator.js';

describe('schema_drift', () => {
  it('keeps one row per request and member, one per unknown member, and logs each kind of drift once at warn', async () => {
    const db = await openDatabase({ location: ':memory:' });
    const clock = manualClock();
    const { log, lines } = captureLogger();
    const store = createStore({ db, clock, log });
    const retyped = {
      member: 'patient_dob',
      problem: 'type',
      expected: 'date',
      received: 'number',
    } as const;
    const unknown = {
      member: 'mileage',
      problem: 'unknown',
      expected: null,
      received: 'number',
    } as const;
    await store.transaction(async (tx) => {
      await tx.drift.record('A1', 'poll', [retyped, unknown], tx.now());
      await tx.drift.record('B2', 'poll', [retyped, unknown], tx.now());
    });
    clock.advance(60_000);
    await store.transaction((tx) => tx.drift.record('A1', 'poll', [retyped], tx.now()));
    // The same member drifting in webhooks is another kind: logged once more.
    await store.transaction(async (tx) => {
      await tx.drift.record('C3', 'webhook', [retyped], tx.now());
      await tx.drift.record('D4', 'webhook', [retyped], tx.now());
    });
    const rows = sqliteOf(db)
      .prepare(
        "SELECT request_id, member, problem, count, first_seen_at < last_seen_at AS moved FROM schema_drift WHERE source = 'poll' ORDER BY member, request_id",
      )
      .all();
    expect(rows).toEqual([
      { request_id: 'A1', member: 'mileage', problem: 'unknown', count: 2, moved: 0 },
      { request_id: 'A1', member: 'patient_dob', problem: 'type', count: 2, moved: 1 },
      { request_id: 'B2', member: 'patient_dob', problem: 'type', count: 1, moved: 0 },
    ]);
    const warnings = lines
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((l) => l.level === 40);
    // Once per kind (source, member, problem), not per request: B2 and D4 are counted, not logged.
    expect(warnings.map((w) => [w.requestId, w.source, w.member])).toEqual([
      ['A1', 'poll', 'patient_dob'],
      ['A1', 'poll', 'mileage'],
      ['C3', 'webhook', 'patient_dob'],
    ]);
    expect(sqliteOf(db).prepare('SELECT count(*) AS n FROM schema_drift').get()).toEqual({ n: 5 });
    await db.close();
  });
});
