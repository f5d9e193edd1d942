CREATE TABLE `project_permissions` (
	`id` text PRIMARY KEY NOT NULL,
	`project_id` text NOT NULL,
	`email` text NOT NULL,
	`granted_at` integer NOT NULL,
	`revoked_at` integer,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `project_permissions_project_idx` ON `project_permissions` (`project_id`,`granted_at`);--> statement-breakpoint
CREATE INDEX `project_permissions_email_idx` ON `project_permissions` (`email`) WHERE "project_permissions"."revoked_at" IS NULL;