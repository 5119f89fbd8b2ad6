import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { ClosingClient } from '../../../src/db/postgres/open.js';
import { createTestDatabase } from '../../helpers/engine.js';

/*
 * A command that has done its work exits at once: the sockets of the pool's clients, once ended,
 * no longer keep the process alive while the server's backends exit (15 to 30 ms each), and they
 * still close. PostgreSQL's alone: left out of the sqlite project (vitest.config.ts).
 */

/** Whether a socket's handle still keeps the event loop alive (false once closed). */
const keepsAlive = (client: pg.Client) => {
  const stream = (client as unknown as { connection: { stream: { _handle?: unknown } } }).connection
    .stream;
  const handle = stream._handle as { hasRef?: () => boolean } | null | undefined;
  return handle?.hasRef?.() === true;
};

describe("a PostgreSQL pool's clients once the pool ends", () => {
  it('keep the process alive no longer, and still close their sockets', async () => {
    const database = await createTestDatabase();
    const pool = new pg.Pool({ connectionString: database.location, Client: ClosingClient });
    try {
      const clients: pg.Client[] = [];
      pool.on('connect', (client) => clients.push(client));
      const removed = new Set<pg.Client>();
      const allRemoved = new Promise<void>((resolve) =>
        pool.on('remove', (client) => {
          removed.add(client);
          if (removed.size === clients.length) resolve();
        }),
      );
      // Two clients at once, then both idle in the pool.
      const [a, b] = await Promise.all([pool.connect(), pool.connect()]);
      await Promise.all([a.query('SELECT 1'), b.query('SELECT 2')]);
      a.release();
      b.release();
      expect(clients).toHaveLength(2);
      expect(clients.map(keepsAlive)).toEqual([true, true]);
      await pool.end();
      expect(clients.map(keepsAlive)).toEqual([false, false]);
      await allRemoved;
    } finally {
      await database.drop();
    }
  });
});
