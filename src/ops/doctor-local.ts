import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { SETTINGS, type Config } from '../config/index.js';
import { readPasswordFile, type DatabaseTarget } from '../db/open.js';
import { isPostgresLocation, postgresLocation } from '../db/location.js';
import { machineError } from '../db/machine-errors.js';
import { databaseError } from '../db/sqlite/errors.js';
import { inspectSqlite, type Inspection } from '../db/sqlite/inspect.js';
import { systemClock } from '../clock.js';
import { describeError, TransportError } from '../errors.js';
import { checkFeedSinks, probeNatsSink } from '../feed/index.js';
import { checkReceiverFiles } from '../webhooks/preflight.js';
import type { CheckResult } from './doctor.js';

/*
 * The doctor's checks of this machine: the secret files, the receiver's files, the database and
 * its file modes. They
 * look and never touch: no file is created, chmod-ed or migrated (openDatabase would do all
 * three), so what they report is what the daemon will find.
 */

/** The client secret's source: a file not readable by others, or a warning for the environment. */
export function checkSecretFile(env: NodeJS.ProcessEnv): CheckResult {
  const name = 'client secret';
  const file =
    env[SETTINGS.clientSecretFile.env]?.trim() ||
    (env.CREDENTIALS_DIRECTORY ? join(env.CREDENTIALS_DIRECTORY, 'client_secret') : undefined);
  if (env[SETTINGS.clientSecret.env]?.trim() && !file) {
    return {
      name,
      status: 'warn',
      detail: `${SETTINGS.clientSecret.env} is in the environment, where other tools and crash reports can see it`,
      hint: `Put it in a file (mode 0600) named by ${SETTINGS.clientSecretFile.env}, or a systemd credential (LoadCredential=client_secret:...).`,
    };
  }
  if (!file || !existsSync(file)) {
    return { name, status: 'skip', detail: 'no secret file (see the configuration check)' };
  }
  return checkPrivateFile(name, file);
}

/**
 * The other secrets' files, where configured: the database password and the receiver's TLS key.
 * Each must not be readable by every user, like the client secret's.
 */
export function checkOtherSecretFiles(config: Config): CheckResult[] {
  const files: [string, string | undefined][] = [
    ['database password', config.dbPasswordFile],
    ['webhook TLS key', config.webhookTlsKeyFile],
    ['feed webhook secret', config.feedWebhookSecretFile],
    ['feed NATS credentials', config.feedNatsCredsFile],
  ];
  return files.flatMap(([name, file]) =>
    file && existsSync(file) ? [checkPrivateFile(name, file)] : [],
  );
}

function checkPrivateFile(name: string, file: string): CheckResult {
  const mode = statSync(file).mode & 0o777;
  if (mode & 0o004) {
    return {
      name,
      status: 'fail',
      detail: `${file} is readable by every user (mode ${octal(mode)})`,
      hint: `chmod 600 ${file} (and chown it to the user the daemon runs as).`,
    };
  }
  return { name, status: 'ok', detail: `${file} (mode ${octal(mode)})` };
}

/** The files the webhook receiver reads at start, read as `run` reads them. */
export function checkReceiverSetup(config: Config): CheckResult {
  const name = 'webhook receiver';
  if (!config.webhookListen) {
    return { name, status: 'skip', detail: `${SETTINGS.webhookListen.env} is not set` };
  }
  try {
    checkReceiverFiles(config);
    return {
      name,
      status: 'ok',
      detail: `its key${config.webhookTlsCertFile ? ', certificate and TLS key' : ''} read`,
    };
  } catch (error) {
    return {
      name,
      status: 'fail',
      detail: describeError(error).message,
      hint: error instanceof TransportError ? error.hint : undefined,
    };
  }
}

/**
 * The change feed's sinks, where configured: the webhook's secret (and CA) read as `run` reads
 * them at start; NATS reached, its JetStream and stream looked at. No line for a sink that is not
 * configured: they are extras, not parts every setup has.
 */
export async function checkFeedSetup(config: Config): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  if (config.feedWebhookUrl) {
    const url = config.feedWebhookUrl;
    results.push(
      await feedCheck('feed webhook', async () => {
        // The webhook's files alone: NATS has a line of its own.
        await checkFeedSinks({ ...config, feedNatsUrl: undefined }, systemClock);
        const files = config.feedWebhookCaFile ? 'its secret and CA' : 'its secret';
        return `${files} read; posts to ${new URL(url).origin}`;
      }),
    );
  }
  if (config.feedNatsUrl) results.push(await feedCheck('feed NATS', () => probeNatsSink(config)));
  return results;
}

async function feedCheck(name: string, check: () => Promise<string>): Promise<CheckResult> {
  try {
    return { name, status: 'ok', detail: await check() };
  } catch (error) {
    return {
      name,
      status: 'fail',
      detail: describeError(error).message,
      hint: error instanceof TransportError ? error.hint : undefined,
    };
  }
}

/**
 * How data will come in. The service retired its v1.0 polling API on 2026-08-12, so without a
 * receiver a daemon receives nothing (TRANSPORT_POLL=off), or only until its first cycle finds
 * polling gone (auto, on). Judged from the settings alone: the service itself is checked below.
 */
export function checkIntake(config: Config): CheckResult {
  const name = 'intake';
  if (config.webhookListen) {
    return {
      name,
      status: 'ok',
      detail: config.isPollingOn ? `webhooks, and polling (${config.pollMode})` : 'webhooks only',
    };
  }
  const hint = `Set ${SETTINGS.webhookListen.env} and ${SETTINGS.webhookPublicKeyFile.env}, and register the receiver's URL with the service (docs/webhooks.md).`;
  if (!config.isPollingOn) {
    return {
      name,
      status: 'fail',
      detail: `${SETTINGS.pollMode.env}=off and no webhook receiver: nothing can bring data in`,
      hint,
    };
  }
  return {
    name,
    status: 'warn',
    detail: `polling alone (${SETTINGS.pollMode.env}=${config.pollMode}), which the service retired on 2026-08-12: without a webhook receiver the daemon receives nothing once polling answers 404 or 410`,
    hint,
  };
}

/** The database exists, opens, is migrated to this version, and this user can write it. */
export async function checkDatabase(target: DatabaseTarget): Promise<CheckResult[]> {
  const path = target.location;
  let found: Inspection;
  try {
    found = isPostgresLocation(path)
      ? await (
          await import('../db/postgres/inspect.js')
        ).inspectPostgres(path, readPasswordFile(target.passwordFile))
      : inspectSqlite(path);
  } catch (error) {
    found = { kind: 'unopenable', error: (error as Error).message, cause: error };
  }
  if (found.kind === 'missing') {
    return [
      {
        name: 'database',
        status: 'fail',
        detail: `no database at ${path}`,
        hint: 'Check TRANSPORT_DB; `transport-sync migrate` creates the database.',
      },
    ];
  }
  if (found.kind === 'unopenable') {
    // A failure the machine causes (read-only, full, damaged, refused) names its own cause.
    const known = machineFailureOf(found.cause, path);
    if (known)
      return [{ name: 'database', status: 'fail', detail: known.message, hint: known.hint }];
    return [
      {
        name: 'database',
        status: 'fail',
        detail: `cannot open ${isPostgresLocation(path) ? 'the database' : path}: ${found.error}`,
        hint: isPostgresLocation(path)
          ? 'Check that PostgreSQL answers at TRANSPORT_DB, and the role, its password and the database name.'
          : 'Check that the file is an SQLite database and that this user may read it.',
      },
    ];
  }
  return [checkSchema(found.schema), checkWritable(found.writeError, postgresLocationOf(path))];
}

function machineFailureOf(cause: unknown, path: string): TransportError | undefined {
  if (cause === undefined) return undefined;
  if (cause instanceof TransportError) return cause;
  const translated = isPostgresLocation(path)
    ? cause
    : databaseError(cause, path, { verb: 'open' });
  return translated instanceof TransportError ? translated : machineError(cause);
}

function checkSchema({ applied, known }: { applied: number; known: number }): CheckResult {
  if (applied === known) return { name: 'schema', status: 'ok', detail: `version ${applied}` };
  return applied < known
    ? {
        name: 'schema',
        status: 'fail',
        detail: `schema version ${applied}, this version needs ${known}`,
        hint: 'Run `transport-sync migrate` (the daemon also migrates when it starts).',
      }
    : {
        name: 'schema',
        status: 'fail',
        detail: `schema version ${applied} is newer than this version knows (${known})`,
        hint: 'Run the transport-sync version that wrote it, or restore a backup made by this one.',
      };
}

function checkWritable(writeError: string | null, path: string): CheckResult {
  if (writeError === null) return { name: 'database writable', status: 'ok', detail: path };
  const isBusy = /locked|busy/i.test(writeError);
  return {
    name: 'database writable',
    status: 'fail',
    detail: `${path}: ${writeError}`,
    hint: isBusy
      ? 'Another session held a lock for 5 s: look for a stuck sqlite3 shell, psql session or long report query.'
      : "Run doctor as the daemon user (SQLite: the file, its -wal/-shm and the directory must be writable by it; PostgreSQL: the role must own the mirror's tables).",
  };
}

/** The database and its -wal and -shm: private to their owner (0600), as they hold patient data. */
export function checkFileModes(path: string): CheckResult {
  if (isPostgresLocation(path)) {
    return { name: 'file modes', status: 'skip', detail: 'PostgreSQL: no database files here' };
  }
  if (!existsSync(path)) {
    return {
      name: 'file modes',
      status: 'skip',
      detail: 'no database file (see the database check)',
    };
  }
  const loose = [path, `${path}-wal`, `${path}-shm`]
    .filter((file) => existsSync(file))
    .map((file) => ({ file, mode: statSync(file).mode & 0o777 }))
    .filter(({ mode }) => (mode & 0o077) !== 0);
  if (loose.length === 0)
    return { name: 'file modes', status: 'ok', detail: 'database files 0600' };
  return {
    name: 'file modes',
    status: 'fail',
    detail: loose.map(({ file, mode }) => `${file} is ${octal(mode)}`).join(', '),
    hint: `chmod 600 ${loose.map(({ file }) => file).join(' ')} (the daemon also tightens them at start).`,
  };
}

function octal(mode: number): string {
  return `0${mode.toString(8).padStart(3, '0')}`;
}

function postgresLocationOf(location: string): string {
  return isPostgresLocation(location) ? postgresLocation(location) : location;
}
