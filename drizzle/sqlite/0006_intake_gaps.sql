CREATE TABLE `intake_gaps` (
	`gap_id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`started_at` text NOT NULL,
	`ended_at` text NOT NULL,
	`seconds` real NOT NULL,
	`requests_at_risk` integer DEFAULT 0 NOT NULL,
	`reason` text NOT NULL,
	`is_alarmed` integer DEFAULT 0 NOT NULL,
	`reviewed_at` text
);
--> statement-breakpoint
CREATE INDEX `intake_gaps_started_idx` ON `intake_gaps` (`started_at`);