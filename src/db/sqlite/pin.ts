import { createRequire } from 'node:module';
import { openSqliteDatabase } from './driver.js';

/*
 * better-sqlite3 12 on Node 24: a statement or database object the garbage collector frees at a
 * moment when no Node environment is current aborts the whole process (node's
 * RemoveEnvironmentCleanupHook asserts; better-sqlite3 13 fixes it but needs Node 22 or later,
 * and we support 20). So on Node 24 nothing of better-sqlite3 is left to the collector: every
 * database it opens and every statement it prepares stays referenced for the life of the
 * process. The store prepares each statement once, so what is kept stays small; the objects are
 * freed with the process, by Node's own cleanup, where the environment still exists.
 *
 * Both are caught where the native objects are made, not where our code asks: a database whose
 * first statement failed (a table not there yet) prepared nothing, and was still freed by the
 * collector and aborted a test worker.
 */

const isAffected = Number(process.versions.node.split('.')[0]) >= 24;
const pinned = new Set<object>();
let isPatched = false;

type NativeDatabase = new (...args: unknown[]) => object;

/** Keeps better-sqlite3's objects from the garbage collector on Node 24; once per process. */
export function pinSqliteObjects(): void {
  if (!isAffected || isPatched) return;
  isPatched = true;
  const require = createRequire(import.meta.url);
  // Opening one loads the addon: its module's exports hold the native class every open calls.
  // The JavaScript object keeps the native one under a symbol of better-sqlite3's own: found by
  // what it holds, since the CLI bundles that module and node_modules holds another copy.
  const probe = openSqliteDatabase(':memory:');
  const nativeProbe = Object.getOwnPropertySymbols(probe)
    .map((symbol) => (probe as unknown as Record<symbol, unknown>)[symbol])
    .find((value) => typeof (value as { prepare?: unknown } | null)?.prepare === 'function');
  if (!nativeProbe) throw new Error('better-sqlite3: its native database was not found to pin');
  const native = Object.getPrototypeOf(nativeProbe) as {
    constructor: NativeDatabase;
    prepare: (...args: unknown[]) => object;
  };
  const addon = Object.values(require.cache).find(
    (module) =>
      (module?.exports as { Database?: unknown } | undefined)?.Database === native.constructor,
  )?.exports as { Database: NativeDatabase } | undefined;
  if (!addon) throw new Error('better-sqlite3: its native module was not found to pin its objects');
  addon.Database = new Proxy(native.constructor, {
    construct(target, args) {
      const database = Reflect.construct(target, args);
      pinned.add(database);
      return database;
    },
  });
  // The native class's prepare serves every path: Database#prepare, pragma(), transaction().
  const prepare = native.prepare;
  native.prepare = function (this: object, ...args: unknown[]) {
    const statement = prepare.apply(this, args);
    pinned.add(statement);
    return statement;
  };
  probe.close();
  pinned.add(nativeProbe);
}

/** How many of better-sqlite3's objects this process keeps from the collector (for tests). */
export function pinnedSqliteObjects(): number {
  return pinned.size;
}

pinSqliteObjects();
