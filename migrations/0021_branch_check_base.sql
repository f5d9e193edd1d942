ALTER TABLE `branches` ADD `check_base` integer;--> statement-breakpoint
CREATE INDEX `branches_check_idx` ON `branches` (`check_base`) WHERE check_base IS NOT NULL;--> statement-breakpoint
UPDATE `branches` SET `check_base` = COALESCE(`last_check_at`, `created_at`) WHERE EXISTS (SELECT 1 FROM `endpoints` e WHERE e.`branch_id` = `branches`.`id`);--> statement-breakpoint
CREATE TRIGGER `endpoints_check_base_insert` AFTER INSERT ON `endpoints` BEGIN
  UPDATE `branches` SET `check_base` = COALESCE(`last_check_at`, `created_at`) WHERE `id` = NEW.`branch_id` AND `check_base` IS NULL;
END;--> statement-breakpoint
CREATE TRIGGER `endpoints_check_base_delete` AFTER DELETE ON `endpoints` BEGIN
  UPDATE `branches` SET `check_base` = NULL WHERE `id` = OLD.`branch_id` AND NOT EXISTS (SELECT 1 FROM `endpoints` WHERE `branch_id` = OLD.`branch_id`);
END;--> statement-breakpoint
CREATE TRIGGER `endpoints_check_base_move` AFTER UPDATE OF `branch_id` ON `endpoints` BEGIN
  UPDATE `branches` SET `check_base` = NULL WHERE `id` = OLD.`branch_id` AND NOT EXISTS (SELECT 1 FROM `endpoints` WHERE `branch_id` = OLD.`branch_id`);
  UPDATE `branches` SET `check_base` = COALESCE(`last_check_at`, `created_at`) WHERE `id` = NEW.`branch_id` AND `check_base` IS NULL;
END;
