-- pg_stat_queries_changed(since, showtext): the rows of statements whose
-- counters changed at or after since, texts stored at or after since, and
-- when each text was stored.  A change is a merge of counters into the
-- entry: pg_stat_force_next_flush() makes this session's merges happen when
-- it goes idle, before the next time is taken, so the rows are exact.
SELECT pg_stat_queries_reset() IS NOT NULL AS t;
CREATE TABLE changed_t (a int);
SELECT count(*) FROM changed_t WHERE a = 1;
SELECT count(*) FROM changed_t WHERE a > 1;
SELECT pg_stat_force_next_flush();

-- a collector's read: since is the start of its previous read
SELECT now() AS t1 \gset
SELECT count(*) FROM changed_t WHERE a > 2;
SELECT count(*) FROM changed_t WHERE a < 5;
SELECT queryid AS gt_qid FROM pg_stat_queries
 WHERE query = 'SELECT count(*) FROM changed_t WHERE a > $1' \gset
SELECT queryid = :gt_qid AS is_gt, query, calls,
       text_stored_at >= :'t1' AS text_new
  FROM pg_stat_queries_changed(:'t1')
 WHERE queryid IN (SELECT queryid FROM pg_stat_queries
                    WHERE query LIKE '%changed_t%')
 ORDER BY is_gt, query COLLATE "C";

-- the view has the same rows and values for them
SELECT count(*) AS same_rows
  FROM pg_stat_queries_changed(:'t1') c
  JOIN pg_stat_queries v USING (userid, dbid, queryid, toplevel)
 WHERE v.query LIKE '%changed_t%' AND c.calls = v.calls
   AND c.total_exec_time = v.total_exec_time AND c.rows = v.rows
   AND c.p99_exec_time = v.p99_exec_time
   AND c.stats_since = v.stats_since AND c.last_executed = v.last_executed;
SELECT pg_stat_force_next_flush();

-- showtext off: no texts, still their times
SELECT now() AS t2 \gset
SELECT count(*) FROM changed_t WHERE a > 3;
SELECT query IS NULL AS no_text, calls, text_stored_at < :'t2' AS stored_before
  FROM pg_stat_queries_changed(:'t2', false)
 WHERE queryid = :gt_qid;

-- nothing changed after a time in the future; NULL gives nothing
SELECT count(*) FROM pg_stat_queries_changed(now() + interval '1 hour');
SELECT count(*) FROM pg_stat_queries_changed(NULL);
-- a time before everything gives every row of the view
SELECT (SELECT count(*) FROM pg_stat_queries_changed('-infinity')) =
       (SELECT count(*) FROM pg_stat_queries) AS all_rows;
SELECT pg_stat_force_next_flush();

-- a min/max reset is a change
SELECT now() AS t3 \gset
SELECT pg_stat_queries_reset(0, 0, :gt_qid, true) IS NOT NULL AS t;
SELECT calls, min_exec_time, p50_exec_time IS NULL AS no_p50
  FROM pg_stat_queries_changed(:'t3')
 WHERE queryid = :gt_qid;
SELECT pg_stat_force_next_flush();

-- entries re-created after a reset come back, with new texts
SELECT now() AS t4 \gset
SELECT pg_stat_queries_reset() IS NOT NULL AS t;
SELECT count(*) FROM changed_t WHERE a = 1;
SELECT query, calls, text_stored_at >= :'t4' AS text_new
  FROM pg_stat_queries_changed(:'t4')
 WHERE query LIKE '%changed_t%';

-- privileges: other users' query IDs and texts hidden, and when the
-- texts were stored too
CREATE ROLE regress_changed_user;
GRANT SELECT ON changed_t TO regress_changed_user;
SELECT pg_stat_force_next_flush();
SELECT now() AS t5 \gset
SELECT count(*) FROM changed_t WHERE a = 1;
SET ROLE regress_changed_user;
SELECT count(*) FROM changed_t WHERE a = 1;
SELECT count(*) AS others_rows,
       count(*) FILTER (WHERE queryid IS NOT NULL) AS others_queryids,
       count(*) FILTER (WHERE query <> '<insufficient privilege>') AS others_texts,
       count(*) FILTER (WHERE text_stored_at IS NOT NULL) AS others_text_times
  FROM pg_stat_queries_changed(:'t5')
 WHERE userid <> (SELECT oid FROM pg_roles WHERE rolname = current_user);
SELECT count(*) FILTER (WHERE text_stored_at IS NOT NULL) AS others_text_times
  FROM pg_stat_queries_changed(:'t5', false)
 WHERE userid <> (SELECT oid FROM pg_roles WHERE rolname = current_user);
SELECT query, text_stored_at >= :'t5' AS own_text_new
  FROM pg_stat_queries_changed(:'t5')
 WHERE userid = (SELECT oid FROM pg_roles WHERE rolname = current_user)
   AND query LIKE '%changed_t%';
RESET ROLE;
DROP OWNED BY regress_changed_user;
DROP ROLE regress_changed_user;
DROP TABLE changed_t;
