import { loadConfig } from '../config/index.js';
import { openMigratedForWriting, targetOf } from '../db/open.js';
import { feedSinkNames } from '../feed/sink-names.js';
import { pruneCutoff, pruneHistory } from '../ops/retention.js';
import { DB_FLAG, EXIT, parseCommandArgs, parseIntegerFlag, type Command } from './command.js';

/** `transport-sync prune`: deletes history past the retention period. */
export const pruneCommand: Command = {
  name: 'prune',
  summary: 'Delete history past the retention period (the daemon also does it daily)',
  usage: `Usage: transport-sync prune [--days N] [--db PATH]

Deletes finished sync_runs, processed webhook_events and request_changes older than N days
(default TRANSPORT_RETENTION_DAYS; 0 keeps everything). Requests are never deleted, nor a change
a configured feed sink (TRANSPORT_FEED_WEBHOOK_URL) has not yet acknowledged. Safe while the
daemon runs, which also prunes once a day.
Exit codes: 0 pruned (or nothing to prune), 1 the database failed (missing, not writable, locked,
migrated by a newer version), 2 bad usage (--days out of range) or configuration.`,
  async run(argv, io) {
    const { values } = parseCommandArgs(argv, { ...DB_FLAG, days: { type: 'string' } });
    const config = loadConfig({
      env: io.env,
      needsService: false,
      overrides: { dbPath: values.db },
    });
    const days = parseIntegerFlag('days', values.days, {
      min: 0,
      max: 36_500,
      fallback: config.retentionDays,
    });
    const db = await openMigratedForWriting(targetOf(config));
    try {
      const now = Date.now();
      const counts = await pruneHistory({
        db,
        retentionDays: days,
        feedSinks: feedSinkNames(config),
        now,
      });
      const cutoff = pruneCutoff(days, now);
      io.stdout.write(
        cutoff === null
          ? 'retention is 0 days: nothing pruned\n'
          : `pruned before ${cutoff}: ${counts.syncRuns} sync runs, ${counts.webhookEvents} webhook events, ${counts.requestChanges} request changes\n`,
      );
    } finally {
      await db.close();
    }
    return EXIT.ok;
  },
};
