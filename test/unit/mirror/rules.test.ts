import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  CONTENT_COLUMNS,
  LOCATION_MEMBERS,
  requests,
  type LocationRow,
  type RequestContent,
} from '../../../src/db/schema/index.js';
import type { StoredRow } from '../../../src/mirror/observations.js';
import { changedRoles, diffColumns, pick } from '../../../src/mirror/rules.js';
import { normalizeTimestamp } from '../../../src/time.js';

/*
 * The decisions of the request store's write paths, without a database: which content columns a
 * write changes (diffColumns), which locations a webhook moves (changedRoles), and what the
 * change log records of them (pick).
 */

type ContentColumn = (typeof CONTENT_COLUMNS)[number];
type ContentValue = RequestContent[ContentColumn];

/** A stored row as the store reads it back: canonical timestamps, flags as 1/0/null. */
const STORED: StoredRow = {
  request_id: 'R-1001',
  list_state: 'accepted',
  request_current_state: 'accepted',
  patient_first_name: 'Ada',
  patient_last_name: 'Okafor',
  patient_dob: '1950-07-04',
  transport_pickup_time: '2024-05-01T14:00:00.000Z',
  transport_agreed_for_time: '2024-05-01T14:30:00.000Z',
  service_level_type: 'BLS',
  service_type: 'ambulance',
  account_id: 'A-1',
  facility_id: 'F-1',
  user_first_name: 'Sam',
  user_last_name: 'Ng',
  user_email: 'sam@example.org',
  is_round_trip_first_trip: 1,
  is_round_trip_return_trip: 0,
  collection_id: null,
  created_timestamp_utc: '2024-04-30T09:00:00.000Z',
  event_dt_utc: '2024-05-01T14:30:00.000Z',
  last_updated_timestamp_utc: '2024-04-30T10:15:00.000Z',
  unavailable_at: null,
  synced_at: '2024-04-30T10:15:02.000Z',
  read_at: '2024-04-30T10:15:02.000Z',
  first_seen_at: '2024-04-30T09:00:05.000Z',
  content_hash: 'hash-1',
  received_digest: 'digest-1',
};

/** The content a write merges: the row's content columns and its id, no bookkeeping. */
function contentOf(row: StoredRow): RequestContent {
  const content = { request_id: row.request_id } as RequestContent;
  const values = content as unknown as Record<string, unknown>;
  for (const column of CONTENT_COLUMNS) values[column] = row[column];
  return content;
}

function withContent(row: StoredRow, changes: Partial<Record<ContentColumn, ContentValue>>) {
  return { ...row, ...changes } as StoredRow;
}

function location(role: LocationRow['role'], overrides: Partial<LocationRow> = {}): LocationRow {
  return {
    request_id: 'R-1001',
    role,
    location_id: `${role}-id`,
    lat: role === 'pickup' ? 41.4993 : 41.5051,
    lng: role === 'pickup' ? -81.6944 : -81.6052,
    zip: role === 'pickup' ? '44113' : '44106',
    city: 'Cleveland',
    name: role === 'pickup' ? 'Lakeside Clinic' : 'University Hospital',
    state: 'OH',
    street: role === 'pickup' ? '1 Lakeside Ave' : '11100 Euclid Ave',
    address:
      role === 'pickup' ? '1 Lakeside Ave, Cleveland, OH' : '11100 Euclid Ave, Cleveland, OH',
    country: 'US',
    ...overrides,
  };
}

describe('diffColumns', () => {
  it('finds nothing changed when the merged content equals the stored row', () => {
    expect(diffColumns(STORED, contentOf(STORED))).toEqual([]);
  });

  /** For each content column, a value different from STORED's. */
  const ONE_CHANGE: [ContentColumn, ContentValue][] = [
    ['list_state', 'completed'],
    ['request_current_state', 'completed'],
    ['patient_first_name', 'Ida'],
    ['patient_last_name', 'okafor'],
    ['patient_dob', '1950-07-05'],
    ['transport_pickup_time', '2024-05-01T14:00:00.001Z'],
    ['transport_agreed_for_time', null],
    ['service_level_type', 'ALS'],
    ['service_type', 'wheelchair'],
    ['account_id', 'A-2'],
    ['facility_id', null],
    ['user_first_name', 'Sam '],
    ['user_last_name', ''],
    ['user_email', 'SAM@example.org'],
    ['is_round_trip_first_trip', 0],
    ['is_round_trip_return_trip', null],
    ['collection_id', 'C-7'],
    ['created_timestamp_utc', '2024-04-30T08:59:59.999Z'],
    ['event_dt_utc', '2024-05-01T14:00:00.000Z'],
    ['last_updated_timestamp_utc', '2024-04-30T10:15:01.000Z'],
  ];

  it('has a case for every content column', () => {
    expect(ONE_CHANGE.map(([column]) => column)).toEqual([...CONTENT_COLUMNS]);
  });

  it.each(ONE_CHANGE)('names %s alone when only it differs (new value %j)', (column, value) => {
    const merged = contentOf(withContent(STORED, { [column]: value }));
    expect(diffColumns(STORED, merged)).toEqual([column]);
  });

  it('names several changed columns in table order, whatever order they were changed in', () => {
    const merged = contentOf(
      withContent(STORED, {
        last_updated_timestamp_utc: '2024-04-30T11:00:00.000Z',
        patient_dob: '1951-07-04',
        list_state: 'completed',
      }),
    );
    expect(diffColumns(STORED, merged)).toEqual([
      'list_state',
      'patient_dob',
      'last_updated_timestamp_utc',
    ]);
  });

  it('treats null as equal to null, and as different from an empty string or a zero flag', () => {
    const stored = withContent(STORED, {
      collection_id: null,
      user_email: null,
      is_round_trip_first_trip: null,
    });
    expect(diffColumns(stored, contentOf(stored))).toEqual([]);

    const emptied = contentOf(
      withContent(stored, { collection_id: '', user_email: '', is_round_trip_first_trip: 0 }),
    );
    expect(diffColumns(stored, emptied)).toEqual([
      'user_email',
      'is_round_trip_first_trip',
      'collection_id',
    ]);
    expect(diffColumns(withContent(stored, emptied), contentOf(stored))).toEqual([
      'user_email',
      'is_round_trip_first_trip',
      'collection_id',
    ]);
  });

  it('reports a value cleared to null, and a null filled in', () => {
    const cleared = contentOf(withContent(STORED, { patient_first_name: null }));
    expect(diffColumns(STORED, cleared)).toEqual(['patient_first_name']);
    const filled = contentOf(withContent(STORED, { collection_id: 'C-1' }));
    expect(diffColumns(STORED, filled)).toEqual(['collection_id']);
  });

  it('compares timestamps as text: the same instant in another form counts as a change', () => {
    // The store holds canonical ISO and the normalizers produce it; diffColumns trusts both.
    for (const form of [
      '2024-05-01T14:00:00Z',
      '2024-05-01T14:00:00.000+00:00',
      '2024-05-01T16:00:00.000+02:00',
      '2024-05-01 14:00:00.000Z',
    ]) {
      const merged = contentOf(withContent(STORED, { transport_pickup_time: form }));
      expect(diffColumns(STORED, merged), form).toEqual(['transport_pickup_time']);
    }
  });

  it('finds no change once another form of the stored instant is normalized', () => {
    const normalized = normalizeTimestamp('2024-05-01T16:00:00+02:00');
    expect(normalized).toBe(STORED.transport_pickup_time);
    const merged = contentOf(withContent(STORED, { transport_pickup_time: normalized }));
    expect(diffColumns(STORED, merged)).toEqual([]);
  });

  it('tells timestamps one millisecond apart, either way', () => {
    const later = contentOf(withContent(STORED, { event_dt_utc: '2024-05-01T14:30:00.001Z' }));
    const earlier = contentOf(withContent(STORED, { event_dt_utc: '2024-05-01T14:29:59.999Z' }));
    expect(diffColumns(STORED, later)).toEqual(['event_dt_utc']);
    expect(diffColumns(STORED, earlier)).toEqual(['event_dt_utc']);
  });

  it('compares a date column as text: a timestamp of that day is a change', () => {
    const merged = contentOf(withContent(STORED, { patient_dob: '1950-07-04T00:00:00.000Z' }));
    expect(diffColumns(STORED, merged)).toEqual(['patient_dob']);
  });

  it('ignores the request id and the bookkeeping columns, which content does not carry', () => {
    // A row marked unavailable, read and hashed differently: none of it is content.
    const stored: StoredRow = {
      ...STORED,
      unavailable_at: '2024-05-02T00:00:00.000Z',
      synced_at: '2024-05-02T00:00:00.000Z',
      read_at: null,
      first_seen_at: '2024-04-01T00:00:00.000Z',
      content_hash: 'hash-2',
    };
    expect(diffColumns(stored, contentOf(STORED))).toEqual([]);
    expect(diffColumns(STORED, { ...contentOf(STORED), request_id: 'R-2002' })).toEqual([]);
  });
});

describe('changedRoles', () => {
  const PICKUP = location('pickup');
  const DESTINATION = location('destination');

  it('reports nothing when neither side has locations', () => {
    expect(changedRoles([], [])).toEqual([]);
  });

  it('reports nothing for equal locations, in any order', () => {
    expect(changedRoles([PICKUP, DESTINATION], [PICKUP, DESTINATION])).toEqual([]);
    expect(changedRoles([PICKUP, DESTINATION], [DESTINATION, PICKUP])).toEqual([]);
  });

  it('ignores the ids: a webhook location carries none, a stored one may', () => {
    const incoming = [location('pickup', { location_id: null }), location('destination')];
    expect(changedRoles([PICKUP, DESTINATION], incoming)).toEqual([]);
    const other = [location('pickup', { location_id: 'moved-id', request_id: 'R-other' })];
    expect(changedRoles([PICKUP], other)).toEqual([]);
  });

  it('reports a role added or removed', () => {
    expect(changedRoles([PICKUP], [PICKUP, DESTINATION])).toEqual(['destination']);
    expect(changedRoles([PICKUP, DESTINATION], [DESTINATION])).toEqual(['pickup']);
    expect(changedRoles([], [PICKUP])).toEqual(['pickup']);
    expect(changedRoles([DESTINATION], [])).toEqual(['destination']);
  });

  it('counts a location whose members are all null as present', () => {
    const blank = location('pickup', {
      location_id: null,
      ...Object.fromEntries(LOCATION_MEMBERS.map((member) => [member, null])),
    });
    expect(changedRoles([], [blank])).toEqual(['pickup']);
    expect(changedRoles([blank], [])).toEqual(['pickup']);
    expect(changedRoles([blank], [{ ...blank, location_id: 'x' }])).toEqual([]);
  });

  /** For each compared member, a value different from the pickup's. */
  const MEMBER_CHANGE: [(typeof LOCATION_MEMBERS)[number], string | number | null][] = [
    ['lat', 41.4994],
    ['lng', null],
    ['zip', '44114'],
    ['city', 'cleveland'],
    ['name', 'Lakeside Clinic '],
    ['state', 'PA'],
    ['street', '2 Lakeside Ave'],
    ['address', ''],
    ['country', 'CA'],
  ];

  it('has a case for every compared member', () => {
    expect(MEMBER_CHANGE.map(([member]) => member)).toEqual([...LOCATION_MEMBERS]);
  });

  it.each(MEMBER_CHANGE)(
    'reports the role when only %s differs (new value %j)',
    (member, value) => {
      const moved = location('pickup', { [member]: value });
      expect(changedRoles([PICKUP, DESTINATION], [moved, DESTINATION])).toEqual(['pickup']);
      expect(changedRoles([moved, DESTINATION], [PICKUP, DESTINATION])).toEqual(['pickup']);
    },
  );

  it('tells coordinates apart at the last digit', () => {
    const nudged = location('destination', { lat: 41.505100000000006 });
    expect(nudged.lat).not.toBe(DESTINATION.lat);
    expect(changedRoles([DESTINATION], [nudged])).toEqual(['destination']);
  });

  it('reports both roles in the order pickup, destination', () => {
    const incoming = [location('destination', { zip: '00000' }), location('pickup', { zip: '1' })];
    expect(changedRoles([DESTINATION, PICKUP], incoming)).toEqual(['pickup', 'destination']);
    expect(changedRoles([PICKUP], [DESTINATION])).toEqual(['pickup', 'destination']);
  });
});

describe('pick', () => {
  it('gives the named columns as a JSON object, in the order named', () => {
    expect(pick(STORED, ['patient_dob', 'list_state'])).toBe(
      '{"patient_dob":"1950-07-04","list_state":"accepted"}',
    );
  });

  it('leaves out columns not named', () => {
    expect(pick(STORED, ['account_id'])).toBe('{"account_id":"A-1"}');
  });

  it('gives {} for no columns', () => {
    expect(pick(STORED, [])).toBe('{}');
  });

  it('gives null for a null, undefined or missing column', () => {
    // StoredRow carries no raw_json: the change log holds null for it on both sides.
    expect(pick({ a: null, b: undefined }, ['a', 'b', 'raw_json'])).toBe(
      '{"a":null,"b":null,"raw_json":null}',
    );
    expect(pick(STORED, ['collection_id', 'raw_json'])).toBe(
      '{"collection_id":null,"raw_json":null}',
    );
  });

  it('keeps falsy values that are not null: 0, false and the empty string', () => {
    expect(pick({ flag: 0, on: false, text: '' }, ['flag', 'on', 'text'])).toBe(
      '{"flag":0,"on":false,"text":""}',
    );
  });

  it('escapes text so that it parses back to the same values', () => {
    const row = { name: 'O\'Hara "Jr." \\ Schäfer\n', email: '\u0000x' };
    expect(JSON.parse(pick(row, ['name', 'email']))).toEqual(row);
  });

  it('names a column named twice once', () => {
    expect(pick(STORED, ['list_state', 'account_id', 'list_state'])).toBe(
      '{"list_state":"accepted","account_id":"A-1"}',
    );
  });
});

/*
 * Properties over generated rows. Each kind draws from a few values, so that two independent rows
 * agree in some columns and differ in others.
 */

const timestampArb = fc.constantFrom(
  null,
  '2024-05-01T14:00:00.000Z',
  '2024-05-01T14:00:00.001Z',
  '2024-05-01T14:00:01.000Z',
);
const arbitraryOfKind = {
  boolean: fc.constantFrom(null, 0, 1),
  timestamp: timestampArb,
  date: fc.constantFrom(null, '1950-07-04', '1950-07-05'),
  text: fc.constantFrom(null, '', 'a', 'A', 'b'),
};
const valueArb = (column: ContentColumn): fc.Arbitrary<ContentValue> => {
  const kind = requests.columns[column].kind;
  return kind === 'boolean' || kind === 'timestamp' || kind === 'date'
    ? arbitraryOfKind[kind]
    : arbitraryOfKind.text;
};
/** A value of the column's kind that differs from `value`. */
function otherValue(column: ContentColumn, value: ContentValue): ContentValue {
  const kind = requests.columns[column].kind;
  if (kind === 'boolean') return value === 1 ? 0 : 1;
  if (kind === 'timestamp' && typeof value === 'string')
    return new Date(Date.parse(value) + 1).toISOString();
  if (kind === 'timestamp') return '2024-05-01T14:00:00.000Z';
  if (kind === 'date') return value === '1950-07-04' ? '1950-07-05' : '1950-07-04';
  return value === null ? '' : `${value}~`;
}

const storedRowArb: fc.Arbitrary<StoredRow> = fc
  .record(Object.fromEntries(CONTENT_COLUMNS.map((column) => [column, valueArb(column)])))
  .chain((content) =>
    fc
      .record({
        unavailable_at: timestampArb,
        read_at: timestampArb,
        content_hash: fc.constantFrom(null, 'hash-1', 'hash-2'),
      })
      .map((bookkeeping) => ({
        ...STORED,
        ...content,
        ...bookkeeping,
      })),
  ) as fc.Arbitrary<StoredRow>;

const memberArb = {
  lat: fc.constantFrom(null, 0, 41.4993, 41.5051),
  lng: fc.constantFrom(null, -81.6944, -81.6052),
  text: fc.constantFrom(null, '', 'a', 'b'),
};
const locationArb = (role: LocationRow['role']): fc.Arbitrary<LocationRow> =>
  fc
    .record({
      location_id: fc.constantFrom(null, 'id-1', 'id-2'),
      lat: memberArb.lat,
      lng: memberArb.lng,
      zip: memberArb.text,
      city: memberArb.text,
      name: memberArb.text,
      state: memberArb.text,
      street: memberArb.text,
      address: memberArb.text,
      country: memberArb.text,
    })
    .map((members) => ({ request_id: 'R-1001', role, ...members }));
/** The locations of one request: at most one per role, in either order. */
const locationsArb: fc.Arbitrary<LocationRow[]> = fc
  .tuple(fc.option(locationArb('pickup')), fc.option(locationArb('destination')), fc.boolean())
  .map(([pickup, destination, isReversed]) => {
    const rows = [pickup, destination].filter((row): row is LocationRow => row !== null);
    return isReversed ? rows.reverse() : rows;
  });

describe('properties of diffColumns', () => {
  it('finds nothing between a row and its own content', () => {
    fc.assert(
      fc.property(storedRowArb, (row) => {
        expect(diffColumns(row, row)).toEqual([]);
        expect(diffColumns(row, contentOf({ ...row }))).toEqual([]);
      }),
    );
  });

  it('names the same columns whichever side is stored', () => {
    fc.assert(
      fc.property(storedRowArb, storedRowArb, (a, b) => {
        expect(diffColumns(a, contentOf(b))).toEqual(diffColumns(b, contentOf(a)));
      }),
    );
  });

  it('names exactly the columns altered, in table order', () => {
    fc.assert(
      fc.property(storedRowArb, fc.subarray([...CONTENT_COLUMNS]), (row, altered) => {
        const changes = Object.fromEntries(
          altered.map((column) => [column, otherValue(column, row[column])]),
        );
        const merged = contentOf(withContent(row, changes));
        expect(diffColumns(row, merged)).toEqual(
          CONTENT_COLUMNS.filter((column) => altered.includes(column)),
        );
      }),
    );
  });
});

describe('properties of changedRoles', () => {
  it('finds nothing between locations and the same locations reordered, without ids', () => {
    fc.assert(
      fc.property(locationsArb, (rows) => {
        const incoming = [...rows].reverse().map((row) => ({ ...row, location_id: null }));
        expect(changedRoles(rows, incoming)).toEqual([]);
      }),
    );
  });

  it('names the same roles whichever side is stored, pickup first', () => {
    fc.assert(
      fc.property(locationsArb, locationsArb, (a, b) => {
        const roles = changedRoles(a, b);
        expect(roles).toEqual(changedRoles(b, a));
        expect(roles).toEqual(
          (['pickup', 'destination'] as const).filter((r) => roles.includes(r)),
        );
      }),
    );
  });

  it('names exactly the role whose member was altered', () => {
    fc.assert(
      fc.property(
        locationsArb.filter((rows) => rows.length > 0),
        fc.nat(),
        fc.constantFrom(...LOCATION_MEMBERS),
        (rows, which, member) => {
          const target = rows[which % rows.length]!;
          const value = target[member];
          const other =
            typeof value === 'number' ? value + 0.5 : value === null ? 'x' : `${value}~`;
          const incoming = rows.map((row) => (row === target ? { ...row, [member]: other } : row));
          expect(changedRoles(rows, incoming)).toEqual([target.role]);
        },
      ),
    );
  });
});

describe('properties of pick', () => {
  it('gives each named column once, in first-named order, its value or null', () => {
    fc.assert(
      fc.property(
        storedRowArb,
        fc.array(fc.constantFrom(...CONTENT_COLUMNS, 'raw_json', 'no_such_column'), {
          maxLength: 8,
        }),
        (row, columns) => {
          const picked = JSON.parse(pick(row, columns)) as Record<string, unknown>;
          expect(Object.keys(picked)).toEqual([...new Set(columns)]);
          const values = row as unknown as Record<string, unknown>;
          for (const column of columns) expect(picked[column]).toBe(values[column] ?? null);
        },
      ),
    );
  });
});
