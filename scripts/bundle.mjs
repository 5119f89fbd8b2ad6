// The CLI as one bundle: `npm run build` runs this after tsc, over tsc's output in dist/.
//
// Why: every command is a process of its own (a sync, a status, the daemon), and Node spends a
// large part of a short command on loading modules one file at a time. `zod` alone is 95 files,
// 64 of them locales it never uses (src imports zod as a namespace, `import * as z`, so that the
// bundle leaves them out: 370 KB less to load); a status loaded some 200 files. Bundled, with the libraries
// that are plain JavaScript inlined and tree-shaken, a status costs 0.12 CPU-s instead of 0.16,
// and a first sync of 300 requests about 12 % less CPU and wall time.
//
// What it writes, over tsc's files of the same names:
// - dist/cli/bin.js, the `transport-sync` command, and its chunks (dist/cli/chunks-*.js): each
//   command is still loaded only when it runs (src/cli/main.ts imports them lazily);
// - dist/cli/worker.js, the copy's worker thread (src/db/copy/worker.ts), beside the chunk that
//   starts it, which finds it as ./worker.js; dist/cli/backfill-worker.js, the backfill's
//   (src/cli/backfill-worker.ts), over tsc's file of that name, found the same way.
// Everything stays at dist/cli/: modules find the package's files relative to themselves
// (../../package.json, the drizzle/ folder upwards), and dist/cli/ is as deep as tsc's dist/db/.
// The rest of dist/ is tsc's, module by module, for scripts/ and the tests that import it.
//
// Left to node_modules, loaded as they are: native addons (better-sqlite3, pg-native), libraries
// that load files of their own by path at run time (undici's parts that src/undici.ts requires by
// file; pino-pretty, which src/log.ts requires by name for a terminal), and NATS, which only the
// daemon's feed loads. pino is inlined: only its transports start a worker thread from a file of
// its own, and src/log.ts uses none (a destination stream instead); 10 ms to load against 17 to
// 20 ms from node_modules. pg is inlined
// into a chunk of its own that only a postgres:// mirror loads: 25 ms to load it against 27 to
// 43 ms from its 40-odd files in node_modules (measured, five runs each).
import { readdirSync, rmSync } from 'node:fs';
import { build } from 'esbuild';

// The chunks of an earlier build: their names change with their content and nothing loads
// them any more, but `npm pack` of a working tree would ship them.
for (const name of readdirSync('dist/cli')) {
  if (name.startsWith('chunks-')) rmSync(`dist/cli/${name}`);
}

await build({
  entryPoints: {
    'cli/bin': 'dist/cli/bin.js',
    'cli/worker': 'dist/db/copy/worker.js',
    'cli/backfill-worker': 'dist/cli/backfill-worker.js',
  },
  outdir: 'dist',
  allowOverwrite: true,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  chunkNames: 'cli/chunks-[name]-[hash]',
  external: ['better-sqlite3', 'pg-native', 'pino-pretty', '@nats-io/*', 'undici'],
  // Inlined CommonJS libraries call require(); an ES module has none of its own.
  banner: {
    js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
  },
  sourcemap: true,
  logLevel: 'warning',
});
