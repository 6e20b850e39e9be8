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
ok(!-e $node->data_dir . '/pg_stat/pg_stat_queries.texts',
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

# Texts read at startup wait for the first client backend to give them to
# their entries.  A server stopped before any client connected (starting
# does not connect) must write the waiting texts again, or they are lost.
run_statement("SELECT 'no-client-between', 2 AS waited", 3);
$node->restart;
$node->stop;
ok(-s $node->data_dir . '/pg_stat/pg_stat_queries.texts',
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
is($node->safe_psql('postgres', 'SELECT query_text_bytes < 200 FROM pg_stat_queries_info'),
	't', 'texts discarded after a crash');

# save = off: a clean restart starts empty
run_statement("SELECT 'not-saved' AS unsaved", 4);
$node->append_conf('postgresql.conf', 'pg_stat_queries.save = off');
$node->reload;
$node->restart;
is(calls_of('SELECT $1 AS unsaved'), '0', 'nothing restored with save = off');
ok(!-e $node->data_dir . '/pg_stat/pg_stat_queries.texts',
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
