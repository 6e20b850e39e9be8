-- Percentiles within 2% of the true nearest-rank values: p50/p95/p99 and
-- every percentile a user computes from pg_stat_queries_histogram(), on
-- spread-out times (a thousandfold range), point masses (one statement of
-- nearly constant time; 90% short and 10% long sleeps), merged from three
-- backends.  The true times are the statements' own: each execution's
-- total_exec_time difference, read before and after it.
SELECT pg_stat_queries_reset() IS NOT NULL AS t;
SET pg_stat_queries.track = 'all';

CREATE TABLE acc_durations (marker text, ms float8);
CREATE TABLE acc_point_table (a int);
INSERT INTO acc_point_table VALUES (1);

-- Run stmt as a nested statement and keep its execution time; marker is a
-- column alias in stmt that names its entry (aliases are not part of a
-- query ID: each stmt has a shape of its own)
CREATE FUNCTION acc_timed(marker text, stmt text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  pattern text := '% AS ' || marker || '%';
  before float8;
  after float8;
BEGIN
  SELECT coalesce(sum(total_exec_time), 0) INTO before
    FROM pg_stat_queries WHERE query LIKE pattern AND NOT toplevel;
  EXECUTE stmt;
  SELECT sum(total_exec_time) INTO after
    FROM pg_stat_queries WHERE query LIKE pattern AND NOT toplevel;
  INSERT INTO acc_durations VALUES (marker, after - before);
END $$;

-- One backend's share of the workloads
CREATE FUNCTION acc_workload(seed float8) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  PERFORM setseed(seed);
  -- spread: 1,000 to 1,000,000 rows counted, log-uniformly
  FOR i IN 1 .. 60 LOOP
    PERFORM acc_timed('acc_spread',
      format('SELECT count(*) AS acc_spread FROM generate_series(1, %s)',
             round(1000 * exp(ln(1000) * random()))));
  END LOOP;
  -- a point mass: the same trivial statement again and again
  FOR i IN 1 .. 100 LOOP
    PERFORM acc_timed('acc_point', 'SELECT a AS acc_point FROM acc_point_table');
  END LOOP;
  -- two point masses: 90% of 1 ms sleeps, 10% of 20 ms ones
  FOR i IN 1 .. 40 LOOP
    PERFORM acc_timed('acc_sleeps',
      format('SELECT pg_sleep(%s) AS acc_sleeps',
             CASE WHEN i % 10 = 0 THEN 0.02 ELSE 0.001 END));
  END LOOP;
END $$;

SELECT acc_workload(0.1);
\c
SET pg_stat_queries.track = 'all';
SELECT acc_workload(0.2);
\c
SET pg_stat_queries.track = 'all';
SELECT acc_workload(0.3);

-- The truth: the time at rank ceil(f * n) of the sorted executions,
-- computed exactly (percentile_disc computes f * n in floating point, which
-- can land one rank off when it is a whole number)
CREATE VIEW acc_truth AS
  SELECT r.marker, f.pct, r.ms AS value
    FROM (SELECT marker, ms,
                 row_number() OVER (PARTITION BY marker ORDER BY ms) AS pos,
                 count(*) OVER (PARTITION BY marker) AS n
            FROM acc_durations) r,
         generate_series(1, 99) f(pct)
   WHERE r.pos = greatest(ceil(f.pct * r.n / 100.0), 1);

-- the view's percentiles against the truth
WITH stats AS (
  SELECT substring(query FROM ' AS (acc_[a-z]+)') AS marker, s.*
    FROM pg_stat_queries s
   WHERE query ~ '^SELECT .* AS acc_[a-z]+' AND NOT toplevel)
SELECT s.marker, s.calls,
       (SELECT count(*) FROM acc_durations d WHERE d.marker = s.marker) AS n,
       abs(s.p50_exec_time / t50.value - 1) <= 0.02 AS p50_ok,
       abs(s.p95_exec_time / t95.value - 1) <= 0.02 AS p95_ok,
       abs(s.p99_exec_time / t99.value - 1) <= 0.02 AS p99_ok
  FROM stats s
  JOIN acc_truth t50 ON t50.marker = s.marker AND t50.pct = 50
  JOIN acc_truth t95 ON t95.marker = s.marker AND t95.pct = 95
  JOIN acc_truth t99 ON t99.marker = s.marker AND t99.pct = 99
 ORDER BY s.marker;

-- Every percentile from 1% to 99% as a user computes it from the
-- histogram: the first bucket whose running count reaches the rank
-- ceil(f * count), reported by the harmonic mean of its bounds, clamped to
-- min and max (README.md, "Percentiles").
WITH buckets AS (
  SELECT substring(s.query FROM ' AS (acc_[a-z]+)') AS marker,
         s.min_exec_time AS mn, s.max_exec_time AS mx,
         h.lower_bound AS lo, h.upper_bound AS hi,
         sum(h.count) OVER w AS running,
         sum(h.count) OVER (PARTITION BY s.queryid) AS total
    FROM pg_stat_queries s,
         pg_stat_queries_histogram(s.userid, s.dbid, s.queryid, s.toplevel) h
   WHERE s.query ~ '^SELECT .* AS acc_[a-z]+' AND NOT s.toplevel
  WINDOW w AS (PARTITION BY s.queryid ORDER BY h.lower_bound)),
computed AS (
  SELECT b.marker, f.pct,
         (SELECT least(greatest(2 * lo * hi / (lo + hi), mn), mx)
            FROM buckets b2
           WHERE b2.marker = b.marker
             AND b2.running >= greatest(ceil(f.pct / 100.0 * b2.total), 1)
           ORDER BY b2.lo LIMIT 1) AS value
    FROM (SELECT DISTINCT marker FROM buckets) b,
         generate_series(1, 99) f(pct))
SELECT c.marker, count(*) AS percentiles,
       count(*) FILTER (WHERE abs(c.value / t.value - 1) > 0.02) AS off_by_more_than_2pct
  FROM computed c JOIN acc_truth t USING (marker, pct)
 GROUP BY c.marker ORDER BY c.marker;

DROP VIEW acc_truth;
DROP FUNCTION acc_workload(float8);
DROP FUNCTION acc_timed(text, text);
DROP TABLE acc_durations, acc_point_table;
RESET pg_stat_queries.track;
