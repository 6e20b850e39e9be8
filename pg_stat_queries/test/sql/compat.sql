-- The pg_stat_statements drop-in: with pg_stat_queries' compat directory
-- first in extension_control_path, CREATE EXTENSION pg_stat_statements
-- creates pg_stat_statements 1.12's objects on PostgreSQL 18, 1.13's on 19
-- (compat_1.out), served by pg_stat_queries.
SELECT set_config('extension_control_path',
                  (SELECT setting FROM pg_config WHERE name = 'SHAREDIR')
                  || '/pg_stat_queries_compat:$system', false) IS NOT NULL AS t;
CREATE EXTENSION pg_stat_statements;
SELECT extname, extversion, extrelocatable FROM pg_extension
 WHERE extname = 'pg_stat_statements';
-- created twice: PostgreSQL's own error, nothing changed
CREATE EXTENSION pg_stat_statements;
CREATE EXTENSION IF NOT EXISTS pg_stat_statements;

-- pg_stat_statements' objects, signatures and columns
SELECT p.proname, oidvectortypes(p.proargtypes) AS input_args,
       coalesce(array_length(p.proallargtypes, 1), 0) AS all_args,
       pg_get_function_result(p.oid) AS result, p.proretset,
       has_function_privilege('public', p.oid, 'EXECUTE') AS public_execute
  FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid
  JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'pg_stat_statements'
 ORDER BY p.proname;
SELECT c.relname, a.attnum, a.attname, format_type(a.atttypid, a.atttypmod)
  FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0
 WHERE c.relname IN ('pg_stat_statements', 'pg_stat_statements_info')
 ORDER BY c.relname, a.attnum;
-- every column is one of pg_stat_queries' with the same name and type, in
-- the same order (52 of 1.12's on PostgreSQL 18, 54 of 1.13's on 19)
SELECT count(*) AS same_columns,
       bool_and(s.attnum = q.attnum - CASE WHEN s.attnum > 50 AND s.attcount = 52
                                           THEN 2 ELSE 0 END) AS same_order
  FROM (SELECT *, count(*) OVER () AS attcount FROM pg_attribute
         WHERE attrelid = 'pg_stat_statements'::regclass AND attnum > 0) s
  JOIN pg_attribute q USING (attname, atttypid)
 WHERE q.attrelid = 'pg_stat_queries'::regclass AND q.attnum > 0;

-- The settings tools read show pg_stat_queries' values, and cannot be set
SELECT current_setting('pg_stat_statements.max') = current_setting('pg_stat_queries.max') AS max,
       current_setting('pg_stat_statements.track') = current_setting('pg_stat_queries.track') AS track,
       current_setting('pg_stat_statements.track_utility') = current_setting('pg_stat_queries.track_utility') AS track_utility,
       current_setting('pg_stat_statements.track_planning') = current_setting('pg_stat_queries.track_planning') AS track_planning,
       current_setting('pg_stat_statements.save') = current_setting('pg_stat_queries.save') AS save;
SET pg_stat_statements.max = 100;

-- Same rows through both names
SELECT pg_stat_statements_reset() IS NOT NULL AS t;
CREATE TABLE compat_t (a int);
INSERT INTO compat_t VALUES (1), (2), (3);
SELECT count(*) FROM compat_t WHERE a > 1;
SELECT count(*) FROM compat_t WHERE a > 2;
WITH s AS (SELECT userid, dbid, toplevel, queryid, query, calls, rows, total_exec_time,
                  shared_blks_hit, wal_records, stats_since FROM pg_stat_statements),
     q AS (SELECT userid, dbid, toplevel, queryid, query, calls, rows, total_exec_time,
                  shared_blks_hit, wal_records, stats_since FROM pg_stat_queries)
SELECT (SELECT count(*) FROM s) > 3 AS rows_seen,
       (SELECT count(*) FROM (SELECT * FROM s EXCEPT SELECT * FROM q) x) AS only_compat,
       (SELECT count(*) FROM (SELECT * FROM q EXCEPT SELECT * FROM s) x) AS only_ours;
SELECT calls, rows, query FROM pg_stat_statements
 WHERE query LIKE '%compat_t%' ORDER BY query COLLATE "C";
SELECT s.dealloc = i.dealloc AS dealloc, s.stats_reset = i.stats_reset AS stats_reset
  FROM pg_stat_statements_info s, pg_stat_queries_info i;

-- Reset through the compat name: by query id, min/max only, everything
SELECT pg_stat_statements_reset(0, 0, queryid) IS NOT NULL AS t
  FROM pg_stat_statements WHERE query = 'SELECT count(*) FROM compat_t WHERE a > $1';
SELECT count(*) AS gone FROM pg_stat_queries
 WHERE query = 'SELECT count(*) FROM compat_t WHERE a > $1';
SELECT pg_stat_statements_reset(0, 0, 0, true) IS NOT NULL AS t;
SELECT bool_and(minmax_stats_since > stats_since) AS minmax_reset FROM pg_stat_queries
 WHERE query LIKE 'INSERT INTO compat_t%';

-- Privileges are pg_stat_statements': others' texts hidden, reset refused
CREATE ROLE regress_compat_user;
GRANT SELECT ON compat_t TO regress_compat_user;
SELECT dealloc AS info_dealloc, stats_reset AS info_reset FROM pg_stat_queries_info \gset
SET ROLE regress_compat_user;
SELECT count(*) FROM compat_t;
SELECT DISTINCT query FROM pg_stat_statements
 WHERE userid <> (SELECT oid FROM pg_roles WHERE rolname = current_user);
SELECT query FROM pg_stat_statements
 WHERE userid = (SELECT oid FROM pg_roles WHERE rolname = current_user)
 ORDER BY query COLLATE "C";
SELECT pg_stat_statements_reset();
-- the info view is readable, and the refused reset changed nothing
SELECT dealloc = :info_dealloc AS dealloc_same, stats_reset = :'info_reset' AS not_reset
  FROM pg_stat_statements_info;
RESET ROLE;
GRANT EXECUTE ON FUNCTION pg_stat_statements_reset(oid, oid, bigint, boolean) TO regress_compat_user;
SET ROLE regress_compat_user;
SELECT pg_stat_statements_reset() IS NOT NULL AS granted_reset;
RESET ROLE;

-- ALTER EXTENSION ... UPDATE: 1.12 is the only version
ALTER EXTENSION pg_stat_statements UPDATE;
DROP EXTENSION pg_stat_statements;
SELECT count(*) AS queries_kept FROM pg_stat_queries;
DROP TABLE compat_t;
DROP ROLE regress_compat_user;
RESET extension_control_path;
