# A backend's last flush, at exit, merges what it counted into entries it
# found before, whose slots lie in segments of our area that the backend
# mapped: the area must stay attached until that flush, which runs in the
# statistics system's own exit callback.  Here a backend exits inside a
# transaction block, with executions of statements it found pending and a
# failure noted, all counted by that flush.
use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('exit_flush');
$node->init;
$node->append_conf(
	'postgresql.conf', qq(
shared_preload_libraries = 'pg_stat_queries'
pg_stat_queries.track = all
));
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION pg_stat_queries');

# 2,000 entries: most slots lie beyond the area's first, in-place segment
$node->safe_psql('postgres',
	"DO \$\$ BEGIN FOR i IN 1..2000 LOOP EXECUTE format('SELECT %s FROM pg_am AS c%s', i, i); END LOOP; END \$\$"
);

for my $round (1 .. 3)
{
	my $alias = 'c' . (1990 + $round);
	my $before = $node->safe_psql('postgres',
		"SELECT calls FROM pg_stat_queries WHERE query = 'SELECT \$1 FROM pg_am AS $alias' AND NOT toplevel"
	);
	is($before, '1', "round $round: the nested statement has its entry");

	my $victim = $node->background_psql('postgres', on_error_stop => 0);
	my $pid = $victim->query_safe('SELECT pg_backend_pid()');
	chomp $pid;
	$victim->query_safe('BEGIN');
	# its entry made by the first, the second counted in the pending table
	# until exit
	$victim->query_safe("SELECT 1 FROM pg_am AS $alias");
	$victim->query_safe("SELECT 2 FROM pg_am AS $alias");
	$victim->query("SELECT 1 / 0 FROM pg_am exit_fail_$round");
	$victim->quit;
	$node->poll_query_until('postgres',
		"SELECT count(*) = 0 FROM pg_stat_activity WHERE pid = $pid")
	  or die "backend $pid did not exit";

	is( $node->safe_psql(
			'postgres',
			"SELECT calls FROM pg_stat_queries WHERE query = 'SELECT \$1 FROM pg_am AS $alias' AND toplevel"
		),
		'2',
		"round $round: the executions pending at exit are merged");
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
