import { afterEach, describe, expect, it } from 'vitest';
import { formatStatus } from '../../../src/cli/status.js';
import { readStatus } from '../../../src/ops/status.js';
import { startMirror, type MirrorFixture } from '../../helpers/mirror.js';

let mirror: MirrorFixture;
afterEach(async () => mirror?.close());

describe("status's text", () => {
  it('names the database with its size, and a WAL only where SQLite keeps one', async () => {
    mirror = await startMirror({ requests: 0 });
    const report = await readStatus({
      db: mirror.db,
      nowMs: mirror.clock.now(),
      pollCron: '0 * * * * *',
      staleAfterCycles: 3,
      isPollingOn: true,
      hasWebhooks: false,
    });
    const line = formatStatus(report)
      .split('\n')
      .find((text) => text.startsWith('  database '));
    expect(line).toContain(report.database_path);
    if (mirror.db.engine === 'sqlite') expect(line).toMatch(/\(\d[^,]*, WAL \d/);
    else expect(line).not.toContain('WAL');
  });
});
