DROP INDEX `project_permissions_email_idx`;--> statement-breakpoint
ALTER TABLE `project_permissions` ADD `grantee_account_id` text;--> statement-breakpoint
CREATE INDEX `project_permissions_grantee_idx` ON `project_permissions` (`grantee_account_id`) WHERE "project_permissions"."revoked_at" IS NULL;--> statement-breakpoint
-- Existing grants bind to the oldest account whose user has the email, as new ones do.
UPDATE `project_permissions` SET `grantee_account_id` = (
  SELECT `id` FROM `accounts` WHERE `accounts`.`email` = `project_permissions`.`email`
   ORDER BY `created_at`, `id` LIMIT 1
);
