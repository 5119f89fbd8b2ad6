import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanEnv, processTracker, startCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/records.js';

const processes = processTracker();
afterEach(() => processes.stopAll());

describe('transport-sync demo', () => {
  it.each([
    ['polls and receives signed webhooks', [], 'polling and signed webhooks'],
    ['with --webhooks-only, runs on webhooks alone', ['--webhooks-only'], 'webhooks alone'],
  ])('%s, and its lines show the events arriving', async (_title, flags, dataIn) => {
    const dir = tempDir();
    const dbPath = join(dir, 'demo.db');
    const demo = startCli(
      ['demo', '--requests', '80', '--poll-seconds', '1', '--db', dbPath, ...flags],
      cleanEnv(),
      dir,
    );
    processes.track(demo);
    await demo.waitFor(new RegExp(`data in: +${dataIn}`));
    await demo.waitFor(/webhooks: \d+ events? \(/, 20_000);
    demo.child.kill('SIGINT');
    const { code, stdout, stderr } = await demo.exited;
    expect(code).toBe(0);
    const db = new Database(dbPath, { readonly: true });
    const events = db.prepare('SELECT count(*) AS n FROM webhook_events').get() as { n: number };
    const polls = db.prepare("SELECT status FROM sync_runs WHERE kind = 'poll'").all();
    db.close();
    expect(events.n).toBeGreaterThan(0);
    expect(stdout).toMatch(/^demo summary after \d+ s:$/m);
    if (flags.length === 0) {
      expect(stdout).toMatch(/cycle \d+ ok/);
    } else {
      expect(stderr).toMatch(/running on webhooks alone/);
      // One cycle found v1.0 gone; none after it.
      expect(polls).toEqual([{ status: 'failed' }]);
    }
  });
});
