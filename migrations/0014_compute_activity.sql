CREATE TABLE `compute_activity` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`account_id` text NOT NULL,
	`project_id` text NOT NULL,
	`branch_id` text NOT NULL,
	`endpoint_id` text NOT NULL,
	`cu` real NOT NULL,
	`started_at` integer NOT NULL,
	`ended_at` integer
);
--> statement-breakpoint
CREATE INDEX `compute_activity_project_idx` ON `compute_activity` (`project_id`,`started_at`);--> statement-breakpoint
CREATE INDEX `compute_activity_open_idx` ON `compute_activity` (`endpoint_id`) WHERE "compute_activity"."ended_at" IS NULL;