import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { COMMAND_NAMES, loadCommands, main } from '../../../src/cli/main.js';

/** A CLI io whose output is kept, to read back. */
function captureIo() {
  const out = { stdout: '', stderr: '' };
  const sink = (key: keyof typeof out) =>
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        out[key] += chunk.toString();
        done();
      },
    });
  return { io: { stdout: sink('stdout'), stderr: sink('stderr'), env: {} }, out };
}

/** The "Exit codes:" paragraph of a usage text: from that line to a blank line or the end. */
function exitCodesSection(usage: string): string {
  const lines = usage.split('\n');
  const start = lines.findIndex((line) => line.startsWith('Exit codes: '));
  if (start < 0) return '';
  const end = lines.findIndex((line, index) => index > start && line.trim() === '');
  return lines.slice(start, end < 0 ? undefined : end).join(' ');
}

describe('help of each command', () => {
  it('has an "Exit codes" paragraph naming what 0, 1 and 2 mean', async () => {
    for (const command of await loadCommands()) {
      const section = exitCodesSection(command.usage);
      expect(section, `${command.name}: usage has a line starting "Exit codes: "`).not.toBe('');
      for (const code of [0, 1, 2]) {
        expect(section, `${command.name}: exit ${code}`).toMatch(
          new RegExp(`(^Exit codes: |, )${code} \\S`),
        );
      }
    }
  });

  it('is what `help <command>` prints, with exit 0', async () => {
    for (const command of await loadCommands()) {
      const { io, out } = captureIo();
      expect(await main(['help', command.name], io)).toBe(0);
      expect(out.stdout).toBe(`${command.usage}\n`);
      expect(out.stderr).toBe('');
    }
  });
});

describe('help', () => {
  it('lists every command, help and version, in lines of at most 100 columns', async () => {
    const { io, out } = captureIo();
    expect(await main(['help'], io)).toBe(0);
    for (const name of [...COMMAND_NAMES, 'help', 'version']) {
      expect(out.stdout).toMatch(new RegExp(`^  ${name} +\\S`, 'm'));
    }
    const long = out.stdout.split('\n').filter((line) => line.length > 100);
    expect(long).toEqual([]);
    expect(out.stdout).toContain('SQLite or PostgreSQL');
  });

  it('of an unknown command exits 2 with the error an unknown command gets', async () => {
    const asHelp = captureIo();
    expect(await main(['help', 'bogus'], asHelp.io)).toBe(2);
    expect(asHelp.out.stdout).toBe('');
    expect(asHelp.out.stderr).toMatch(/^transport-sync: error: unknown command "bogus"\n/);
    const asCommand = captureIo();
    expect(await main(['bogus'], asCommand.io)).toBe(2);
    expect(asHelp.out.stderr).toBe(asCommand.out.stderr);
  });

  it('of help, version or a help flag prints the command list', async () => {
    const list = captureIo();
    await main(['help'], list.io);
    for (const topic of ['help', 'version', '--help', '-h']) {
      const { io, out } = captureIo();
      expect(await main(['help', topic], io), topic).toBe(0);
      expect(out.stdout, topic).toBe(list.out.stdout);
    }
  });
});
