/**
 * Fixed word lists the generator draws from. Names deliberately include apostrophes, hyphens,
 * diacritics and non-Latin scripts, because a mirror that mangles `O'Brien` or `Nguyễn` is wrong.
 * Places are fictional streets in real central-Ohio towns, so coordinates and ZIPs look plausible.
 */
import type { AccountKind, SimUser } from './model.js';

/** Given names. */
export const FIRST_NAMES = [
  'José',
  'Zoë',
  'Siobhán',
  'François',
  'Łukasz',
  'Renée',
  'Björn',
  'Mary-Kate',
  'Chloé',
  'Ana María',
  'Jürgen',
  'Ngozi',
  'Aaliyah',
  'James',
  'Maria',
  'Robert',
  'Linda',
  'Michael',
  'Patricia',
  'William',
  'Barbara',
  'David',
  'Elizabeth',
  'Wei',
  'Priya',
  'Mohammed',
  'Olga',
  'Hiroshi',
  'Fatima',
  "D'Andre",
  'Thị Lan',
  'Søren',
  'Eleanor',
  'Dorothy',
  'Harold',
  'Walter',
] as const;

/** Family names. */
export const LAST_NAMES = [
  "O'Brien",
  'Müller',
  'Nguyễn',
  "D'Angelo",
  'García',
  'Smith',
  'Johnson',
  'Williams',
  'Brown',
  'Jones',
  'Martínez',
  'Kowalski',
  'Østergaard',
  'van der Berg',
  'St. John',
  'McAllister',
  'Papadopoulos',
  'Ng',
  'Li',
  'Nakamura',
  'Okafor',
  'Schäfer',
  'López-Hernández',
  'Dubois',
  'Cohen',
  'Patel',
  'Ivanova',
  'Björk',
  "O'Neil-Watts",
  'Trần',
  '김',
  'Al-Sayed',
] as const;

/** Towns with a centre point and a ZIP code. */
export const TOWNS = [
  { city: 'Columbus', state: 'OH', zip: '43215', lat: 39.9612, lng: -82.9988 },
  { city: 'Columbus', state: 'OH', zip: '43205', lat: 39.9526, lng: -82.9716 },
  { city: 'Dublin', state: 'OH', zip: '43017', lat: 40.0992, lng: -83.1141 },
  { city: 'Westerville', state: 'OH', zip: '43081', lat: 40.1262, lng: -82.9291 },
  { city: 'Grove City', state: 'OH', zip: '43123', lat: 39.8815, lng: -83.093 },
  { city: 'Hilliard', state: 'OH', zip: '43026', lat: 40.0334, lng: -83.1582 },
  { city: 'Reynoldsburg', state: 'OH', zip: '43068', lat: 39.9548, lng: -82.8121 },
  { city: 'Upper Arlington', state: 'OH', zip: '43221', lat: 40.0276, lng: -83.0627 },
  { city: 'Gahanna', state: 'OH', zip: '43230', lat: 40.0192, lng: -82.8793 },
  { city: 'Delaware', state: 'OH', zip: '43015', lat: 40.2987, lng: -83.068 },
  { city: 'Newark', state: 'OH', zip: '43055', lat: 40.0581, lng: -82.4013 },
] as const;

/** Street names. */
export const STREETS = [
  'N High St',
  'E Broad St',
  'Oak Ave',
  'Maple Dr',
  "King's Rd",
  'Sawmill Pkwy',
  'Cleveland Ave',
  'Livingston Ave',
  'Olentangy River Rd',
  'Refugee Rd',
  'Riverside Dr',
  'Main St',
  'Elm Ct',
  'Schrock Rd',
  'Hamilton Rd',
  'Morse Rd',
  'Brice Rd',
  'Cemetery Rd',
  'Stringtown Rd',
  'Bethel Rd',
] as const;

/** Unit designators appended to some home addresses. */
export const UNITS = ['Apt 4B', 'Unit #12', 'Apt 201', 'Lot 37', 'Ste 110'] as const;

/** Requesting organizations by kind; names carry apostrophes, ampersands and an en dash. */
export const ACCOUNT_TEMPLATES: readonly { kind: AccountKind; name: string }[] = [
  { kind: 'hospital', name: "St. Brigid's Regional Medical Center" },
  { kind: 'hospital', name: 'Mercy Valley General Hospital' },
  { kind: 'hospital', name: "Olentangy Children's Hospital" },
  { kind: 'hospital', name: 'Lakeview University Medical Center' },
  { kind: 'hospital', name: 'Good Samaritan Hospital – East Campus' },
  { kind: 'hospital', name: 'Scioto Heart & Vascular Institute' },
  { kind: 'snf', name: 'Sunrise Skilled Nursing & Rehabilitation' },
  { kind: 'snf', name: 'Maple Grove Care Center' },
  { kind: 'snf', name: 'The Willows at Dublin' },
  { kind: 'snf', name: 'Heritage Oaks Nursing Home' },
  { kind: 'dialysis', name: 'Riverbend Dialysis Center' },
  { kind: 'dialysis', name: 'KidneyCare Westerville' },
  { kind: 'dialysis', name: 'Capital City Dialysis' },
  { kind: 'hospice', name: 'Hope Hospice of Central Ohio' },
  { kind: 'behavioral', name: "Harbor Behavioral Health (Women's Unit)" },
  { kind: 'snf', name: 'Björklund Senior Living & Memory Care' },
  { kind: 'hospital', name: 'Nationwide Orthopedic Surgery Center' },
];

/** Every service level the service is seen to use. */
export const SERVICE_LEVELS = [
  'ALS',
  'Ambulatory Van',
  'BLS',
  'CCT',
  'FW',
  'Homevisit',
  'RW',
  'SCT',
  'Secure Car',
  'Sedan',
  'SV',
  'WC',
] as const;

/** Service levels an organization of each kind may configure. */
export const LEVELS_BY_KIND: Record<AccountKind, readonly string[]> = {
  hospital: ['ALS', 'BLS', 'CCT', 'SCT', 'WC', 'Ambulatory Van', 'RW', 'FW', 'SV'],
  snf: ['BLS', 'WC', 'Ambulatory Van', 'Sedan', 'SV'],
  dialysis: ['WC', 'Ambulatory Van', 'Sedan', 'BLS'],
  hospice: ['BLS', 'WC', 'Homevisit', 'SV'],
  behavioral: ['Secure Car', 'BLS', 'Sedan'],
};

/** The service type a level belongs to; the type decides the configurable fields. */
export const SERVICE_TYPE_BY_LEVEL: Record<string, string> = {
  ALS: 'Ambulance',
  BLS: 'Ambulance',
  CCT: 'Critical Care Ambulance',
  SCT: 'Critical Care Ambulance',
  WC: 'Wheelchair Van',
  'Ambulatory Van': 'Ambulatory',
  Sedan: 'Ambulatory',
  'Secure Car': 'Secure Transport',
  SV: 'Stretcher Van',
  FW: 'Air Ambulance',
  RW: 'Air Ambulance',
  Homevisit: 'Home Visit',
};

/** Provider dispatchers who accept requests in the web application. */
export const DISPATCHERS: readonly SimUser[] = [
  { first_name: 'Renée', last_name: "O'Connor", email: 'renee.oconnor@demo-provider.example' },
  { first_name: 'Marcus', last_name: 'Hale', email: 'marcus.hale@demo-provider.example' },
  { first_name: 'Thảo', last_name: 'Phạm', email: 'thao.pham@demo-provider.example' },
  { first_name: 'Greg', last_name: 'Ostrowski', email: 'greg.ostrowski@demo-provider.example' },
];

/** The provider's API user: the responder when a request is accepted through the API. */
export const API_USER: SimUser = {
  first_name: 'Open',
  last_name: 'API',
  email: 'openapi@demo-provider.example',
};

/** Requester notes: quotes, newlines, an emoji and a gate code with `#`. */
export const NOTES = [
  'Pt has "DNR" on file – bring copy',
  'Call daughter (Zoë) on arrival; gate code #4471',
  'Needs 2-person assist\nStairs: 3 at entrance, no rail',
  'Bariatric stretcher required 🚑',
  'O2 2 L/min via NC, own tank',
  'Discharge pending pharmacy — call floor before leaving',
  "Patient's dog must stay home",
  'Dialysis chair time 06:15, do not be late',
  '',
] as const;

/** Reasons for transport. */
export const TRANSPORT_REASONS = [
  'Discharge',
  'Dialysis',
  'Appointment',
  'Inter-facility transfer',
  'Admission',
  'Imaging',
  'Wound care',
  'Return home',
] as const;
