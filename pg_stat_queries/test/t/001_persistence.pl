# Statistics and query texts survive a clean restart when pg_stat_queries.save
# is on, are dropped at a clean restart when it is off, and are discarded
# after a crash (immediate shutdown).
use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('persist');
$node->init;
$node->append_conf('postgresql.conf',
	"shared_preload_libraries = 'pg_stat_queries'");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION pg_stat_queries');

# Run a statement n times in one session
sub run_statement
{
	my ($sql, $n) = @_;
	$node->safe_psql('postgres', join('', map { "$sql;\n" } 1 .. $n));
}

sub calls_of
{
	my ($query) = @_;
	return $node->safe_psql('postgres',
		"SELECT coalesce(sum(calls), 0) FROM pg_stat_queries WHERE query = '$query'");
}

run_statement("SELECT 'persist-me' AS persisted", 5);
is(calls_of('SELECT $1 AS persisted'), '5', 'statement counted before restart');

# clean restart with save = on (the default)
$node->restart;
is(calls_of('SELECT $1 AS persisted'), '5',
	'calls and normalized text survive a clean restart');
my $info = $node->safe_psql('postgres',
	'SELECT num_entries > 0, query_text_bytes > 0 FROM pg_stat_queries_info');
is($info, 't|t', 'info view counts the restored entries and texts');
ok(!-e $node->data_dir . '/pg_stat/pg_stat_queries.stat',
	'text file removed once loaded');

# min/max, means and timestamps come back unchanged
# and so do the percentiles, the histogram and the change times
my $restored_sql = q{
SELECT s.min_exec_time, s.max_exec_time, s.mean_exec_time, s.stats_since,
       s.p50_exec_time, s.p99_exec_time, c.text_stored_at,
       (SELECT string_agg(lower_bound || ':' || count, ',')
          FROM pg_stat_queries_histogram(s.userid, s.dbid, s.queryid, s.toplevel))
  FROM pg_stat_queries s
  JOIN pg_stat_queries_changed('-infinity') c USING (userid, dbid, queryid, toplevel)
 WHERE s.query = 'SELECT $1 AS persisted'};
my $before = $node->safe_psql('postgres', $restored_sql);
is( $node->safe_psql('postgres',
		"SELECT sum(h.count) FROM pg_stat_queries s, pg_stat_queries_histogram(s.userid, s.dbid, s.queryid, s.toplevel) h WHERE s.query = 'SELECT \$1 AS persisted'"
	),
	'5',
	'histogram holds the five executions');
my $changed_before = $node->safe_psql('postgres',
	"SELECT count(*) FROM pg_stat_queries_changed(now()) WHERE query = 'SELECT \$1 AS persisted'");
$node->restart;
my $after = $node->safe_psql('postgres', $restored_sql);
is($after, $before,
	'timing summary, percentiles, histogram, stats_since and text time restored exactly');
is( $node->safe_psql('postgres',
		"SELECT count(*) FROM pg_stat_queries_changed(now() - interval '1 hour') WHERE query = 'SELECT \$1 AS persisted'"
	),
	'1',
	'a restored entry keeps its change time');
is($changed_before, '0', 'no change after the last merge');

# Counters most executions leave at zero (WAL, blocks dirtied or written,
# ...) live in a chunk beside the entry, which the text file keeps: they
# come back exactly, for an entry with a text and for one without.
$node->safe_psql('postgres', 'CREATE TABLE rare_t (a int, b text)');
run_statement(
	"INSERT INTO rare_t SELECT g, repeat('x', 100) FROM generate_series(1, 50) g",
	3);
my $rare_cols =
  'calls, rows, wal_records, wal_fpi, wal_bytes, shared_blks_dirtied, '
  . 'shared_blks_written, shared_blks_read, local_blks_hit, temp_blks_written';
my $rare_sql =
  "SELECT $rare_cols FROM pg_stat_queries WHERE query LIKE 'INSERT INTO rare_t%'";
my $rare_before = $node->safe_psql('postgres', $rare_sql);
like($rare_before, qr/^3\|150\|[1-9]\d*\|\d+\|[1-9]\d*\|[1-9]/,
	'an INSERT has WAL and dirtied-block counts');

# and one without a text: no memory for texts
$node->append_conf('postgresql.conf', 'pg_stat_queries.query_text_memory = 0');
$node->reload;
$node->poll_query_until('postgres',
	"SELECT setting FROM pg_settings WHERE name = 'pg_stat_queries.query_text_memory'", '0')
  or die 'query_text_memory did not become 0';
run_statement("INSERT INTO rare_t SELECT g, 'textless' FROM generate_series(1, 7) g", 2);
my $textless_sql =
  "SELECT $rare_cols FROM pg_stat_queries WHERE query IS NULL AND rows = 14";
my $textless_before = $node->safe_psql('postgres', $textless_sql);
like($textless_before, qr/^2\|14\|[1-9]/,
	'a statement without a text has WAL counts');
$node->append_conf('postgresql.conf', "pg_stat_queries.query_text_memory = '16MB'");
$node->reload;

$node->restart;
is($node->safe_psql('postgres', $rare_sql),
	$rare_before, 'rare counters restored exactly');
is($node->safe_psql('postgres', $textless_sql),
	$textless_before, 'rare counters of an entry without a text restored exactly');

# a merge into a restored entry adds to its restored rare counters
run_statement(
	"INSERT INTO rare_t SELECT g, repeat('x', 100) FROM generate_series(1, 50) g",
	1);
is( $node->safe_psql('postgres',
		"SELECT calls, wal_records > split_part('$rare_before', '|', 3)::bigint FROM pg_stat_queries WHERE query LIKE 'INSERT INTO rare_t%'"
	),
	'4|t',
	'executions after the restart add to the restored rare counters');
$rare_before = $node->safe_psql('postgres', $rare_sql);

# both wait for a client backend through a second restart too
$node->restart;
$node->stop;
$node->start;
is($node->safe_psql('postgres', $rare_sql),
	$rare_before, 'rare counters survive two restarts with no client backend between');
is($node->safe_psql('postgres', $textless_sql),
	$textless_before, 'and so do those of an entry without a text');

# Texts read at startup wait for the first client backend to give them to
# their entries.  A server stopped before any client connected (starting
# does not connect) must write the waiting texts again, or they are lost.
run_statement("SELECT 'no-client-between', 2 AS waited", 3);
$node->restart;
$node->stop;
ok(-s $node->data_dir . '/pg_stat/pg_stat_queries.stat',
	'a shutdown before any client backend writes the waiting texts again');
$node->start;
is(calls_of('SELECT $1, $2 AS waited'), '3',
	'texts survive two restarts with no client backend between them');
is( $node->safe_psql('postgres',
		"SELECT count(*) FROM pg_stat_queries WHERE query = 'SELECT \$1 AS persisted'"),
	'1',
	'and so do texts saved at the restart before');

# immediate shutdown = crash: everything is discarded
run_statement("SELECT 'crash-me' AS crashed", 3);
$node->stop('immediate');
$node->start;
is( $node->safe_psql('postgres', 'SELECT count(*) FROM pg_stat_queries WHERE query IS NOT NULL AND calls > 1'),
	'0', 'statistics discarded after a crash');
# (plans' texts, in the text area too, are those of the statements since;
# this statement has no constant: its own text is made at its end)
my ($text_bytes, $plan_bytes) = split(
	/\|/,
	$node->safe_psql(
		'postgres',
		'SELECT query_text_bytes, (SELECT sum(octet_length(plan)) + count(*) FROM pg_stat_queries_plans) FROM pg_stat_queries_info'
	));
cmp_ok($text_bytes - ($plan_bytes || 0), '<', 200, 'texts discarded after a crash');
is($node->safe_psql('postgres', "SELECT count(*) FROM pg_stat_queries_plans WHERE calls > 1"),
	'0', "plans' statistics discarded after a crash");

# save = off: a clean restart starts empty
run_statement("SELECT 'not-saved' AS unsaved", 4);
$node->append_conf('postgresql.conf', 'pg_stat_queries.save = off');
$node->reload;
$node->poll_query_until('postgres',
	"SELECT setting FROM pg_settings WHERE name = 'pg_stat_queries.save'", 'off')
  or die 'save did not become off';
$node->restart;
is(calls_of('SELECT $1 AS unsaved'), '0', 'nothing restored with save = off');
ok(!-e $node->data_dir . '/pg_stat/pg_stat_queries.stat',
	'no text file written with save = off');

# and on again
$node->append_conf('postgresql.conf', 'pg_stat_queries.save = on');
$node->restart;
run_statement("SELECT 'saved-again' AS saved_again", 2);
$node->restart;
is(calls_of('SELECT $1 AS saved_again'), '2', 'saving resumes with save = on');

ok(!$node->log_contains('TRAP:|PANIC|terminated by signal'), 'no crash or assertion failure in the log');
$node->stop;
done_testing();
