/** Operations: status, metrics, the monitoring endpoint, systemd readiness, backup, retention, doctor. */
export { createMetrics, type Metrics } from './metrics.js';
export { registerDbGauges } from './metrics-db.js';
export {
  createOpsHandler,
  startOpsServer,
  parseListen as parseOpsListen,
  type FallbackHandler,
  type OpsRoutesHandler,
  type OpsServer,
} from './http-server.js';
export {
  assessFreshness,
  createReadiness,
  pollIntervalMs,
  readLastSuccessAt,
  type Freshness,
  type Readiness,
} from './freshness.js';
export { createSystemdNotifier, watchdogIntervalFrom, type SystemdNotifier } from './notify.js';
export { createProgressCheck, startWatchdog } from './watchdog.js';
export { pruneHistory, startDailyPrune, type PruneCounts } from './retention.js';
export { backupDatabase, type BackupResult } from './backup.js';
export { readStatus, type StatusReport, type StatusRun } from './status.js';
export { runDoctor, formatDoctor, type CheckResult, type CheckStatus } from './doctor.js';
export { createDaemonOps, type DaemonOps, type ProgressSource } from './daemon-ops.js';
