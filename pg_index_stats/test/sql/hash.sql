-- Hash indexes: every column of pg_hash_index_stats() must equal
-- pgstathashindex().  The extensions were created by the btree test.
CREATE FUNCTION hash_mismatch(idx regclass) RETURNS text[]
LANGUAGE sql AS $$
  SELECT coalesce(array_agg(o.key ORDER BY o.key), '{}')
  FROM pg_hash_index_stats(idx) AS ours,
       pgstathashindex(idx) AS theirs,
       jsonb_each(to_jsonb(ours)) AS o
       JOIN jsonb_each(to_jsonb(theirs)) AS t USING (key)
  WHERE o.value IS DISTINCT FROM t.value
$$;

CREATE FUNCTION hash_same(idx regclass) RETURNS boolean
LANGUAGE sql AS $$
  SELECT ours IS NOT DISTINCT FROM theirs
  FROM pg_hash_index_stats(idx) AS ours, pgstathashindex(idx) AS theirs
$$;

-- empty hash index
CREATE TABLE h_empty (a int);
CREATE INDEX h_empty_a ON h_empty USING hash (a);
SELECT hash_same('h_empty_a'), hash_mismatch('h_empty_a');
SELECT version, live_items, dead_items FROM pg_hash_index_stats('h_empty_a');

-- distinct keys, index grown by inserts (bucket splits)
CREATE TABLE h_keys (a int) WITH (autovacuum_enabled = off);
CREATE INDEX h_keys_a ON h_keys USING hash (a);
INSERT INTO h_keys SELECT g FROM generate_series(1, 30000) g;
SELECT hash_same('h_keys_a'), hash_mismatch('h_keys_a');
SELECT version, bitmap_pages, live_items, dead_items,
       bucket_pages > 1 AS many_buckets
  FROM pg_hash_index_stats('h_keys_a');

SELECT version, bucket_pages, overflow_pages, bitmap_pages, unused_pages,
       live_items, dead_items, round(free_percent::numeric, 2) AS free_percent
  FROM pg_hash_index_stats('h_keys_a');

-- few distinct text keys: long bucket chains of overflow pages
CREATE TABLE h_dup (t text) WITH (autovacuum_enabled = off);
INSERT INTO h_dup SELECT 'key ' || (g % 4) FROM generate_series(1, 20000) g;
CREATE INDEX h_dup_t ON h_dup USING hash (t);
SELECT hash_same('h_dup_t'), hash_mismatch('h_dup_t');
SELECT overflow_pages > 0 AS has_overflow, live_items
  FROM pg_hash_index_stats('h_dup_t');

-- dead items: an index scan over deleted rows marks their entries LP_DEAD
DELETE FROM h_keys WHERE a % 2 = 0;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SELECT count(*) FROM generate_series(2, 30000, 2) AS s(x) JOIN h_keys ON a = x;
RESET ALL;
SELECT hash_same('h_keys_a'), hash_mismatch('h_keys_a');
SELECT dead_items > 0 AS has_dead_items, live_items + dead_items AS items
  FROM pg_hash_index_stats('h_keys_a');

-- after VACUUM the dead entries are gone and pages may become free
VACUUM h_keys;
SELECT hash_same('h_keys_a'), hash_mismatch('h_keys_a');
SELECT live_items, dead_items FROM pg_hash_index_stats('h_keys_a');
