import { defineConfig } from 'drizzle-kit';

// PostgreSQL migrations, generated from the same table descriptions as SQLite's (src/db/schema)
// into drizzle/postgres/ and committed.
export default defineConfig({
  dialect: 'postgresql',
  schema: ['./src/db/postgres/drizzle-schema.ts'],
  out: './drizzle/postgres',
});
