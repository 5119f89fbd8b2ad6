import { knownMigrations } from '../migrations.js';
import type { Inspection } from '../sqlite/inspect.js';
import { postgresLocation } from '../location.js';
import { appliedPostgresMigrations, ClosingClient, withPassword } from './open.js';

/**
 * Looks at a PostgreSQL mirror the way the daemon will find it: connected to without migrating,
 * its schema version read, and a table created inside a transaction that is rolled back (it
 * proves the role may write the schema, and changes nothing).
 */
export async function inspectPostgres(url: string, password?: string): Promise<Inspection> {
  const client = new ClosingClient({
    connectionString: withPassword(url, password),
    connectionTimeoutMillis: 5000,
    application_name: 'transport-sync doctor',
  });
  try {
    await client.connect();
  } catch (error) {
    return { kind: 'unopenable', error: `${postgresLocation(url)}: ${(error as Error).message}` };
  }
  try {
    const schema = {
      applied: (await appliedPostgresMigrations(client)).count,
      known: knownMigrations('postgres').length,
    };
    let writeError: string | null = null;
    try {
      await client.query('BEGIN');
      try {
        await client.query('SET LOCAL lock_timeout = 5000');
        await client.query('CREATE TABLE transport_sync_doctor_probe (x integer)');
      } finally {
        await client.query('ROLLBACK');
      }
    } catch (error) {
      writeError = (error as Error).message;
    }
    return { kind: 'open', schema, writeError };
  } finally {
    await client.end().catch(() => undefined);
  }
}
