import pg from 'pg';
import { isoFromMs } from '../../time.js';

/*
 * How PostgreSQL's values reach the code, so that both engines hand it the same thing (see
 * db/schema/columns.ts): timestamptz as canonical ISO UTC text, date as YYYY-MM-DD, jsonb as its
 * text, boolean as 1 or 0, bigint and numeric (counts, sums) as numbers. The session's time zone
 * is UTC and DateStyle ISO (set at connect), so the text PostgreSQL sends is predictable.
 */

const OID = {
  bool: 16,
  int8: 20,
  json: 114,
  float4: 700,
  float8: 701,
  date: 1082,
  timestamp: 1114,
  timestamptz: 1184,
  numeric: 1700,
  jsonb: 3802,
} as const;

// What a UTC session sends for a timestamptz of years 0001-9999: rearranged without a Date (the
// idle cycle reads thousands of them). The fraction is cut to milliseconds, as Date.parse cuts it.
const POSTGRES_UTC = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})(?:\.(\d{1,6}))?\+00$/;

/** '2026-01-28 21:48:06.123+00' (UTC session) as '2026-01-28T21:48:06.123Z'. */
export function isoFromPostgres(text: string): string {
  const utc = POSTGRES_UTC.exec(text);
  if (utc) return `${utc[1]}T${utc[2]}.${`${utc[3] ?? ''}000`.slice(0, 3)}Z`;
  const withOffset = text.replace(' ', 'T').replace(/([+-]\d\d)$/, '$1:00');
  const ms = Date.parse(
    withOffset.endsWith('Z') || /[+-]\d\d:\d\d$/.test(withOffset) ? withOffset : `${withOffset}Z`,
  );
  return Number.isFinite(ms) ? isoFromMs(ms) : text;
}

const identity = (text: string) => text;

const PARSERS: Record<number, (text: string) => unknown> = {
  [OID.bool]: (text) => (text === 't' ? 1 : 0),
  [OID.int8]: Number,
  [OID.numeric]: Number,
  [OID.float4]: Number,
  [OID.float8]: Number,
  [OID.json]: identity,
  [OID.jsonb]: identity,
  [OID.date]: identity,
  [OID.timestamp]: isoFromPostgres,
  [OID.timestamptz]: isoFromPostgres,
};

/** The type parsers of the mirror's connections (pg's `types` option). */
export const MIRROR_TYPES = {
  getTypeParser(oid: number, format?: string) {
    const parser = PARSERS[oid];
    if (parser && format !== 'binary') return parser;
    return pg.types.getTypeParser(oid, format as 'text');
  },
} as unknown as pg.CustomTypesConfig;
