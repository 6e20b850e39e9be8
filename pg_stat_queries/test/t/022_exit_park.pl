# A backend that exits inside an aborted transaction block counts the
# failure noted there in its last flush, at exit.  When that statement's
# reference is stale (its entry was just evicted: injection point
# pg-stat-queries-stale-reference makes every reference look so), the
# counts are parked, during the exit of the statistics system itself: no
# exit callback may be registered then (it would run once the statistics
# system had detached, and crash the server), and the parked counts are
# set into their entries by that last flush.
use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('exit_park');
$node->init;
$node->append_conf(
	'postgresql.conf', qq(
shared_preload_libraries = 'pg_stat_queries'
));
$node->start;
ok($node->check_extension('injection_points'), 'injection points available');
$node->safe_psql('postgres',
	'CREATE EXTENSION pg_stat_queries; CREATE EXTENSION injection_points');

for my $round (1 .. 3)
{
	my $victim = $node->background_psql('postgres', on_error_stop => 0);
	my $pid = $victim->query_safe('SELECT pg_backend_pid()');
	chomp $pid;

	# (one statement per round: a query id per alias)
	# a transaction block's statements known to this backend beforehand,
	# so that nothing is parked, and no exit callback registered, before exit
	$victim->query_safe('BEGIN; COMMIT;');
	$node->safe_psql('postgres',
		"SELECT injection_points_attach('pg-stat-queries-stale-reference', 'notice')");
	$victim->query_safe('BEGIN');
	$victim->query("SELECT 1 / 0 FROM pg_am exit_fail_$round");
	$victim->quit;
	$node->poll_query_until('postgres',
		"SELECT count(*) = 0 FROM pg_stat_activity WHERE pid = $pid")
	  or die "backend $pid did not exit";
	$node->safe_psql('postgres',
		"SELECT injection_points_detach('pg-stat-queries-stale-reference')");

	is( $node->safe_psql(
			'postgres',
			"SELECT calls, failed_calls, last_failed_sqlstate FROM pg_stat_queries
			  WHERE query LIKE '%pg_am exit_fail_$round'"),
		'0|1|22012',
		"round $round: the failure noted before exit is counted");
}

my $log = slurp_file($node->logfile);
unlike($log, qr/terminated by signal|TRAP:/, 'no backend crashed');
ok($node->safe_psql('postgres', 'SELECT 1') eq '1', 'server up');
$node->stop;
done_testing();
