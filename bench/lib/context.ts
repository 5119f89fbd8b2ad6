import type { Figure } from './report.js';

/** What every case gets: how many runs per figure, and where to say what it is doing. */
export interface BenchContext {
  /** Runs per figure (5 by default; the median is reported). */
  runs: number;
  /** Smaller sizes for a quick check of the bench itself (--quick). */
  isQuick: boolean;
  /** Also run the backfill under V8 memory flags, to see what its RSS is made of (--memory). */
  isMemoryProfile: boolean;
  /** Progress on stderr; the table goes to stdout. */
  progress(message: string): void;
  /** Raw measurements, kept in results.json beside the figures. */
  detail(key: string, value: unknown): void;
}

/** A case: measures and returns its figures. */
export type BenchCase = (ctx: BenchContext) => Promise<Figure[]>;
