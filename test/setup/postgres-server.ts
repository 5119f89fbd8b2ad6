import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { openDatabase } from '../../src/db/open.js';
import { adminQuery } from '../helpers/pg-admin.js';
import { loadEmbeddedPostgres, type EmbeddedPostgresClass } from './embedded-postgres.js';

/*
 * The PostgreSQL server the `postgres` test project runs against: TRANSPORT_TEST_DATABASE_URL
 * when set (CI and this project's machines: a server on 127.0.0.1:5432, trust authentication),
 * else a throwaway server from the embedded-postgres package, started in a temporary directory
 * for this run and removed after it. Neither: the run fails here, saying why; nothing is skipped.
 * Each test makes databases of its own on it (test/helpers/engine.ts), most of them copies of one
 * this run migrates once: the schema's migrations cost PostgreSQL more than the copy.
 */

declare module 'vitest' {
  export interface ProvidedContext {
    engine: 'sqlite' | 'postgres';
    postgresUrl: string;
    /** A database holding the migrated, empty schema, for CREATE DATABASE ... TEMPLATE. */
    postgresTemplate: string;
  }
}

export default async function setup(project: TestProject) {
  const given = process.env.TRANSPORT_TEST_DATABASE_URL?.trim();
  if (given) {
    await check(given, 'TRANSPORT_TEST_DATABASE_URL');
    return provideServer(project, given);
  }
  const embedded = await startEmbedded();
  const dropTemplate = await provideServer(project, embedded.url).catch(async (error: unknown) => {
    await embedded.stop();
    throw error;
  });
  return async () => {
    await dropTemplate();
    await embedded.stop();
  };
}

/**
 * Tells the tests where the server is, after making this run's template: a database migrated
 * once, which tests copy (test/helpers/engine.ts). Resolves to what drops it.
 */
async function provideServer(project: TestProject, url: string): Promise<() => Promise<void>> {
  const template = `ts_template_${process.pid}`;
  const templateUrl = new URL(url);
  templateUrl.pathname = `/${template}`;
  await adminQuery(url, `DROP DATABASE IF EXISTS ${template} WITH (FORCE)`);
  await adminQuery(url, `CREATE DATABASE ${template}`);
  const db = await openDatabase({ location: templateUrl.toString() });
  await db.close();
  project.provide('engine', 'postgres');
  project.provide('postgresUrl', url);
  project.provide('postgresTemplate', template);
  return () => adminQuery(url, `DROP DATABASE IF EXISTS ${template} WITH (FORCE)`);
}

/** Where to point the tests instead, in every failure that asks for a server. */
const ASK_FOR_SERVER =
  'set TRANSPORT_TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test (a server of yours, trust authentication on loopback)';

/** A throwaway server in a temporary directory: its URL, and what stops it and removes it. */
async function startEmbedded(): Promise<{ url: string; stop: () => Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'transport-sync-pg-'));
  // As root, PostgreSQL runs as a user of its own, which must reach the binaries placed in here
  // and the data directory the package makes in here and hands to that user.
  const isRoot = process.getuid?.() === 0;
  if (isRoot) chmodSync(dir, 0o755);
  const logTail: string[] = [];
  let running: InstanceType<EmbeddedPostgresClass> | undefined;
  let url: string;
  try {
    const EmbeddedPostgres = await loadEmbeddedPostgres({ dir });
    const port = await freePort();
    const server = new EmbeddedPostgres({
      databaseDir: join(dir, 'data'),
      user: 'postgres',
      password: 'postgres',
      // Trust on loopback, as on this project's machines: the URL carries no password.
      authMethod: 'trust' as 'password',
      port,
      persistent: false,
      // PostgreSQL refuses to run as root: the package then runs it as a user of its own. Not
      // as anyone else: the package would try to create that user, and only root can.
      createPostgresUser: isRoot,
      // The server's own words, kept for the error when it does not start.
      onLog: (message) => keepTail(logTail, message),
      onError: (error) => keepTail(logTail, String(error)),
    });
    await server.initialise();
    await server.start();
    running = server;
    url = `postgres://postgres@127.0.0.1:${port}/postgres`;
    await check(url, 'the embedded server');
  } catch (error) {
    // Only a started server is stopped: the package's stop waits for an exit, which a server
    // that never started has already made.
    await running?.stop().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
    // The package's start rejects with nothing when the server stops before it is ready.
    const reason =
      error instanceof Error ? error : new Error(logTail.join('\n') || 'it stopped at once');
    throw new Error(
      `the PostgreSQL tests need a server and the embedded one did not start (${summary(reason.message).trim()}): ${ASK_FOR_SERVER}`,
      { cause: reason },
    );
  }
  const server = running;
  return {
    url,
    stop: async () => {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function keepTail(tail: string[], message: string): void {
  tail.push(...message.split('\n').filter((line) => line.trim()));
  tail.splice(0, Math.max(0, tail.length - 20));
}

/** The line of a failure that says what went wrong: PostgreSQL's own error line when there is one. */
function summary(text: string): string {
  const lines = text.split('\n').filter((line) => line.trim());
  return lines.findLast((line) => /\b(FATAL|PANIC|ERROR|error):/.test(line)) ?? lines[0] ?? text;
}

async function check(url: string, what: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
  } catch (error) {
    throw new Error(
      `the PostgreSQL tests cannot reach ${what} (${url.replace(/:[^:@/]*@/, ':***@')}): ${(error as Error).message}`,
    );
  } finally {
    await client.end().catch(() => undefined);
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}
