import type * as z from 'zod';
import { checkContract, type Contract, type Drift, type SchemaPolicy } from './contract.js';
import { parseWith } from './schemas.js';

/**
 * Per-record validation. One malformed element of a list must not sink the others: each element
 * is validated alone, and the ones that fail come back as rejected records with a reason that
 * names the request id and the member path but never the offending value (it may be patient data).
 */

/** A record that failed validation; `raw` is kept for storage, never for logs. */
export interface RejectedRecord {
  requestId: string | null;
  reason: string;
  raw: unknown;
  /** Members that drifted, when the schema contract refused the record for them. */
  drift?: Drift[];
}

/** Valid records (with their raw JSON at the same index) and the rejected ones. */
export interface ParsedRecords<T> {
  items: T[];
  raws: unknown[];
  rejected: RejectedRecord[];
}

/** One record: parsed, or rejected. */
export type ParsedRecord<T> =
  { kind: 'ok'; record: T; raw: unknown } | { kind: 'rejected'; rejected: RejectedRecord };

const MAX_ISSUES = 3;
const MAX_ID_LENGTH = 64;

/** The id of a raw record under the first of `keys` that holds a non-empty string. */
export function idOf(raw: unknown, keys: readonly string[]): string | null {
  if (typeof raw !== 'object' || raw === null) return null;
  for (const key of keys) {
    const value = (raw as Record<string, unknown>)[key];
    if (typeof value === 'string' && value !== '') return value.slice(0, MAX_ID_LENGTH);
  }
  return null;
}

function formatPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return '(record)';
  return path
    .map((part, index) =>
      typeof part === 'number' ? `[${part}]` : `${index === 0 ? '' : '.'}${String(part)}`,
    )
    .join('');
}

function formatIssue(issue: z.core.$ZodIssue): string {
  // Built from the issue's kind, never from `input`, so no value reaches the reason.
  if (issue.code === 'invalid_type') {
    const isMissing = issue.message.endsWith('received undefined');
    return `${formatPath(issue.path)}: ${isMissing ? 'missing, ' : ''}expected ${issue.expected}`;
  }
  return `${formatPath(issue.path)}: ${issue.message}`;
}

/** `request K3J9QX2A: patient_dob: expected a YYYY-MM-DD date` */
export function describeIssues(
  requestId: string | null,
  issues: readonly z.core.$ZodIssue[],
): string {
  const shown = issues.slice(0, MAX_ISSUES).map(formatIssue);
  const more = issues.length - MAX_ISSUES;
  if (more > 0) shown.push(`and ${more} more`);
  return `request ${requestId ?? '(no id)'}: ${shown.join('; ')}`;
}

/** Validates one raw record. */
export function parseRecord<S extends z.ZodType>(
  schema: S,
  raw: unknown,
  idKeys: readonly string[],
): ParsedRecord<z.output<S>> {
  const result = parseWith(schema, raw);
  if (result.success) return { kind: 'ok', record: result.data, raw };
  const requestId = idOf(raw, idKeys);
  return {
    kind: 'rejected',
    rejected: { requestId, reason: describeIssues(requestId, result.error.issues), raw },
  };
}

/** Validates each raw record on its own. */
export function parseRecords<S extends z.ZodType>(
  schema: S,
  raws: readonly unknown[],
  idKeys: readonly string[],
): ParsedRecords<z.output<S>> {
  const out: ParsedRecords<z.output<S>> = { items: [], raws: [], rejected: [] };
  for (const raw of raws) {
    const parsed = parseRecord(schema, raw, idKeys);
    if (parsed.kind === 'ok') {
      out.items.push(parsed.record);
      out.raws.push(raw);
    } else {
      out.rejected.push(parsed.rejected);
    }
  }
  return out;
}

/** A record checked against its contract: usable with its drift, or refused. */
export type CheckedRecord<T> =
  | { kind: 'ok'; record: T; raw: unknown; drift: Drift[] }
  | { kind: 'rejected'; rejected: RejectedRecord };

/** Checks one raw record against its contract under `policy`. */
export function checkRecord<T>(
  contract: Contract,
  raw: unknown,
  policy: SchemaPolicy,
  idKeys: readonly string[],
): CheckedRecord<T> {
  const checked = checkContract<T>(contract, raw, policy);
  if (checked.kind === 'ok')
    return { kind: 'ok', record: checked.record, raw, drift: checked.drift };
  const requestId = idOf(raw, idKeys);
  return {
    kind: 'rejected',
    rejected: {
      requestId,
      reason: `request ${requestId ?? '(no id)'}: ${checked.reason}`,
      raw,
      drift: checked.drift,
    },
  };
}

/** Valid records with their raw JSON and drift (same index), and the refused ones. */
export interface CheckedRecords<T> extends ParsedRecords<T> {
  drifts: Drift[][];
}

/** Checks each raw record on its own. */
export function checkRecords<T>(
  contract: Contract,
  raws: readonly unknown[],
  policy: SchemaPolicy,
  idKeys: readonly string[],
): CheckedRecords<T> {
  const out: CheckedRecords<T> = { items: [], raws: [], drifts: [], rejected: [] };
  for (const raw of raws) {
    const checked = checkRecord<T>(contract, raw, policy, idKeys);
    if (checked.kind === 'ok') {
      out.items.push(checked.record);
      out.raws.push(raw);
      out.drifts.push(checked.drift);
    } else {
      out.rejected.push(checked.rejected);
    }
  }
  return out;
}
