import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
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

/** Environment without the developer's own TRANSPORT_* settings, so runs are reproducible. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith('TRANSPORT_') && key !== 'LOG_LEVEL' && key !== 'CREDENTIALS_DIRECTORY')
      env[key] = value;
  }
  return { ...env, ...extra };
}

/** Runs the CLI to completion. */
export function runCli(args: string[], env: NodeJS.ProcessEnv, cwd?: string): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env, cwd });
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
  const child =
    fdLimit === undefined
      ? spawn(process.execPath, [BIN, ...args], { env, cwd })
      : spawn(
          'sh',
          ['-c', `ulimit -n ${fdLimit} && exec "$0" "$@"`, process.execPath, BIN, ...args],
          { env, cwd },
        );
  let stdout = '';
  let stderr = '';
  const waiters: (() => void)[] = [];
  child.stdout.on('data', (chunk) => {
    stdout += chunk;
    waiters.forEach((wake) => wake());
  });
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<CliResult>((resolve) =>
    child.on('close', (code, signal) => {
      waiters.forEach((wake) => wake());
      resolve({ code, signal, stdout, stderr });
    }),
  );
  const waitFor = (pattern: RegExp, timeoutMs = 15_000) =>
    new Promise<RegExpMatchArray>((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            new Error(`timed out waiting for ${pattern}; stdout: ${stdout}; stderr: ${stderr}`),
          ),
        timeoutMs,
      );
      const check = () => {
        const match = stdout.match(pattern);
        if (match) {
          clearTimeout(timer);
          resolve(match);
        } else if (child.exitCode !== null) {
          clearTimeout(timer);
          reject(
            new Error(
              `exited ${child.exitCode} before ${pattern}; stdout: ${stdout}; stderr: ${stderr}`,
            ),
          );
        }
      };
      waiters.push(check);
      check();
    });
  return { child, output: () => ({ stdout, stderr }), waitFor, exited };
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

/** A loopback port nothing listens on right now. */
export async function freePort(): Promise<number> {
  const { createServer } = await import('node:net');
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}
