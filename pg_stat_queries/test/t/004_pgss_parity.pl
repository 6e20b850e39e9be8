# The same workload, run once under pg_stat_statements and once under
# pg_stat_queries (each alone, with matching settings), must give the same
# rows: normalized text, toplevel, calls, rows and plans.
use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use Test::More;

my $workload = 'test/data/parity_workload.sql';

# Run the workload under one extension and return its rows as text
sub rows_under
{
	my ($ext, $track) = @_;
	my $node = PostgreSQL::Test::Cluster->new("parity_${ext}_$track");
	$node->init;
	$node->append_conf(
		'postgresql.conf', qq(
shared_preload_libraries = '$ext'
$ext.track = $track
$ext.track_planning = on
$ext.track_utility = on
));
	$node->start;
	$node->safe_psql('postgres', "CREATE EXTENSION $ext");
	my $reset = $ext eq 'pg_stat_statements' ? 'pg_stat_statements_reset' : 'pg_stat_queries_reset';
	$node->safe_psql('postgres', "SELECT $reset()");
	# errors in the workload are part of it: ON_ERROR_STOP stays off
	$node->psql('postgres', undef, extra_params => [ '-f', $workload ]);
	my $rows = $node->safe_psql(
		'postgres', qq(
SELECT toplevel, calls, rows, plans, query FROM $ext
 WHERE query !~ 'pg_stat_(statements|queries)' AND calls + plans > 0
 ORDER BY query COLLATE "C", toplevel));
	ok(!$node->log_contains('TRAP:|PANIC|terminated by signal'),
		"$ext (track = $track): no crash");
	$node->stop;
	return $rows;
}

for my $track ('top', 'all')
{
	my $pgss = rows_under('pg_stat_statements', $track);
	my $pgsq = rows_under('pg_stat_queries', $track);
	my $n = () = $pgss =~ /\n/g;
	cmp_ok($n, '>', 40, "workload produced many rows (track = $track)");
	is($pgsq, $pgss, "same rows as pg_stat_statements (track = $track)");
}

done_testing();
