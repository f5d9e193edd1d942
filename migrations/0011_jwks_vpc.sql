CREATE TABLE `project_jwks` (
	`id` text PRIMARY KEY NOT NULL,
	`project_id` text NOT NULL,
	`branch_id` text,
	`jwks_url` text NOT NULL,
	`provider_name` text NOT NULL,
	`jwt_audience` text,
	`role_names` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `project_jwks_project_idx` ON `project_jwks` (`project_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `org_vpc_endpoints` (
	`org_account_id` text NOT NULL,
	`vpc_endpoint_id` text NOT NULL,
	`region_id` text NOT NULL,
	`label` text NOT NULL,
	`created_at` integer NOT NULL,
	`deleted_at` integer,
	PRIMARY KEY(`org_account_id`, `vpc_endpoint_id`),
	FOREIGN KEY (`org_account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `project_vpc_endpoints` (
	`project_id` text NOT NULL,
	`vpc_endpoint_id` text NOT NULL,
	`label` text NOT NULL,
	PRIMARY KEY(`project_id`, `vpc_endpoint_id`),
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade
);
