import { loadConfig } from '../config/index.js';
import { readIntakeGapsReport, type IntakeGapsReport } from '../ops/intake.js';
import { openMigratedForWriting, targetOf } from '../db/open.js';
import { createStore } from '../db/store.js';
import { systemClock } from '../clock.js';
import { DB_FLAG, EXIT, parseCommandArgs, type Command } from './command.js';

/** `transport-sync gaps [--ack]`: the intake gaps, and their acknowledgement. */
export const gapsCommand: Command = {
  name: 'gaps',
  summary: 'The intake gaps and the requests at risk; --ack marks the alarmed ones reviewed',
  usage: `Usage: transport-sync gaps [--ack] [--json] [--db PATH]

Lists the last intake gaps: stretches in which the webhook receiver could not accept or store
deliveries (the daemon was down, or storing failed). The service retries a delivery for about
64 s and then drops it, so a gap longer than TRANSPORT_INTAKE_GAP_ALARM_SECONDS may have lost
events: it is listed with the requests still at risk, the open ones (awaiting or accepted, pickup
after the gap began) that nothing has read from the service since it ended. A webhook event that
carried the record, a detail fetch, or a poll cycle that completed after the gap (its states and
window) takes a request off the list. Check the rest with the service (its web application),
then run with --ack: status stops exiting 1 for them.
Exit codes: 0 none unreviewed (or all acknowledged with --ack), 1 some unreviewed, 2 bad usage.`,
  async run(argv, io) {
    const { values } = parseCommandArgs(argv, {
      ...DB_FLAG,
      ack: { type: 'boolean' },
      json: { type: 'boolean' },
    });
    const config = loadConfig({
      env: io.env,
      needsService: false,
      overrides: { dbPath: values.db },
    });
    const db = await openMigratedForWriting(targetOf(config));
    try {
      let acknowledged = 0;
      if (values.ack) {
        const store = createStore({ db, clock: systemClock });
        acknowledged = await store.transaction((tx) => tx.intakeGaps.acknowledge(tx.now()));
      }
      const report = await readIntakeGapsReport(db);
      if (values.json) {
        io.stdout.write(`${JSON.stringify({ ...report, acknowledged }, null, 2)}\n`);
      } else {
        if (values.ack) io.stdout.write(`acknowledged ${acknowledged} gap(s)\n`);
        io.stdout.write(formatGaps(report));
      }
      return report.unreviewed > 0 ? EXIT.failure : EXIT.ok;
    } finally {
      await db.close();
    }
  },
};

function formatGaps(report: IntakeGapsReport): string {
  if (report.last.length === 0) return 'no intake gaps recorded\n';
  const lines = report.last.map((gap) => {
    const mark = gap.is_alarmed ? (gap.reviewed_at ? 'reviewed' : 'UNREVIEWED') : 'within retries';
    const head = `#${gap.gap_id} ${gap.started_at} to ${gap.ended_at} (${gap.seconds.toFixed(0)} s, ${gap.reason}): ${mark}`;
    return gap.request_ids.length > 0
      ? `${head}\n    at risk (${gap.requests_at_risk}): ${gap.request_ids.join(' ')}`
      : head;
  });
  return `${lines.join('\n')}\n`;
}
