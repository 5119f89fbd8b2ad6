import { loadConfig, type Config } from '../config/index.js';
import { describeError, TransportError } from '../errors.js';
import { targetOf } from '../db/open.js';
import {
  checkDatabase,
  checkFeedSetup,
  checkFileModes,
  checkIntake,
  checkOtherSecretFiles,
  checkReceiverSetup,
  checkSecretFile,
} from './doctor-local.js';
import { checkFreeSpace } from './doctor-disk.js';
import { checkService } from './doctor-service.js';

/** ok: fine; warn: works, but worth fixing; fail: will not work; skip: could not be checked. */
export type CheckStatus = 'ok' | 'warn' | 'fail' | 'skip';

/** One line of the doctor's report. */
export interface CheckResult {
  name: string;
  status: CheckStatus;
  detail?: string;
  /** What to do, for warn and fail. */
  hint?: string;
}

/**
 * Runs every check, in the order an operator would fix them: configuration, the secret files,
 * the webhook receiver's key and TLS files (read as `run` reads them), how data will come in
 * (a receiver, or polling alone), the database's file modes and free space, the database,
 * then the service (token, one list call, the clock). A check
 * that cannot run because an earlier one failed is reported as skipped, not left out.
 */
export async function runDoctor({
  env,
  dbPath,
  now = Date.now,
}: {
  env: NodeJS.ProcessEnv;
  /** --db, over TRANSPORT_DB. */
  dbPath?: string;
  now?: () => number;
}): Promise<CheckResult[]> {
  const overrides = { dbPath };
  const results: CheckResult[] = [];
  let config: Config | undefined;
  try {
    config = loadConfig({ env, needsService: true, overrides });
    results.push({ name: 'configuration', status: 'ok' });
  } catch (error) {
    results.push({
      name: 'configuration',
      status: 'fail',
      detail: describeError(error).message,
      hint: error instanceof TransportError ? error.hint : undefined,
    });
  }
  results.push(checkSecretFile(env));
  if (config) {
    results.push(...checkOtherSecretFiles(config), checkReceiverSetup(config), checkIntake(config));
    results.push(...(await checkFeedSetup(config)));
  }

  // Without the service settings the database can still be checked.
  const localConfig = config ?? tryLoad(env, overrides);
  if (localConfig) {
    results.push(checkFileModes(localConfig.dbPath), checkFreeSpace(localConfig.dbPath));
    results.push(...(await checkDatabase(targetOf(localConfig))));
  } else {
    results.push({ name: 'database', status: 'skip', detail: 'configuration invalid' });
  }

  if (config) results.push(...(await checkService(config, now)));
  else {
    for (const name of ['token endpoint', 'list call', 'clock'])
      results.push({ name, status: 'skip', detail: 'configuration invalid' });
  }
  return results;
}

function tryLoad(env: NodeJS.ProcessEnv, overrides: { dbPath?: string }): Config | undefined {
  try {
    return loadConfig({ env, needsService: false, overrides });
  } catch {
    return undefined;
  }
}

/** The report as lines: `ok    name: detail`, and under a warn or fail what to do. */
export function formatDoctor(results: CheckResult[]): string {
  const lines = results.flatMap((result) => {
    const label = result.status === 'fail' ? 'FAIL' : result.status;
    const head = `${label.padEnd(5)} ${result.name}${result.detail ? `: ${result.detail}` : ''}`;
    return result.hint && (result.status === 'fail' || result.status === 'warn')
      ? [head, `      what to do: ${result.hint}`]
      : [head];
  });
  return `${lines.join('\n')}\n`;
}
