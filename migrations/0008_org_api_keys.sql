ALTER TABLE `api_keys` ADD `kind` text DEFAULT 'personal' NOT NULL;--> statement-breakpoint
ALTER TABLE `api_keys` ADD `project_id` text;--> statement-breakpoint
CREATE INDEX `api_keys_project_idx` ON `api_keys` (`project_id`) WHERE "api_keys"."project_id" IS NOT NULL;