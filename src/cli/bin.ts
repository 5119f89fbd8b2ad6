#!/usr/bin/env node
import module from 'node:module';

// Files the daemon creates (database, backups, keys) are private to its user.
process.umask(0o077);
/*
 * On Node 22 and later, V8 keeps the code it compiled from our modules in a cache on disk
 * (os.tmpdir()/node-compile-cache, or NODE_COMPILE_CACHE), so that the next command skips the
 * compile: `--version` on Node 24 in 106 ms instead of 116, a first sync about 2 % sooner. Every
 * command is a process of its own, and an operator's `accept` races other providers for the
 * trip. The cache holds compiled code only, no data; made after the umask above, it is private
 * to its user. Where it cannot be written Node goes on without it, and
 * NODE_DISABLE_COMPILE_CACHE=1 turns it off. Node 20 has no such cache. It must be on before
 * the modules load: hence main is imported below, not above.
 */
(module as { enableCompileCache?: () => unknown }).enableCompileCache?.();

const { main } = await import('./main.js');
void main(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
}).then((code) => {
  process.exitCode = code;
});
