-- One sample of what the other client backends are doing, as waits.sql,
-- each prefixed by who it is: "R:" for the reader of bench/full_read.sh
-- (application_name full_read_reader), "W:" for the others (the writers)
SELECT 'S ' || coalesce(string_agg(
         CASE WHEN application_name = 'full_read_reader' THEN 'R:' ELSE 'W:' END
         || coalesce(wait_event_type || ':' || wait_event, 'CPU'), ' '), '')
  FROM pg_stat_activity
 WHERE backend_type = 'client backend' AND state = 'active' AND pid <> pg_backend_pid()
