import { describe, expect, it } from 'vitest';
import { STATE_NAMES } from '../../../src/api/schemas.js';
import { stateCommand } from '../../../src/cli/state.js';
import { STATE_UPDATE_NAMES } from '../../../src/simulator/provider.js';

describe('the state-update names', () => {
  it('are the same in the simulated service as in the client, in the same order', () => {
    expect([...STATE_UPDATE_NAMES]).toEqual([...STATE_NAMES]);
  });

  it('are listed in full by the help of the state command', () => {
    expect(stateCommand.usage).toContain(`  ${STATE_NAMES.join(', ')}\n`);
  });
});
