CREATE TABLE `clock_moves` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`account_id` text NOT NULL,
	`wall_ms` integer NOT NULL,
	`to_ms` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `clock_moves_account_idx` ON `clock_moves` (`account_id`,`to_ms`);--> statement-breakpoint
ALTER TABLE `branches` ADD `history_point` text;--> statement-breakpoint
ALTER TABLE `branches` ADD `history_since` integer;