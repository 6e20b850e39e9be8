-- Clock-sweep eviction keeps the table within max + 5%, and max changes at
-- reload
SELECT pg_stat_queries_reset() IS NOT NULL AS t;
ALTER SYSTEM SET pg_stat_queries.max = 100;
SELECT pg_reload_conf();
SELECT pg_sleep(0.2);
SHOW pg_stat_queries.max;

-- 300 statements with distinct query ids (one more column each)
SELECT format('SELECT %s', string_agg('1', ', ')) AS stmt
  FROM generate_series(1, 300) n, LATERAL generate_series(1, n) c
 GROUP BY n ORDER BY n \gexec

SELECT num_entries <= 105 AS within_bound, num_entries >= 50 AS kept_some,
       dealloc > 0 AS swept, evicted_entries > 0 AS evicted,
       last_eviction_time IS NOT NULL AS eviction_time
  FROM pg_stat_queries_info;
SELECT count(*) <= 105 AS view_within_bound FROM pg_stat_queries;

-- texts of evicted entries are freed with them
SELECT query_text_bytes < 100 * 1000 AS texts_bounded FROM pg_stat_queries_info;

-- the most recent statements survive their first pass
SELECT count(*) = 5 AS newest_kept FROM pg_stat_queries
 WHERE query IN (SELECT format('SELECT %s', string_agg('$' || c, ', ' ORDER BY c))
                   FROM generate_series(296, 300) n, LATERAL generate_series(1, n) c
                  GROUP BY n);

-- raising max needs no restart
ALTER SYSTEM SET pg_stat_queries.max = 1000;
SELECT pg_reload_conf();
SELECT pg_sleep(0.2);
SELECT format('SELECT %s', string_agg('2', ', ')) AS stmt
  FROM generate_series(301, 500) n, LATERAL generate_series(1, n) c
 GROUP BY n ORDER BY n \gexec
SELECT num_entries >= 250 AS grew, max FROM pg_stat_queries_info;

ALTER SYSTEM RESET pg_stat_queries.max;
SELECT pg_reload_conf();
