import type * as z from 'zod';

/*
 * A shorter way through a zod schema for the records that pass it, which is nearly all of them.
 *
 * zod parses a record member by member, each through a payload object and an issue list of its
 * own, and builds a new object for every object it checks: for one of the service's webhook
 * records (some 120 members) about 33 µs and 35 KB of garbage, most of what checking a webhook
 * event cost (docs/performance.md). Here each schema is turned once into a plain function that
 * checks a value where it lies and copies only what a transform changes (a timestamp spelled
 * otherwise than canonically): 7 to 12 µs for the same record (12 in a process that checks the
 * service's other records too, as the daemon does). Its verdict is valid
 * (with what zod would return), invalid (a check failed, so zod fails too) or unsure (a
 * value zod treats specially); the caller asks zod only when unsure, or for the issues that say
 * why a record is refused. The unit and property tests hold the verdicts to zod's over valid and
 * broken records: nothing found valid here could have failed there, with another output, and
 * nothing found invalid could have passed.
 *
 * Only the kinds of schema the service's records use are compiled: strings (with a minimum
 * length), finite numbers (safe integers, bounds), booleans, unknown, arrays, objects (stripped,
 * loose or strict), string-keyed records, optional, nullable, and the string transforms named in
 * `transforms`. A schema holding anything else is not compiled, and zod parses it every time.
 * Values that zod treats specially are unsure: an own `__proto__` member, an object whose
 * prototype is not Object's.
 */

/** What a compiled schema returns for a value that fails one of its checks: zod fails it too. */
const INVALID: unique symbol = Symbol('invalid');
/** What it returns for a value zod treats specially: zod alone can say. */
const UNSURE: unique symbol = Symbol('unsure');
type Parse = (value: unknown) => unknown;

const isVerdict = (out: unknown): out is typeof INVALID | typeof UNSURE =>
  out === INVALID || out === UNSURE;

/** zod's own parse result, for callers that take either. */
export type SafeParseResult<T> = { success: true; data: T } | z.ZodSafeParseResult<T>;

/** The string schemas whose transform may be run here: each to its output, null where it fails. */
export type StringTransforms = ReadonlyMap<z.ZodType, (text: string) => unknown>;

/**
 * Parses `value` with `schema`: here when it passes, else through zod, whose issues say why not.
 * The output holds what zod's would, member for member; see parseQuickly for how it differs.
 */
export function safeParse<S extends z.ZodType>(
  schema: S,
  value: unknown,
  transforms: StringTransforms,
): SafeParseResult<z.output<S>> {
  const quick = parseQuickly(schema, value, transforms);
  return quick.kind === 'valid'
    ? { success: true, data: quick.data as z.output<S> }
    : schema.safeParse(value);
}

/**
 * What zod's parse would make of `value`: `valid` with zod's output; `invalid` when zod would
 * fail it (its issues then come from zod); `unsure` when this module cannot tell (a schema it
 * does not compile, a value zod treats specially). The output holds zod's members with zod's
 * values, but nothing that needs no change is copied: an object or array whose members all come
 * out as they went in is the input's own, and a copied object keeps the input's order of members
 * (zod lists the declared ones first). Nothing in this project changes a parsed record, nor
 * prints one without sorting its members (stableStringify).
 */
export function parseQuickly(
  schema: z.ZodType,
  value: unknown,
  transforms: StringTransforms,
): { kind: 'valid'; data: unknown } | { kind: 'invalid' | 'unsure' } {
  const parse = compiled(schema, transforms);
  const data = parse ? parse(value) : UNSURE;
  if (data === INVALID) return { kind: 'invalid' };
  if (data === UNSURE) return { kind: 'unsure' };
  return { kind: 'valid', data };
}

/** Compiled schemas by transforms; null for a schema holding a kind not compiled here. */
const COMPILED = new WeakMap<StringTransforms, WeakMap<z.ZodType, Parse | null>>();

/** The compiled function of `schema`, or null when it cannot be compiled. */
function compiled(schema: z.ZodType, transforms: StringTransforms): Parse | null {
  let bySchema = COMPILED.get(transforms);
  if (!bySchema) COMPILED.set(transforms, (bySchema = new WeakMap()));
  let parse = bySchema.get(schema);
  if (parse === undefined) {
    parse = compile(schema, transforms);
    bySchema.set(schema, parse);
  }
  return parse;
}

interface Def {
  type: string;
  checks?: { _zod: { def: Record<string, unknown> } }[];
  innerType?: z.ZodType;
  element?: z.ZodType;
  shape?: Record<string, z.ZodType>;
  catchall?: z.ZodType;
  keyType?: z.ZodType;
  valueType?: z.ZodType;
  in?: z.ZodType;
  coerce?: boolean;
}

const defOf = (schema: z.ZodType) => schema._zod.def as unknown as Def;

function compile(schema: z.ZodType, transforms: StringTransforms): Parse | null {
  const inner = (of: z.ZodType | undefined) => (of ? compile(of, transforms) : null);
  const def = defOf(schema);
  if (def.coerce) return null;
  const transform = transforms.get(schema);
  if (transform) {
    if (def.type !== 'pipe' || def.in === undefined || defOf(def.in).type !== 'string') return null;
    if (defOf(def.in).checks?.length) return null;
    return (value) => {
      if (typeof value !== 'string') return INVALID;
      const out = transform(value);
      return out === null ? INVALID : out;
    };
  }
  switch (def.type) {
    case 'string':
      return stringParse(def);
    case 'number':
      return numberParse(def);
    case 'boolean':
      return def.checks?.length ? null : (value) => (typeof value === 'boolean' ? value : INVALID);
    case 'unknown':
      return def.checks?.length ? null : (value) => value;
    case 'optional': {
      const parse = inner(def.innerType);
      if (!parse || def.innerType!._zod.optin === 'defaulted') return null;
      return (value) => (value === undefined ? undefined : parse(value));
    }
    case 'nullable': {
      const parse = inner(def.innerType);
      return parse && ((value) => (value === null ? null : parse(value)));
    }
    case 'array': {
      const parse = inner(def.element);
      if (!parse || def.checks?.length) return null;
      return (value) => {
        if (!Array.isArray(value)) return INVALID;
        let out: unknown[] | undefined;
        for (let i = 0; i < value.length; i += 1) {
          const item = parse(value[i]);
          if (isVerdict(item)) return item;
          if (item !== value[i]) (out ??= value.slice())[i] = item;
        }
        return out ?? value;
      };
    }
    case 'record':
      return recordParse(def, transforms);
    case 'object':
      return objectParse(def, transforms);
    default:
      return null;
  }
}

function stringParse(def: Def): Parse | null {
  let minimum = 0;
  for (const check of def.checks ?? []) {
    const c = check._zod.def;
    if (c.check !== 'min_length' || typeof c.minimum !== 'number') return null;
    minimum = Math.max(minimum, c.minimum);
  }
  return (value) => (typeof value === 'string' && value.length >= minimum ? value : INVALID);
}

function numberParse(def: Def): Parse | null {
  let isSafeInteger = false;
  const bounds: ((value: number) => boolean)[] = [];
  for (const check of def.checks ?? []) {
    const { check: kind, value: bound, inclusive, format } = check._zod.def;
    if (kind === 'number_format' && format === 'safeint') isSafeInteger = true;
    else if (kind === 'greater_than' && typeof bound === 'number')
      bounds.push(inclusive === true ? (value) => value >= bound : (value) => value > bound);
    else if (kind === 'less_than' && typeof bound === 'number')
      bounds.push(inclusive === true ? (value) => value <= bound : (value) => value < bound);
    else return null;
  }
  if (!isSafeInteger && bounds.length === 0)
    return (value) => (typeof value === 'number' && Number.isFinite(value) ? value : INVALID);
  return (value) => {
    if (typeof value !== 'number' || !Number.isFinite(value)) return INVALID;
    if (isSafeInteger && !Number.isSafeInteger(value)) return INVALID;
    return bounds.every((isWithin) => isWithin(value)) ? value : INVALID;
  };
}

/**
 * INVALID for what no object schema takes (not an object, or an array); UNSURE for an object
 * unlike those JSON.parse makes (another prototype, an own `__proto__`, which zod drops); else
 * the object.
 */
function plainObject(value: unknown): Record<string, unknown> | typeof INVALID | typeof UNSURE {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return INVALID;
  if (Object.getPrototypeOf(value) !== Object.prototype || Object.hasOwn(value, '__proto__'))
    return UNSURE;
  return value as Record<string, unknown>;
}

function recordParse(def: Def, transforms: StringTransforms): Parse | null {
  const key = def.keyType && defOf(def.keyType);
  if (key?.type !== 'string' || key.checks?.length || key.coerce) return null;
  const parse = def.valueType && compile(def.valueType, transforms);
  if (!parse || def.checks?.length) return null;
  return (input) => {
    const value = plainObject(input);
    if (isVerdict(value)) return value;
    let out: Record<string, unknown> | undefined;
    for (const name of Object.keys(value)) {
      const member = parse(value[name]);
      if (isVerdict(member)) return member;
      if (member !== value[name]) (out ??= { ...value })[name] = member;
    }
    return out ?? value;
  };
}

/** A member of an object's shape, with what zod's handling of an absent key depends on. */
interface Member {
  name: string;
  parse: Parse;
  /** Absent is no issue, and the output has no such key (zod's optin and optout "optional"). */
  isOptional: boolean;
}

function objectParse(def: Def, transforms: StringTransforms): Parse | null {
  if (def.checks?.length || !def.shape) return null;
  const catchall = def.catchall && defOf(def.catchall).type;
  if (catchall !== undefined && catchall !== 'unknown' && catchall !== 'never') return null;
  const members: Member[] = [];
  for (const [name, schema] of Object.entries(def.shape)) {
    // zod tests presence with `in`: a name Object.prototype also has would read as present.
    if (name in Object.prototype) return null;
    const parse = compile(schema, transforms);
    if (!parse) return null;
    const { optin, optout } = schema._zod;
    if (optin === 'defaulted' || optin !== optout) return null;
    members.push({ name, parse, isOptional: optin === 'optional' });
  }
  const names = new Set(members.map((m) => m.name));
  return (input) => {
    const value = plainObject(input);
    if (isVerdict(value)) return value;
    let out: Record<string, unknown> | undefined;
    for (const { name, parse, isOptional } of members) {
      const received = value[name];
      if (received === undefined && !Object.hasOwn(value, name)) {
        if (isOptional) continue;
        return INVALID;
      }
      const member = parse(received);
      if (isVerdict(member)) return member;
      if (member !== received) (out ??= { ...value })[name] = member;
    }
    if (catchall === 'unknown') return out ?? value;
    for (const name in value) {
      if (names.has(name)) continue;
      if (catchall === 'never') return INVALID;
      out ??= { ...value };
      delete out[name];
    }
    return out ?? value;
  };
}
