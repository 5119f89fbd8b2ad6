// Test workers use better-sqlite3 directly too: keep its objects from the collector on Node 24
// (see src/db/sqlite/pin.ts).
import '../../src/db/sqlite/pin.js';
