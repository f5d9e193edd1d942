CREATE TABLE `deleted_projects` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`deleted_at` integer NOT NULL,
	`recoverable_until` integer NOT NULL,
	`project` text NOT NULL,
	`rows` text NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `deleted_projects_account_idx` ON `deleted_projects` (`account_id`,`deleted_at`,`id`);