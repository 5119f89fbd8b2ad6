import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { serviceEnv, startCli, startSimulatorProcess, processTracker } from '../helpers/cli.js';
import { tempDir } from '../helpers/records.js';

const processes = processTracker();
afterEach(() => processes.stopAll());

describe('the daemon drains the outbox that other programs fill with SQL', () => {
  it('sends queued actions and samples and marks them sent', async () => {
    const sim = await startSimulatorProcess(['--requests', '40']);
    processes.track(sim);
    const dbPath = join(tempDir(), 'outbox.db');
    const env = serviceEnv(sim.url, {
      TRANSPORT_DB: dbPath,
      TRANSPORT_POLL_CRON: '*/2 * * * * *',
      TRANSPORT_OUTBOX_INTERVAL_MS: '200',
    });
    const daemon = startCli(['run'], env);
    processes.track(daemon);
    await daemon.waitFor(/"msg":"poll cycle finished"/);

    const db = new Database(dbPath);
    const accepted = db
      .prepare(
        "SELECT request_id FROM requests WHERE list_state = 'accepted' AND unavailable_at IS NULL LIMIT 1",
      )
      .get() as { request_id: string };
    const insertSample = db.prepare(
      'INSERT INTO outbox_locations (request_id, lat, lng, alt, speed, timestamp) VALUES (?, ?, ?, ?, ?, ?)',
    );
    const insertAction = db.prepare(
      "INSERT INTO outbox_actions (request_id, kind, state_name, at) VALUES (?, 'state', 'en_route', ?)",
    );
    const nowSeconds = Date.now() / 1000;
    // One transaction: the drainer runs every 200 ms, and samples committed on their own before
    // the action may rightly leave in an earlier drain. Pending together, the action goes first.
    db.transaction(() => {
      for (let i = 0; i < 5; i += 1)
        insertSample.run(
          accepted.request_id,
          41.88 + i / 1000,
          -87.63,
          181,
          12.5,
          nowSeconds - 60 + i,
        );
      insertAction.run(accepted.request_id, new Date().toISOString());
    })();

    const deadline = Date.now() + 15_000;
    let pending = 1;
    while (pending > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      pending = (
        db
          .prepare(
            "SELECT (SELECT count(*) FROM outbox_locations WHERE status <> 'sent') + (SELECT count(*) FROM outbox_actions WHERE status <> 'sent') AS n",
          )
          .get() as { n: number }
      ).n;
    }
    db.close();
    expect(pending).toBe(0);
    const actions = (await (await fetch(`${sim.url}/_sim/actions/`)).json()) as {
      kind: string;
      requestId: string;
      body: unknown;
    }[];
    expect(
      actions
        .filter((action) => action.requestId === accepted.request_id)
        .map((action) => action.kind),
    ).toEqual(['state', 'locations']);
    const locations = actions.find((action) => action.kind === 'locations')!.body as {
      lat: number;
    }[];
    expect(locations.map((sample) => Math.round(sample.lat * 1000))).toEqual([
      41880, 41881, 41882, 41883, 41884,
    ]);
    daemon.child.kill('SIGTERM');
    expect((await daemon.exited).code).toBe(0);
  });
});
