CREATE TABLE `config_undo` (
	`operation_id` text PRIMARY KEY NOT NULL,
	`branch_id` text NOT NULL,
	`undo` text NOT NULL,
	FOREIGN KEY (`branch_id`) REFERENCES `branches`(`id`) ON UPDATE no action ON DELETE cascade
);
