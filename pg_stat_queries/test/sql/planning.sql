-- track_planning counts plans separately from executions
SET pg_stat_queries.track_planning = on;
SELECT pg_stat_queries_reset() IS NOT NULL AS t;

CREATE TABLE plan_t (a int);
SELECT 42;
SELECT 43;
PREPARE pl AS SELECT count(*) FROM plan_t;
EXECUTE pl;
EXECUTE pl;
ALTER TABLE plan_t ADD COLUMN b int;  -- invalidates the cached plan
EXECUTE pl;
SELECT plans, calls, query FROM pg_stat_queries
 WHERE query NOT LIKE '%pg_stat_queries%' ORDER BY query COLLATE "C";
SELECT plans >= 2 AS replanned, total_plan_time > 0 AS plan_timed,
       min_plan_time <= max_plan_time AS ordered
  FROM pg_stat_queries WHERE query LIKE 'PREPARE pl%';
DEALLOCATE pl;
DROP TABLE plan_t;
RESET pg_stat_queries.track_planning;
