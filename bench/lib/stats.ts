/** Small statistics helpers: every figure is a median of runs or a ratio of medians. */

/** The median of `values` (the mean of the middle two for an even count); NaN when empty. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** The nearest-rank percentile `p` (0 to 100) of `values`; NaN when empty. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

/** Milliseconds that `work` took, with its result. */
export async function timed<T>(work: () => Promise<T> | T): Promise<{ ms: number; value: T }> {
  const start = performance.now();
  const value = await work();
  return { ms: performance.now() - start, value };
}

/**
 * Runs `a` and `b` `runs` times each, interleaved and in alternating order (ABBA...), so drift in
 * the machine's load hits both alike. Returns each side's times and the per-pair ratios a/b.
 */
export async function sideBySide(
  runs: number,
  a: () => Promise<unknown>,
  b: () => Promise<unknown>,
): Promise<{ a: number[]; b: number[]; ratios: number[] }> {
  const out = { a: [] as number[], b: [] as number[], ratios: [] as number[] };
  for (let run = 0; run < runs; run += 1) {
    let msA: number;
    let msB: number;
    if (run % 2 === 0) {
      msA = (await timed(a)).ms;
      msB = (await timed(b)).ms;
    } else {
      msB = (await timed(b)).ms;
      msA = (await timed(a)).ms;
    }
    out.a.push(msA);
    out.b.push(msB);
    out.ratios.push(msA / msB);
  }
  return out;
}

/**
 * Runs each arm `runs` times, interleaved, the order reversed every other run (ABC, CBA, ...),
 * so drift in the machine's load hits every arm alike. `before` runs ahead of each arm, outside
 * its timing (a fresh copy of a database, say). Returns each arm's times in ms, by run.
 */
export async function interleave(
  runs: number,
  arms: readonly (() => Promise<unknown>)[],
  before?: (arm: number, run: number) => Promise<void>,
): Promise<number[][]> {
  const times = arms.map(() => [] as number[]);
  for (let run = 0; run < runs; run += 1) {
    const order = arms.map((_, i) => i);
    if (run % 2 === 1) order.reverse();
    for (const arm of order) {
      await before?.(arm, run);
      times[arm]![run] = (await timed(arms[arm]!)).ms;
    }
  }
  return times;
}

/** Per-run ratios a[i] / b[i]. */
export function ratios(a: readonly number[], b: readonly number[]): number[] {
  return a.map((value, i) => value / b[i]!);
}

/** Rounds to `digits` decimals, for results that read well in JSON. */
export function round(value: number, digits = 2): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}
