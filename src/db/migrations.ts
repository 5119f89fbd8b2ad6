import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TransportError } from '../errors.js';
import type { Engine } from './sql.js';

/**
 * The migrations of an engine: drizzle/<engine>/ at the package root, found upwards from this
 * file (src/db, dist/db, or a compiled copy deeper down such as the benchmark's).
 */
export function migrationsFolder(engine: Engine): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = resolve(dir, 'drizzle', engine);
    if (existsSync(resolve(candidate, 'meta/_journal.json'))) return candidate;
    const up = dirname(dir);
    if (up === dir)
      return resolve(dirname(fileURLToPath(import.meta.url)), '../../drizzle', engine);
    dir = up;
  }
}

/** Migrations this version knows for an engine, in order. */
export function knownMigrations(engine: Engine): { tag: string; when: number }[] {
  const journal = JSON.parse(
    readFileSync(resolve(migrationsFolder(engine), 'meta/_journal.json'), 'utf8'),
  );
  return journal.entries.map((entry: { tag: string; when: number }) => ({
    tag: entry.tag,
    when: entry.when,
  }));
}

/** What a database records of the migrations applied to it. */
export interface AppliedMigrations {
  count: number;
  /** The newest applied migration's time (drizzle's created_at), or null. */
  newestAt: number | null;
}

/**
 * Whether this version knows a migration the database has not applied: drizzle's own test (a
 * migration newer than the newest applied one), made without loading drizzle.
 */
export function isBehind(applied: AppliedMigrations, engine: Engine): boolean {
  const newestKnown = knownMigrations(engine).at(-1)?.when;
  return newestKnown !== undefined && (applied.newestAt === null || applied.newestAt < newestKnown);
}

/** Refuses a database that a newer version migrated: it is left untouched. */
export function refuseNewer(applied: AppliedMigrations, engine: Engine, location: string): void {
  if (applied.count === 0) return;
  const known = knownMigrations(engine);
  const newestKnown = known.at(-1)?.when ?? 0;
  if (applied.count > known.length || (applied.newestAt ?? 0) > newestKnown) {
    throw new TransportError({
      code: 'db.newer_schema',
      message: `the database ${location} has schema version ${applied.count}, newer than this transport-sync knows (${known.length}); it was left untouched`,
      hint: 'Run the transport-sync version that wrote it, or restore a backup made by this version.',
    });
  }
}
