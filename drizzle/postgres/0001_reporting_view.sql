-- One row per request for reporting tools: the effective pickup time (agreed when present, else
-- requested), both addresses, account and facility names, and whether the service still shows it.
CREATE VIEW "request_overview" AS
SELECT
  r.request_id,
  r.list_state AS state,
  r.request_current_state,
  r.unavailable_at IS NOT NULL AS is_unavailable,
  r.unavailable_at,
  COALESCE(r.transport_agreed_for_time, r.transport_pickup_time) AS effective_pickup_time,
  r.transport_pickup_time,
  r.transport_agreed_for_time,
  r.event_dt_utc,
  r.service_level_type,
  r.service_type,
  r.patient_first_name,
  r.patient_last_name,
  r.account_id,
  a.name AS account_name,
  r.facility_id,
  f.name AS facility_name,
  COALESCE(p.address, p.name, p.street) AS pickup_address,
  p.city AS pickup_city,
  p.lat AS pickup_lat,
  p.lng AS pickup_lng,
  COALESCE(d.address, d.name, d.street) AS destination_address,
  d.city AS destination_city,
  d.lat AS destination_lat,
  d.lng AS destination_lng,
  r.is_round_trip_first_trip,
  r.is_round_trip_return_trip,
  r.collection_id,
  r.user_first_name,
  r.user_last_name,
  r.created_timestamp_utc,
  r.last_updated_timestamp_utc,
  r.synced_at
FROM "requests" r
LEFT JOIN "accounts" a ON a.account_id = r.account_id
LEFT JOIN "facilities" f ON f.facility_id = r.facility_id
LEFT JOIN "request_locations" p ON p.request_id = r.request_id AND p.role = 'pickup'
LEFT JOIN "request_locations" d ON d.request_id = r.request_id AND d.role = 'destination';
