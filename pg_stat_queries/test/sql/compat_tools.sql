-- The SQL that monitoring tools run against pg_stat_statements, verbatim
-- from their public source (resolved for PostgreSQL 18: schema public), run
-- against the drop-in.  Where a tool reads statistics, the same SQL with
-- pg_stat_queries' names must return the same rows (same_rows below).
SELECT set_config('extension_control_path',
                  (SELECT setting FROM pg_config WHERE name = 'SHAREDIR')
                  || '/pg_stat_queries_compat:$system', false) IS NOT NULL AS t;
CREATE EXTENSION pg_stat_statements;
SELECT pg_stat_statements_reset() IS NOT NULL AS t;
CREATE TABLE tools_t (a int);
INSERT INTO tools_t SELECT generate_series(1, 10);
SELECT count(*) FROM tools_t WHERE a > 3;
SELECT count(*) FROM tools_t WHERE a > 5;
SELECT sum(a) FROM tools_t;
-- a statement pgwatch reports (more than 5 calls and 5 ms)
SELECT pg_sleep(0.002);
SELECT pg_sleep(0.002);
SELECT pg_sleep(0.002);
SELECT pg_sleep(0.002);
SELECT pg_sleep(0.002);
SELECT pg_sleep(0.002);

-- Run a tool's statement on the drop-in, and again with pg_stat_queries'
-- names, in one transaction (so now() is the same); count what differs
CREATE FUNCTION same_rows(tool_sql text, OUT seen bool, OUT only_compat bigint,
                          OUT only_ours bigint)
LANGUAGE plpgsql AS $$
DECLARE
  compat text := rtrim(btrim(tool_sql, E' \t\n'), ';');
  ours text := replace(compat, 'pg_stat_statements', 'pg_stat_queries');
BEGIN
  EXECUTE format('SELECT count(*) > 0 FROM (%s) t', compat) INTO seen;
  EXECUTE format('SELECT count(*) FROM ((%s) EXCEPT ALL (%s)) t', compat, ours)
    INTO only_compat;
  EXECUTE format('SELECT count(*) FROM ((%s) EXCEPT ALL (%s)) t', ours, compat)
    INTO only_ours;
END $$;

-- postgres_exporter v0.20.1 (prometheus-community/postgres_exporter,
-- collector/pg_stat_statements.go, commit 867fbcac), PostgreSQL 18 queries:
-- --collector.stat_statements.include_query, then the default
SELECT * FROM same_rows($tool$SELECT
		pg_get_userbyid(userid) as user,
		pg_database.datname,
		pg_stat_statements.queryid,
		LEFT(pg_stat_statements.query, 120) as query,
		pg_stat_statements.calls as calls_total,
		pg_stat_statements.total_exec_time / 1000.0 as seconds_total,
		pg_stat_statements.rows as rows_total,
		pg_stat_statements.shared_blk_read_time / 1000.0 as block_read_seconds_total,
		pg_stat_statements.shared_blk_write_time / 1000.0 as block_write_seconds_total
		FROM pg_stat_statements(true)
	JOIN pg_database
		ON pg_database.oid = pg_stat_statements.dbid
	WHERE
		total_exec_time > (
		SELECT percentile_cont(0.1)
			WITHIN GROUP (ORDER BY total_exec_time)
			FROM pg_stat_statements(false)
		)
		 
	ORDER BY seconds_total DESC
	LIMIT 100;$tool$);
SELECT * FROM same_rows($tool$SELECT
		pg_get_userbyid(userid) as user,
		pg_database.datname,
		pg_stat_statements.queryid,
		
		pg_stat_statements.calls as calls_total,
		pg_stat_statements.total_exec_time / 1000.0 as seconds_total,
		pg_stat_statements.rows as rows_total,
		pg_stat_statements.shared_blk_read_time / 1000.0 as block_read_seconds_total,
		pg_stat_statements.shared_blk_write_time / 1000.0 as block_write_seconds_total
		FROM pg_stat_statements(false)
	JOIN pg_database
		ON pg_database.oid = pg_stat_statements.dbid
	WHERE
		total_exec_time > (
		SELECT percentile_cont(0.1)
			WITHIN GROUP (ORDER BY total_exec_time)
			FROM pg_stat_statements(false)
		)
		 
	ORDER BY seconds_total DESC
	LIMIT 100;$tool$);

-- pgwatch (cybertec-postgresql/pgwatch, internal/metrics/metrics.yaml, HEAD
-- 6a0ab4e1 = v5.3.0): stat_statements (key 17), stat_statements_no_query_text
-- (key 17), stat_statements_calls (key 14); and v3.7.0's stat_statements
SELECT * FROM same_rows($tool$WITH /* pgwatch_generated */ q_data AS (
  SELECT
      queryid::text AS tag_queryid,
      array_to_string(array_agg(DISTINCT quote_ident(pg_get_userbyid(userid))), ',') AS users,
      sum(s.calls)::int8 AS calls,
      round(sum(s.total_exec_time)::numeric, 3)::double precision AS total_time,
      sum(s.rows)::int8 AS rows,
      sum(shared_blks_hit)::int8 AS shared_blks_hit,
      sum(shared_blks_read)::int8 AS shared_blks_read,
      sum(shared_blks_written)::int8 AS shared_blks_written,
      sum(shared_blks_dirtied)::int8 AS shared_blks_dirtied,
      sum(temp_blks_read)::int8 AS temp_blks_read,
      sum(temp_blks_written)::int8 AS temp_blks_written,
      round((sum(shared_blk_read_time) + sum(local_blk_read_time))::numeric, 3)::double precision AS blk_read_time,
      round((sum(shared_blk_write_time) + sum(local_blk_write_time))::numeric, 3)::double precision AS blk_write_time,
      round(sum(temp_blk_read_time)::numeric, 3)::double precision AS temp_blk_read_time,
      round(sum(temp_blk_write_time)::numeric, 3)::double precision AS temp_blk_write_time,
      sum(wal_fpi)::int8 AS wal_fpi,
      sum(wal_bytes)::int8 AS wal_bytes,
      round(sum(s.total_plan_time)::numeric, 3)::double precision AS total_plan_time,
      round(sum(s.jit_generation_time)::numeric, 3)::double precision as jit_generation_time,
      /*
      if security conscious about exposing query texts replace the below expression with a dash ('-') OR
      use the stat_statements_no_query_text metric instead, created specifically for this use case.
      */
      max(query::varchar(8000)) AS query
  FROM
      pg_stat_statements s
  WHERE
      calls > 5
      AND total_exec_time > 5
      AND dbid = (
          SELECT
              oid
          FROM
              pg_database
          WHERE
              datname = current_database())
          AND NOT upper(s.query::varchar(50))
          LIKE ANY (ARRAY['DEALLOCATE%',
              'SET %',
              'RESET %',
              'BEGIN%',
              'BEGIN;',
              'COMMIT%',
              'END%',
              'ROLLBACK%',
              'SHOW%'])
      GROUP BY
          queryid
)
SELECT
    (EXTRACT(epoch FROM now()) * 1e9)::int8 AS epoch_ns,
    b.tag_queryid,
    b.users,
    b.calls,
    b.total_time,
    b.rows,
    b.shared_blks_hit,
    b.shared_blks_read,
    b.shared_blks_written,
    b.shared_blks_dirtied,
    b.temp_blks_read,
    b.temp_blks_written,
    b.blk_read_time,
    b.blk_write_time,
    b.temp_blk_read_time,
    b.temp_blk_write_time,
    b.wal_fpi,
    b.wal_bytes,
    b.total_plan_time,
    b.jit_generation_time,
    ltrim(b.query) AS tag_query
FROM (
    SELECT
        *
    FROM (
        SELECT
            *
        FROM
            q_data
        WHERE
            total_time > 0
        ORDER BY
            total_time DESC
        LIMIT 100) a
UNION
SELECT
    *
FROM (
    SELECT
        *
    FROM
        q_data
    ORDER BY
        calls DESC
    LIMIT 100) a
UNION
SELECT
    *
FROM (
    SELECT
        *
    FROM
        q_data
    WHERE
        shared_blks_read > 0
    ORDER BY
        shared_blks_read DESC
    LIMIT 100) a
UNION
SELECT
    *
FROM (
    SELECT
        *
    FROM
        q_data
    WHERE
        shared_blks_written > 0
    ORDER BY
        shared_blks_written DESC
    LIMIT 100) a
UNION
SELECT
    *
FROM (
    SELECT
        *
    FROM
        q_data
    WHERE
        temp_blks_read > 0
    ORDER BY
        temp_blks_read DESC
    LIMIT 100) a
UNION
SELECT
    *
FROM (
    SELECT
        *
    FROM
        q_data
    WHERE
        temp_blks_written > 0
    ORDER BY
        temp_blks_written DESC
        LIMIT 100) a
UNION
SELECT 
* 
FROM (
    SELECT 
        *
    FROM
        q_data
    WHERE
        jit_generation_time > 0
    ORDER BY
        jit_generation_time DESC
    LIMIT 100) a) b;$tool$);
SELECT * FROM same_rows($tool$with /* pgwatch_generated */ q_data as (
  select
    (extract(epoch from now()) * 1e9)::int8 as epoch_ns,
    '-' as tag_query,
    queryid::text as tag_queryid,
    array_to_string(array_agg(distinct quote_ident(pg_get_userbyid(userid))), ',') as users,
    sum(s.calls)::int8 as calls,
    round(sum(s.total_exec_time)::numeric, 3)::double precision as total_time,
    sum(shared_blks_hit)::int8 as shared_blks_hit,
    sum(shared_blks_read)::int8 as shared_blks_read,
    sum(shared_blks_written)::int8 as shared_blks_written,
    sum(shared_blks_dirtied)::int8 as shared_blks_dirtied,
    sum(temp_blks_read)::int8 as temp_blks_read,
    sum(temp_blks_written)::int8 as temp_blks_written,
    round((sum(shared_blk_read_time) + sum(local_blk_read_time))::numeric, 3)::double precision AS blk_read_time,
    round((sum(shared_blk_write_time) + sum(local_blk_write_time))::numeric, 3)::double precision AS blk_write_time,
    round(sum(temp_blk_read_time)::numeric, 3)::double precision as temp_blk_read_time,
    round(sum(temp_blk_write_time)::numeric, 3)::double precision as temp_blk_write_time,
    sum(wal_fpi)::int8 as wal_fpi,
    sum(wal_bytes)::int8 as wal_bytes,
    round(sum(s.total_plan_time)::numeric, 3)::double precision as total_plan_time
  from
    pg_stat_statements s
  where
    calls > 5
    and total_exec_time > 0
    and dbid = (select oid from pg_database where datname = current_database())
    and not upper(s.query) like any (array['DEALLOCATE%', 'SET %', 'RESET %', 'BEGIN%', 'BEGIN;',
      'COMMIT%', 'END%', 'ROLLBACK%', 'SHOW%'])
  group by
    queryid
)
select * from (
  select
    *
  from
    q_data
  where
    total_time > 0
  order by
    total_time desc
  limit 100
) a
union
select * from (
  select
    *
  from
    q_data
  order by
    calls desc
  limit 100
) a
union
select * from (
  select
    *
  from
    q_data
  where
    shared_blks_read > 0
  order by
    shared_blks_read desc
  limit 100
) a
union
select * from (
  select
    *
  from
    q_data
  where
    shared_blks_written > 0
  order by
    shared_blks_written desc
  limit 100
) a
union
select * from (
  select
    *
  from
    q_data
  where
    temp_blks_read > 0
  order by
    temp_blks_read desc
  limit 100
) a
union
select * from (
  select
    *
  from
    q_data
  where
    temp_blks_written > 0
  order by
    temp_blks_written desc
  limit 100
) a;$tool$);
SELECT * FROM same_rows($tool$select /* pgwatch_generated */
  (extract(epoch from now()) * 1e9)::int8 as epoch_ns,
  coalesce(sum(calls), 0)::int8 as calls,
  coalesce(round(sum(total_exec_time)::numeric, 3), 0)::float8 as total_time,
  round(sum(total_plan_time)::numeric, 3)::double precision as total_plan_time
from
  pg_stat_statements
where
  dbid = (select oid from pg_database where datname = current_database())$tool$);
SELECT * FROM same_rows($tool$WITH /* pgwatch_generated */ q_data AS (
  SELECT
      queryid::text AS tag_queryid,
      /*
      NB! if security conscious about exposing query texts replace the below expression with a dash ('-') OR
      use the stat_statements_no_query_text metric instead, created specifically for this use case.
      */
      array_to_string(array_agg(DISTINCT quote_ident(pg_get_userbyid(userid))), ',') AS users,
      sum(s.calls)::int8 AS calls,
      round(sum(s.total_exec_time)::numeric, 3)::double precision AS total_time,
      sum(shared_blks_hit)::int8 AS shared_blks_hit,
      sum(shared_blks_read)::int8 AS shared_blks_read,
      sum(shared_blks_written)::int8 AS shared_blks_written,
      sum(shared_blks_dirtied)::int8 AS shared_blks_dirtied,
      sum(temp_blks_read)::int8 AS temp_blks_read,
      sum(temp_blks_written)::int8 AS temp_blks_written,
      round((sum(shared_blk_read_time) + sum(local_blk_read_time))::numeric, 3)::double precision AS blk_read_time,
      round((sum(shared_blk_write_time) + sum(local_blk_write_time))::numeric, 3)::double precision AS blk_write_time,
      round(sum(temp_blk_read_time)::numeric, 3)::double precision AS temp_blk_read_time,
      round(sum(temp_blk_write_time)::numeric, 3)::double precision AS temp_blk_write_time,
      sum(wal_fpi)::int8 AS wal_fpi,
      sum(wal_bytes)::int8 AS wal_bytes,
      round(sum(s.total_plan_time)::numeric, 3)::double precision AS total_plan_time,
      max(query::varchar(8000)) AS query
  FROM
      pg_stat_statements s
  WHERE
      calls > 5
      AND total_exec_time > 5
      AND dbid = (
          SELECT
              oid
          FROM
              pg_database
          WHERE
              datname = current_database())
          AND NOT upper(s.query::varchar(50))
          LIKE ANY (ARRAY['DEALLOCATE%',
              'SET %',
              'RESET %',
              'BEGIN%',
              'BEGIN;',
              'COMMIT%',
              'END%',
              'ROLLBACK%',
              'SHOW%'])
      GROUP BY
          queryid
)
SELECT
    (EXTRACT(epoch FROM now()) * 1e9)::int8 AS epoch_ns,
    b.tag_queryid,
    b.users,
    b.calls,
    b.total_time,
    b.shared_blks_hit,
    b.shared_blks_read,
    b.shared_blks_written,
    b.shared_blks_dirtied,
    b.temp_blks_read,
    b.temp_blks_written,
    b.blk_read_time,
    b.blk_write_time,
    b.temp_blk_read_time,
    b.temp_blk_write_time,
    b.wal_fpi,
    b.wal_bytes,
    b.total_plan_time,
    ltrim(regexp_replace(b.query, E'[ \\t\\n\\r]+', ' ', 'g')) AS tag_query
FROM (
    SELECT
        *
    FROM (
        SELECT
            *
        FROM
            q_data
        WHERE
            total_time > 0
        ORDER BY
            total_time DESC
        LIMIT 100) a
UNION
SELECT
    *
FROM (
    SELECT
        *
    FROM
        q_data
    ORDER BY
        calls DESC
    LIMIT 100) a
UNION
SELECT
    *
FROM (
    SELECT
        *
    FROM
        q_data
    WHERE
        shared_blks_read > 0
    ORDER BY
        shared_blks_read DESC
    LIMIT 100) a
UNION
SELECT
    *
FROM (
    SELECT
        *
    FROM
        q_data
    WHERE
        shared_blks_written > 0
    ORDER BY
        shared_blks_written DESC
    LIMIT 100) a
UNION
SELECT
    *
FROM (
    SELECT
        *
    FROM
        q_data
    WHERE
        temp_blks_read > 0
    ORDER BY
        temp_blks_read DESC
    LIMIT 100) a
UNION
SELECT
    *
FROM (
    SELECT
        *
    FROM
        q_data
    WHERE
        temp_blks_written > 0
    ORDER BY
        temp_blks_written DESC
    LIMIT 100) a) b;$tool$);

-- pghero v4.0.1 (ankane/pghero, lib/pghero/methods/query_stats.rb, commit
-- d202b2ae): detection, the query stats of the current database, reset of
-- one database (its OID where pghero inlines it)
SELECT COUNT(*) AS count FROM pg_available_extensions WHERE name = 'pg_stat_statements';
SELECT COUNT(*) AS count FROM pg_extension WHERE extname = 'pg_stat_statements';
SELECT count(*) = 1 AS readable FROM (SELECT * FROM pg_stat_statements LIMIT 1) t;
SELECT * FROM same_rows($tool$WITH query_stats AS ( SELECT LEFT(query, 10000) AS query, queryid AS query_hash, rolname AS user, total_plan_time + total_exec_time AS total_time, calls FROM pg_stat_statements INNER JOIN pg_database ON pg_database.oid = pg_stat_statements.dbid INNER JOIN pg_roles ON pg_roles.oid = pg_stat_statements.userid WHERE calls > 0 AND pg_database.datname = current_database() ) ( SELECT query, query_hash, query_stats.user, total_time, calls FROM query_stats ORDER BY "total_time" DESC LIMIT 100 ) UNION ALL ( SELECT NULL, NULL, NULL, SUM(total_time), NULL FROM query_stats )$tool$);
SELECT pg_stat_statements_reset(0, (SELECT oid FROM pg_database WHERE datname = current_database()), 0) IS NOT NULL AS reset_one_database;

-- PoWA archivist (powa-team/powa-archivist, powa--5.2.0.sql, HEAD fdcc0410 =
-- REL_5_1_2's powa_statements_src): the extension's version and schema,
-- then the snapshot for pg_stat_statements >= 1.11 (schema resolved)
SELECT regexp_split_to_array(extversion, E'\\.'), nspname
FROM pg_catalog.pg_extension e
JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace
WHERE e.extname = 'pg_stat_statements';
SELECT * FROM same_rows($tool$SELECT now(),
                pgss.userid, pgss.dbid, pgss.toplevel, pgss.queryid, pgss.query,
                pgss.calls, pgss.total_exec_time,
                pgss.rows, pgss.shared_blks_hit,
                pgss.shared_blks_read, pgss.shared_blks_dirtied,
                pgss.shared_blks_written, pgss.local_blks_hit,
                pgss.local_blks_read, pgss.local_blks_dirtied,
                pgss.local_blks_written, pgss.temp_blks_read,
                pgss.temp_blks_written,
                pgss.shared_blk_read_time, pgss.shared_blk_write_time,
                pgss.local_blk_read_time, pgss.local_blk_write_time,
                pgss.temp_blk_read_time, pgss.temp_blk_write_time,
                pgss.plans, pgss.total_plan_time,
                pgss.wal_records, pgss.wal_fpi, pgss.wal_bytes,
                pgss.jit_functions, pgss.jit_generation_time,
                pgss.jit_inlining_count, pgss.jit_inlining_time,
                pgss.jit_optimization_count, pgss.jit_optimization_time,
                pgss.jit_emission_count, pgss.jit_emission_time,
                pgss.jit_deform_count, pgss.jit_deform_time
            FROM public.pg_stat_statements pgss
            JOIN pg_catalog.pg_database d ON d.oid = pgss.dbid
            JOIN pg_catalog.pg_roles r ON pgss.userid = r.oid
            WHERE pgss.query !~* '^[[:space:]]*(DEALLOCATE|BEGIN|PREPARE TRANSACTION|COMMIT PREPARED|ROLLBACK PREPARED)'
            AND NOT (r.rolname = ANY (string_to_array(
                        '',
                        ',')))
            $tool$);

-- pganalyze collector v0.72.0 (pganalyze/collector, input/postgres/
-- statements.go, server_stats.go, settings.go, commit 9c83e1de): the
-- extension's minor version, pg_stat_statements_info, the settings it reads
-- from pg_settings, statement statistics and texts, and its reset
/* pganalyze-collector */ 
SELECT nspname,
       split_part(extversion, '.', 2),
       split_part(pae.default_version, '.', 2)
  FROM pg_extension pge
 INNER JOIN pg_namespace pgn ON pge.extnamespace = pgn.oid
  LEFT JOIN pg_available_extensions pae ON pae.name = pge.extname
 WHERE pge.extname = 'pg_stat_statements';
SELECT * FROM same_rows($tool$/* pganalyze-collector */ 
SELECT
	dealloc,
	stats_reset
FROM public.pg_stat_statements_info;$tool$);
SELECT name, current_value FROM (/* pganalyze-collector */ 
SELECT DISTINCT ON (name)
	   name,
	   CASE name
		 WHEN 'primary_conninfo' THEN regexp_replace(setting, '.', 'X', 'g')
		 ELSE setting
	   END AS current_value,
	   unit,
	   boot_val AS boot_value,
	   reset_val AS reset_value,
	   source,
	   sourcefile,
	   sourceline
  FROM pg_catalog.pg_settings
 ORDER BY name, CASE source WHEN 'default' THEN 1 ELSE 0 END) s
 WHERE name LIKE 'pg_stat_statements.%' ORDER BY name;
/* pganalyze-collector */ 
SELECT setting
	FROM pg_settings
 WHERE name = 'pg_stat_statements.track';
SELECT * FROM same_rows($tool$/* pganalyze-collector */ 
SELECT dbid, userid, queryid, toplevel, calls, total_exec_time, rows, shared_blks_hit, shared_blks_read,
			 shared_blks_dirtied, shared_blks_written, local_blks_hit, local_blks_read,
			 local_blks_dirtied, local_blks_written, temp_blks_read, temp_blks_written,
			 shared_blk_read_time + local_blk_read_time + temp_blk_read_time, shared_blk_write_time + local_blk_write_time + temp_blk_write_time,
			 min_exec_time, max_exec_time, mean_exec_time, stddev_exec_time
	FROM public.pg_stat_statements(false)$tool$);
SELECT * FROM same_rows($tool$/* pganalyze-collector */ 
SELECT dbid, userid, queryid, toplevel, query
	FROM public.pg_stat_statements$tool$);
/* pganalyze-collector */ CREATE EXTENSION IF NOT EXISTS pg_stat_statements SCHEMA public;
SELECT (SELECT pg_stat_statements_reset()) IS NOT NULL AS reset;

DROP FUNCTION same_rows(text);
DROP TABLE tools_t;
DROP EXTENSION pg_stat_statements;
RESET extension_control_path;
