import { describe, expect, it } from 'vitest';
import { COMMAND_NAMES, loadCommand, loadCommands } from '../../../src/cli/main.js';

describe('the command registry', () => {
  it('loads, under each name, the command of that name', async () => {
    for (const name of COMMAND_NAMES) expect((await loadCommand(name))?.name).toBe(name);
    expect((await loadCommands()).map((command) => command.name)).toEqual(COMMAND_NAMES);
  });

  it('knows no command by a name it does not list, nor by an inherited property', async () => {
    expect(await loadCommand('nonsense')).toBeUndefined();
    expect(await loadCommand('toString')).toBeUndefined();
    expect(await loadCommand('__proto__')).toBeUndefined();
  });
});
