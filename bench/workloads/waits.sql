-- One sample of what the other client backends are doing: their wait events
-- ("CPU" when active without one), separated by spaces
SELECT 'S ' || coalesce(string_agg(coalesce(wait_event_type || ':' || wait_event, 'CPU'), ' '), '')
  FROM pg_stat_activity
 WHERE backend_type = 'client backend' AND state = 'active' AND pid <> pg_backend_pid()
