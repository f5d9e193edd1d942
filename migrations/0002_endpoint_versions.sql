CREATE TABLE `endpoint_versions` (
	`project_id` text PRIMARY KEY NOT NULL,
	`version` integer NOT NULL
);
--> statement-breakpoint
CREATE TRIGGER `endpoints_version_insert` AFTER INSERT ON `endpoints` BEGIN
  INSERT INTO `endpoint_versions` (`project_id`, `version`) VALUES (NEW.`project_id`, 1)
    ON CONFLICT (`project_id`) DO UPDATE SET `version` = `version` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `endpoints_version_update` AFTER UPDATE ON `endpoints` BEGIN
  INSERT INTO `endpoint_versions` (`project_id`, `version`) VALUES (NEW.`project_id`, 1)
    ON CONFLICT (`project_id`) DO UPDATE SET `version` = `version` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `endpoints_version_delete` AFTER DELETE ON `endpoints` BEGIN
  INSERT INTO `endpoint_versions` (`project_id`, `version`) VALUES (OLD.`project_id`, 1)
    ON CONFLICT (`project_id`) DO UPDATE SET `version` = `version` + 1;
END;
