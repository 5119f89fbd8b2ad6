import {
  closeSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, isAbsolute, join } from 'node:path';
import { isAscii } from 'node:buffer';
import vm from 'node:vm';
import { crc32 } from 'node:zlib';
import { COMMAND_NAMES } from './command-names.js';

/*
 * The CLI's code, loaded with V8's code cache.
 *
 * Every command is a process of its own: a `sync` from a systemd timer, an operator's `accept`
 * racing other providers for a trip, a monitoring check's `status`. Before this, a command spent
 * more time loading its modules than doing its work: an idle `sync` against 5,000 requests took
 * about 290 ms, of which some 110 ms went to the ES module loader and to V8 compiling the same
 * code again at every start (docs/performance.md, "Start-up").
 *
 * So `npm run build` also writes the whole CLI as one CommonJS file (dist/cli/cli.cjs, with the
 * PostgreSQL driver beside it in dist/cli/pg.cjs, loaded only for a postgres:// mirror), and
 * bin.js compiles it here with the code V8 compiled for it in an earlier run of the same
 * command. That code is written once, when a command first runs without it, at its exit: by then
 * it holds every function the command ran, not only the file's top level (which is all Node 22's
 * own compile cache keeps of an ES module). A cached idle `sync` takes 243 ms against 288.
 *
 * The cache is compiled code only, no data. It lives in NODE_COMPILE_CACHE when that is set (the
 * systemd units set it to their CacheDirectory), else in $XDG_CACHE_HOME/transport-sync or
 * ~/.cache/transport-sync; NODE_DISABLE_COMPILE_CACHE=1 turns it off, as it does Node's own. V8
 * runs what the cache holds, so a cache is only read from, and written to, a folder that is this
 * user's alone (owned by it, writable by no one else), and only from files of that user that no
 * one else may write. Anything else, or any error, and the command compiles its code as if there
 * were no cache: the cache only ever saves time.
 */

/**
 * The commands, each with a cache of its own: each runs different code, and a cache holds what
 * the run that wrote it compiled. Anything else (help, a mistyped command) shares one.
 */
const COMMANDS: ReadonlySet<string> = new Set(COMMAND_NAMES);

/** Which of the bundle's caches a command line uses. */
export const cacheKeyOf = (args: readonly string[]): string =>
  args[0] !== undefined && COMMANDS.has(args[0]) ? args[0] : 'other';

/** Where the code cache is kept, or undefined when it is off or there is nowhere to keep it. */
export function cacheFolder(env: NodeJS.ProcessEnv): string | undefined {
  if (env.NODE_DISABLE_COMPILE_CACHE === '1') return undefined;
  const named = env.NODE_COMPILE_CACHE;
  if (named) return isAbsolute(named) ? named : undefined;
  const xdg = env.XDG_CACHE_HOME;
  if (xdg && isAbsolute(xdg)) return join(xdg, 'transport-sync');
  const home = env.HOME;
  if (home && isAbsolute(home)) return join(home, '.cache', 'transport-sync');
  return undefined;
}

/** True when `mode` and `uid` describe something only this process's user may write. */
const isPrivate = (stats: { uid: number; mode: number }) =>
  stats.uid === process.getuid?.() && (stats.mode & 0o022) === 0;

/**
 * Makes `folder` (and its parent, when that is missing but the grandparent exists: ~/.cache) with
 * mode 0700, and says whether it is a folder of this user's alone. Never makes more than those
 * two: a HOME that does not exist is not created.
 */
function privateFolder(folder: string): boolean {
  for (const path of [dirname(folder), folder]) {
    try {
      mkdirSync(path, { mode: 0o700 });
    } catch {
      // exists already, or cannot be made: what it is, is checked below
    }
  }
  try {
    const stats = lstatSync(folder);
    return stats.isDirectory() && isPrivate(stats);
  } catch {
    return false;
  }
}

/** The cache file's bytes when it is this user's and no one else may write it. */
function readPrivateFile(path: string): Buffer | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const stats = fstatSync(fd);
    if (!stats.isFile() || !isPrivate(stats)) return undefined;
    return readFileSync(fd);
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** One bundle file's cache: its name carries V8's version and the bundle's digest. */
interface CacheFile {
  folder: string;
  name: string;
  /** The start of every cache file of this bundle, whatever its version: for the tidy-up. */
  prefix: string;
  digest: string;
}

function cacheFileOf(folder: string, bundle: string, source: Buffer, key: string): CacheFile {
  const prefix = `transport-sync-${basename(bundle, '.cjs')}-`;
  // The bundle's length and CRC-32 tell one build from another: a cache is only ever read from a
  // folder of this user's alone, so the digest guards against a stale cache, not a forged one.
  // CRC-32 reads the 1.7 MB bundle in 0.4 ms, SHA-256 in 3.7 (node:zlib loads in 0.8 ms).
  const digest = [source.length, crc32(source)]
    .map((n) => n.toString(16).padStart(8, '0'))
    .join('');
  const v8 = process.versions.v8.replace(/[^0-9A-Za-z.]/g, '_');
  return { folder, name: `${prefix}${v8}-${digest}-${key}.cache`, prefix, digest };
}

/**
 * Writes `data` as the cache file, all at once (a new file renamed over the name), and deletes
 * the files that earlier versions of the bundle left for the same key: an upgrade tidies up
 * after itself. Those of another Node with this bundle stay, so that two Nodes in use on one
 * machine (the unit's and a shell's) do not delete each other's at every run.
 */
function writeCacheFile(file: CacheFile, key: string, data: Buffer): void {
  const path = join(file.folder, file.name);
  const partial = `${path}.${process.pid}.partial`;
  try {
    writeFileSync(partial, data, { mode: 0o600, flag: 'wx' });
    renameSync(partial, path);
    for (const name of readdirSync(file.folder)) {
      const isOlder =
        name.startsWith(file.prefix) &&
        name.endsWith(`-${key}.cache`) &&
        !name.endsWith(`-${file.digest}-${key}.cache`);
      if (isOlder) rmSync(join(file.folder, name), { force: true });
    }
  } catch {
    // A cache that cannot be written (a full disk, say) costs the next start its compile.
    try {
      rmSync(partial, { force: true });
    } catch {
      // nothing of it was written, or nothing can be removed either
    }
  }
}

/** A CommonJS bundle, run. */
export interface LoadedBundle {
  exports: unknown;
  /** True when its code came from the cache, not compiled anew. */
  isCached: boolean;
  /**
   * Writes the code V8 compiled for the bundle so far, and for the sibling bundles it loaded,
   * each only when it had no usable cache to start with. Called at the process's exit, when
   * every function the command ran is compiled.
   */
  writeCache(): void;
}

export interface LoadOptions {
  /** Which cache of the bundle to use: commands run different code (the command's name). */
  key: string;
  env: NodeJS.ProcessEnv;
}

/** The bundle's text: one byte a character when it is ASCII (the build makes it so). */
function sourceText(source: Buffer): string {
  return source.toString(isAscii(source) ? 'latin1' : 'utf8');
}

/**
 * Runs the CommonJS file `bundle` (a path), compiled with its cached code when there is a usable
 * cache. Its `require` loads a sibling `.cjs` bundle the same way (pg.cjs), and anything else
 * as Node does. It may not import(): a script compiled from a code cache has no module loader
 * to call on Node 20 (the build refuses a bundle that does).
 */
export function loadBundle(bundle: string, options: LoadOptions): LoadedBundle {
  const source = readFileSync(bundle);
  const folder = cacheFolder(options.env);
  const file =
    folder !== undefined && privateFolder(folder)
      ? cacheFileOf(folder, bundle, source, options.key)
      : undefined;
  const cachedData = file && readPrivateFile(join(file.folder, file.name));
  // Node's own wrapper of a CommonJS module, on the file's first line so that line numbers hold.
  const wrapped = `(function (exports, require, module, __filename, __dirname) { ${sourceText(source)}\n});`;
  const script = new vm.Script(wrapped, {
    filename: bundle,
    ...(cachedData && { cachedData }),
  });
  const isCached = cachedData !== undefined && script.cachedDataRejected !== true;
  const siblings = new Map<string, LoadedBundle>();
  const module = { exports: {} as unknown };
  const run = script.runInThisContext() as (...args: unknown[]) => void;
  run.call(
    module.exports,
    module.exports,
    bundleRequire(bundle, options, siblings),
    module,
    bundle,
    dirname(bundle),
  );
  let isWritten = isCached || file === undefined;
  return {
    exports: module.exports,
    isCached,
    writeCache() {
      for (const sibling of siblings.values()) sibling.writeCache();
      if (isWritten || !file) return;
      isWritten = true;
      writeCacheFile(file, options.key, script.createCachedData());
    },
  };
}

/**
 * `require` for a bundle: a sibling bundle (`./name.cjs`) loaded through loadBundle, once, into
 * `siblings`; anything else as Node's require from the bundle's place.
 */
function bundleRequire(
  bundle: string,
  options: LoadOptions,
  siblings: Map<string, LoadedBundle>,
): NodeJS.Require {
  const nodeRequire = createRequire(bundle);
  const require = ((id: string) => {
    if (!/^\.\/[\w-]+\.cjs$/.test(id)) return nodeRequire(id);
    let sibling = siblings.get(id);
    if (!sibling) {
      sibling = loadBundle(join(dirname(bundle), id.slice(2)), { ...options, key: 'shared' });
      siblings.set(id, sibling);
    }
    return sibling.exports;
  }) as NodeJS.Require;
  return Object.assign(require, {
    resolve: nodeRequire.resolve,
    cache: nodeRequire.cache,
    extensions: nodeRequire.extensions,
    main: nodeRequire.main,
  });
}
