CREATE TABLE `backfill_windows` (
	`backfill_key` text NOT NULL,
	`window_from` text NOT NULL,
	`window_to` text NOT NULL,
	`finished_at` text NOT NULL,
	`requests_stored` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`backfill_key`, `window_from`)
);
--> statement-breakpoint
CREATE TABLE `outbox_actions` (
	`outbox_id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`request_id` text NOT NULL,
	`kind` text NOT NULL,
	`notes` text,
	`state_name` text,
	`at` text,
	`reason` text,
	`status` text DEFAULT 'pending' NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`last_error` text,
	`next_attempt_at` text,
	`sent_at` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL
);
--> statement-breakpoint
CREATE INDEX `outbox_actions_pending_idx` ON `outbox_actions` (`status`,`request_id`,`outbox_id`);--> statement-breakpoint
CREATE TABLE `outbox_locations` (
	`outbox_id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`request_id` text NOT NULL,
	`lat` real,
	`lng` real,
	`alt` real,
	`speed` real,
	`timestamp` real,
	`status` text DEFAULT 'pending' NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`last_error` text,
	`next_attempt_at` text,
	`sent_at` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL
);
--> statement-breakpoint
CREATE INDEX `outbox_locations_pending_idx` ON `outbox_locations` (`status`,`request_id`,`timestamp`);--> statement-breakpoint
CREATE TABLE `webhook_events` (
	`event_id` text PRIMARY KEY NOT NULL,
	`envelope` text NOT NULL,
	`event_timestamp` text,
	`service_request_id` text,
	`request_status` text,
	`action` text,
	`event_type` text,
	`payload_json` text NOT NULL,
	`received_at` text NOT NULL,
	`processed_at` text,
	`error` text,
	`attempts` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE INDEX `webhook_events_pending_idx` ON `webhook_events` (`processed_at`,`event_id`);--> statement-breakpoint
CREATE INDEX `webhook_events_request_idx` ON `webhook_events` (`service_request_id`,`event_id`);