import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The built CLI, as users run it (`npm test` builds first). */
export const BIN = fileURLToPath(new URL('../../dist/cli/bin.js', import.meta.url));

/** A finished CLI run. */
export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Environment without the developer's own TRANSPORT_* settings, so runs are reproducible. Nor the
 * machine's environment file (/etc/transport-sync/transport-sync.env): `TRANSPORT_ENV_FILE=`
 * turns it off unless `extra` names a file.
 */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith('TRANSPORT_') && key !== 'LOG_LEVEL' && key !== 'CREDENTIALS_DIRECTORY')
      env[key] = value;
  }
  return { ...env, TRANSPORT_ENV_FILE: '', ...extra };
}

/** `env` for a CLI process: with `TRANSPORT_ENV_FILE=` unless the test names a file itself. */
function withoutMachineEnvFile(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return env.TRANSPORT_ENV_FILE === undefined ? { ...env, TRANSPORT_ENV_FILE: '' } : env;
}

/** Runs the CLI to completion. */
export function runCli(args: string[], env: NodeJS.ProcessEnv, cwd?: string): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: withoutMachineEnvFile(env),
      cwd,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** A CLI process left running (simulator, daemon), with its output so far. */
export interface RunningCli {
  child: ChildProcessWithoutNullStreams;
  output: () => { stdout: string; stderr: string };
  /** Resolves with the first stdout match of `pattern`. */
  waitFor: (pattern: RegExp, timeoutMs?: number) => Promise<RegExpMatchArray>;
  /**
   * Resolves once `count` lines of `stream` (default stdout; one-shot commands log to stderr)
   * match `pattern`; rejects if the process ends first.
   */
  waitForLines: (pattern: RegExp, count: number, options?: LineWait) => Promise<void>;
  exited: Promise<CliResult>;
}

/**
 * Starts the CLI and leaves it running; with `fdLimit`, under that many open files (ulimit -n),
 * as systemd's default LimitNOFILE=1024 would run it.
 */
export function startCli(
  args: string[],
  env: NodeJS.ProcessEnv,
  cwd?: string,
  { fdLimit }: { fdLimit?: number } = {},
): RunningCli {
  const processEnv = withoutMachineEnvFile(env);
  const child =
    fdLimit === undefined
      ? spawn(process.execPath, [BIN, ...args], { env: processEnv, cwd })
      : spawn(
          'sh',
          ['-c', `ulimit -n ${fdLimit} && exec "$0" "$@"`, process.execPath, BIN, ...args],
          { env: processEnv, cwd },
        );
  let stdout = '';
  let stderr = '';
  // Waits still open: each is woken by every chunk, and leaves once settled (a settled wait left
  // in would match the whole output again at every chunk of a long-running daemon).
  const waiters = new Set<() => void>();
  let isClosed = false;
  child.stdout.on('data', (chunk) => {
    stdout += chunk;
    waiters.forEach((wake) => wake());
  });
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
    waiters.forEach((wake) => wake());
  });
  const exited = new Promise<CliResult>((resolve) =>
    child.on('close', (code, signal) => {
      isClosed = true;
      waiters.forEach((wake) => wake());
      resolve({ code, signal, stdout, stderr });
    }),
  );
  const waitFor = (pattern: RegExp, timeoutMs = 15_000) =>
    new Promise<RegExpMatchArray>((resolve, reject) => {
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`timed out waiting for ${pattern}; stdout: ${stdout}; stderr: ${stderr}`));
      }, timeoutMs);
      const check = () => {
        const match = stdout.match(pattern);
        if (match) {
          clearTimeout(timer);
          waiters.delete(check);
          resolve(match);
        } else if (child.exitCode !== null) {
          clearTimeout(timer);
          waiters.delete(check);
          reject(
            new Error(
              `exited ${child.exitCode} before ${pattern}; stdout: ${stdout}; stderr: ${stderr}`,
            ),
          );
        }
      };
      waiters.add(check);
      check();
    });
  const waitForLines = (
    pattern: RegExp,
    count: number,
    { stream = 'stdout', timeoutMs = 15_000 }: LineWait = {},
  ) =>
    new Promise<void>((resolve, reject) => {
      const text = () => (stream === 'stdout' ? stdout : stderr);
      let matched = 0;
      let scannedTo = 0;
      let isSettled = false;
      const settle = (error?: Error) => {
        isSettled = true;
        clearTimeout(timer);
        waiters.delete(check);
        if (error) reject(error);
        else resolve();
      };
      const timer = setTimeout(
        () =>
          settle(
            new Error(
              `timed out after ${matched} of ${count} lines like ${pattern}; stderr: ${stderr}`,
            ),
          ),
        timeoutMs,
      );
      // Only whole lines count, each once: a line split across chunks is read when it ends.
      const check = () => {
        if (isSettled) return;
        const end = text().lastIndexOf('\n') + 1;
        if (end > scannedTo) {
          const lines = text()
            .slice(scannedTo, end - 1)
            .split('\n');
          for (const line of lines) if (matched < count && line.search(pattern) >= 0) matched += 1;
          scannedTo = end;
        }
        if (matched >= count) settle();
        // Only once its output is closed: lines written just before the exit may still come.
        else if (isClosed) {
          settle(new Error(`ended after ${matched} of ${count} lines like ${pattern}`));
        }
      };
      waiters.add(check);
      check();
    });
  return { child, output: () => ({ stdout, stderr }), waitFor, waitForLines, exited };
}

/** Which output `waitForLines` reads, and for how long. */
export interface LineWait {
  stream?: 'stdout' | 'stderr';
  timeoutMs?: number;
}

/** Where to kill a process: after its `count`-th line like `pattern` on `stream`, then `thenMs`. */
export interface KillPoint {
  pattern: RegExp;
  count: number;
  thenMs: number;
  stream?: 'stdout' | 'stderr';
}

/**
 * SIGKILLs a running process at a kill point, an event of its own work rather than a time since
 * its start (which a busy machine spends loading node). Resolves with how it ended: killed, or
 * finished on its own before the point came.
 */
export async function killAt(process: RunningCli, point: KillPoint): Promise<CliResult> {
  try {
    await process.waitForLines(point.pattern, point.count, {
      timeoutMs: 60_000,
      ...(point.stream && { stream: point.stream }),
    });
  } catch (error) {
    // Ended before the point: the caller reads how from the result. Still running: a time-out.
    const { exitCode, signalCode } = process.child;
    if (exitCode !== null || signalCode !== null) return process.exited;
    process.child.kill('SIGKILL');
    throw error;
  }
  if (point.thenMs > 0) await new Promise((resolve) => setTimeout(resolve, point.thenMs));
  process.child.kill('SIGKILL');
  return process.exited;
}

/** Starts the simulator process on a free port and returns it with its URL. */
export async function startSimulatorProcess(
  args: string[] = [],
): Promise<RunningCli & { url: string }> {
  const sim = startCli(['simulator', '--port', '0', ...args], cleanEnv());
  const [, url] = await sim.waitFor(/listening on (http:\/\/\S+)/);
  return { ...sim, url: url! };
}

/** The environment that points the CLI at a simulator. */
export function serviceEnv(url: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return cleanEnv({
    TRANSPORT_AUTH_URL: url,
    TRANSPORT_HUB_URL: url,
    TRANSPORT_BASE_URL: url,
    TRANSPORT_CLIENT_ID: 'demo-client',
    TRANSPORT_CLIENT_SECRET: 'demo-secret',
    TRANSPORT_RATE_LIMIT_PER_SEC: '0',
    ...extra,
  });
}

/**
 * Processes a test file starts; `stopAll` (for afterEach) kills whatever is still running, so a
 * failed assertion never leaves a simulator or daemon behind.
 */
export function processTracker() {
  const running: RunningCli[] = [];
  return {
    track<T extends RunningCli>(process: T): T {
      running.push(process);
      return process;
    },
    async stopAll(): Promise<void> {
      for (const process of running.splice(0)) {
        if (process.child.exitCode === null) process.child.kill('SIGKILL');
        await process.exited;
      }
    },
  };
}

/** Where the kernel's own ports for outgoing connections start (Linux; 32768 elsewhere). */
function ephemeralLow(): number {
  try {
    const low = Number(
      readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').split(/\s+/)[0],
    );
    return Number.isInteger(low) && low > 11_000 ? low : 32_768;
  } catch {
    return 32_768;
  }
}

/** Listens on `port` (0: one the kernel picks) and closes again; the port, or null if taken. */
async function tryPort(port: number): Promise<number | null> {
  const { createServer } = await import('node:net');
  const server = createServer();
  const bound = await new Promise<boolean>((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => resolve(true));
  });
  if (!bound) return null;
  const { port: taken } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return taken;
}

/**
 * A loopback port nothing listens on right now, for a process under test to bind. Below the
 * kernel's ephemeral range: a port the kernel picks (listen on 0) comes from that range, where
 * any process's next outgoing connection may take it before the process under test binds it
 * (seen in CI, two suites side by side: the daemon's listen failed with EADDRINUSE).
 */
export async function freePort(): Promise<number> {
  const low = ephemeralLow();
  for (let attempt = 0; attempt < 20; attempt += 1) {
    const port = await tryPort(10_000 + Math.floor(Math.random() * (low - 10_000)));
    if (port !== null) return port;
  }
  return (await tryPort(0))!;
}
