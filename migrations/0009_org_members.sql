CREATE TABLE `org_invitations` (
	`id` text PRIMARY KEY NOT NULL,
	`org_account_id` text NOT NULL,
	`email` text NOT NULL,
	`role` text NOT NULL,
	`invited_by` text NOT NULL,
	`invited_at` integer NOT NULL,
	FOREIGN KEY (`org_account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `org_invitations_org_idx` ON `org_invitations` (`org_account_id`,`invited_at`);--> statement-breakpoint
CREATE TABLE `org_members` (
	`id` text PRIMARY KEY NOT NULL,
	`org_account_id` text NOT NULL,
	`user_id` text NOT NULL,
	`role` text NOT NULL,
	`joined_at` integer NOT NULL,
	FOREIGN KEY (`org_account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `org_members_user_idx` ON `org_members` (`org_account_id`,`user_id`);--> statement-breakpoint
-- Every existing account's user is the admin of its organization (new accounts get the row at creation).
INSERT INTO `org_members` (`id`, `org_account_id`, `user_id`, `role`, `joined_at`)
SELECT lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) || '-' ||
       substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6))),
       `id`, `id`, 'admin', `created_at`
  FROM `accounts`;
