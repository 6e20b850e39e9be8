/* pg_stat_queries--1.4.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION pg_stat_queries" to load this file. \quit

-- The columns up to minmax_stats_since are pg_stat_statements 1.13's, in
-- the same order with the same types; ours follow.  generic_plan_calls and
-- custom_plan_calls are NULL on PostgreSQL 18, which does not tell how a
-- plan was made.
CREATE FUNCTION pg_stat_queries(IN showtext boolean,
    OUT userid oid,
    OUT dbid oid,
    OUT toplevel bool,
    OUT queryid bigint,
    OUT query text,
    OUT plans int8,
    OUT total_plan_time float8,
    OUT min_plan_time float8,
    OUT max_plan_time float8,
    OUT mean_plan_time float8,
    OUT stddev_plan_time float8,
    OUT calls int8,
    OUT total_exec_time float8,
    OUT min_exec_time float8,
    OUT max_exec_time float8,
    OUT mean_exec_time float8,
    OUT stddev_exec_time float8,
    OUT rows int8,
    OUT shared_blks_hit int8,
    OUT shared_blks_read int8,
    OUT shared_blks_dirtied int8,
    OUT shared_blks_written int8,
    OUT local_blks_hit int8,
    OUT local_blks_read int8,
    OUT local_blks_dirtied int8,
    OUT local_blks_written int8,
    OUT temp_blks_read int8,
    OUT temp_blks_written int8,
    OUT shared_blk_read_time float8,
    OUT shared_blk_write_time float8,
    OUT local_blk_read_time float8,
    OUT local_blk_write_time float8,
    OUT temp_blk_read_time float8,
    OUT temp_blk_write_time float8,
    OUT wal_records int8,
    OUT wal_fpi int8,
    OUT wal_bytes numeric,
    OUT wal_buffers_full int8,
    OUT jit_functions int8,
    OUT jit_generation_time float8,
    OUT jit_inlining_count int8,
    OUT jit_inlining_time float8,
    OUT jit_optimization_count int8,
    OUT jit_optimization_time float8,
    OUT jit_emission_count int8,
    OUT jit_emission_time float8,
    OUT jit_deform_count int8,
    OUT jit_deform_time float8,
    OUT parallel_workers_to_launch int8,
    OUT parallel_workers_launched int8,
    OUT generic_plan_calls int8,
    OUT custom_plan_calls int8,
    OUT stats_since timestamp with time zone,
    OUT minmax_stats_since timestamp with time zone,
    OUT last_executed timestamp with time zone,
    OUT p50_exec_time float8,
    OUT p95_exec_time float8,
    OUT p99_exec_time float8,
    OUT failed_calls int8,
    OUT failed_exec_time float8,
    OUT last_failed_sqlstate text
)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_stat_queries'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;

CREATE VIEW pg_stat_queries AS
  SELECT * FROM pg_stat_queries(true);

GRANT SELECT ON pg_stat_queries TO PUBLIC;

CREATE FUNCTION pg_stat_queries_reset(IN userid oid DEFAULT 0,
    IN dbid oid DEFAULT 0,
    IN queryid bigint DEFAULT 0,
    IN minmax_only boolean DEFAULT false
)
RETURNS timestamp with time zone
AS 'MODULE_PATHNAME', 'pg_stat_queries_reset'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;

-- Only superusers may reset unless granted otherwise
REVOKE ALL ON FUNCTION pg_stat_queries_reset(oid, oid, bigint, boolean) FROM PUBLIC;

CREATE FUNCTION pg_stat_queries_info(
    OUT dealloc bigint,
    OUT stats_reset timestamp with time zone,
    OUT num_entries bigint,
    OUT max bigint,
    OUT evicted_entries bigint,
    OUT last_eviction_time timestamp with time zone,
    OUT query_text_bytes bigint,
    OUT query_text_memory bigint,
    OUT texts_missing bigint,
    OUT untracked_executions bigint,
    OUT num_plans bigint,
    OUT max_plans bigint,
    OUT untracked_plans bigint
)
RETURNS record
AS 'MODULE_PATHNAME', 'pg_stat_queries_info'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW pg_stat_queries_info AS
  SELECT * FROM pg_stat_queries_info();

GRANT SELECT ON pg_stat_queries_info TO PUBLIC;

-- Statements whose counters changed at or after since, for collectors
CREATE FUNCTION pg_stat_queries_changed(IN since timestamp with time zone,
    IN showtext boolean DEFAULT true,
    OUT userid oid,
    OUT dbid oid,
    OUT toplevel bool,
    OUT queryid bigint,
    OUT query text,
    OUT plans int8,
    OUT total_plan_time float8,
    OUT min_plan_time float8,
    OUT max_plan_time float8,
    OUT mean_plan_time float8,
    OUT stddev_plan_time float8,
    OUT calls int8,
    OUT total_exec_time float8,
    OUT min_exec_time float8,
    OUT max_exec_time float8,
    OUT mean_exec_time float8,
    OUT stddev_exec_time float8,
    OUT rows int8,
    OUT shared_blks_hit int8,
    OUT shared_blks_read int8,
    OUT shared_blks_dirtied int8,
    OUT shared_blks_written int8,
    OUT local_blks_hit int8,
    OUT local_blks_read int8,
    OUT local_blks_dirtied int8,
    OUT local_blks_written int8,
    OUT temp_blks_read int8,
    OUT temp_blks_written int8,
    OUT shared_blk_read_time float8,
    OUT shared_blk_write_time float8,
    OUT local_blk_read_time float8,
    OUT local_blk_write_time float8,
    OUT temp_blk_read_time float8,
    OUT temp_blk_write_time float8,
    OUT wal_records int8,
    OUT wal_fpi int8,
    OUT wal_bytes numeric,
    OUT wal_buffers_full int8,
    OUT jit_functions int8,
    OUT jit_generation_time float8,
    OUT jit_inlining_count int8,
    OUT jit_inlining_time float8,
    OUT jit_optimization_count int8,
    OUT jit_optimization_time float8,
    OUT jit_emission_count int8,
    OUT jit_emission_time float8,
    OUT jit_deform_count int8,
    OUT jit_deform_time float8,
    OUT parallel_workers_to_launch int8,
    OUT parallel_workers_launched int8,
    OUT generic_plan_calls int8,
    OUT custom_plan_calls int8,
    OUT stats_since timestamp with time zone,
    OUT minmax_stats_since timestamp with time zone,
    OUT last_executed timestamp with time zone,
    OUT p50_exec_time float8,
    OUT p95_exec_time float8,
    OUT p99_exec_time float8,
    OUT failed_calls int8,
    OUT failed_exec_time float8,
    OUT last_failed_sqlstate text
,
    OUT text_stored_at timestamp with time zone
)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_stat_queries_changed'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;


-- The non-empty buckets of a statement's execution-time histogram
CREATE FUNCTION pg_stat_queries_histogram(IN userid oid,
    IN dbid oid,
    IN queryid bigint,
    IN toplevel boolean,
    OUT lower_bound float8,
    OUT upper_bound float8,
    OUT count bigint
)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_stat_queries_histogram'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;

-- One row per plan of a statement; with since, those changed at or after it
CREATE FUNCTION pg_stat_queries_plans(IN showtext boolean DEFAULT true,
    IN since timestamp with time zone DEFAULT NULL,
    OUT userid oid,
    OUT dbid oid,
    OUT queryid bigint,
    OUT toplevel bool,
    OUT planid bigint,
    OUT calls int8,
    OUT total_exec_time float8,
    OUT min_exec_time float8,
    OUT max_exec_time float8,
    OUT mean_exec_time float8,
    OUT stddev_exec_time float8,
    OUT p50_exec_time float8,
    OUT p95_exec_time float8,
    OUT p99_exec_time float8,
    OUT rows int8,
    OUT shared_blks_hit int8,
    OUT shared_blks_read int8,
    OUT first_executed timestamp with time zone,
    OUT last_executed timestamp with time zone,
    OUT plan text
)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_stat_queries_plans'
LANGUAGE C CALLED ON NULL INPUT VOLATILE PARALLEL RESTRICTED;

CREATE VIEW pg_stat_queries_plans AS
  SELECT * FROM pg_stat_queries_plans(true);

GRANT SELECT ON pg_stat_queries_plans TO PUBLIC;

-- For tests: the exact counts beside what a walk of the entries finds
CREATE FUNCTION pg_stat_queries_consistency(
    OUT live_statements bigint,
    OUT statements_found bigint,
    OUT live_plans bigint,
    OUT plans_found bigint,
    OUT closed_found bigint,
    OUT text_bytes bigint,
    OUT text_bytes_found bigint,
    OUT texts_found bigint,
    OUT claims_outstanding bigint,
    OUT ring_head bigint,
    OUT ring_tail bigint
)
RETURNS record
AS 'MODULE_PATHNAME', 'pg_stat_queries_consistency'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;

REVOKE ALL ON FUNCTION pg_stat_queries_consistency() FROM PUBLIC;
