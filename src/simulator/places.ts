/**
 * Accounts, facilities and locations. Location members are nullable in the spec, so about one in
 * twenty is null here: a mirror must store a location with a missing ZIP or coordinate.
 */
import { ACCOUNT_TEMPLATES, LEVELS_BY_KIND, STREETS, TOWNS, UNITS } from './catalog.js';
import type { SimAccount, SimFacility, SimLocation } from './model.js';
import type { Random } from './random.js';

const FACILITY_SUFFIXES = ['North Campus', 'Outpatient Pavilion', 'Wing B – Rehab', 'West Clinic'];

function jitter(rng: Random, centre: number): number {
  return Math.round((centre + (rng.next() - 0.5) * 0.08) * 1e6) / 1e6;
}

function streetAddress(rng: Random, withUnit: boolean): string {
  const base = `${rng.int(100, 9999)} ${rng.pick(STREETS)}`;
  return withUnit ? `${base}, ${rng.pick(UNITS)}` : base;
}

function facility(rng: Random, name: string): SimFacility {
  const town = rng.pick(TOWNS);
  const street = streetAddress(rng, false);
  return {
    id: rng.uuid(),
    name,
    street,
    city: town.city,
    state: town.state,
    zip: town.zip,
    lat: jitter(rng, town.lat),
    lng: jitter(rng, town.lng),
    address: `${street}, ${town.city}, ${town.state} ${town.zip}, USA`,
  };
}

/** Between 5 and 15 requesting organizations, each with its service levels and facilities. */
export function generateAccounts(rng: Random): SimAccount[] {
  const templates = rng.sample(ACCOUNT_TEMPLATES, rng.int(5, 15));
  return templates.map((template) => {
    const levels = LEVELS_BY_KIND[template.kind];
    const serviceLevels = rng.sample(levels, rng.int(2, levels.length));
    const extra = rng.sample(FACILITY_SUFFIXES, rng.int(0, 2));
    return {
      id: rng.uuid(),
      name: template.name,
      kind: template.kind,
      serviceLevels,
      facilities: [template.name, ...extra.map((s) => `${template.name} – ${s}`)].map((n) =>
        facility(rng, n),
      ),
    };
  });
}

/** Nulls a member about one time in twenty, as incomplete address data does. */
function nullable<T>(rng: Random, value: T): T | null {
  return rng.chance(0.05) ? null : value;
}

/** A location at a facility; its `name` is the facility's name. */
export function facilityLocation(rng: Random, f: SimFacility): SimLocation {
  return {
    id: rng.uuid(),
    lat: nullable(rng, f.lat),
    lng: nullable(rng, f.lng),
    zip: nullable(rng, f.zip),
    city: nullable(rng, f.city),
    name: nullable(rng, f.name),
    state: nullable(rng, f.state),
    street: nullable(rng, f.street),
    address: nullable(rng, f.address),
    country: nullable(rng, 'US'),
  };
}

/** A patient's home; its `name` is the raw address string as typed by the requester. */
export function homeLocation(rng: Random): SimLocation {
  const town = rng.pick(TOWNS);
  const street = streetAddress(rng, rng.chance(0.3));
  return {
    id: rng.uuid(),
    lat: nullable(rng, jitter(rng, town.lat)),
    lng: nullable(rng, jitter(rng, town.lng)),
    zip: nullable(rng, town.zip),
    city: nullable(rng, town.city),
    name: nullable(rng, `${street} ${town.city}`.toLowerCase()),
    state: nullable(rng, town.state),
    street: nullable(rng, street),
    address: nullable(rng, `${street}, ${town.city}, ${town.state} ${town.zip}, USA`),
    country: nullable(rng, 'US'),
  };
}

/** A copy of `loc` with a fresh id, as the service stores each leg's locations separately. */
export function copyLocation(rng: Random, loc: SimLocation): SimLocation {
  return { ...loc, id: rng.uuid() };
}
