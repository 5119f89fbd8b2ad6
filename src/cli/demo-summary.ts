import type { MirrorFacts } from '../db/store/facts.js';
import type { CycleResult } from '../sync/poll.js';

/** Webhook outcomes in the order the demo's lines name them; any other follows, by name. */
const OUTCOME_ORDER = ['new', 'changed', 'unchanged', 'unavailable', 'stale', 'superseded'];

/**
 * What the demo has seen since it started, told as short lines for a person: one per poll cycle,
 * one every few seconds for the webhook events that came in, one when schema drift grows, and a
 * closing summary. Counts come from the daemon's own cycle results and webhook outcomes; the
 * mirror's totals (requests stored, schema drift) from the database, as `status` reads them.
 */
export interface DemoSummary {
  /** The line for a finished poll cycle, and a drift line when drift grew; `facts` when read. */
  cycle(result: CycleResult, facts?: MirrorFacts): string;
  /** Counts one webhook event's outcome (new, changed, unchanged, ...). */
  webhook(outcome: string): void;
  /** The lines for what came in since the last call; `facts` when they could be read. */
  tick(facts?: MirrorFacts): string;
  /** The closing summary: what arrived, what changed, what the mirror holds, drift. */
  final(options: { facts?: MirrorFacts; elapsedMs: number; hiddenLogLines: number }): string;
}

/** A summary that starts counting now. */
export function createDemoSummary(): DemoSummary {
  const cycles = { total: 0, ok: 0, new: 0, changed: 0, unavailable: 0 };
  const sinceTick = new Map<string, number>();
  const webhooks = new Map<string, number>();
  let driftMembersTold = 0;
  let lastFacts: MirrorFacts | undefined;

  // Drift is told when a member not seen before appears, never per request it shows on.
  const driftLine = (facts: MirrorFacts): string => {
    lastFacts = facts;
    const { members } = facts.schemaDrift;
    if (members <= driftMembersTold) return '';
    driftMembersTold = members;
    return `schema drift: ${formatDrift(facts)}\n`;
  };

  return {
    cycle(result, facts) {
      const { counts } = result;
      cycles.total += 1;
      if (result.status === 'ok') cycles.ok += 1;
      cycles.new += counts.requestsNew;
      cycles.changed += counts.requestsChanged;
      cycles.unavailable += counts.requestsUnavailable;
      return (
        `cycle ${result.runId} ${result.status}: ${counts.requestsNew} new, ` +
        `${counts.requestsChanged} changed, ${counts.requestsUnavailable} unavailable ` +
        `(${counts.listCalls} list, ${counts.detailCalls} detail calls)` +
        (facts ? `; ${storedRequests(facts)} requests stored\n${driftLine(facts)}` : '\n')
      );
    },
    webhook(outcome) {
      sinceTick.set(outcome, (sinceTick.get(outcome) ?? 0) + 1);
      webhooks.set(outcome, (webhooks.get(outcome) ?? 0) + 1);
    },
    tick(facts) {
      let lines = '';
      if (sinceTick.size > 0) {
        lines += `webhooks: ${plural(sum(sinceTick), 'event')} (${formatOutcomes(sinceTick)})\n`;
        sinceTick.clear();
      }
      return facts ? lines + driftLine(facts) : lines;
    },
    final({ facts = lastFacts, elapsedMs, hiddenLogLines }) {
      const byWebhook = (outcome: string) => webhooks.get(outcome) ?? 0;
      const events = sum(webhooks);
      const lines = [
        `demo summary after ${Math.round(elapsedMs / 1000)} s:`,
        `  arrived:  ${plural(cycles.new + byWebhook('new'), 'new request')} ` +
          `(${cycles.new} by polling, ${byWebhook('new')} by webhook); ` +
          `${plural(cycles.total, 'poll cycle')} (${cycles.ok} ok), ${plural(events, 'webhook event')}` +
          (events > 0 ? ` (${formatOutcomes(webhooks)})` : ''),
        `  changed:  ${plural(cycles.changed + byWebhook('changed'), 'change')} ` +
          `(${cycles.changed} by polling, ${byWebhook('changed')} by webhook); ` +
          `${plural(cycles.unavailable + byWebhook('unavailable'), 'request')} became unavailable`,
      ];
      if (facts) {
        lines.push(`  mirror:   ${plural(storedRequests(facts), 'request')} stored`);
        lines.push(`  drift:    ${facts.schemaDrift.rows === 0 ? 'none' : formatDrift(facts)}`);
      }
      if (hiddenLogLines > 0)
        lines.push(
          `  log:      ${plural(hiddenLogLines, 'repeated log line')} not shown ` +
            "(set LOG_LEVEL to print the daemon's log)",
        );
      return `${lines.join('\n')}\n`;
    },
  };
}

/** Requests in the mirror: available ones by state, and those the service stopped showing. */
export function storedRequests(facts: MirrorFacts): number {
  return Object.values(facts.requestsByState).reduce((total, n) => total + n, facts.unavailable);
}

/** "17 members differ from the documented shape (...)", from the schema_drift table's counts. */
export function formatDrift({ schemaDrift: drift }: MirrorFacts): string {
  return (
    `${drift.members === 1 ? '1 member differs' : `${drift.members} members differ`} from the ` +
    `documented shape (schema_drift holds ${plural(drift.rows, 'row')}: ${drift.missing} missing, ${drift.type} retyped, ${drift.unknown} unknown)`
  );
}

/** "3 new, 2 changed, 1 unchanged": known outcomes first, in a fixed order, then the rest. */
export function formatOutcomes(outcomes: ReadonlyMap<string, number>): string {
  const rank = (outcome: string) => {
    const index = OUTCOME_ORDER.indexOf(outcome);
    return index < 0 ? OUTCOME_ORDER.length : index;
  };
  return [...outcomes]
    .sort(([a], [b]) => rank(a) - rank(b) || a.localeCompare(b))
    .map(([outcome, n]) => `${n} ${outcome}`)
    .join(', ');
}

/** "1 request", "2 requests". */
function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

function sum(counts: ReadonlyMap<string, number>): number {
  return [...counts.values()].reduce((total, n) => total + n, 0);
}
