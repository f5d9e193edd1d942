CREATE TABLE `usage_meter` (
	`account_id` text NOT NULL,
	`project_id` text NOT NULL,
	`branch_id` text NOT NULL,
	`hour` integer NOT NULL,
	`transfer_bytes` integer DEFAULT 0 NOT NULL,
	`written_bytes` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`branch_id`, `hour`)
);
--> statement-breakpoint
CREATE INDEX `usage_meter_project_idx` ON `usage_meter` (`project_id`,`hour`);--> statement-breakpoint
ALTER TABLE `branches` ADD `metered_lsn` text;