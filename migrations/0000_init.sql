CREATE TABLE `accounts` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`name` text NOT NULL,
	`email` text NOT NULL,
	`plan` text NOT NULL,
	`is_default` integer DEFAULT false NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `accounts_org_id_unique` ON `accounts` (`org_id`);--> statement-breakpoint
CREATE TABLE `api_keys` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`account_id` text NOT NULL,
	`name` text NOT NULL,
	`key_hash` text NOT NULL,
	`created_at` integer NOT NULL,
	`created_by` text NOT NULL,
	`last_used_at` integer,
	`last_used_from_addr` text DEFAULT '' NOT NULL,
	`revoked_at` integer,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `api_keys_key_hash_unique` ON `api_keys` (`key_hash`);--> statement-breakpoint
CREATE INDEX `api_keys_account_idx` ON `api_keys` (`account_id`,`id`);--> statement-breakpoint
CREATE TABLE `branches` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`project_id` text NOT NULL,
	`parent_id` text,
	`name` text NOT NULL,
	`is_default` integer DEFAULT false NOT NULL,
	`protected` integer DEFAULT false NOT NULL,
	`current_state` text NOT NULL,
	`pending_state` text,
	`state_changed_at` integer NOT NULL,
	`creation_source` text NOT NULL,
	`parent_lsn` text,
	`parent_timestamp` integer,
	`logical_size` integer DEFAULT 0 NOT NULL,
	`expires_at` integer,
	`annotations` text,
	`last_check_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `branches_project_name_uq` ON `branches` (`project_id`,`name`);--> statement-breakpoint
CREATE INDEX `branches_project_order_idx` ON `branches` (`project_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `branches_parent_idx` ON `branches` (`parent_id`);--> statement-breakpoint
CREATE TABLE `emulator_state` (
	`key` text PRIMARY KEY NOT NULL,
	`value` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `faults` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`account_id` text NOT NULL,
	`action` text NOT NULL,
	`project_id` text,
	`endpoint_id` text,
	`remaining` integer NOT NULL,
	`message` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `endpoints` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`project_id` text NOT NULL,
	`branch_id` text NOT NULL,
	`type` text NOT NULL,
	`name` text,
	`host` text NOT NULL,
	`proxy_host` text NOT NULL,
	`region_id` text NOT NULL,
	`provisioner` text NOT NULL,
	`creation_source` text NOT NULL,
	`autoscaling_limit_min_cu` real NOT NULL,
	`autoscaling_limit_max_cu` real NOT NULL,
	`suspend_timeout_seconds` integer NOT NULL,
	`current_state` text NOT NULL,
	`pending_state` text,
	`settings` text NOT NULL,
	`pooler_enabled` integer NOT NULL,
	`pooler_mode` text NOT NULL,
	`disabled` integer NOT NULL,
	`passwordless_access` integer NOT NULL,
	`last_active` integer,
	`started_at` integer,
	`suspended_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`branch_id`) REFERENCES `branches`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `endpoints_one_read_write_per_branch` ON `endpoints` (`branch_id`) WHERE type = 'read_write';--> statement-breakpoint
CREATE INDEX `endpoints_project_idx` ON `endpoints` (`project_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `endpoints_branch_idx` ON `endpoints` (`branch_id`);--> statement-breakpoint
CREATE INDEX `endpoints_active_idx` ON `endpoints` (`current_state`);--> statement-breakpoint
CREATE TABLE `operations` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`project_id` text NOT NULL,
	`branch_id` text,
	`endpoint_id` text,
	`action` text NOT NULL,
	`status` text NOT NULL,
	`failures_count` integer DEFAULT 0 NOT NULL,
	`error` text,
	`created_us` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`due_at` integer,
	`started_at` integer,
	`total_duration_ms` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `operations_created_us_unique` ON `operations` (`created_us`);--> statement-breakpoint
CREATE INDEX `operations_project_created_idx` ON `operations` (`project_id`,`created_us`);--> statement-breakpoint
CREATE INDEX `operations_pending_idx` ON `operations` (`status`,`due_at`) WHERE status IN ('scheduling', 'running');--> statement-breakpoint
CREATE INDEX `operations_endpoint_idx` ON `operations` (`endpoint_id`,`created_us`);--> statement-breakpoint
CREATE INDEX `operations_branch_idx` ON `operations` (`branch_id`,`created_us`);--> statement-breakpoint
CREATE TABLE `projects` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`name` text NOT NULL,
	`region_id` text NOT NULL,
	`pg_version` integer NOT NULL,
	`platform_id` text NOT NULL,
	`provisioner` text NOT NULL,
	`proxy_host` text NOT NULL,
	`cpu_used_sec` integer DEFAULT 0 NOT NULL,
	`branch_logical_size_limit` integer NOT NULL,
	`history_retention_seconds` integer NOT NULL,
	`store_passwords` integer DEFAULT true NOT NULL,
	`locked` integer DEFAULT false NOT NULL,
	`creation_source` text NOT NULL,
	`default_endpoint_settings` text NOT NULL,
	`settings` text NOT NULL,
	`compute_last_active_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `projects_account_order_idx` ON `projects` (`account_id`,`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `databases` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`account_id` text NOT NULL,
	`project_id` text NOT NULL,
	`branch_id` text NOT NULL,
	`name` text NOT NULL,
	`owner_name` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`branch_id`) REFERENCES `branches`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`branch_id`,`owner_name`) REFERENCES `roles`(`branch_id`,`name`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `databases_branch_name_uq` ON `databases` (`branch_id`,`name`);--> statement-breakpoint
CREATE INDEX `databases_owner_idx` ON `databases` (`branch_id`,`owner_name`);--> statement-breakpoint
CREATE TABLE `roles` (
	`account_id` text NOT NULL,
	`project_id` text NOT NULL,
	`branch_id` text NOT NULL,
	`name` text NOT NULL,
	`password` text NOT NULL,
	`protected` integer DEFAULT false NOT NULL,
	`no_login` integer DEFAULT false NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`branch_id`, `name`),
	FOREIGN KEY (`branch_id`) REFERENCES `branches`(`id`) ON UPDATE no action ON DELETE cascade
);
