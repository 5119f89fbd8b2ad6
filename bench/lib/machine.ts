import { cpus, loadavg, platform, release, arch, totalmem } from 'node:os';
import { readFileSync } from 'node:fs';

/** The machine a run measured on, recorded with every result. */
export interface Machine {
  cpuModel: string;
  cores: number;
  memoryMb: number;
  node: string;
  os: string;
  /** 1, 5 and 15 minute load averages when the run started: a busy machine reads high. */
  loadAverage: number[];
}

/** Describes this machine. */
export function describeMachine(): Machine {
  const list = cpus();
  return {
    cpuModel: cpuModel() ?? list[0]?.model ?? 'unknown',
    cores: list.length,
    memoryMb: Math.round(totalmem() / 2 ** 20),
    node: process.version,
    os: `${platform()} ${release()} ${arch()}`,
    loadAverage: loadavg().map((value) => Math.round(value * 100) / 100),
  };
}

function cpuModel(): string | undefined {
  try {
    const info = readFileSync('/proc/cpuinfo', 'utf8');
    return /^model name\s*:\s*(.+)$/m.exec(info)?.[1]?.trim();
  } catch {
    return undefined;
  }
}
