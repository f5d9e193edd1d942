ALTER TABLE `branches` ADD `data_source` text;--> statement-breakpoint
ALTER TABLE `branches` ADD `restore_source` text;