import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/log.js';
import { createHandoff } from '../../../src/webhooks/handoff.js';
import { createReceiver } from '../../../src/webhooks/receiver.js';
import { deliver, v2Event } from '../../helpers/webhooks.js';

describe('the receiver and the applier’s handoff', () => {
  it('hands each new delivery to the applier before its commit, and takes it back when the commit fails', async () => {
    const handoff = createHandoff(1_048_576);
    const heldAtCommit: string[][] = [];
    let isCommitFailing = true;
    const server = createReceiver({
      path: '/webhooks/',
      maxBodyBytes: 1_048_576,
      verify: null,
      signatureHeader: 'X-VectorCare-Signature',
      // A transaction whose rows are all new, and whose commit fails the first time.
      storeEvents: async (rows, beforeCommit) => {
        beforeCommit(rows.map(() => true));
        heldAtCommit.push(rows.map((r) => r.event_id).filter((id) => handoff.has(id)));
        if (isCommitFailing) throw new Error('disk full at COMMIT');
        return rows.map(() => true);
      },
      now: () => '2026-11-21T10:00:00.000Z',
      log: silentLogger(),
      handoff,
      onStored: () => undefined,
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as { port: number };
      const url = `http://127.0.0.1:${port}/webhooks/`;
      expect((await deliver(url, v2Event('evt_0001'))).status).toBe(503);
      expect(heldAtCommit).toEqual([['evt_0001']]);
      expect(handoff.has('evt_0001')).toBe(false);
      expect(handoff.bytes).toBe(0);
      isCommitFailing = false;
      expect((await deliver(url, v2Event('evt_0001'))).status).toBe(200);
      expect(handoff.take('evt_0001')).toMatchObject({ event_id: 'evt_0001' });
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
