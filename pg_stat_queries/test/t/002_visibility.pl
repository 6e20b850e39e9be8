# Statements of other sessions become visible: within about a second while
# those sessions are busy (also inside one long transaction), and after
# they go idle; a session always sees its own statements at once.
use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use Test::More;
use Time::HiRes qw(time);

my $node = PostgreSQL::Test::Cluster->new('visible');
$node->init;
$node->append_conf('postgresql.conf',
	"shared_preload_libraries = 'pg_stat_queries'");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION pg_stat_queries');

# own statements: visible immediately, even inside a transaction
is( $node->safe_psql(
		'postgres', "BEGIN; SELECT 'own' AS own_stmt; SELECT calls FROM pg_stat_queries WHERE query = 'SELECT \$1 AS own_stmt'; COMMIT;"),
	"own\n1",
	'a session sees its own statement at once');

# Column aliases are not part of the query id, so each statement below has
# its own number of columns to get an entry of its own.

# another session that goes idle after its statement
my $idle = $node->background_psql('postgres');
$idle->query_safe("SELECT 'idle', 2 AS idle_stmt");
my $start = time;
ok( $node->poll_query_until(
		'postgres', "SELECT count(*) = 1 FROM pg_stat_queries WHERE query = 'SELECT \$1, \$2 AS idle_stmt'"),
	'an idle session\'s statement becomes visible');
cmp_ok(time - $start, '<', 12, 'visible within the idle flush delay');

# another session inside one long transaction, running statements every 0.1 s
my $busy = $node->background_psql('postgres');
$busy->query_safe('BEGIN');
$busy->query_safe("SELECT 'busy', 2, 3 AS busy_stmt");
$start = time;
my $seen = 0;
while (time - $start < 5)
{
	$busy->query_safe("SELECT 'busy', 2, 3 AS busy_stmt");
	if ($node->safe_psql('postgres',
			"SELECT count(*) FROM pg_stat_queries WHERE query = 'SELECT \$1, \$2, \$3 AS busy_stmt'") eq '1')
	{
		$seen = 1;
		last;
	}
	select(undef, undef, undef, 0.1);
}
ok($seen, 'a busy session\'s statements show up before its transaction ends');
cmp_ok(time - $start, '<', 3, 'within about a second');
$busy->query_safe('COMMIT');

# totals are exact once everybody flushed
$busy->quit;
$idle->quit;
my $calls = $node->safe_psql('postgres',
	"SELECT calls FROM pg_stat_queries WHERE query = 'SELECT \$1, \$2, \$3 AS busy_stmt'");
cmp_ok($calls, '>=', 2, 'busy statement calls merged');

ok(!$node->log_contains('TRAP:|PANIC|terminated by signal'), 'no crash or assertion failure in the log');
$node->stop;
done_testing();
