/**
 * Preloaded into a child process (`node --import .../rss-report.js`): samples its memory while it
 * runs and, at exit, writes peak figures to the file named by BENCH_REPORT_FILE. The figures tell
 * what the RSS is made of: V8's heap (used or only reserved), or memory outside it (buffers,
 * SQLite, malloc).
 */
import { writeFileSync } from 'node:fs';
import { getHeapStatistics } from 'node:v8';

/** What a child reports. */
export interface ChildReport {
  wallMs: number;
  /** Peak resident set size over the whole life of the process (getrusage). */
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
      maxRssMb: Math.round((usage.maxRSS / 1024) * 10) / 10,
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
