-- stats_fetch_consistency = snapshot: a transaction that reads
-- PostgreSQL's cumulative statistics copies all of them into a snapshot,
-- but none of our entries, however many there are.  Measured as the
-- snapshot's memory, before and after 500 statements of ours were added
-- (each of our entries is over a kilobyte).
SELECT pg_stat_queries_reset() IS NOT NULL AS t;
SET stats_fetch_consistency = snapshot;
BEGIN;
SELECT sum(seq_scan) IS NOT NULL AS read FROM pg_stat_sys_tables;
SELECT sum(total_bytes) AS before_bytes FROM pg_backend_memory_contexts
 WHERE name = 'PgStat Snapshot' \gset
COMMIT;

-- 500 statements of distinct shapes: 1 to 500 columns
SET pg_stat_queries.track = 'all';
DO $$
BEGIN
  FOR n IN 1..500 LOOP
    EXECUTE 'SELECT ' || (SELECT string_agg('1', ', ')
                            FROM generate_series(1, n));
  END LOOP;
END $$;
RESET pg_stat_queries.track;
SELECT count(*) >= 500 AS tracked FROM pg_stat_queries WHERE NOT toplevel;

BEGIN;
SELECT sum(seq_scan) IS NOT NULL AS read FROM pg_stat_sys_tables;
SELECT sum(total_bytes) - :before_bytes < 65536 AS none_of_ours_copied
  FROM pg_backend_memory_contexts WHERE name = 'PgStat Snapshot';
COMMIT;
RESET stats_fetch_consistency;
