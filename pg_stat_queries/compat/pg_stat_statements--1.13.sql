/* pg_stat_statements--1.13.sql, the pg_stat_queries drop-in */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION pg_stat_statements" to load this file. \quit

-- The objects of pg_stat_statements 1.13 -- names, signatures, column names,
-- types and order -- served by pg_stat_queries.  Refuse to create them where
-- pg_stat_queries cannot serve them, before anything is created.
DO $check$
DECLARE
  libs text[] := string_to_array(
    replace(current_setting('shared_preload_libraries'), ' ', ''), ',');
  lib text;
  ours bool := false;
BEGIN
  FOREACH lib IN ARRAY coalesce(libs, '{}') LOOP
    lib := regexp_replace(trim(both '"' from lib), '^.*/|\.so$', '', 'g');
    IF lib = 'pg_stat_statements' THEN
      RAISE EXCEPTION 'pg_stat_statements is served by pg_stat_queries here, but contrib pg_stat_statements is also preloaded'
        USING ERRCODE = 'object_not_in_prerequisite_state',
              HINT = 'Remove pg_stat_statements from shared_preload_libraries, or remove pg_stat_queries'' compat directory from extension_control_path to use contrib''s extension.';
    ELSIF lib = 'pg_stat_queries' THEN
      ours := true;
    END IF;
  END LOOP;
  IF NOT ours THEN
    RAISE EXCEPTION 'pg_stat_queries must be loaded via "shared_preload_libraries"'
      USING ERRCODE = 'object_not_in_prerequisite_state',
            HINT = 'Add pg_stat_queries to shared_preload_libraries and restart the server; this pg_stat_statements is served by it.';
  END IF;
END
$check$;

CREATE FUNCTION pg_stat_statements_reset(IN userid oid DEFAULT 0,
    IN dbid oid DEFAULT 0,
    IN queryid bigint DEFAULT 0,
    IN minmax_only boolean DEFAULT false
)
RETURNS timestamp with time zone
AS 'MODULE_PATHNAME', 'pg_stat_queries_reset'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;

-- Only superusers may reset unless granted otherwise
REVOKE ALL ON FUNCTION pg_stat_statements_reset(oid, oid, bigint, boolean) FROM PUBLIC;

CREATE FUNCTION pg_stat_statements_info(
    OUT dealloc bigint,
    OUT stats_reset timestamp with time zone
)
RETURNS record
AS 'MODULE_PATHNAME', 'pg_stat_queries_info'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW pg_stat_statements_info AS
  SELECT * FROM pg_stat_statements_info();

GRANT SELECT ON pg_stat_statements_info TO PUBLIC;

CREATE FUNCTION pg_stat_statements(IN showtext boolean,
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
    OUT minmax_stats_since timestamp with time zone
)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_stat_queries'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;

CREATE VIEW pg_stat_statements AS
  SELECT * FROM pg_stat_statements(true);

GRANT SELECT ON pg_stat_statements TO PUBLIC;
