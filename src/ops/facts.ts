import type { MirrorDb } from '../db/open.js';
import { statSync } from 'node:fs';
export { readMirrorFacts, type MirrorFacts, type SchemaDriftFacts } from '../db/store/facts.js';

/** Sizes of the database file and its write-ahead log, in bytes (0 when absent). */
export function databaseBytes(db: MirrorDb): { database: number; wal: number } {
  const path = db.path;
  const size = (file: string) => {
    try {
      return statSync(file).size;
    } catch {
      return 0;
    }
  };
  return { database: size(path), wal: size(`${path}-wal`) };
}
