/**
 * A memory cgroup for one child process, as systemd's `MemoryMax=` gives the daemon's units. Node
 * sizes V8's heap from the cgroup's limit (`process.constrainedMemory()`), so the peak RSS of a
 * process under the units' limit differs from one started with all of the machine's memory: the
 * bench measures both. Creating a cgroup needs write access to the cgroup tree (root, or a
 * delegated subtree); where that fails, the reason is returned and the figure is reported as not
 * measured with it.
 */
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** A cgroup with a memory limit that a child can be started in. */
export interface MemoryCgroup {
  /** Writing a pid here moves that process into the cgroup. */
  procsFile: string;
  /** "v2" or "v1", for the note beside the figure. */
  version: 'v1' | 'v2';
  remove(): void;
}

const ROOT = '/sys/fs/cgroup';

/** This process's cgroup path in the hierarchy whose /proc/self/cgroup line matches `pick`. */
function ownPath(pick: (controllers: string, hierarchy: string) => boolean): string | undefined {
  for (const line of readFileSync('/proc/self/cgroup', 'utf8').split('\n')) {
    const [hierarchy, controllers, path] = line.split(':');
    if (path !== undefined && pick(controllers!, hierarchy!)) return path;
  }
  return undefined;
}

function tryCreate(
  parent: string,
  limitFile: string,
  limitBytes: number,
  version: 'v1' | 'v2',
): MemoryCgroup {
  const dir = join(parent, `transport-sync-bench-${process.pid}-${Date.now()}`);
  mkdirSync(dir);
  try {
    writeFileSync(join(dir, limitFile), String(limitBytes));
  } catch (error) {
    rmdirSync(dir);
    throw error;
  }
  return {
    procsFile: join(dir, 'cgroup.procs'),
    version,
    // A cgroup is removed once its processes have exited; the child has by the time this runs.
    remove: () => rmdirSync(dir),
  };
}

/** A new memory cgroup limited to `limitBytes`, or why none can be made here. */
export function createMemoryCgroup(limitBytes: number): MemoryCgroup | { reason: string } {
  const reasons: string[] = [];
  const v2Controllers = join(ROOT, 'cgroup.controllers');
  if (existsSync(v2Controllers) && readFileSync(v2Controllers, 'utf8').includes('memory')) {
    const path = ownPath((controllers, hierarchy) => hierarchy === '0' && controllers === '');
    try {
      return tryCreate(join(ROOT, path ?? '/'), 'memory.max', limitBytes, 'v2');
    } catch (error) {
      reasons.push(`cgroup v2: ${(error as Error).message}`);
    }
  }
  const v1Memory = join(ROOT, 'memory');
  if (existsSync(join(v1Memory, 'memory.limit_in_bytes'))) {
    const path = ownPath((controllers) => controllers.split(',').includes('memory'));
    try {
      return tryCreate(join(v1Memory, path ?? '/'), 'memory.limit_in_bytes', limitBytes, 'v1');
    } catch (error) {
      reasons.push(`cgroup v1: ${(error as Error).message}`);
    }
  }
  if (reasons.length === 0) reasons.push('no memory cgroup controller is mounted');
  return { reason: `no memory cgroup could be created (${reasons.join('; ')})` };
}
