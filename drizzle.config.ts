import { defineConfig } from 'drizzle-kit';

// SQLite migrations are generated from the table descriptions (src/db/schema) into
// drizzle/sqlite/ and committed; the daemon applies them at start and `transport-sync migrate`
// on demand. PostgreSQL's: drizzle-postgres.config.ts.
export default defineConfig({
  dialect: 'sqlite',
  schema: ['./src/db/sqlite/drizzle-schema.ts'],
  out: './drizzle/sqlite',
});
