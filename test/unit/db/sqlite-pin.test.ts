import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { pinnedSqliteObjects } from '../../../src/db/sqlite/pin.js';

/*
 * On Node 24, better-sqlite3 12 aborts the process when the collector frees one of its objects
 * at the wrong moment (src/db/sqlite/pin.ts), so every database and statement is kept. On older
 * Nodes nothing is kept: the workaround must not leak where it is not needed.
 */
const isAffected = Number(process.versions.node.split('.')[0]) >= 24;
const kept = (count: number) => (isAffected ? count : 0);

describe('better-sqlite3 objects on Node 24', () => {
  it('keeps a database whose only statement failed, and one that prepared nothing', () => {
    const before = pinnedSqliteObjects();
    const failed = new Database(':memory:');
    expect(() => failed.prepare('SELECT n FROM not_there_yet')).toThrow(/no such table/);
    failed.close();
    const unused = new Database(':memory:');
    unused.close();
    expect(pinnedSqliteObjects() - before).toBe(kept(2));
  });

  it('keeps every statement prepared, through prepare and pragma alike', () => {
    const db = new Database(':memory:');
    const before = pinnedSqliteObjects();
    db.prepare('SELECT 1').get();
    db.pragma('user_version');
    db.close();
    expect(pinnedSqliteObjects() - before).toBe(kept(2));
  });
});
