CREATE TABLE `snapshot_storage` (
	`snapshot_id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`project_id` text NOT NULL,
	`bytes` integer NOT NULL,
	`since` integer NOT NULL,
	`until` integer
);
--> statement-breakpoint
CREATE INDEX `snapshot_storage_project_idx` ON `snapshot_storage` (`project_id`,`since`);--> statement-breakpoint
ALTER TABLE `usage_meter` ADD `history_bytes` integer;