CREATE TABLE `schema_drift` (
	`drift_key` text PRIMARY KEY NOT NULL,
	`request_id` text,
	`source` text NOT NULL,
	`member` text NOT NULL,
	`problem` text NOT NULL,
	`expected` text,
	`received` text,
	`first_seen_at` text NOT NULL,
	`last_seen_at` text NOT NULL,
	`count` integer DEFAULT 1 NOT NULL
);
--> statement-breakpoint
CREATE INDEX `schema_drift_member_idx` ON `schema_drift` (`member`,`problem`);--> statement-breakpoint
CREATE INDEX `schema_drift_request_idx` ON `schema_drift` (`request_id`);--> statement-breakpoint
ALTER TABLE `requests` ADD `read_at` text;--> statement-breakpoint
ALTER TABLE `sync_runs` ADD `schema_drift` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
-- Rows read before this version: their read time is the time they were written.
UPDATE `requests` SET `read_at` = `synced_at` WHERE `read_at` IS NULL;