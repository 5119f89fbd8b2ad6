import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cleanEnv, runCli } from '../helpers/cli.js';
import { createTestDatabase } from '../helpers/engine.js';
import { tempDir } from '../helpers/records.js';

// The other half of cli-bundle.test.ts: a command on a postgres:// mirror loads the PostgreSQL
// driver (dist/cli/pg.cjs) through the code cache, and not SQLite's.
const PROBE = new URL('../helpers/require-probe.mjs', import.meta.url).href;

describe('the CLI bundle on a PostgreSQL mirror', () => {
  it("loads pg.cjs with a code cache of its own, and not SQLite's driver", async () => {
    const database = await createTestDatabase();
    try {
      const dir = tempDir('cli-bundle-pg-');
      const probe = join(dir, 'required.txt');
      const builtins = join(dir, 'builtins.txt');
      const env = cleanEnv({
        TRANSPORT_DB: database.location,
        NODE_COMPILE_CACHE: join(dir, 'cache'),
        NODE_OPTIONS: `--import ${PROBE}`,
        REQUIRE_PROBE_OUT: probe,
        REQUIRE_PROBE_BUILTINS_OUT: builtins,
      });
      const result = await runCli(['migrate'], env);
      expect(result.code, result.stderr).toBe(0);
      // Node 22 and later keep their own cache there too, in a folder.
      const cached = readdirSync(join(dir, 'cache')).filter((name) => name.endsWith('.cache'));
      expect(cached.sort()).toEqual([
        expect.stringMatching(/^transport-sync-cli-.+-migrate\.cache$/),
        expect.stringMatching(/^transport-sync-pg-.+-shared\.cache$/),
      ]);
      const required = existsSync(probe) ? readFileSync(probe, 'utf8').split('\n') : [];
      expect(required).not.toContainEqual(expect.stringMatching(/better.sqlite3/));
      // pg asks whether it runs on Cloudflare Workers; on Node 20 its way to find out loaded
      // Node's own fetch, 38 ms (scripts/bundle.mjs).
      const loaded = readFileSync(builtins, 'utf8').split('\n');
      expect(loaded).toContain('NativeModule net');
      expect(loaded).not.toContainEqual(expect.stringMatching(/deps\/undici/));
    } finally {
      await database.drop();
    }
  });
});
