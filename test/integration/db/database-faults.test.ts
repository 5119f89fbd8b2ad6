import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { isTransportError } from '../../../src/errors.js';
import type { CycleResult } from '../../../src/sync/poll.js';
import { sqliteOf } from '../../helpers/engine.js';
import { startMirror, type MirrorFixture } from '../../helpers/mirror.js';
import { expectMirrorEqualsTruth } from '../../helpers/truth.js';

let mirror: MirrorFixture;
afterEach(async () => mirror?.close());

const sqlite = () => sqliteOf(mirror.db);
const count = (sql: string) => (sqlite().prepare(sql).get() as { n: number }).n;

describe('database faults', () => {
  it('survives a full disk: committed rows stay, nothing half-written, and it catches up once there is room', async () => {
    mirror = await startMirror({ requests: 80 });
    await mirror.cycle();
    const committed = count('SELECT count(*) AS n FROM requests');
    const pages = sqlite().pragma('page_count', { simple: true }) as number;
    sqlite().pragma(`max_page_count = ${pages + 3}`); // a disk with a few pages left
    mirror.sim.addRequests(300, { state: 'accepted', eventAt: mirror.clock.now() + 3_600_000 });

    const outcome: CycleResult | unknown = await mirror.cycle().catch((error: unknown) => error);
    if (outcome instanceof Error)
      expect(isTransportError(outcome, 'db.full'), String(outcome)).toBe(true);
    else expect((outcome as CycleResult).counts.requestsFailed).toBeGreaterThan(0);
    expect(sqlite().pragma('integrity_check', { simple: true })).toBe('ok');
    expect(count('SELECT count(*) AS n FROM requests')).toBeGreaterThanOrEqual(committed);
    // Every stored request is whole: its locations came with it.
    expect(
      count(
        'SELECT count(*) AS n FROM requests r WHERE NOT EXISTS (SELECT 1 FROM request_locations l WHERE l.request_id = r.request_id)',
      ),
    ).toBe(0);

    sqlite().pragma('max_page_count = 1073741823');
    const recovered = await mirror.cycle();
    expect(recovered.status).toBe('ok');
    await expectMirrorEqualsTruth(mirror);
  });

  it('waits out, then reports, another writer holding the database, and catches up when it lets go', async () => {
    mirror = await startMirror({ requests: 60 });
    await mirror.cycle();
    sqlite().pragma('busy_timeout = 300');
    const other = new Database(mirror.dbPath);
    other.exec('BEGIN IMMEDIATE');
    mirror.sim.addRequests(5, { state: 'accepted', eventAt: mirror.clock.now() + 3_600_000 });
    const outcome = await mirror.cycle().catch((error: unknown) => error);
    expect(isTransportError(outcome, 'db.locked'), String(outcome)).toBe(true);
    expect((outcome as Error & { hint?: string }).hint).toMatch(/write transaction/);
    other.exec('ROLLBACK');
    other.close();
    const recovered = await mirror.cycle();
    expect(recovered.status).toBe('ok');
    expect(recovered.counts.requestsNew).toBe(5);
    await expectMirrorEqualsTruth(mirror);
  });
});
