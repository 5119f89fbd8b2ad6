import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildReport } from '../child/rss-report.js';
import { repoRoot } from './paths.js';

/** The built CLI (npm run build). */
export function cliPath(): string {
  return join(repoRoot(), 'dist', 'cli', 'bin.js');
}

/** The environment for a child: none of the developer's or the machine's TRANSPORT_* settings. */
export function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith('TRANSPORT_') && key !== 'LOG_LEVEL' && key !== 'NODE_OPTIONS')
      env[key] = value;
  }
  // Nor the machine's environment file (/etc/transport-sync/transport-sync.env).
  return { ...env, TRANSPORT_ENV_FILE: '', ...extra };
}

/** The CLI simulator in its own process. */
export interface SimProcess {
  url: string;
  pid: number;
  /** CPU time (user + system) the process has used so far, in ms. */
  cpuMs(): number;
  /** GET or POST a control endpoint (`/_sim/...`). */
  control(method: 'GET' | 'POST', path: string): Promise<unknown>;
  stop(): Promise<void>;
}

/** Starts `transport-sync simulator` with `args` and waits for its URL. */
export async function startSimProcess(args: string[]): Promise<SimProcess> {
  const child = spawn(process.execPath, [cliPath(), 'simulator', '--port', '0', ...args], {
    env: childEnv({ LOG_LEVEL: 'warn' }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`simulator did not start: ${output}`)), 60_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('exit', (code) => reject(new Error(`simulator exited ${code}: ${output}`)));
  });
  const pid = child.pid!;
  return {
    url,
    pid,
    cpuMs: () => processCpuMs(pid),
    async control(method, path) {
      // A pooled connection the simulator closed while idle fails once: ask again on a new one.
      for (let attempt = 1; ; attempt += 1) {
        try {
          const response = await fetch(`${url}/_sim${path}`, { method });
          if (!response.ok) throw new Error(`simulator control ${path}: ${response.status}`);
          return await response.json();
        } catch (error) {
          if (attempt >= 3) throw error;
        }
      }
    },
    stop: () => stopChild(child),
  };
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

/** CPU time of a process from /proc (Linux), in ms; NaN elsewhere. */
export function processCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which is in parentheses and may contain spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15)
    return (ticks * 1000) / 100; // USER_HZ is 100 on Linux
  } catch {
    return Number.NaN;
  }
}

/** A finished child run with its memory report. */
export interface ChildRun {
  code: number | null;
  stdout: string;
  stderr: string;
  wallMs: number;
  report: ChildReport;
}

/**
 * Runs the CLI in a child process with the memory reporter preloaded; `nodeArgs` go before the
 * script (V8 flags for the memory experiments).
 */
export function runCliChild(
  args: string[],
  env: Record<string, string>,
  nodeArgs: string[] = [],
  cgroupProcsFile?: string,
): Promise<ChildRun> {
  return runNodeChild(cliPath(), args, env, nodeArgs, cgroupProcsFile);
}

/**
 * Runs a Node script in a child process with the memory reporter preloaded; with
 * `cgroupProcsFile`, the child enters that cgroup before Node starts (V8 sizes its heap at start).
 */
export async function runNodeChild(
  script: string,
  args: string[],
  env: Record<string, string>,
  nodeArgs: string[] = [],
  cgroupProcsFile?: string,
): Promise<ChildRun> {
  const dir = mkdtempSync(join(tmpdir(), 'transport-sync-bench-child-'));
  const reportFile = join(dir, 'report.json');
  const preload = new URL('../child/rss-report.js', import.meta.url).href;
  try {
    const started = performance.now();
    const command = [process.execPath, ...nodeArgs, '--import', preload, script, ...args];
    const [file, ...argv] = cgroupProcsFile
      ? ['/bin/sh', '-c', 'echo $$ > "$1" && shift && exec "$@"', 'sh', cgroupProcsFile, ...command]
      : command;
    const child = spawn(file!, argv, {
      env: childEnv({ ...env, BENCH_REPORT_FILE: reportFile }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    const wallMs = performance.now() - started;
    let report: ChildReport;
    try {
      report = JSON.parse(readFileSync(reportFile, 'utf8')) as ChildReport;
    } catch {
      throw new Error(`${script} ${args.join(' ')} exited ${code} without a report: ${stderr}`);
    }
    return { code, stdout, stderr, wallMs, report };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
