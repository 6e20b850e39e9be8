-- The columns: pg_stat_statements 1.12's set and order, then ours;
-- JIT counters; timestamps; the info view
SELECT pg_stat_queries_reset() IS NOT NULL AS t;

SELECT ordinal_position, column_name, data_type
  FROM information_schema.columns
 WHERE table_name = 'pg_stat_queries' ORDER BY ordinal_position;
SELECT ordinal_position, column_name, data_type
  FROM information_schema.columns
 WHERE table_name = 'pg_stat_queries_info' ORDER BY ordinal_position;

-- JIT compiles nothing without a JIT provider, so every JIT counter is zero
SET jit = on;
SET jit_above_cost = 0;
SELECT count(*) FROM generate_series(1, 10);
RESET jit_above_cost;
RESET jit;
SELECT jit_functions + jit_inlining_count + jit_optimization_count +
       jit_emission_count + jit_deform_count AS jit_counts
  FROM pg_stat_queries WHERE query LIKE 'SELECT count(*) FROM generate_series%';

-- timestamps: stats_since <= last_executed, both before now
SELECT now() AS before_run \gset
SELECT 'timed' AS ts_query;
SELECT stats_since >= :'before_run' AS since_ok,
       minmax_stats_since = stats_since AS minmax_same,
       last_executed >= :'before_run' AND last_executed <= now() AS last_ok
  FROM pg_stat_queries WHERE query = 'SELECT $1 AS ts_query';

-- info: sizes are consistent
SELECT num_entries > 0 AS entries, max = current_setting('pg_stat_queries.max')::bigint AS max_ok,
       query_text_bytes > 0 AS text_bytes, query_text_memory = 16 * 1024 * 1024 AS text_memory,
       dealloc = 0 AS no_dealloc, texts_missing = 0 AS no_missing
  FROM pg_stat_queries_info;

-- Version 1.0 (no percentiles) is served by the same library, and updates
-- (1.3 has 61 columns: the failed executions' three last)
SELECT count(*) AS v11_columns FROM information_schema.columns
 WHERE table_name = 'pg_stat_queries';
DROP EXTENSION pg_stat_queries;
CREATE EXTENSION pg_stat_queries VERSION '1.0';
SELECT count(*) AS v10_columns FROM information_schema.columns
 WHERE table_name = 'pg_stat_queries';
SELECT count(*) > 0 AS v10_rows FROM pg_stat_queries WHERE calls > 0;
SELECT count(*) AS v10_functions FROM pg_proc
 WHERE proname IN ('pg_stat_queries_changed', 'pg_stat_queries_histogram');
ALTER EXTENSION pg_stat_queries UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'pg_stat_queries';
SELECT count(*) AS updated_columns FROM information_schema.columns
 WHERE table_name = 'pg_stat_queries';
SELECT count(*) AS updated_functions FROM pg_proc
 WHERE proname IN ('pg_stat_queries_changed', 'pg_stat_queries_histogram');
SELECT count(*) > 0 AS updated_rows FROM pg_stat_queries WHERE p50_exec_time IS NOT NULL;
