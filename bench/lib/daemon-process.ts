import { spawn } from 'node:child_process';
import { childEnv, cliPath } from './processes.js';

/** The end of the daemon's output kept for error messages: its last lines say what went wrong. */
const TAIL_CHARS = 8_000;

/** `transport-sync run` as a child process of the bench. */
export interface DaemonProcess {
  pid: number;
  /**
   * Resolves with the first `count` lines of its log (stdout) that match `pattern`, counted from
   * its start, once there are that many.
   */
  waitForLines(pattern: RegExp, count: number, timeoutMs: number): Promise<string[]>;
  /**
   * Rejects if the process ends: race it against waits that need the daemon (its output says
   * why: `tail`).
   */
  failed: Promise<never>;
  /** The last lines of its output, for error messages. */
  tail(): string;
  /** SIGTERM, then SIGKILL if it has not stopped within 15 s; resolves when it has ended. */
  stop(): Promise<void>;
}

/**
 * Starts `transport-sync run` with `env` (over none of the developer's TRANSPORT_* settings).
 * Its log is read line by line as it comes, so that a pipe never fills and stalls the daemon.
 */
export function startDaemon(env: Record<string, string>): DaemonProcess {
  const child = spawn(process.execPath, [cliPath(), 'run'], {
    env: childEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let tail = '';
  const keep = (text: string) => {
    tail = (tail + text).slice(-TAIL_CHARS);
  };
  // Each wait counts the lines that match it; a wait started late still counts earlier lines.
  const lines: string[] = [];
  const waits = new Set<() => void>();
  let partial = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    keep(chunk);
    const parts = (partial + chunk).split('\n');
    partial = parts.pop()!;
    // Only the lines a wait may still look for are kept: the startup lines, not the flood of
    // "webhook event applied" once the run is on.
    for (const line of parts) if (!line.includes('"webhook event applied"')) lines.push(line);
    for (const wake of waits) wake();
  });
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', keep);
  let isStopping = false;
  const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('close', (code, signal) => resolve({ code, signal })),
  );
  const failed = ended.then(({ code, signal }) => {
    throw new Error(
      `the daemon ${isStopping ? 'was stopped' : `ended (${signal ?? `exit ${code}`})`} before the bench was done`,
    );
  });
  // Nobody may be racing against it at the moment it ends.
  failed.catch(() => undefined);
  return {
    pid: child.pid!,
    failed,
    tail: () => tail,
    waitForLines(pattern, count, timeoutMs) {
      return new Promise<string[]>((resolve, reject) => {
        const check = () => {
          const matched = lines.filter((line) => pattern.test(line));
          if (matched.length < count) return;
          clearTimeout(timer);
          waits.delete(check);
          resolve(matched.slice(0, count));
        };
        const timer = setTimeout(() => {
          waits.delete(check);
          reject(
            new Error(
              `no ${count} log lines like ${pattern} within ${timeoutMs} ms; the daemon's last output:\n${tail}`,
            ),
          );
        }, timeoutMs);
        waits.add(check);
        failed.catch((error: unknown) => {
          clearTimeout(timer);
          waits.delete(check);
          reject(new Error(`${(error as Error).message}; its last output:\n${tail}`));
        });
        check();
      });
    },
    async stop() {
      isStopping = true;
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await ended;
      clearTimeout(killer);
    },
  };
}
