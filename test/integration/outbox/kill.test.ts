import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type MirrorDb } from '../../../src/db/open.js';
import {
  createSimulator,
  type ActionRecord,
  type Simulator,
} from '../../../src/simulator/index.js';
import {
  actionsOf,
  deliveredTimestamps,
  outboxRows,
  queueAction,
  queueLocations,
  samplesFrom,
  tally,
} from '../../helpers/outbox.js';
import { createMigratedTestDatabase, type TestDatabase } from '../../helpers/engine.js';

/*
 * The drainer runs in a child process (the built code) and is killed with SIGKILL at the moment
 * the service has processed a call and not yet answered: the window in which the delivery
 * guarantee allows a repeat. A second run must then lose nothing, repeat no accept, and repeat
 * samples of that one batch only.
 */

const CHILD = fileURLToPath(new URL('../../helpers/outbox-child.mjs', import.meta.url));
const HOUR = 3_600_000;

let sim: Simulator;
let database: TestDatabase;
let db: MirrorDb;
let dbPath: string;
beforeEach(async () => {
  sim = createSimulator({ seed: 5, requests: 10 });
  await sim.listen(0, '127.0.0.1');
  database = await createMigratedTestDatabase();
  dbPath = database.location;
  db = await openDatabase({ location: dbPath });
});
afterEach(async () => {
  await db.close();
  await sim.close();
  await database.drop();
});

function runChild(): {
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: string | null; stderr: string }>;
} {
  const child = spawn(process.execPath, [CHILD, dbPath, sim.url!], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk) => (stderr += chunk));
  child.stdout?.resume();
  const exited = new Promise<{ code: number | null; signal: string | null; stderr: string }>(
    (resolve) => child.on('close', (code, signal) => resolve({ code, signal, stderr })),
  );
  return { child, exited };
}

/** Kills `child` inside the simulator's handler, when it records the `nth` action of `kind`. */
function killOnRecord(kind: ActionRecord['kind'], nth: number, child: ChildProcess): void {
  let seen = 0;
  const push = sim.actions.push.bind(sim.actions);
  sim.actions.push = (...records: ActionRecord[]) => {
    const length = push(...records);
    for (const record of records) {
      if (record.kind === kind && ++seen === nth) child.kill('SIGKILL');
    }
    return length;
  };
}

const uncertain = <T extends { last_error: string | null }>(rows: T[]) =>
  rows.filter((row) => row.last_error?.startsWith('outcome unknown'));

describe('a drainer killed mid-drain', () => {
  it('neither loses nor repeats an accept: the one in flight is settled by reading it back', async () => {
    const ids = sim.addRequests(8, { state: 'awaiting', eventAt: Date.now() + 5 * HOUR });
    for (const id of ids) await queueAction(db, id, { kind: 'accept', notes: `crew for ${id}` });

    const first = runChild();
    killOnRecord('accept', 3, first.child);
    expect(await first.exited).toMatchObject({ signal: 'SIGKILL' });

    const afterKill = await outboxRows(db, 'outbox_actions');
    expect(afterKill.filter((r) => r.status === 'sent').map((r) => r.request_id)).toEqual(
      ids.slice(0, 2),
    );
    // Processed by the service, reply never stored: pending, and marked as possibly delivered.
    expect(uncertain(afterKill).map((r) => r.request_id)).toEqual([ids[2]]);
    expect(afterKill.slice(3).every((r) => r.status === 'pending' && r.attempts === 0)).toBe(true);

    const second = runChild();
    expect(await second.exited).toMatchObject({ code: 0 });

    const rows = await outboxRows(db, 'outbox_actions');
    expect(rows.every((r) => r.status === 'sent')).toBe(true);
    expect(rows[2]!.last_error).toBe('confirmed by reading the request back: it is assigned to us');
    expect(actionsOf(sim, 'accept')).toEqual(new Map(ids.map((id) => [id, 1])));
    const acceptCalls = tally(
      sim.calls.filter((c) => c.endpoint === 'accept').map((c) => c.requestId),
    );
    expect([...acceptCalls.values()].every((n) => n === 1)).toBe(true);
  });

  it('loses no sample and repeats only the batch in flight at the kill', async () => {
    const [trip] = sim.addRequests(1, { state: 'accepted', eventAt: Date.now() + HOUR });
    const samples = samplesFrom(Math.floor(Date.now() / 1000) - 3600, 1000);
    await queueLocations(db, trip!, samples);

    const first = runChild();
    killOnRecord('locations', 2, first.child);
    expect(await first.exited).toMatchObject({ signal: 'SIGKILL' });
    const inFlight = uncertain(await outboxRows<{ timestamp: number }>(db, 'outbox_locations'));
    expect(inFlight).toHaveLength(200);

    const second = runChild();
    expect(await second.exited).toMatchObject({ code: 0 });

    const rows = await outboxRows(db, 'outbox_locations');
    expect(rows.every((r) => r.status === 'sent')).toBe(true);
    const counts = tally(deliveredTimestamps(sim.actions, trip!));
    expect(counts.size).toBe(1000); // nothing lost
    const twice = [...counts].filter(([, n]) => n > 1);
    expect(twice.every(([, n]) => n === 2)).toBe(true);
    expect(twice.map(([t]) => t).sort()).toEqual(inFlight.map((r) => r.timestamp).sort());
  });
});
