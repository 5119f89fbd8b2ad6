import { hostname } from 'node:os';
import type { Clock } from '../clock.js';
import type { Store } from '../db/store.js';
import { describeError, TransportError } from '../errors.js';
import type { Logger } from '../log.js';
import { isProcessAlive } from '../process.js';
import { isoFromMs } from '../time.js';

/** How often the running daemon renews its lease. */
export const LEASE_RENEW_MS = 15_000;
/** A lease not renewed for this long belongs to a daemon that died (kill -9, power loss). */
export const LEASE_EXPIRY_MS = 4 * LEASE_RENEW_MS;

const KEY = 'daemon_owner';

interface Owner {
  pid: number;
  host: string;
  startedAt: string;
}

/**
 * One daemon per database. Two would both be safe (every write is guarded) but would poll the
 * service twice and race on the outbox, so the second refuses to start. The lease is a row in
 * sync_state renewed every 15 s; one not renewed for a minute is taken over, so a killed daemon
 * never blocks its successor, and one whose process is gone from this host is taken over at once
 * (a crashed daemon restarted by systemd must not wait a minute). One-shot commands (sync,
 * backfill) do not take it.
 */
export async function acquireOwnerLease({
  store,
  clock,
  log,
  pid = process.pid,
  onLost = () => undefined,
}: {
  store: Store;
  clock: Clock;
  log?: Logger;
  pid?: number;
  /** Called when another daemon took the lease over (this one stalled past the expiry). */
  onLost?: () => void;
}) {
  const me: Owner = { pid, host: hostname(), startedAt: isoFromMs(clock.now()) };
  const value = JSON.stringify(me);

  await store.transaction(async (tx) => {
    const row = await tx.state.entry(KEY);
    if (row && row.value !== value) {
      const holder = JSON.parse(row.value) as Owner;
      const ageMs = clock.now() - Date.parse(row.updated_at);
      const isHolderGone = holder.host === me.host && !isProcessAlive(holder.pid);
      if (ageMs < LEASE_EXPIRY_MS && !isHolderGone) {
        throw new TransportError({
          code: 'daemon.already_running',
          message: `another transport-sync daemon (pid ${holder.pid} on ${holder.host}, since ${holder.startedAt}) is running on this database`,
          hint: `Stop it first (systemctl stop transport-sync). If it was killed, its claim lapses ${Math.ceil(LEASE_EXPIRY_MS / 1000)} s after its last renewal.`,
        });
      }
    }
    await tx.state.set(KEY, value, isoFromMs(clock.now()));
  });

  // Renew only while the lease is still ours: a daemon that stalled past the expiry and was
  // replaced must stop, not fight its successor. A renewal that fails (the database is busy or
  // full) is tried again at the next tick; the lease lapses only after a minute of them.
  const renew = async () => {
    try {
      const isOurs = await store.transaction((tx) =>
        tx.state.touchIf(KEY, value, isoFromMs(clock.now())),
      );
      if (!isOurs) {
        clearInterval(timer);
        onLost();
      }
    } catch (error) {
      log?.warn({ err: describeError(error) }, 'owner lease not renewed; trying again');
    }
  };
  const timer = setInterval(() => void renew(), LEASE_RENEW_MS);
  timer.unref();
  return {
    renew,
    /** Gives the database back at shutdown so a successor starts at once. */
    async release(): Promise<void> {
      clearInterval(timer);
      await store.transaction((tx) => tx.state.deleteIf(KEY, value));
    },
  };
}
