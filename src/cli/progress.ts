import type { Logger } from '../log.js';
import type { BackfillProgress } from '../sync/backfill.js';

const LOG_EVERY_MS = 5_000;
const BAR_WIDTH = 24;

/**
 * Shows a backfill's progress: on a terminal, a bar redrawn in place (windows, requests, rate,
 * ETA); otherwise (journald, a pipe) a log line every few seconds.
 */
export function createProgressReporter({
  stream,
  log,
}: {
  stream: NodeJS.WritableStream & { isTTY?: boolean };
  log: Logger;
}) {
  let lastLogMs = 0;
  const isTerminal = Boolean(stream.isTTY);
  return {
    update(progress: BackfillProgress): void {
      const stored =
        progress.counts.requestsNew +
        progress.counts.requestsChanged +
        progress.counts.requestsUnchanged;
      const fresh = progress.windowsDone - progress.windowsSkipped;
      const rate = progress.elapsedMs > 0 ? (stored * 1000) / progress.elapsedMs : 0;
      const left = progress.windowsTotal - progress.windowsDone;
      const etaMs = fresh > 0 ? (progress.elapsedMs / fresh) * left : undefined;
      if (isTerminal) {
        const filled = Math.round((progress.windowsDone / progress.windowsTotal) * BAR_WIDTH);
        stream.write(
          `\r[${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}] ${progress.windowsDone}/${progress.windowsTotal} windows, ` +
            `${stored} requests, ${rate.toFixed(0)}/s, ETA ${formatDuration(etaMs)}   `,
        );
        return;
      }
      const now = Date.now();
      if (now - lastLogMs < LOG_EVERY_MS && progress.windowsDone < progress.windowsTotal) return;
      lastLogMs = now;
      log.info(
        {
          windowsDone: progress.windowsDone,
          windowsTotal: progress.windowsTotal,
          requests: stored,
          perSecond: Math.round(rate),
          etaSeconds: etaMs === undefined ? null : Math.round(etaMs / 1000),
        },
        'backfill progress',
      );
    },
    /** Ends the bar's line so the summary starts on its own. */
    finish(): void {
      if (isTerminal) stream.write('\n');
    },
  };
}

/** `1h02m`, `3m05s`, `12s`, or `?` when unknown. */
export function formatDuration(ms: number | undefined): string {
  if (ms === undefined || !Number.isFinite(ms)) return '?';
  const seconds = Math.round(ms / 1000);
  if (seconds >= 3600)
    return `${Math.floor(seconds / 3600)}h${String(Math.floor((seconds % 3600) / 60)).padStart(2, '0')}m`;
  if (seconds >= 60) return `${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, '0')}s`;
  return `${seconds}s`;
}
