import { appendFileSync } from 'node:fs';
import Module from 'node:module';
import process from 'node:process';

/*
 * Preloaded into a CLI process (NODE_OPTIONS=--import <this file's URL>): appends every module
 * request that goes through Node's require to the file REQUIRE_PROBE_OUT, one a line, for a test
 * to read; and at the exit, Node's own modules the process loaded (process.moduleLoadList) to
 * REQUIRE_PROBE_BUILTINS_OUT. In plain JavaScript, so that Node runs it as it is.
 */
const out = process.env.REQUIRE_PROBE_OUT;
const load = Module._load;
Module._load = function probedLoad(request, ...rest) {
  if (out) appendFileSync(out, `${request}\n`);
  return load.call(this, request, ...rest);
};
const builtinsOut = process.env.REQUIRE_PROBE_BUILTINS_OUT;
if (builtinsOut) {
  process.on('exit', () => appendFileSync(builtinsOut, `${process.moduleLoadList.join('\n')}\n`));
}
