-- Utility statements, with and without track_utility
SELECT pg_stat_queries_reset() IS NOT NULL AS t;

CREATE TABLE util_t (a int);
ALTER TABLE util_t ADD COLUMN b text;
CREATE INDEX util_i ON util_t (a);
SET work_mem = '2MB';
SET work_mem = '3MB';
RESET work_mem;
BEGIN;
SAVEPOINT sp1;
ROLLBACK TO sp1;
COMMIT;
COPY (SELECT g FROM generate_series(1, 5) g) TO STDOUT;
CREATE TABLE util_ctas AS SELECT g FROM generate_series(1, 7) g;
EXPLAIN (COSTS OFF) SELECT * FROM util_t WHERE a = 1;
DECLARE c CURSOR WITH HOLD FOR SELECT g FROM generate_series(1, 10) g;
FETCH 3 FROM c;
CLOSE c;
DROP INDEX util_i;
DROP TABLE util_t, util_ctas;

SELECT query, calls, rows FROM pg_stat_queries ORDER BY query COLLATE "C";

-- with track_utility off only optimizable statements are counted
SET pg_stat_queries.track_utility = off;
SELECT pg_stat_queries_reset() IS NOT NULL AS t;
CREATE TABLE util_off (a int);
INSERT INTO util_off VALUES (1);
DROP TABLE util_off;
SELECT query, calls, rows FROM pg_stat_queries ORDER BY query COLLATE "C";
RESET pg_stat_queries.track_utility;
