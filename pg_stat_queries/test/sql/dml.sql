-- Row counts, buffer and WAL counters of data-modifying statements
SET pg_stat_queries.track_utility = off;
SELECT pg_stat_queries_reset() IS NOT NULL AS t;

CREATE TABLE dml_t (id int PRIMARY KEY, v text);
INSERT INTO dml_t SELECT g, 'v' || g FROM generate_series(1, 100) g;
INSERT INTO dml_t VALUES (1001, 'a'), (1002, 'b');
UPDATE dml_t SET v = 'changed' WHERE id <= 10;
DELETE FROM dml_t WHERE id > 1000;
SELECT count(*) FROM dml_t WHERE v = 'changed';
WITH moved AS (DELETE FROM dml_t WHERE id = 100 RETURNING *)
INSERT INTO dml_t SELECT id + 1000, v FROM moved;
MERGE INTO dml_t t USING (VALUES (1, 'm'), (5000, 'n')) s(id, v) ON t.id = s.id
  WHEN MATCHED THEN UPDATE SET v = s.v
  WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.v);

SELECT query, calls, rows FROM pg_stat_queries ORDER BY query COLLATE "C";

-- writes produce WAL and touch shared buffers
SELECT query, wal_records > 0 AS wal_records, wal_bytes > 0 AS wal_bytes,
       shared_blks_hit + shared_blks_read > 0 AS touched_buffers
  FROM pg_stat_queries WHERE query LIKE 'INSERT%' OR query LIKE 'UPDATE%'
  ORDER BY query COLLATE "C";

-- temporary tables use local buffers
CREATE TEMP TABLE dml_tmp AS SELECT g FROM generate_series(1, 2000) g;
SELECT sum(g) FROM dml_tmp;
SELECT local_blks_hit + local_blks_read > 0 AS local_buffers
  FROM pg_stat_queries WHERE query LIKE 'SELECT sum(g) FROM dml_tmp';

-- Pending counts reuse their places from one batch to the next, and the
-- rare counters (here local blocks) are zeroed only when a statement first
-- has some: the second batch's statements, in the places the first batch's
-- left, count the same as those did.  The second run of each INSERT is the
-- pending one; reading the view merges and empties the batch, which each
-- read below checks with the counts of the statements before it.
CREATE TEMP TABLE dml_r1 (a int);
CREATE TEMP TABLE dml_r2 (a int);
CREATE TEMP TABLE dml_r3 (a int);
CREATE TEMP TABLE dml_r4 (a int);
SELECT calls AS local_buffers_calls FROM pg_stat_queries
 WHERE query LIKE 'SELECT local_blks_hit + local_blks_read > $1 AS local_buffers%';
INSERT INTO dml_r1 VALUES (1);
INSERT INTO dml_r1 VALUES (1);
INSERT INTO dml_r2 VALUES (1);
INSERT INTO dml_r2 VALUES (1);
SELECT query, calls, local_blks_hit + local_blks_dirtied > 0 AS local_blocks
  FROM pg_stat_queries WHERE query LIKE 'INSERT INTO dml_r%' ORDER BY query COLLATE "C";
INSERT INTO dml_r3 VALUES (1);
INSERT INTO dml_r3 VALUES (1);
INSERT INTO dml_r4 VALUES (1);
INSERT INTO dml_r4 VALUES (1);
SELECT count(*) AS statements,
       count(DISTINCT (calls, local_blks_hit, local_blks_read,
                       local_blks_dirtied, local_blks_written)) AS distinct_counts,
       min(calls) AS calls, min(local_blks_hit + local_blks_dirtied) > 0 AS local_blocks
  FROM pg_stat_queries WHERE query LIKE 'INSERT INTO dml_r%';

-- a sort larger than work_mem spills to temporary files
SET work_mem = '64kB';
SELECT count(*) FROM (SELECT g FROM generate_series(1, 20000) g ORDER BY g DESC) s;
RESET work_mem;
SELECT temp_blks_written > 0 AS temp_written, temp_blks_read > 0 AS temp_read
  FROM pg_stat_queries WHERE query LIKE '%ORDER BY g DESC%';

DROP TABLE dml_t;
