import { execFile } from 'node:child_process';
import { describeError } from '../errors.js';
import type { Logger } from '../log.js';

/*
 * systemd readiness (sd_notify) from Node. The protocol is one datagram on the unix socket named
 * by NOTIFY_SOCKET, and Node core has no unix datagram sockets. The options were:
 *   - `sd-notify` (npm): a native addon linking libsystemd, built by node-gyp at install: every
 *     host that installs us would need libsystemd-dev and a compiler.
 *   - `unix-dgram` / `node-unix-socket`: native addons too (a node-gyp build, or pre-1.0
 *     prebuilt binaries), for one small datagram every few seconds.
 *   - the `systemd-notify` tool, which ships with systemd itself, so it is on every host that can
 *     run the unit. Since systemd 246 it waits until PID 1 has processed the message (a
 *     BARRIER=1 round trip; --no-block turns it off), which closes the old race where a
 *     short-lived sender exited before PID 1 could tell which unit it belonged to.
 * We use the tool: no native code to build, the same binary that reads the messages writes them.
 * Because the sender is a child process, the unit needs `NotifyAccess=all`. A fork/exec every
 * half watchdog period is negligible. Without NOTIFY_SOCKET (not under systemd, or Type=simple)
 * every call is a no-op.
 */

/** Tells systemd about readiness, liveness and shutdown; every method is a no-op off systemd. */
export interface SystemdNotifier {
  /** True when NOTIFY_SOCKET is set: systemd waits for our messages. */
  isEnabled: boolean;
  /** How often to send WATCHDOG=1: half of WATCHDOG_USEC; null when the watchdog is off. */
  watchdogIntervalMs: number | null;
  /** READY=1, with an optional STATUS= line shown by `systemctl status`. */
  ready(status?: string): Promise<void>;
  /** WATCHDOG=1: the service is making progress. */
  watchdog(): Promise<void>;
  /** STOPPING=1: a graceful stop has begun. */
  stopping(): Promise<void>;
  /** STATUS=: one line for `systemctl status`. */
  status(text: string): Promise<void>;
}

/** Creates the notifier from the environment systemd gives the service. */
export function createSystemdNotifier({
  env,
  log,
  command = 'systemd-notify',
  pid = process.pid,
  timeoutMs = 10_000,
}: {
  env: NodeJS.ProcessEnv;
  log: Logger;
  /** The notify tool; tests substitute a script. */
  command?: string;
  pid?: number;
  timeoutMs?: number;
}): SystemdNotifier {
  const isEnabled = Boolean(env.NOTIFY_SOCKET);
  const nlog = log.child({ area: 'systemd' });
  let isMissingLogged = false;
  let watchdogInFlight = false;

  const send = (args: string[]) =>
    new Promise<void>((resolve) => {
      if (!isEnabled) return resolve();
      execFile(command, args, { env, timeout: timeoutMs }, (error, _stdout, stderr) => {
        if (error) {
          const isMissing = (error as NodeJS.ErrnoException).code === 'ENOENT';
          if (!isMissing || !isMissingLogged) {
            nlog.error(
              { args, err: describeError(error), stderr: String(stderr).trim().slice(0, 200) },
              isMissing
                ? 'systemd-notify not found: install systemd, or use Type=simple in the unit'
                : 'systemd notification failed',
            );
          }
          isMissingLogged ||= isMissing;
        }
        // Never throws: a lost notification must not take the daemon down with it.
        resolve();
      });
    });

  return {
    isEnabled,
    watchdogIntervalMs: isEnabled ? watchdogIntervalFrom(env, pid) : null,
    ready: (status) => send(status ? ['--ready', `--status=${status}`] : ['--ready']),
    async watchdog() {
      // One ping at a time: if the last is still waiting on PID 1, another adds nothing.
      if (watchdogInFlight) return;
      watchdogInFlight = true;
      try {
        await send(['WATCHDOG=1']);
      } finally {
        watchdogInFlight = false;
      }
    },
    stopping: () => send(['STOPPING=1']),
    status: (text) => send([`--status=${text}`]),
  };
}

/**
 * Half the watchdog timeout (sd_watchdog_enabled's advice), or null when systemd set none, or set
 * it for another process (WATCHDOG_PID names the main process).
 */
export function watchdogIntervalFrom(env: NodeJS.ProcessEnv, pid: number): number | null {
  const usec = Number(env.WATCHDOG_USEC);
  if (!Number.isFinite(usec) || usec <= 0) return null;
  if (env.WATCHDOG_PID && Number(env.WATCHDOG_PID) !== pid) return null;
  return Math.max(1, Math.floor(usec / 1000 / 2));
}
