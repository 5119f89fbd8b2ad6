import { defineConfig } from 'drizzle-kit';

// Migrations are generated from src/db/schema.ts and src/db/schema-webhooks.ts into drizzle/ and
// committed; the daemon applies them at start and `transport-sync migrate` applies them on demand.
export default defineConfig({
  dialect: 'sqlite',
  schema: ['./src/db/schema.ts', './src/db/schema-webhooks.ts'],
  out: './drizzle',
});
