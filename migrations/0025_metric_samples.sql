CREATE TABLE `metric_samples` (
	`account_id` text NOT NULL,
	`project_id` text NOT NULL,
	`subject_id` text NOT NULL,
	`metric` text NOT NULL,
	`minute` integer NOT NULL,
	`peak` integer NOT NULL,
	`last` integer NOT NULL,
	PRIMARY KEY(`subject_id`, `metric`, `minute`),
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `metric_samples_account_idx` ON `metric_samples` (`account_id`,`minute`);