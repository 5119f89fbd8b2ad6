import * as z from 'zod';
import { dateSchema, parseWith, timestampSchema, verdictOf } from './schemas.js';

/*
 * The schema contract, member by member (docs/sync.md, "Schema drift"). A record is checked
 * against its zod schema one member at a time, so one drifted member costs that member, not the
 * record: under `evolve` it is stored as NULL and the drift recorded; under `strict` the record
 * is refused, as before. Only the identity (id and state) is required under either policy.
 *
 * Names and type names only ever leave this module, never a value: the records are patient data.
 */

/** What the mirror does with a record whose members drifted. */
export type SchemaPolicy = 'evolve' | 'strict';

/** The ways a member can differ from the documented shape. */
export type DriftProblem = 'missing' | 'type' | 'unknown';

/** One member that differs from the documented shape. */
export interface Drift {
  /** Dotted path, such as `pickup_location.lat`. */
  member: string;
  problem: DriftProblem;
  /** The documented type name (null for an unknown member). */
  expected: string | null;
  /** The received type name (null for a missing member). */
  received: string | null;
}

/** What a shape says about one kind of record. */
export interface Contract {
  schema: z.ZodObject;
  /** Members without which the record has no identity: refused under either policy. */
  identity: readonly string[];
  /** Members documented as never null: a null there is drift. */
  nonNullable?: readonly string[];
  /** Dotted paths that may be absent without drift (documented as absent in some responses). */
  mayBeAbsent?: readonly string[];
}

/** A checked record: usable (drifted members repaired), or refused with a reason. */
export type ContractResult<T> =
  { kind: 'ok'; record: T; drift: Drift[] } | { kind: 'refused'; reason: string; drift: Drift[] };

/** The type name of a received value. */
export function typeNameOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

const NAMED = new Map<z.ZodType, string>([
  [timestampSchema, 'timestamp'],
  [dateSchema, 'date'],
]);

/** The schema under optional/nullable wrappers. */
function unwrap(schema: z.ZodType): z.ZodType {
  let inner = schema;
  while (inner instanceof z.ZodOptional || inner instanceof z.ZodNullable) {
    inner = inner.unwrap() as z.ZodType;
  }
  return inner;
}

/** The documented type name of a (wrapped) schema. */
function expectedName(schema: z.ZodType): string {
  const inner = unwrap(schema);
  const named = NAMED.get(inner);
  if (named) return named;
  if (inner instanceof z.ZodObject || inner instanceof z.ZodRecord) return 'object';
  return inner._zod.def.type;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const NUMERIC = /^-?\d+(\.\d+)?([eE][-+]?\d+)?$/;

/**
 * Checks `raw` member by member. A valid record takes one whole-record parse plus a walk over its
 * member names; only a record that fails is repaired member by member.
 */
export function checkContract<T>(
  contract: Contract,
  raw: unknown,
  policy: SchemaPolicy,
): ContractResult<T> {
  if (!isPlainObject(raw)) {
    return { kind: 'refused', reason: `expected an object, got ${typeNameOf(raw)}`, drift: [] };
  }
  for (const member of contract.identity) {
    const value = raw[member];
    if (typeof value !== 'string' || value === '') {
      const problem = value === undefined ? 'missing' : `expected a non-empty string`;
      return { kind: 'refused', reason: `${member}: ${problem}`, drift: [] };
    }
  }
  const drift: Drift[] = [];
  const mayBeAbsent = new Set(contract.mayBeAbsent ?? []);
  walkNames(contract.schema, raw, '', mayBeAbsent, drift);
  for (const member of contract.nonNullable ?? []) {
    if (raw[member] === null) {
      const expected = expectedName(contract.schema.shape[member] as z.ZodType);
      drift.push({ member, problem: 'type', expected, received: 'null' });
    }
  }
  // zod parses the whole record only where the quick check cannot tell: a record that drifted
  // goes straight to its repair (with the service's drift, about one record in ten).
  const verdict = verdictOf(contract.schema, raw);
  const whole = verdict.kind === 'unsure' ? contract.schema.safeParse(raw) : undefined;
  const record =
    verdict.kind === 'valid'
      ? verdict.data
      : whole?.success
        ? whole.data
        : repairObject(contract.schema, raw, '', drift);
  const refusing = drift.filter((d) => d.problem !== 'unknown');
  if (policy === 'strict' && refusing.length > 0) {
    return { kind: 'refused', reason: describeDrift(refusing), drift };
  }
  return { kind: 'ok', record: record as T, drift };
}

/** `patient_last_name missing; pickup_location.lat: expected number, got string` */
export function describeDrift(drift: readonly Drift[]): string {
  const shown = drift
    .slice(0, 3)
    .map((d) =>
      d.problem === 'missing'
        ? `${d.member}: missing`
        : d.problem === 'unknown'
          ? `${d.member}: unknown member`
          : `${d.member}: expected ${d.expected}, got ${d.received}`,
    );
  if (drift.length > 3) shown.push(`and ${drift.length - 3} more`);
  return shown.join('; ');
}

/** A schema's members as walkNames and repairObject need them, worked out once per schema. */
interface Members {
  list: {
    name: string;
    expected: string;
    /** The member's schema without its optional and nullable wrappers. */
    inner: z.ZodType;
    nested: z.ZodObject | undefined;
  }[];
  names: ReadonlySet<string>;
}

const MEMBERS = new WeakMap<z.ZodObject, Members>();

/** `schema`'s members: the unwrapping and type names cost more than the walk over a record. */
function membersOf(schema: z.ZodObject): Members {
  let members = MEMBERS.get(schema);
  if (!members) {
    const shape = schema.shape as Record<string, z.ZodType>;
    members = {
      list: Object.entries(shape).map(([name, member]) => {
        const inner = unwrap(member);
        return {
          name,
          expected: expectedName(member),
          inner,
          nested: inner instanceof z.ZodObject ? inner : undefined,
        };
      }),
      names: new Set(Object.keys(shape)),
    };
    MEMBERS.set(schema, members);
  }
  return members;
}

/** Records missing members and unknown members of `value` against `schema`, recursively. */
function walkNames(
  schema: z.ZodObject,
  value: Record<string, unknown>,
  prefix: string,
  mayBeAbsent: ReadonlySet<string>,
  drift: Drift[],
): void {
  const { list, names } = membersOf(schema);
  for (const { name, expected, nested } of list) {
    const received = value[name];
    if (received === undefined) {
      const path = prefix + name;
      if (!mayBeAbsent.has(path) && !Object.hasOwn(value, name)) {
        drift.push({ member: path, problem: 'missing', expected, received: null });
      }
      continue;
    }
    if (nested && isPlainObject(received)) {
      walkNames(nested, received, `${prefix}${name}.`, mayBeAbsent, drift);
    }
  }
  for (const name in value) {
    if (!names.has(name) && Object.hasOwn(value, name)) {
      drift.push({
        member: prefix + name,
        problem: 'unknown',
        expected: null,
        received: typeNameOf(value[name]),
      });
    }
  }
}

/**
 * The record with each member that fails its schema replaced: a numeric string where a number is
 * documented becomes that number (it reads the same), anything else becomes null. Never a
 * conversion that reads differently: "false" is not false, and not 0.
 */
function repairObject(
  schema: z.ZodObject,
  value: Record<string, unknown>,
  prefix: string,
  drift: Drift[],
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...value };
  for (const { name, expected, inner, nested } of membersOf(schema).list) {
    const received = value[name];
    if (received === undefined || received === null) continue;
    const path = prefix + name;
    if (nested && isPlainObject(received)) {
      out[name] = repairObject(nested, received, `${path}.`, drift);
      continue;
    }
    const parsed = parseWith(inner, received);
    if (parsed.success) {
      if (parsed.data !== received) out[name] = parsed.data;
      continue;
    }
    drift.push({ member: path, problem: 'type', expected, received: typeNameOf(received) });
    const isNumericText =
      inner instanceof z.ZodNumber && typeof received === 'string' && NUMERIC.test(received.trim());
    out[name] = isNumericText ? Number(received.trim()) : null;
  }
  return out;
}
