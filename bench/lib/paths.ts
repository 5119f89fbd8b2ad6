import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (where drizzle/ and package.json are), found upwards from this file. */
export function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'drizzle', 'sqlite', 'meta', '_journal.json'))) return dir;
    const up = dirname(dir);
    if (up === dir)
      throw new Error('cannot find the repository root (drizzle/sqlite/meta/_journal.json)');
    dir = up;
  }
}
