import { afterEach, describe, expect, it } from 'vitest';
import { DAEMON_SETTINGS_KEY, type IntakeSettings } from '../../../src/ops/intake-settings.js';
import { POLLING_RETIRED_KEY } from '../../../src/ops/mode.js';
import { readStatus, type StatusInput } from '../../../src/ops/status.js';
import { isoFromMs } from '../../../src/time.js';
import { startMirror, type MirrorFixture } from '../../helpers/mirror.js';

let mirror: MirrorFixture;
afterEach(async () => mirror?.close());

const HOUR = 3_600_000;

/** A shell's own settings: polling every minute, no receiver. */
function shell(): StatusInput {
  return {
    db: mirror.db,
    nowMs: mirror.clock.now(),
    pollCron: '0 * * * * *',
    staleAfterCycles: 3,
    isPollingOn: true,
    pollMode: 'auto',
    hasWebhooks: false,
  };
}

const DAEMON: IntakeSettings = {
  poll_mode: 'auto',
  poll_cron: '*/15 * * * * *',
  stale_after_cycles: 4,
  has_webhook_receiver: true,
  webhook_silence_minutes: null,
  webhook_silence_hours: [0, 24],
  feed_sinks: [],
};

async function record(settings: IntakeSettings, atMs: number): Promise<void> {
  await mirror.store.transaction((tx) =>
    tx.state.set(DAEMON_SETTINGS_KEY, JSON.stringify(settings), isoFromMs(atMs)),
  );
}

async function retirePolling(): Promise<void> {
  const at = isoFromMs(mirror.clock.now());
  await mirror.store.transaction((tx) => tx.state.set(POLLING_RETIRED_KEY, at, at));
}

describe('status judges intake by the settings the daemon recorded', () => {
  it("uses the caller's settings until a daemon has recorded its own", async () => {
    mirror = await startMirror({ requests: 0 });
    const report = await readStatus(shell());
    expect(report).toMatchObject({
      settings_source: 'caller',
      daemon_settings: null,
      mode: 'polling-only',
      poll_interval_seconds: 60,
    });
  });

  it("takes the daemon's schedule and receiver over the shell's", async () => {
    mirror = await startMirror({ requests: 0 });
    await record(DAEMON, mirror.clock.now());
    const report = await readStatus(shell());
    expect(report).toMatchObject({
      settings_source: 'daemon',
      daemon_settings: { ...DAEMON, recorded_at: isoFromMs(mirror.clock.now()) },
      mode: 'polling+webhooks',
      poll_interval_seconds: 15,
      stale_after_seconds: 60,
    });
  });

  it('finds no intake with polling retired and no receiver, and says what to set', async () => {
    mirror = await startMirror({ requests: 0 });
    await record({ ...DAEMON, has_webhook_receiver: false }, mirror.clock.now());
    await retirePolling();
    const report = await readStatus(shell());
    expect(report).toMatchObject({ mode: 'none', has_intake: false, is_stale: false });
    expect(report.problems).toHaveLength(1);
    expect(report.problems[0]).toMatch(/nothing can bring data in.*TRANSPORT_WEBHOOK_LISTEN/);
  });

  it('watches silence on webhooks alone by default, counted from the daemon start', async () => {
    mirror = await startMirror({ requests: 0 });
    await retirePolling();
    const now = mirror.clock.now();
    await record(DAEMON, now - 2 * HOUR);
    const young = await readStatus(shell());
    expect(young.webhook_silence).toMatchObject({ silence_minutes: 180, is_silent: false });
    expect(young.problems).toEqual([]);

    await record(DAEMON, now - 4 * HOUR);
    const old = await readStatus(shell());
    expect(old.webhook_silence).toMatchObject({ silence_minutes: 180, is_silent: true });
    expect(old.problems).toEqual([expect.stringMatching(/no webhook delivery for 180 min/)]);

    // Set explicitly, the watch is the operator's: 0 turns it off.
    await record({ ...DAEMON, webhook_silence_minutes: 0 }, now - 4 * HOUR);
    expect((await readStatus(shell())).webhook_silence.is_silent).toBe(false);
  });

  it('leaves silence unwatched by default while polling runs', async () => {
    mirror = await startMirror({ requests: 0 });
    await record(DAEMON, mirror.clock.now() - 24 * HOUR);
    const report = await readStatus(shell());
    expect(report.webhook_silence).toMatchObject({ silence_minutes: 0, is_silent: false });
  });
});
