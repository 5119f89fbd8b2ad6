import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { main } from '../../../src/cli/main.js';
import { systemClock, type Clock } from '../../../src/clock.js';
import { openDatabase } from '../../../src/db/open.js';
import { createSimulator, type Simulator } from '../../../src/simulator/index.js';
import { serviceEnv } from '../../helpers/cli.js';
import { createTestDatabase, queryOne, type TestDatabase } from '../../helpers/engine.js';

/*
 * The action commands in-process, against an in-process simulator whose faults and clock the test
 * sets: the cases a simulator process cannot easily be made to show.
 */

const DAY = 86_400_000;
let sim: Simulator | undefined;
let database: TestDatabase | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
  await database?.drop();
  database = undefined;
});

async function start(clock: Clock = systemClock): Promise<{ url: string; dbPath: string }> {
  sim = createSimulator({ seed: 9, requests: 10, clock });
  const { url } = await sim.listen(0, '127.0.0.1');
  database = await createTestDatabase();
  return { url, dbPath: database.location };
}

async function cli(args: string[], env: NodeJS.ProcessEnv) {
  let stdout = '';
  let stderr = '';
  const sink = (append: (text: string) => void) =>
    new Writable({
      write(chunk, _encoding, done) {
        append(String(chunk));
        done();
      },
    });
  const code = await main(args, {
    stdout: sink((text) => (stdout += text)),
    stderr: sink((text) => (stderr += text)),
    env: { ...env, LOG_LEVEL: 'silent' },
  });
  return { code, stdout, stderr };
}

describe('action commands', () => {
  it('show a 400 with the service field messages', async () => {
    // The service's clock 8 days ahead: a timestamp fine here is stale there.
    const ahead: Clock = { now: () => Date.now() + 8 * DAY, sleep: systemClock.sleep };
    const { url, dbPath } = await start(ahead);
    const [id] = sim!.addRequests(1, { state: 'accepted', eventAt: ahead.now() + DAY });

    const result = await cli(['state', id!, 'en_route', '--db', dbPath], serviceEnv(url));

    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `transport-sync: error: state ${id}: rejected as invalid (400): timestamp: Timestamp is older than 7 days.\n`,
    );
  });

  it('settle an accept whose reply was lost by reading the request back', async () => {
    const { url, dbPath } = await start();
    const [id] = sim!.addRequests(1, { state: 'awaiting', eventAt: Date.now() + DAY });
    sim!.setFaults({ dropRate: 1, endpoints: ['accept'] });

    const result = await cli(['accept', id!, '--db', dbPath], serviceEnv(url));

    expect(result).toMatchObject({
      code: 0,
      stdout: `accepted ${id} (the reply was lost; confirmed by reading the request back: it is assigned to us)\n`,
    });
    expect(sim!.calls.filter((c) => c.endpoint === 'accept')).toHaveLength(1);
    const db = await openDatabase({ location: dbPath, isReadOnly: true, shouldMigrate: false });
    const row = await queryOne(db, 'SELECT list_state FROM requests WHERE request_id = @id', {
      id,
    });
    await db.close();
    expect(row).toEqual({ list_state: 'accepted' });
  });

  it('say when a state update may or may not have been recorded', async () => {
    const { url, dbPath } = await start();
    const [id] = sim!.addRequests(1, { state: 'accepted', eventAt: Date.now() + DAY });
    sim!.setFaults({ dropRate: 1, endpoints: ['state'] });

    const result = await cli(['state', id!, 'arrived', '--db', dbPath], serviceEnv(url));

    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      new RegExp(`^transport-sync: error: state ${id}: the outcome is unknown \\(.*network error`),
    );
    expect(result.stderr).toMatch(/the service may have recorded it\n$/);
  });
});
