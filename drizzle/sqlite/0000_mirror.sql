CREATE TABLE `accounts` (
	`account_id` text PRIMARY KEY NOT NULL,
	`name` text,
	`service_levels_json` text,
	`facilities_json` text,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `facilities` (
	`facility_id` text PRIMARY KEY NOT NULL,
	`name` text,
	`account_id` text,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `facilities_account_idx` ON `facilities` (`account_id`);--> statement-breakpoint
CREATE TABLE `quarantine` (
	`record_key` text PRIMARY KEY NOT NULL,
	`request_id` text,
	`source` text NOT NULL,
	`reason` text NOT NULL,
	`raw_payload` text NOT NULL,
	`first_seen_at` text NOT NULL,
	`last_seen_at` text NOT NULL,
	`seen_count` integer DEFAULT 1 NOT NULL
);
--> statement-breakpoint
CREATE TABLE `request_changes` (
	`change_id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`request_id` text NOT NULL,
	`observed_at` text NOT NULL,
	`kind` text NOT NULL,
	`source` text NOT NULL,
	`changed_columns` text NOT NULL,
	`old_state` text,
	`new_state` text,
	`old_values_json` text,
	`new_values_json` text
);
--> statement-breakpoint
CREATE INDEX `request_changes_request_idx` ON `request_changes` (`request_id`,`observed_at`);--> statement-breakpoint
CREATE INDEX `request_changes_observed_idx` ON `request_changes` (`observed_at`);--> statement-breakpoint
CREATE TABLE `request_fields` (
	`request_id` text NOT NULL,
	`scope` text NOT NULL,
	`name` text NOT NULL,
	`value_json` text,
	PRIMARY KEY(`request_id`, `scope`, `name`),
	FOREIGN KEY (`request_id`) REFERENCES `requests`(`request_id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `request_locations` (
	`request_id` text NOT NULL,
	`role` text NOT NULL,
	`location_id` text,
	`lat` real,
	`lng` real,
	`zip` text,
	`city` text,
	`name` text,
	`state` text,
	`street` text,
	`address` text,
	`country` text,
	PRIMARY KEY(`request_id`, `role`),
	FOREIGN KEY (`request_id`) REFERENCES `requests`(`request_id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `requests` (
	`request_id` text PRIMARY KEY NOT NULL,
	`list_state` text,
	`request_current_state` text,
	`patient_first_name` text,
	`patient_last_name` text,
	`patient_dob` text,
	`transport_pickup_time` text,
	`transport_agreed_for_time` text,
	`service_level_type` text,
	`service_type` text,
	`account_id` text,
	`facility_id` text,
	`user_first_name` text,
	`user_last_name` text,
	`user_email` text,
	`is_round_trip_first_trip` integer,
	`is_round_trip_return_trip` integer,
	`collection_id` text,
	`created_timestamp_utc` text,
	`event_dt_utc` text,
	`last_updated_timestamp_utc` text,
	`unavailable_at` text,
	`synced_at` text NOT NULL,
	`first_seen_at` text NOT NULL,
	`source` text NOT NULL,
	`content_hash` text,
	`raw_json` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `requests_event_dt_idx` ON `requests` (`event_dt_utc`);--> statement-breakpoint
CREATE INDEX `requests_state_event_dt_idx` ON `requests` (`list_state`,`event_dt_utc`);--> statement-breakpoint
CREATE INDEX `requests_account_event_dt_idx` ON `requests` (`account_id`,`event_dt_utc`);--> statement-breakpoint
CREATE INDEX `requests_collection_idx` ON `requests` (`collection_id`);--> statement-breakpoint
CREATE INDEX `requests_unavailable_idx` ON `requests` (`unavailable_at`);--> statement-breakpoint
CREATE TABLE `sync_runs` (
	`run_id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`kind` text NOT NULL,
	`started_at` text NOT NULL,
	`finished_at` text,
	`status` text NOT NULL,
	`window_from` text,
	`window_to` text,
	`list_calls` integer DEFAULT 0 NOT NULL,
	`detail_calls` integer DEFAULT 0 NOT NULL,
	`retries` integer DEFAULT 0 NOT NULL,
	`requests_seen` integer DEFAULT 0 NOT NULL,
	`requests_new` integer DEFAULT 0 NOT NULL,
	`requests_changed` integer DEFAULT 0 NOT NULL,
	`requests_unchanged` integer DEFAULT 0 NOT NULL,
	`requests_unavailable` integer DEFAULT 0 NOT NULL,
	`requests_failed` integer DEFAULT 0 NOT NULL,
	`requests_quarantined` integer DEFAULT 0 NOT NULL,
	`error` text
);
--> statement-breakpoint
CREATE INDEX `sync_runs_kind_started_idx` ON `sync_runs` (`kind`,`started_at`);--> statement-breakpoint
CREATE TABLE `sync_state` (
	`key` text PRIMARY KEY NOT NULL,
	`value` text NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL
);
