import { loadConfig } from '../config/index.js';
import type { TableCopy } from '../db/copy.js';
import { copyInWorker } from '../db/copy/job.js';
import { isPostgresLocation, postgresLocation } from '../db/location.js';
import { TransportError } from '../errors.js';
import { outOfMemory } from './out-of-memory.js';
import { DB_FLAG, EXIT, parseCommandArgs, usageError, type Command } from './command.js';

/** Rows of a table between two progress lines. */
const PROGRESS_STEP = 10_000;

/** `transport-sync copy --to postgres://...`: moves a SQLite mirror up to PostgreSQL. */
export const copyCommand: Command = {
  name: 'copy',
  summary:
    'Copy the SQLite mirror into an empty PostgreSQL database, resumably, checking every table at the end (see docs/postgres.md)',
  usage: `Usage: transport-sync copy --to postgres://user@host:port/database [--db PATH]

Copies every table of the SQLite mirror (TRANSPORT_DB, or --db) into the PostgreSQL database
--to names, migrating it first: the requests and their rows, the change log, the outbox with its
delivery state, webhook events, runs, quarantine, schema drift, intake gaps and backfill
checkpoints, ids included. The database must be empty. Stop the daemon first. Killed or
interrupted, the same command resumes after the last batch it committed. At the end each table's
row count and checksum are compared.
The password, if the role needs one, comes from TRANSPORT_DB_PASSWORD_FILE, the systemd
credential db_password, or PGPASSFILE; never from the URL.
Exit codes: 0 every table copied and equal, 1 a table differs or the copy failed (the target holds
a mirror or another copy, a daemon still writes the source, a database failed), 2 bad usage or
configuration, or --to not a PostgreSQL URL or a source that is not a SQLite file.`,
  async run(argv, io) {
    const { values } = parseCommandArgs(argv, { ...DB_FLAG, to: { type: 'string' } });
    if (!values.to) throw usageError('copy needs --to postgres://user@host:port/database');
    const config = loadConfig({
      env: io.env,
      needsService: false,
      overrides: { dbPath: values.db },
    });
    const target = loadTarget(io.env, values.to);
    if (isPostgresLocation(config.dbPath) || !isPostgresLocation(target.dbPath)) {
      throw new TransportError({
        code: 'copy.engines',
        message:
          'copy moves a SQLite mirror (TRANSPORT_DB or --db, a file) into PostgreSQL (--to, a postgres:// URL)',
        hint: 'transport-sync copy --db /var/lib/transport-sync/mirror.db --to postgres://transport_sync@db.example/transport_sync',
      });
    }
    // The copy runs in a worker thread (src/db/copy/job.ts): this thread loads no database
    // driver. A line for a table's first batch, then one each 10,000 rows, and one at its end.
    const printed = new Map<string, number>();
    const results = await copyInWorker({
      job: {
        sourcePath: config.dbPath,
        target: {
          location: target.dbPath,
          ...(config.dbPasswordFile !== undefined && { passwordFile: config.dbPasswordFile }),
        },
      },
      env: io.env,
      onStarted: () =>
        io.stderr.write(`copying ${config.dbPath} into ${postgresLocation(target.dbPath)}\n`),
      onProgress: (table, copied, total) => {
        const step = Math.floor(copied / PROGRESS_STEP);
        if (copied !== total && printed.get(table) === step) return;
        printed.set(table, step);
        io.stderr.write(`  ${table}: ${copied} of ${total}\n`);
      },
    }).catch((error: unknown) => {
      throw outOfMemory(error, {
        task: 'the copy',
        hint: 'Run the same command again: it resumes after the last batch it committed.',
      });
    });
    io.stdout.write(formatCopy(results));
    return results.every((result) => result.isEqual) ? EXIT.ok : EXIT.failure;
  },
};

function formatCopy(results: TableCopy[]): string {
  const width = Math.max(...results.map((r) => r.table.length));
  const lines = results.map((r) => {
    const verdict = r.isEqual
      ? 'equal'
      : `DIFFERENT (source ${r.source.rows} rows ${r.source.checksum}, target ${r.target.rows} rows ${r.target.checksum})`;
    return `  ${r.table.padEnd(width)}  ${String(r.rows).padStart(9)} rows  checksum ${r.source.checksum}  ${verdict}`;
  });
  const isEqual = results.every((r) => r.isEqual);
  return `${lines.join('\n')}\n${isEqual ? 'copy complete: every table equal\n' : 'copy NOT equal: run it again to resume, or check the tables marked DIFFERENT\n'}`;
}

/**
 * --to, checked as TRANSPORT_DB is (a PostgreSQL URL, no password in it), with its errors naming
 * --to: the operator typed the URL there, and TRANSPORT_DB may be right.
 */
function loadTarget(env: NodeJS.ProcessEnv, to: string) {
  try {
    return loadConfig({ env: { ...env, TRANSPORT_DB: to }, needsService: false });
  } catch (error) {
    if (!(error instanceof TransportError) || error.code !== 'config.invalid') throw error;
    const problem = error.message.match(/TRANSPORT_DB (.*?)(?:; [A-Z_]+ |$)/)?.[1];
    if (problem === undefined) throw error;
    throw usageError(
      `--to ${problem}`,
      'transport-sync copy --to postgres://user@host:port/database, the password in TRANSPORT_DB_PASSWORD_FILE',
    );
  }
}
