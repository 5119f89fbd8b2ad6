ALTER TABLE `sync_runs` ADD `pid` integer;--> statement-breakpoint
ALTER TABLE `sync_runs` ADD `host` text;