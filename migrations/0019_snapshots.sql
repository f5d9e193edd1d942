CREATE TABLE `backup_schedules` (
	`branch_id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`project_id` text NOT NULL,
	`schedule` text NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`branch_id`) REFERENCES `branches`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `snapshots` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`project_id` text NOT NULL,
	`source_branch_id` text NOT NULL,
	`name` text NOT NULL,
	`lsn` text,
	`taken_at` integer NOT NULL,
	`expires_at` integer,
	`manual` integer DEFAULT true NOT NULL,
	`full_size` integer,
	`catalog` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `snapshots_project_idx` ON `snapshots` (`project_id`,`created_at`,`id`);--> statement-breakpoint
ALTER TABLE `branches` ADD `restore_status` text;--> statement-breakpoint
ALTER TABLE `branches` ADD `restored_from` text;--> statement-breakpoint
ALTER TABLE `branches` ADD `restore_target` text;