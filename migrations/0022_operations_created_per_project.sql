DROP INDEX `operations_created_us_unique`;--> statement-breakpoint
DROP INDEX `operations_project_created_idx`;--> statement-breakpoint
CREATE UNIQUE INDEX `operations_project_created_uq` ON `operations` (`project_id`,`created_us`);