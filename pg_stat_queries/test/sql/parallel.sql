-- Parallel workers columns, and correctness under debug_parallel_query
SELECT pg_stat_queries_reset() IS NOT NULL AS t;
CREATE TABLE par_t AS SELECT g AS a FROM generate_series(1, 10000) g;
ANALYZE par_t;

SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SELECT count(*) FROM par_t;
-- no worker may start: the two planned count, none launched
SET max_parallel_workers = 0;
SELECT count(a) AS no_workers FROM par_t;
RESET max_parallel_workers;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
SELECT query, parallel_workers_to_launch AS to_launch,
       parallel_workers_launched > 0 AS launched
  FROM pg_stat_queries WHERE query LIKE 'SELECT count(%FROM par_t'
 ORDER BY query COLLATE "C";

-- the view still shows this session's own statements when forced into a
-- parallel plan, because the functions only run in the leader
SET debug_parallel_query = regress;
SELECT 'forced' AS parallel_forced;
SELECT query, calls FROM pg_stat_queries WHERE query LIKE '%parallel_forced%';
SELECT pg_stat_queries_reset() IS NOT NULL AS t;
SELECT count(*) AS after_reset FROM pg_stat_queries WHERE query LIKE '%parallel_forced%';
RESET debug_parallel_query;
DROP TABLE par_t;
