-- query_text_memory: when full, entries are tracked with a NULL query and
-- counted in texts_missing; their texts are stored by a later parse once
-- there is room.  Both changes take effect at reload.  The waits for a
-- reload are done by the client: a statement run while the reload is on its
-- way would be parsed under the old setting, and a pg_sleep() run in both
-- windows could end up with no text and two calls.
SELECT pg_stat_queries_reset() IS NOT NULL AS t;
ALTER SYSTEM SET pg_stat_queries.query_text_memory = 0;
SELECT pg_reload_conf();
\! sleep 0.2

SELECT 'no room' AS textmem_a;
SELECT 'no room', 2 AS textmem_b;
SELECT count(*) >= 2 AS without_text FROM pg_stat_queries WHERE query IS NULL;
SELECT count(*) AS with_text FROM pg_stat_queries WHERE query LIKE '%textmem%';
SELECT texts_missing >= 2 AS counted, query_text_memory FROM pg_stat_queries_info;

-- room again: the next parse of each statement stores its normalized text
ALTER SYSTEM RESET pg_stat_queries.query_text_memory;
SELECT pg_reload_conf();
\! sleep 0.2
SELECT 'room' AS textmem_a;
SELECT 'room', 2 AS textmem_b;
SELECT query, calls FROM pg_stat_queries WHERE query LIKE '%textmem%' ORDER BY query COLLATE "C";
SELECT count(*) AS still_missing FROM pg_stat_queries WHERE query IS NULL AND calls > 1;
