#!/usr/bin/env node
import module from 'node:module';
import { fileURLToPath } from 'node:url';
import { cacheKeyOf, loadBundle, type LoadedBundle } from './code-cache.js';

// Files the daemon creates (database, backups, keys, the code cache) are private to its user.
process.umask(0o077);
/*
 * On Node 22 and later, V8 keeps the code it compiled from the ES modules that worker threads
 * load (the backfill's, the copy's) in a cache on disk (NODE_COMPILE_CACHE, else
 * os.tmpdir()/node-compile-cache), so that the next run skips the compile. The CLI itself is one
 * CommonJS file with a code cache of its own, on every Node (code-cache.ts). Made after the umask
 * above, the cache is private to its user; NODE_DISABLE_COMPILE_CACHE=1 turns both off.
 */
(module as { enableCompileCache?: () => unknown }).enableCompileCache?.();

const args = process.argv.slice(2);
const bundle = fileURLToPath(new URL('./cli.cjs', import.meta.url));
let cli: LoadedBundle;
try {
  cli = loadBundle(bundle, { key: cacheKeyOf(args), env: process.env });
} catch (error) {
  // The install itself is broken (the file is missing or unreadable): say so, without a stack.
  const { code, path } = error as NodeJS.ErrnoException;
  if (path !== bundle) throw error;
  process.stderr.write(
    `transport-sync: error: cannot read ${bundle} (${code})\n` +
      '  hint: install the package again (docs/operations.md), or run `npm run build` in a checkout\n',
  );
  process.exit(1);
}
process.once('exit', () => cli.writeCache());
const { main } = cli.exports as typeof import('./main.js');
void main(args, {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
}).then((code) => {
  process.exitCode = code;
});
