import pg from 'pg';

/** Runs one statement on its own connection (CREATE or DROP DATABASE cannot run in a pool's). */
export async function adminQuery(url: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}
