import { chmodSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cacheFolder, cacheKeyOf, loadBundle } from '../../../src/cli/code-cache.js';
import { COMMAND_NAMES } from '../../../src/cli/main.js';
import { tempDir } from '../../helpers/records.js';

let bundles = 0;

/**
 * A CommonJS bundle (one.cjs, which requires its sibling two.cjs), as `load` finds it. Each test
 * has bundles of its own text: V8 also keeps what it compiled in memory, by text and file name.
 */
function bundle(body = 'module.exports = { answer: () => 40 + require("./two.cjs") };') {
  return { one: `/* bundle ${++bundles} */ ${body}`, two: `/* ${bundles} */ module.exports = 2;` };
}

/**
 * Loads `files` with the cache in `cache`, as bin.js does for a command: from a folder of their
 * own each time, so that what V8 holds in memory from an earlier load does not count.
 */
function load(files: { one: string; two: string }, cache: string, key = 'sync') {
  const folder = tempDir('code-cache-');
  writeFileSync(join(folder, 'one.cjs'), files.one);
  writeFileSync(join(folder, 'two.cjs'), files.two);
  return loadBundle(join(folder, 'one.cjs'), { key, env: { NODE_COMPILE_CACHE: cache } });
}

const cacheFiles = (cache: string) => readdirSync(cache).sort();

describe('the code cache folder', () => {
  it("is NODE_COMPILE_CACHE, else the user's cache folder, and none when turned off", () => {
    const home = { HOME: '/home/op' };
    expect(cacheFolder({ ...home, NODE_COMPILE_CACHE: '/var/cache/transport-sync' })).toBe(
      '/var/cache/transport-sync',
    );
    expect(cacheFolder({ ...home, XDG_CACHE_HOME: '/xdg' })).toBe('/xdg/transport-sync');
    expect(cacheFolder(home)).toBe('/home/op/.cache/transport-sync');
    expect(cacheFolder({ ...home, NODE_DISABLE_COMPILE_CACHE: '1' })).toBeUndefined();
    // Relative paths would depend on the working directory: not used.
    expect(cacheFolder({ NODE_COMPILE_CACHE: 'cache', XDG_CACHE_HOME: 'xdg' })).toBeUndefined();
    expect(cacheFolder({})).toBeUndefined();
  });

  it('keeps one cache per command, and one for anything else', () => {
    for (const name of COMMAND_NAMES) expect(cacheKeyOf([name, '--help'])).toBe(name);
    expect(cacheKeyOf(['help'])).toBe('other');
    expect(cacheKeyOf(['--version'])).toBe('other');
    expect(cacheKeyOf(['../../etc'])).toBe('other');
    expect(cacheKeyOf([])).toBe('other');
  });
});

describe('a bundle loaded with the code cache', () => {
  it('is compiled and its cache written once, private, then run from the cache', () => {
    const files = bundle();
    const cache = join(tempDir('code-cache-home-'), 'cache');
    const first = load(files, cache);
    expect((first.exports as { answer: () => number }).answer()).toBe(42);
    expect(first.isCached).toBe(false);
    expect(statSync(cache).mode & 0o777).toBe(0o700);
    expect(cacheFiles(cache)).toEqual([]);
    first.writeCache();
    const written = cacheFiles(cache);
    // The bundle and its sibling, each under V8's version and its own digest.
    expect(written).toHaveLength(2);
    expect(written[0]).toMatch(/^transport-sync-one-.+-[0-9a-f]{16}-sync\.cache$/);
    expect(written[1]).toMatch(/^transport-sync-two-.+-[0-9a-f]{16}-shared\.cache$/);
    for (const name of written) expect(statSync(join(cache, name)).mode & 0o777).toBe(0o600);

    const second = load(files, cache);
    expect(second.isCached).toBe(true);
    expect((second.exports as { answer: () => number }).answer()).toBe(42);
    const writtenAt = statSync(join(cache, written[0]!)).mtimeMs;
    second.writeCache();
    expect(statSync(join(cache, written[0]!)).mtimeMs).toBe(writtenAt);
  });

  it('keeps a cache per command', () => {
    const files = bundle();
    const cache = join(tempDir('code-cache-home-'), 'cache');
    load(files, cache, 'sync').writeCache();
    const status = load(files, cache, 'status');
    expect(status.isCached).toBe(false);
    status.writeCache();
    expect(cacheFiles(cache).filter((name) => name.startsWith('transport-sync-one-'))).toEqual([
      expect.stringMatching(/-status\.cache$/),
      expect.stringMatching(/-sync\.cache$/),
    ]);
  });

  it("replaces a cache V8 refuses, and an earlier bundle's, not another Node's", () => {
    const files = bundle();
    const cache = join(tempDir('code-cache-home-'), 'cache');
    load(files, cache).writeCache();
    const [name] = cacheFiles(cache);
    // Another Node's cache of this very bundle, as a second Node on the machine would leave it.
    const otherNode = name!.replace(/^(transport-sync-one-)[^-]+(?:-node[^-]*)?/, '$1v0.0.0');
    expect(otherNode).not.toBe(name);
    writeFileSync(join(cache, otherNode), 'other code', { mode: 0o600 });

    writeFileSync(join(cache, name!), 'not code');
    const refused = load(files, cache);
    expect(refused.isCached).toBe(false);
    refused.writeCache();
    expect(load(files, cache).isCached).toBe(true);
    // Written again beside the other Node's, which stays: two Nodes do not delete each other's.
    expect(cacheFiles(cache)).toContain(otherNode);

    // A new version of the bundle: a cache of its own, and every earlier one goes.
    const changed = load({ ...files, one: 'module.exports = { answer: () => 43 };' }, cache);
    expect(changed.isCached).toBe(false);
    expect((changed.exports as { answer: () => number }).answer()).toBe(43);
    changed.writeCache();
    const ones = cacheFiles(cache).filter((file) => file.startsWith('transport-sync-one-'));
    expect(ones).toHaveLength(1);
    expect(ones[0]).not.toBe(name);
    expect(ones[0]).not.toBe(otherNode);
  });

  it('is neither read nor written where another user could write', () => {
    const files = bundle();
    const shared = join(tempDir('code-cache-home-'), 'cache');
    mkdirSync(shared, { mode: 0o700 });
    load(files, shared).writeCache();
    expect(load(files, shared).isCached).toBe(true);

    // A cache file others may write: not run, and not written over either.
    const [name] = cacheFiles(shared);
    chmodSync(join(shared, name!), 0o666);
    const unsafeFile = load(files, shared);
    expect(unsafeFile.isCached).toBe(false);

    // A folder others may write: nothing in it is used, and nothing is written to it.
    chmodSync(join(shared, name!), 0o600);
    chmodSync(shared, 0o777);
    const unsafeFolder = load(files, shared);
    expect(unsafeFolder.isCached).toBe(false);
    const before = cacheFiles(shared);
    unsafeFolder.writeCache();
    expect(cacheFiles(shared)).toEqual(before);
  });

  it('leaves nothing behind when the cache cannot be written', () => {
    const files = bundle();
    const cache = join(tempDir('code-cache-home-'), 'cache');
    load(files, cache).writeCache();
    const written = cacheFiles(cache);
    // Where the bundle's cache goes there is now a folder, which no file can replace.
    for (const name of written) {
      rmSync(join(cache, name));
      mkdirSync(join(cache, name, 'taken'), { recursive: true });
    }
    const blocked = load(files, cache);
    expect(blocked.isCached).toBe(false);
    expect(() => blocked.writeCache()).not.toThrow();
    expect(cacheFiles(cache)).toEqual(written);
  });

  it('runs without a cache when there is no folder for it, or it is turned off', () => {
    const files = bundle();
    const home = join(tempDir('code-cache-home-'), 'no-such-home');
    const folder = tempDir('code-cache-');
    writeFileSync(join(folder, 'one.cjs'), files.one);
    writeFileSync(join(folder, 'two.cjs'), files.two);
    const homeless = loadBundle(join(folder, 'one.cjs'), { key: 'sync', env: { HOME: home } });
    expect((homeless.exports as { answer: () => number }).answer()).toBe(42);
    homeless.writeCache();
    expect(() => statSync(home)).toThrow(/ENOENT/);

    const cache = join(tempDir('code-cache-home-'), 'cache');
    const off = loadBundle(join(folder, 'one.cjs'), {
      key: 'sync',
      env: { NODE_COMPILE_CACHE: cache, NODE_DISABLE_COMPILE_CACHE: '1' },
    });
    off.writeCache();
    expect(() => statSync(cache)).toThrow(/ENOENT/);
  });

  it('reads a bundle beyond ASCII as UTF-8', () => {
    const files = bundle('module.exports = { answer: () => "Seán".length };');
    const cache = join(tempDir('code-cache-home-'), 'cache');
    expect((load(files, cache).exports as { answer: () => number }).answer()).toBe(4);
  });
});
