import { createRequire } from 'node:module';
import Database from 'better-sqlite3';

/*
 * better-sqlite3 12 on Node 24: a statement or database object the garbage collector frees at a
 * moment when no Node environment is current aborts the whole process (node's
 * RemoveEnvironmentCleanupHook asserts; better-sqlite3 13 fixes it but needs Node 22 or later,
 * and we support 20). So on Node 24 nothing of better-sqlite3 is left to the collector: every
 * statement it prepares, and the database that prepared it, stays referenced for the life of the
 * process. The store prepares each statement once, so what is kept stays small; the objects are
 * freed with the process, by Node's own cleanup, where the environment still exists.
 */

const isAffected = Number(process.versions.node.split('.')[0]) >= 24;
const pinned = new Set<object>();
let isPatched = false;

/** Keeps better-sqlite3's objects from the garbage collector on Node 24; once per process. */
export function pinSqliteObjects(): void {
  if (!isAffected || isPatched) return;
  isPatched = true;
  const require = createRequire(import.meta.url);
  const { cppdb } = require('better-sqlite3/lib/util.js') as { cppdb: symbol };
  // The native class's prepare serves every path: Database#prepare, pragma(), transaction().
  const probe = new Database(':memory:');
  const native = Object.getPrototypeOf((probe as unknown as Record<symbol, object>)[cppdb]) as {
    prepare: (...args: unknown[]) => object;
  };
  const prepare = native.prepare;
  native.prepare = function (this: object, ...args: unknown[]) {
    const statement = prepare.apply(this, args);
    pinned.add(statement);
    // The second argument is the JavaScript database that asked.
    if (typeof args[1] === 'object' && args[1] !== null) pinned.add(args[1]);
    return statement;
  };
  probe.close();
  pinned.add(probe);
}

/** Keeps one database object from the garbage collector on Node 24 (see above). */
export function pinSqlite<T extends object>(db: T): T {
  if (isAffected) pinned.add(db);
  return db;
}

pinSqliteObjects();
