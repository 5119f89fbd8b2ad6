import type { EngineHarness, EngineName, Engines } from './engines.js';
import type { Figure, FigureSpec } from './report.js';

/** What every case gets. */
export interface BenchContext {
  /** Runs per figure (5 by default; medians are reported). */
  runs: number;
  /** Smaller sizes and fewer runs, to check the bench itself (--quick). */
  isQuick: boolean;
  /** Also run the backfill under V8 memory flags, to see what its RSS is made of (--memory). */
  isMemoryProfile: boolean;
  /** The engines asked for (--engines), whether or not they can be measured here. */
  engineNames: EngineName[];
  engines: Engines;
  /** Progress on stderr; the table goes to stdout. */
  progress(message: string): void;
  /** Raw measurements, kept in results.json beside the figures. */
  detail(key: string, value: unknown): void;
  /** Why a case could not measure an engine (its figures are reported not measured). */
  failed(caseName: string, engine: EngineName | null, error: unknown): void;
}

/** A case: the figures with a goal it stands for, and how it measures them. */
export interface BenchCase {
  name: string;
  /** Every figure with a goal it reports, for each engine of `ctx.engineNames`. */
  plan(ctx: BenchContext): FigureSpec[];
  /** Measures, on the engines that can be measured. */
  run(ctx: BenchContext): Promise<Figure[]>;
}

/** Runs `measure` for each available engine; an engine that fails is noted, the others go on. */
export async function forEachEngine(
  ctx: BenchContext,
  caseName: string,
  measure: (engine: EngineHarness) => Promise<Figure[]>,
): Promise<Figure[]> {
  const figures: Figure[] = [];
  for (const engine of ctx.engines.available) {
    try {
      figures.push(...(await measure(engine)));
    } catch (error) {
      ctx.failed(caseName, engine.name, error);
    }
  }
  return figures;
}
