DROP INDEX `endpoints_active_idx`;--> statement-breakpoint
CREATE INDEX `endpoints_suspend_due_idx` ON `endpoints` ((last_active + (CASE suspend_timeout_seconds WHEN 0 THEN 300 ELSE suspend_timeout_seconds END) * 1000)) WHERE current_state = 'active' AND pending_state IS NULL AND suspend_timeout_seconds <> -1 AND last_active IS NOT NULL;--> statement-breakpoint
DROP INDEX `operations_endpoint_idx`;--> statement-breakpoint
DROP INDEX `operations_endpoint_unfinished_idx`;--> statement-breakpoint
CREATE INDEX `operations_endpoint_unfinished_idx` ON `operations` (`endpoint_id`,`created_us`) WHERE status IN ('scheduling', 'running') AND endpoint_id IS NOT NULL;