import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';

/*
 * better-sqlite3's native addon, named by its path.
 *
 * The CLI bundles better-sqlite3's JavaScript with its own (scripts/bundle.mjs), so that a command
 * takes it from the code cache instead of resolving, reading and compiling its 15 files: about
 * 8 ms of an idle `sync`. Left to itself, better-sqlite3 finds its addon through the `bindings`
 * package, which reads the call stack for the calling package's folder and tries a dozen paths
 * from there; from the bundle it would search this package instead. So every database is opened
 * with the addon's path, from better-sqlite3's folder in node_modules: build/Release, where its
 * install script and a build from source put it (build/Debug for a debug build).
 */

let addonPath: string | undefined;

/** The path of better-sqlite3's native addon (found once per process). */
export function sqliteAddonPath(): string {
  if (addonPath === undefined) {
    const folder = dirname(createRequire(import.meta.url).resolve('better-sqlite3/package.json'));
    const builds = ['Release', 'Debug'].map((build) =>
      join(folder, 'build', build, 'better_sqlite3.node'),
    );
    // Neither there: the first, so that the error names where the addon was looked for.
    addonPath = builds.find((path) => existsSync(path)) ?? builds[0]!;
  }
  return addonPath;
}

/** A better-sqlite3 database, its addon loaded by path (see above). */
export function openSqliteDatabase(
  path: string,
  options: Database.Options = {},
): Database.Database {
  return new Database(path, { ...options, nativeBinding: sqliteAddonPath() });
}
