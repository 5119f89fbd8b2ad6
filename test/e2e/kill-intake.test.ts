import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { INTAKE_HEARTBEAT_KEY } from '../../src/daemon/intake-ledger.js';
import { createRandom } from '../../src/simulator/random.js';
import {
  freePort,
  killAt,
  serviceEnv,
  startCli,
  startSimulatorProcess,
  type KillPoint,
} from '../helpers/cli.js';
import {
  countRows,
  createTestDatabase,
  expectDatabaseIntact,
  queryAll,
  queryOne,
  reading,
} from '../helpers/engine.js';
import { tempDir } from '../helpers/records.js';

/*
 * SIGKILL of the webhook receiver while the simulator sends it a stream of signed events, each
 * kill followed by a restart: no acknowledged event is lost, the database passes the engine's own
 * check, and a last restart applies every stored event. The daemon's polling kills are in
 * kill.test.ts. The processes get the project's database: a SQLite file, or a postgres:// URL.
 *
 * A kill point is an event of the receiver's own work: after the n-th event it stored or applied
 * (a log line), n seeded, then a seeded few milliseconds more; n = 0 kills it as it starts
 * listening. So kills land in the intake on any machine, however long node takes to start.
 */

// Seeded kill points, so a failing run can be replayed.
const random = createRandom(20261122);

/** Lines the receiver logs (at debug) as it stores an event, and as it applies one. */
const INTAKE = /"msg":"webhook (received|event applied)"/;

/** A seeded kill point among the receiver's first `lines` intake lines. */
function killPoint(lines: number): KillPoint {
  const n = random.int(0, lines - 1);
  const thenMs = random.int(0, 29);
  const event =
    n === 0
      ? { pattern: /"msg":"webhook receiver listening"/, count: 1 }
      : { pattern: INTAKE, count: n };
  return { ...event, thenMs };
}

describe('SIGKILL during webhook intake', () => {
  // Seven daemon starts in turn: some 5 s alone on either engine, but CI's whole suite on two
  // cores once stretched them past 60 s on PostgreSQL.
  it('loses no acknowledged event across 6 kills, and applies every stored event after a restart', async () => {
    const port = await freePort();
    const dir = tempDir();
    const keyFile = join(dir, 'key.pem');
    // About 100 events a second: more than the receiver applies on a busy machine, so kills find
    // events stored and not yet applied, and the last restart has a backlog to apply.
    const hooks = await startSimulatorProcess([
      '--requests',
      '40',
      '--mutate-every',
      '40',
      '--mutate-per-tick',
      '4',
      '--webhook-url',
      `http://127.0.0.1:${port}/webhooks/`,
      '--webhook-public-key-file',
      keyFile,
    ]);
    const hooksDatabase = await createTestDatabase('hooks.db');
    const hooksDb = hooksDatabase.location;
    const hooksEnv = serviceEnv(hooks.url, {
      TRANSPORT_DB: hooksDb,
      TRANSPORT_POLL: 'off',
      TRANSPORT_WEBHOOK_LISTEN: `127.0.0.1:${port}`,
      TRANSPORT_WEBHOOK_PUBLIC_KEY_FILE: keyFile,
    });
    // Empty until the daemon has created the database (SQLite) or its tables (PostgreSQL).
    const storedEvents = async () => {
      try {
        const rows = await reading(hooksDb, (db) =>
          queryAll<{ event_id: string }>(db, 'SELECT event_id FROM webhook_events'),
        );
        return new Set(rows.map((row) => row.event_id));
      } catch {
        return new Set<string>();
      }
    };
    /** Events stored and not yet applied; whether the receiver beat its heartbeat since `since`. */
    const intakeState = (since: string) =>
      reading(hooksDb, async (db) => {
        const sql = 'SELECT value AS at FROM sync_state WHERE key = @key';
        const beat = await queryOne<{ at: string }>(db, sql, { key: INTAKE_HEARTBEAT_KEY });
        return {
          pending: await countRows(db, 'webhook_events', 'processed_at IS NULL'),
          isStarted: (beat?.at ?? '') >= since,
        };
      });
    try {
      let killed = 0;
      for (let kill = 0; kill < 6; kill += 1) {
        const before = await storedEvents();
        const receiver = startCli(['run'], { ...hooksEnv, LOG_LEVEL: 'debug' });
        // The daemon never ends on its own: every run is a kill.
        const result = await killAt(receiver, killPoint(80));
        if (result.signal === 'SIGKILL') killed += 1;
        const after = await storedEvents();
        for (const id of before) expect(after.has(id), id).toBe(true);
        await reading(hooksDb, expectDatabaseIntact);
      }
      expect(killed).toBe(6);
      await fetch(`${hooks.url}/_sim/stop-mutating/`, { method: 'POST' });
      const startedAt = new Date().toISOString();
      const receiver = startCli(['run'], hooksEnv);
      await receiver.waitFor(/"msg":"webhook receiver listening"/);
      // Its start ends with a first intake heartbeat, once the backlog stored before it is
      // applied; only then does it take SIGTERM as a graceful stop (before, the signal's default
      // ends it at once). So the stop waits for that heartbeat as well as for no event pending.
      let pending = -1;
      let isStarted = false;
      // Up to 60 s: on PostgreSQL, beside the whole suite on two cores, the backlog has taken
      // some 10 s to apply, and a daemon's start some 5 s.
      for (let wait = 0; wait < 1_200 && (pending !== 0 || !isStarted); wait += 1) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        ({ pending, isStarted } = await intakeState(startedAt));
      }
      receiver.child.kill('SIGTERM');
      const stopped = await receiver.exited;
      expect(isStarted).toBe(true);
      expect(pending).toBe(0);
      expect(stopped.code).toBe(0);
      expect((await storedEvents()).size).toBeGreaterThan(10);
    } finally {
      hooks.child.kill('SIGTERM');
      await hooks.exited;
      await hooksDatabase.drop();
    }
  }, 150_000);
});
