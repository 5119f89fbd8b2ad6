// The CLI as bundles: `npm run build` runs this after tsc, over tsc's output in dist/.
//
// Why: every command is a process of its own (a sync, a status, the daemon), and Node spends a
// large part of a short command on loading modules one file at a time. `zod` alone is 95 files,
// 64 of them locales it never uses (src imports zod as a namespace, `import * as z`, so that the
// bundle leaves them out: 370 KB less to load); a status loaded some 200 files. Bundled, with the
// libraries that are plain JavaScript inlined and tree-shaken, a status cost 0.12 CPU-s instead
// of 0.16, and a first sync of 300 requests about 12 % less CPU and wall time. As one CommonJS
// file compiled with V8's code cache (src/cli/code-cache.ts), an idle sync takes about a fifth
// less time again than as ES module chunks (docs/performance.md, "Start-up").
//
// What it writes, over tsc's files of the same names:
// - dist/cli/cli.cjs, every command in one CommonJS file (tsc's dist/cli/main.js and what it
//   imports). A command's modules still run only when that command runs (main.ts imports them
//   lazily: the bundler wraps each in a function called at that import), and the PostgreSQL
//   driver is a file of its own beside it, dist/cli/pg.cjs, loaded only for a postgres:// mirror.
//   Both are ASCII, so that Node reads them a byte a character;
// - dist/cli/bin.js, the `transport-sync` command, a file of its own: it loads cli.cjs with its
//   code cache;
// - dist/cli/worker.js, the copy's worker thread (src/db/copy/worker.ts), and
//   dist/cli/backfill-worker.js, the backfill's (src/cli/backfill-worker.ts), over tsc's file of
//   that name: ES modules, with the chunks they share (dist/cli/chunks-*.js). Each is found by
//   the module that starts it as ./worker.js or ./backfill-worker.js.
// Everything stays at dist/cli/: modules find the package's files relative to themselves
// (../../package.json, the drizzle/ folder upwards), and dist/cli/ is as deep as tsc's dist/db/.
// The rest of dist/ is tsc's, module by module, for scripts/ and the tests that import it.
//
// Left to node_modules, loaded as they are: native addons (pg-native; better-sqlite3 in the
// worker threads), libraries that load files of their own by path at run time (undici's parts
// that src/undici.ts requires by file; pino-pretty, which src/log.ts requires by name for a
// terminal), and NATS, which only the daemon's feed loads. better-sqlite3's JavaScript is in
// cli.cjs, its addon loaded by path (src/db/sqlite/driver.ts): from node_modules, its 15 files
// were resolved, read and compiled at every command's first open of a mirror, about 8 ms of an
// idle sync. pino is inlined: only its transports start a worker thread from a file of its own,
// and src/log.ts uses none (a destination stream instead); 10 ms to load against 17 to 20 ms
// from node_modules. pg is inlined into its own file (or, for the workers, chunk), which
// only a postgres:// mirror loads: 25 ms to load it against 27 to 43 ms from its 40-odd files in
// node_modules (measured, five runs each).
import { readdirSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { build, transform } from 'esbuild';

const EXTERNAL = ['better-sqlite3', 'pg-native', 'pino-pretty', '@nats-io/*', 'undici'];

// The chunks of an earlier build: their names change with their content and nothing loads
// them any more, but `npm pack` of a working tree would ship them.
for (const name of readdirSync('dist/cli')) {
  if (name.startsWith('chunks-')) rmSync(`dist/cli/${name}`);
}

/**
 * pg as it runs here: on Node, never on Cloudflare Workers. pg's lib/stream.js asks at load
 * whether it runs there, and on Node 20, which has no `navigator`, finds out by making a
 * `Response`: that loads Node's own fetch, 38 ms at every start of a command on a PostgreSQL
 * mirror. Node 22 and later answer from `navigator` at once. The build fails when pg no longer
 * has that function, so that an upgrade reviews this.
 */
const pgOnNode = {
  name: 'pg-on-node',
  setup(builder) {
    builder.onLoad(
      { filter: /[\\/]node_modules[\\/]pg[\\/]lib[\\/]stream\.js$/ },
      async ({ path }) => {
        const text = await readFile(path, 'utf8');
        const start = 'function isCloudflareRuntime() {';
        if (text.split(start).length !== 2) throw new Error(`${path}: ${start} not found once`);
        return { contents: text.replace(start, `${start}\n  return false;`), loader: 'js' };
      },
    );
  },
};

/** Options shared by the ES module bundles. */
const esModules = {
  outdir: 'dist',
  allowOverwrite: true,
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external: EXTERNAL,
  // Inlined CommonJS libraries call require(); an ES module has none of its own.
  banner: {
    js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
  },
  sourcemap: true,
  logLevel: 'warning',
  plugins: [pgOnNode],
};

// The command: one file, which loads cli.cjs.
await build({ ...esModules, entryPoints: { 'cli/bin': 'dist/cli/bin.js' } });

// The worker threads: ES modules, with the chunks they share.
await build({
  ...esModules,
  entryPoints: {
    'cli/worker': 'dist/db/copy/worker.js',
    'cli/backfill-worker': 'dist/cli/backfill-worker.js',
  },
  splitting: true,
  chunkNames: 'cli/chunks-[name]-[hash]',
});

/** `pg` in cli.cjs, required as its sibling file. */
const pgAsSibling = {
  name: 'pg-as-sibling',
  setup(builder) {
    builder.onResolve({ filter: /^pg$/ }, () => ({ path: './pg.cjs', external: true }));
  },
};

/** Options shared by the CommonJS bundles. */
const commonJs = {
  bundle: true,
  write: false,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  external: EXTERNAL.filter((name) => name !== 'better-sqlite3'),
  // tsc's modules find the package's files from import.meta.url, which CommonJS has not.
  define: { 'import.meta.url': '__import_meta_url' },
  banner: { js: "const __import_meta_url = require('node:url').pathToFileURL(__filename).href;" },
  sourcemap: 'linked',
  logLevel: 'warning',
  metafile: true,
  plugins: [pgOnNode],
};

await writeAscii(
  await build({
    ...commonJs,
    entryPoints: { 'cli/cli': 'dist/cli/main.js' },
    outdir: 'dist',
    outExtension: { '.js': '.cjs' },
    plugins: [pgAsSibling, pgOnNode],
  }),
);
await writeAscii(
  await build({
    ...commonJs,
    stdin: { contents: "module.exports = require('pg');", resolveDir: '.', loader: 'js' },
    outfile: 'dist/cli/pg.cjs',
  }),
);

/**
 * Writes a build's files, each bundle ASCII, once it is known to import() nothing. The bundler
 * escapes every other character in the code (its default charset); what is left is in comments
 * it kept, where a `?` changes nothing. That is checked, not assumed: the bundle without its
 * comments and spacing must not change.
 */
async function writeAscii({ outputFiles, metafile }) {
  // A script compiled from V8's code cache has no module loader for import() on Node 20
  // (src/cli/code-cache.ts): what a bundle loads, it requires.
  for (const [path, { imports }] of Object.entries(metafile.outputs)) {
    const dynamic = imports.filter((entry) => entry.kind === 'dynamic-import');
    if (dynamic.length > 0) {
      throw new Error(
        `${path} imports ${dynamic.map((entry) => entry.path).join(', ')}: require it`,
      );
    }
  }
  for (const output of outputFiles) {
    let text = output.text;
    if (output.path.endsWith('.cjs')) {
      const ascii = text.replace(/[\u0080-\uffff]/g, '?');
      if (ascii !== text) {
        const bare = async (code) =>
          (await transform(code, { minifyWhitespace: true, legalComments: 'none' })).code;
        if ((await bare(ascii)) !== (await bare(text))) {
          throw new Error(`${output.path}: a character beyond ASCII outside a comment`);
        }
        text = ascii;
      }
    }
    writeFileSync(output.path, text);
  }
}
