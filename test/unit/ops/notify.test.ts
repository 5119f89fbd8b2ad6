import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { createLogger, silentLogger } from '../../../src/log.js';
import {
  createSystemdNotifier,
  watchdogIntervalFrom,
  type SystemdNotifier,
} from '../../../src/ops/notify.js';
import { startWatchdog } from '../../../src/ops/watchdog.js';
import { tempDir } from '../../helpers/records.js';

/** A stand-in for systemd-notify that appends its arguments to a file. */
function fakeNotify() {
  const dir = tempDir();
  const command = join(dir, 'systemd-notify');
  const log = join(dir, 'calls.txt');
  writeFileSync(command, `#!/bin/sh\nprintf '%s\\n' "$*" >> "${log}"\n`);
  chmodSync(command, 0o755);
  const calls = () =>
    existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean) : [];
  return { command, calls };
}

describe('the systemd notifier', () => {
  it('does nothing without NOTIFY_SOCKET (not under systemd, or Type=simple)', async () => {
    const fake = fakeNotify();
    const notifier = createSystemdNotifier({ env: {}, log: silentLogger(), command: fake.command });
    expect(notifier.isEnabled).toBe(false);
    expect(notifier.watchdogIntervalMs).toBeNull();
    await notifier.ready();
    await notifier.watchdog();
    await notifier.stopping();
    expect(fake.calls()).toEqual([]);
  });

  it('sends READY=1 with a status, WATCHDOG=1 and STOPPING=1 through the tool', async () => {
    const fake = fakeNotify();
    const notifier = createSystemdNotifier({
      env: { NOTIFY_SOCKET: '/run/systemd/notify', WATCHDOG_USEC: '30000000' },
      log: silentLogger(),
      command: fake.command,
    });
    expect(notifier.watchdogIntervalMs).toBe(15_000);
    await notifier.ready('polling every 60 s');
    await notifier.watchdog();
    await notifier.stopping();
    expect(fake.calls()).toEqual([
      '--ready --status=polling every 60 s',
      'WATCHDOG=1',
      'STOPPING=1',
    ]);
  });

  it('never throws when the tool is missing', async () => {
    const notifier = createSystemdNotifier({
      env: { NOTIFY_SOCKET: '/run/systemd/notify' },
      log: silentLogger(),
      command: join(tempDir(), 'no-such-tool'),
    });
    await expect(notifier.ready()).resolves.toBeUndefined();
  });

  it('takes the watchdog interval only when it is meant for this process', () => {
    expect(watchdogIntervalFrom({ WATCHDOG_USEC: '10000000' }, 42)).toBe(5000);
    expect(watchdogIntervalFrom({ WATCHDOG_USEC: '10000000', WATCHDOG_PID: '42' }, 42)).toBe(5000);
    expect(watchdogIntervalFrom({ WATCHDOG_USEC: '10000000', WATCHDOG_PID: '7' }, 42)).toBeNull();
    expect(watchdogIntervalFrom({}, 42)).toBeNull();
  });

  it('pings the watchdog only while the scheduler makes progress', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'setInterval', 'clearInterval'] });
    onTestFinished(() => {
      vi.useRealTimers();
    });
    const startedAt = Date.now();
    const lines: string[] = [];
    const log = createLogger({
      level: 'trace',
      destination: { write: (line: string) => lines.push(line) },
    });
    // What the tool sends is tested above; here only when the loop pings matters, so pings are
    // recorded as they are made, on simulated time.
    const pings: number[] = [];
    const notifier: SystemdNotifier = {
      ...createSystemdNotifier({
        env: { NOTIFY_SOCKET: '/run/systemd/notify', WATCHDOG_USEC: '100000' },
        log: silentLogger(),
      }),
      watchdog: async () => {
        pings.push(Date.now() - startedAt);
      },
    };
    expect(notifier.watchdogIntervalMs).toBe(50);
    let isProgressing = true;
    const stop = startWatchdog({ notifier, isProgressing: () => isProgressing, log });
    await vi.advanceTimersByTimeAsync(100);
    expect(pings).toEqual([50, 100]);

    isProgressing = false;
    await vi.advanceTimersByTimeAsync(300);
    expect(pings).toEqual([50, 100]);
    // Withheld at each of those six ticks, and said once: the line is rate-limited.
    const withheld = lines.filter((line) =>
      line.includes('scheduler made no progress; watchdog ping withheld'),
    );
    expect(withheld).toHaveLength(1);

    isProgressing = true;
    await vi.advanceTimersByTimeAsync(50);
    expect(pings).toEqual([50, 100, 450]);
    stop();
    await vi.advanceTimersByTimeAsync(500);
    expect(pings).toEqual([50, 100, 450]);
  });
});

const hasTools =
  spawnSync('systemd-notify', ['--help']).status === 0 &&
  spawnSync('python3', ['--version']).status === 0;

describe.skipIf(!hasTools)('the real systemd-notify against a notify socket', () => {
  it('delivers READY=1 and WATCHDOG=1 as datagrams on NOTIFY_SOCKET', async () => {
    const socket = join(tempDir(), 'notify.sock');
    // A minimal stand-in for PID 1's notify socket; it closes the barrier fd systemd-notify
    // sends, as PID 1 does, so the tool's wait for processing ends at once.
    const receiver = spawn('python3', [
      '-c',
      `
import socket, sys, os, array
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
print('bound', flush=True)
s.settimeout(10)
while True:
    data, anc, _, _ = s.recvmsg(4096, 1024)
    for level, kind, raw in anc:
        if kind == socket.SCM_RIGHTS:
            fds = array.array('i'); fds.frombytes(raw[: len(raw) - len(raw) % fds.itemsize])
            for fd in fds: os.close(fd)
    if data != b'BARRIER=1': print(data.decode().replace('\\n', '|'), flush=True)
    if b'STOPPING=1' in data: break
`,
      socket,
    ]);
    // Listened for from the start: the receiver exits on STOPPING=1 and may close before the
    // tool that sent it has been reaped, so a listener attached after stopping() can miss it.
    const closed = new Promise((resolve) => receiver.on('close', resolve));
    let output = '';
    receiver.stdout.on('data', (chunk) => (output += chunk));
    await waitUntil(() => output.includes('bound'));
    const notifier = createSystemdNotifier({ env: { NOTIFY_SOCKET: socket }, log: silentLogger() });
    await notifier.ready('up');
    await notifier.watchdog();
    await notifier.stopping();
    await closed;
    expect(output.split('\n').filter(Boolean).slice(1)).toEqual([
      'READY=1|STATUS=up',
      'WATCHDOG=1',
      'STOPPING=1',
    ]);
  });
});

async function waitUntil(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
