ALTER TABLE `endpoint_versions` ADD `endpoints` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
-- How many endpoints each project has, as its row's count from now on.
INSERT INTO `endpoint_versions` (`project_id`, `version`, `endpoints`)
  SELECT `project_id`, 1, count(*) FROM `endpoints` WHERE true GROUP BY `project_id`
  ON CONFLICT (`project_id`) DO UPDATE SET `endpoints` = excluded.`endpoints`;
--> statement-breakpoint
DROP TRIGGER `endpoints_version_insert`;
--> statement-breakpoint
DROP TRIGGER `endpoints_version_delete`;
--> statement-breakpoint
CREATE TRIGGER `endpoints_version_insert` AFTER INSERT ON `endpoints` BEGIN
  INSERT INTO `endpoint_versions` (`project_id`, `version`, `endpoints`) VALUES (NEW.`project_id`, 1, 1)
    ON CONFLICT (`project_id`) DO UPDATE SET `version` = `version` + 1, `endpoints` = `endpoints` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `endpoints_version_delete` AFTER DELETE ON `endpoints` BEGIN
  INSERT INTO `endpoint_versions` (`project_id`, `version`, `endpoints`) VALUES (OLD.`project_id`, 1, 0)
    ON CONFLICT (`project_id`) DO UPDATE SET `version` = `version` + 1, `endpoints` = `endpoints` - 1;
END;
--> statement-breakpoint
-- An endpoint never changes project today; if one did, the counts would follow it.
CREATE TRIGGER `endpoints_count_move` AFTER UPDATE OF `project_id` ON `endpoints`
  WHEN OLD.`project_id` IS NOT NEW.`project_id` BEGIN
  UPDATE `endpoint_versions` SET `endpoints` = `endpoints` - 1 WHERE `project_id` = OLD.`project_id`;
  INSERT INTO `endpoint_versions` (`project_id`, `version`, `endpoints`) VALUES (NEW.`project_id`, 1, 1)
    ON CONFLICT (`project_id`) DO UPDATE SET `endpoints` = `endpoints` + 1;
END;
