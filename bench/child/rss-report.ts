/**
 * Preloaded into a child process (`node --import .../rss-report.js`): samples its memory while it
 * runs and, at exit, writes peak figures to the file named by BENCH_REPORT_FILE. The figures tell
 * what the RSS is made of: V8's heap (used or only reserved), or memory outside it (buffers,
 * SQLite, malloc).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { getHeapStatistics } from 'node:v8';

/** What a child reports. */
export interface ChildReport {
  wallMs: number;
  /** Peak resident set size over the whole life of the process (VmHWM; getrusage elsewhere). */
  maxRssMb: number;
  cpuUserMs: number;
  cpuSystemMs: number;
  /** Peaks of process.memoryUsage() sampled every 20 ms. */
  peak: {
    rssMb: number;
    heapTotalMb: number;
    heapUsedMb: number;
    externalMb: number;
    arrayBuffersMb: number;
  };
  /** V8's own figures at exit. */
  v8: { totalHeapMb: number; usedHeapMb: number; mallocedMb: number; peakMallocedMb: number };
}

/**
 * This process's peak RSS in KiB: VmHWM, the high-water mark of its own memory image. getrusage's
 * maxRSS is no use for a spawned child on Linux: fork copies the parent's high-water mark and
 * exec keeps it, so a child of a large bench process reports at least the bench's own RSS.
 */
function peakRssKb(fallbackKb: number): number {
  try {
    const match = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'utf8'));
    if (match) return Number(match[1]);
  } catch {
    // Not Linux: getrusage is the best there is.
  }
  return fallbackKb;
}

const file = process.env.BENCH_REPORT_FILE;
if (file) {
  const started = performance.now();
  const mb = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10;
  const peak = { rssMb: 0, heapTotalMb: 0, heapUsedMb: 0, externalMb: 0, arrayBuffersMb: 0 };
  const sample = () => {
    const usage = process.memoryUsage();
    peak.rssMb = Math.max(peak.rssMb, mb(usage.rss));
    peak.heapTotalMb = Math.max(peak.heapTotalMb, mb(usage.heapTotal));
    peak.heapUsedMb = Math.max(peak.heapUsedMb, mb(usage.heapUsed));
    peak.externalMb = Math.max(peak.externalMb, mb(usage.external));
    peak.arrayBuffersMb = Math.max(peak.arrayBuffersMb, mb(usage.arrayBuffers));
  };
  setInterval(sample, 20).unref();
  process.on('exit', () => {
    sample();
    const usage = process.resourceUsage();
    const heap = getHeapStatistics();
    const report: ChildReport = {
      wallMs: Math.round(performance.now() - started),
      maxRssMb: Math.round((peakRssKb(usage.maxRSS) / 1024) * 10) / 10,
      cpuUserMs: Math.round(usage.userCPUTime / 1000),
      cpuSystemMs: Math.round(usage.systemCPUTime / 1000),
      peak,
      v8: {
        totalHeapMb: mb(heap.total_heap_size),
        usedHeapMb: mb(heap.used_heap_size),
        mallocedMb: mb(heap.malloced_memory),
        peakMallocedMb: mb(heap.peak_malloced_memory),
      },
    };
    writeFileSync(file, JSON.stringify(report));
  });
}
