#!/usr/bin/env node
import { main } from './main.js';

// Files the daemon creates (database, backups, keys) are private to its user.
process.umask(0o077);

void main(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
}).then((code) => {
  process.exitCode = code;
});
