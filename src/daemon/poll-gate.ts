import type { Clock } from '../clock.js';
import type { Store } from '../db/store.js';
import type { Logger } from '../log.js';
import { NO_INTAKE_HINT, POLLING_RETIRED_KEY } from '../ops/mode.js';
import { isoFromMs } from '../time.js';

/** How often a daemon that found the polling API retired asks again whether it answers. */
export const RETIRED_PROBE_INTERVAL_MS = 24 * 3_600_000;

/**
 * TRANSPORT_POLL=auto: polls while the v1.0 list endpoints answer. When a cycle finds them gone
 * as a whole (404 or 410), the daemon runs on webhooks alone: it says so once, records when in
 * sync_state (status and /metrics read it), and lets one cycle through a day to see whether they
 * answer again. With on or off the gate never changes anything.
 */
export async function createPollGate({
  mode,
  hasWebhooks = true,
  store,
  clock,
  log,
}: {
  mode: 'auto' | 'on' | 'off';
  /** A webhook receiver runs: without one, a retired polling API leaves nothing to receive. */
  hasWebhooks?: boolean;
  store: Store;
  clock: Clock;
  log: Logger;
}) {
  let retiredAt =
    mode === 'auto'
      ? ((await store.read((tx) => tx.state.get(POLLING_RETIRED_KEY))) ?? null)
      : null;
  // A restart probes at once: the service may have answered again meanwhile.
  let lastProbeMs = Number.NEGATIVE_INFINITY;

  return {
    /** Whether the scheduled cycle should run now. */
    shouldPoll(): boolean {
      if (retiredAt === null) return true;
      if (clock.now() - lastProbeMs < RETIRED_PROBE_INTERVAL_MS) return false;
      lastProbeMs = clock.now();
      return true;
    },
    /** Learns from a finished cycle whether the polling API is retired, or back. */
    async observe(result: { isPollingRetired: boolean; isListComplete: boolean }): Promise<void> {
      if (mode !== 'auto') return;
      if (retiredAt === null && result.isPollingRetired) {
        const at = store.now();
        retiredAt = at;
        lastProbeMs = clock.now();
        await store.transaction((tx) => tx.state.set(POLLING_RETIRED_KEY, at, at));
        const nextProbeAt = isoFromMs(clock.now() + RETIRED_PROBE_INTERVAL_MS);
        if (hasWebhooks)
          log.warn(
            { mode: 'webhooks-only', nextProbeAt },
            "the service's v1.0 list endpoints are gone (404/410): running on webhooks alone, probing again daily",
          );
        else
          log.error(
            { mode: 'none', nextProbeAt, hint: NO_INTAKE_HINT },
            "the service's v1.0 list endpoints are gone (404/410) and no webhook receiver is configured: nothing can bring data in",
          );
      } else if (retiredAt !== null && result.isListComplete) {
        retiredAt = null;
        await store.transaction((tx) => tx.state.delete(POLLING_RETIRED_KEY));
        log.info({ mode: 'polling' }, "the service's v1.0 list endpoints answer again: polling");
      }
    },
    /** True while polling runs (not off, not retired). */
    isPolling: (): boolean => mode !== 'off' && retiredAt === null,
  };
}

/** The gate's interface. */
export type PollGate = Awaited<ReturnType<typeof createPollGate>>;
