/**
 * The simulator's internal model of the service's data, and the shapes it reports to tests.
 * Internal records keep times as epoch milliseconds; the serializer turns them into the wire form.
 */
import type { DriftProfile } from './drift.js';

/** Any JSON value, for the free-form `enabled_*_fields` members and bodies. */
export type JsonValue =
  string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** The request states the list endpoints filter on. */
export const REQUEST_STATES = ['awaiting', 'accepted', 'completed', 'canceled'] as const;
/** A request state as the list endpoints report it. */
export type RequestState = (typeof REQUEST_STATES)[number];

/**
 * How one record writes its timestamps on the wire. The service is seen to use several ISO-8601
 * forms; each record keeps one so a client must normalize rather than compare strings.
 * `seconds` and `offset` carry whole seconds, `millis` carries milliseconds.
 */
export type TimestampStyle = 'seconds' | 'millis' | 'offset';

/** Why a request stopped being available to the provider. */
export type UnavailableReason = 'declined' | 'expired' | 'reassigned' | 'canceled';

/** A location as the detail endpoint serves it; every member may be null. */
export interface SimLocation {
  id: string | null;
  lat: number | null;
  lng: number | null;
  zip: string | null;
  city: string | null;
  name: string | null;
  state: string | null;
  street: string | null;
  address: string | null;
  country: string | null;
}

/** A facility of a requesting organization. */
export interface SimFacility {
  id: string;
  name: string;
  street: string;
  city: string;
  state: string;
  zip: string;
  lat: number;
  lng: number;
  address: string;
}

/** A requesting organization (hospital, SNF, dialysis center, ...). */
export interface SimAccount {
  id: string;
  name: string;
  kind: AccountKind;
  serviceLevels: string[];
  facilities: SimFacility[];
}

/** The kinds of requesting organization the generator knows. */
export type AccountKind = 'hospital' | 'snf' | 'dialysis' | 'hospice' | 'behavioral';

/** The provider user who accepted a request. */
export interface SimUser {
  first_name: string;
  last_name: string;
  email: string;
}

/** One transport request: the simulator's truth. */
export interface SimRequest {
  id: string;
  state: RequestState;
  isVisible: boolean;
  unavailableReason: UnavailableReason | null;
  style: TimestampStyle;
  createdMs: number;
  pickupMs: number;
  agreedMs: number | null;
  lastUpdatedMs: number;
  patient: { firstName: string; lastName: string; dob: string };
  pickup: SimLocation;
  destination: SimLocation;
  serviceLevel: string;
  serviceType: string;
  accountId: string;
  facility: { id: string; name: string };
  /** Null until accepted; served as empty strings (the spec types the members as strings). */
  user: SimUser | null;
  patientFields: Record<string, JsonValue>;
  requestFields: Record<string, JsonValue>;
  isRoundTripFirst: boolean;
  isRoundTripReturn: boolean;
  collectionId: string;
  responseNotes: string | null;
  /** Last state-update name the provider sent (en_route, arrived, ...), if any. */
  progress: string | null;
  /** A best-time proposal (awaiting) or change request (accepted) the requester has not answered. */
  pendingProposalMs: number | null;
  pendingChangeMs: number | null;
  /** How this request's records depart from the documented shape, when drift applies. */
  drift: DriftProfile;
}

/** What a perfect mirror should hold for one request. */
export interface TruthRecord {
  requestId: string;
  listState: RequestState;
  /** The detail record exactly as the detail endpoint would serve it now. */
  detail: Record<string, JsonValue>;
  createdTimestampUtc: string;
  eventDtUtc: string;
  lastUpdatedTimestampUtc: string;
  isVisible: boolean;
}

/** What changed a request. */
export type MutationKind =
  | 'created'
  | 'accepted'
  | 'completed'
  | 'canceled'
  | 'reopened'
  | 'progress'
  | 'agreed_time'
  | 'edited'
  | 'unavailable'
  | 'proposal_accepted'
  | 'proposal_declined'
  | 'change_request_accepted'
  | 'change_request_declined';

/** One change to one request, as emitted on `events` ('mutation'). */
export interface MutationSummary {
  kind: MutationKind;
  requestId: string;
  /** Clock time of the change, canonical ISO. */
  at: string;
  /** The request's new last_updated_timestamp_utc, canonical ISO. */
  lastUpdated: string;
  state: RequestState;
  isVisible: boolean;
  /** 'api' when a provider call through the HTTP API caused it, else 'service'. */
  origin: 'service' | 'api';
  /** For 'unavailable': why. For 'edited': what. */
  reason?: string;
}
