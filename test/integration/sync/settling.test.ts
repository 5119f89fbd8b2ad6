import { afterEach, describe, expect, it } from 'vitest';
import { queryOne } from '../../helpers/engine.js';
import { startMirror, type MirrorFixture } from '../../helpers/mirror.js';
import { expectMirrorEqualsTruth, truthInWindow } from '../../helpers/truth.js';

let mirror: MirrorFixture;
afterEach(async () => mirror?.close());

const detailCalls = (m: MirrorFixture) => m.sim.calls.filter((call) => call.endpoint === 'detail');

/*
 * The service writes last_updated to the second (the simulator does too, by default): a second
 * edit within the same second leaves it unchanged, so only settling finds an edit made after our
 * read in the second of the one we read.
 */
describe('settling: edits that share a second with the read', () => {
  it('reads again a request edited twice within one second, our read falling between the edits', async () => {
    // Moves while paging are another test's subject: here they would only add noise.
    mirror = await startMirror({ requests: 150, roughness: { pagingChurnRate: 0 } });
    await mirror.cycle();
    const id = truthInWindow(mirror).find(
      (t) => t.isVisible && t.listState === 'accepted',
    )!.requestId;
    mirror.clock.advance(60_000);
    mirror.sim.world.editRequest(id, 'patient');
    await mirror.cycle(); // reads the first edit, in the second it was made
    const lastUpdated = mirror.sim.world.get(id)!.lastUpdatedMs;
    mirror.sim.world.editRequest(id, 'location'); // same second: last_updated stays
    expect(mirror.sim.world.get(id)!.lastUpdatedMs).toBe(lastUpdated);

    mirror.clock.advance(60_000);
    mirror.sim.resetCalls();
    await mirror.cycle();
    expect(detailCalls(mirror).map((call) => call.requestId)).toContain(id);
    await expectMirrorEqualsTruth(mirror);
    const row = (await queryOne<{ read_at: string; last_updated_timestamp_utc: string }>(
      mirror.db,
      'SELECT read_at, last_updated_timestamp_utc FROM requests WHERE request_id = @id',
      { id },
    ))!;
    expect(Date.parse(row.read_at)).toBeGreaterThanOrEqual(
      Date.parse(row.last_updated_timestamp_utc) + 1000,
    );

    // Settled now: no more reads of it.
    mirror.clock.advance(60_000);
    mirror.sim.resetCalls();
    await mirror.cycle();
    expect(detailCalls(mirror)).toHaveLength(0);
  });

  it('after 15 rounds of random edits, same-second double edits among them, equals the truth; then an idle cycle reads no detail', async () => {
    mirror = await startMirror({ requests: 200, seed: 23, roughness: { pagingChurnRate: 0 } });
    await mirror.cycle();
    for (let round = 0; round < 15; round += 1) {
      // Sub-second steps: some rounds stay within the second of the last one.
      mirror.clock.advance(round % 3 === 0 ? 400 : 1_300);
      mirror.sim.mutate(20);
      const result = await mirror.cycle();
      expect(result.status, result.error).toBe('ok');
      // Edits right after the read, in its second: the list will show the same last_updated.
      for (const t of truthInWindow(mirror)
        .filter((t) => t.isVisible)
        .slice(round * 3, round * 3 + 3))
        if (t.listState === 'accepted') mirror.sim.world.editRequest(t.requestId, 'patient');
      mirror.sim.mutate(5);
    }
    mirror.clock.advance(60_000);
    const last = await mirror.cycle();
    expect(last.status, last.error).toBe('ok');
    await expectMirrorEqualsTruth(mirror);

    mirror.clock.advance(60_000);
    mirror.sim.resetCalls();
    const idle = await mirror.cycle();
    expect(detailCalls(mirror)).toHaveLength(0);
    expect(idle.counts.detailCalls).toBe(0);
  }, 90_000);
});
