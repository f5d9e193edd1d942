CREATE TABLE `catalog_drops` (
	`project_id` text NOT NULL,
	`branch_id` text NOT NULL,
	`kind` text NOT NULL,
	`name` text NOT NULL,
	PRIMARY KEY(`branch_id`, `kind`, `name`),
	FOREIGN KEY (`branch_id`) REFERENCES `branches`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
ALTER TABLE `databases` ADD `origin_id` integer;--> statement-breakpoint
-- Root branches made before drops were kept: what their data started with from the template (the
-- default role and database) and the control plane does not hold goes at their next reconcile, as before.
INSERT INTO `catalog_drops` (`project_id`, `branch_id`, `kind`, `name`)
  SELECT `project_id`, `id`, 'role', 'neondb_owner' FROM `branches` b WHERE `parent_id` IS NULL
    AND NOT EXISTS (SELECT 1 FROM `roles` r WHERE r.`branch_id` = b.`id` AND r.`name` = 'neondb_owner');
--> statement-breakpoint
INSERT INTO `catalog_drops` (`project_id`, `branch_id`, `kind`, `name`)
  SELECT `project_id`, `id`, 'database', 'neondb' FROM `branches` b WHERE `parent_id` IS NULL
    AND NOT EXISTS (SELECT 1 FROM `databases` d WHERE d.`branch_id` = b.`id` AND d.`name` = 'neondb');
