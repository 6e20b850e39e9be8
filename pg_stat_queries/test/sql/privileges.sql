-- Who sees which query texts and query ids
SELECT pg_stat_queries_reset() IS NOT NULL AS t;
CREATE ROLE priv_plain;
CREATE ROLE priv_reader IN ROLE pg_read_all_stats;

SELECT 'superuser' AS su_query;
SET ROLE priv_plain;
SELECT 'plain' AS plain_query;
RESET ROLE;

-- a plain role sees its own text and id, not the others'
SET ROLE priv_plain;
SELECT CASE WHEN r.rolsuper THEN 'superuser' ELSE r.rolname END AS who,
       s.queryid IS NOT NULL AS has_queryid, s.query, count(*) > 0 AS present
  FROM pg_stat_queries s JOIN pg_roles r ON r.oid = s.userid
 WHERE s.query LIKE '%_query' OR s.query = '<insufficient privilege>'
 GROUP BY 1, 2, 3 ORDER BY 1, s.query COLLATE "C";
RESET ROLE;

-- pg_read_all_stats sees everything
SET ROLE priv_reader;
SELECT CASE WHEN r.rolsuper THEN 'superuser' ELSE r.rolname END AS who,
       s.queryid IS NOT NULL AS has_queryid, s.query
  FROM pg_stat_queries s JOIN pg_roles r ON r.oid = s.userid
 WHERE s.query LIKE '%_query' ORDER BY 1, s.query COLLATE "C";
RESET ROLE;

-- the info view is readable by all
SET ROLE priv_plain;
SELECT num_entries > 0 AS readable FROM pg_stat_queries_info;
RESET ROLE;

DROP ROLE priv_plain, priv_reader;
