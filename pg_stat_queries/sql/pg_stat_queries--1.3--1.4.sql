/* pg_stat_queries--1.3--1.4.sql */

\echo Use "ALTER EXTENSION pg_stat_queries UPDATE TO '1.4'" to load this file. \quit

-- Plans: how many are kept, and how many executions found no room for theirs
DROP VIEW pg_stat_queries_info;
DROP FUNCTION pg_stat_queries_info();

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
