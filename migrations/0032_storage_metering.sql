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
ALTER TABLE `usage_meter` ADD `history_bytes` integer;--> statement-breakpoint
CREATE INDEX `usage_meter_history_idx` ON `usage_meter` (`project_id`,`hour`) WHERE history_bytes IS NOT NULL;--> statement-breakpoint
CREATE INDEX `usage_meter_branch_history_idx` ON `usage_meter` (`project_id`,`branch_id`,`hour`) WHERE history_bytes IS NOT NULL;--> statement-breakpoint
INSERT INTO `snapshot_storage` (`snapshot_id`, `account_id`, `project_id`, `bytes`, `since`, `until`)
  SELECT `id`, `account_id`, `project_id`, `full_size`, `created_at`, `expires_at` FROM `snapshots`
   WHERE `full_size` IS NOT NULL;
