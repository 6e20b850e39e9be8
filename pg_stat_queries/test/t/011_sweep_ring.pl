# The sweep's ring: most passes visit our entries from the ring instead of
# scanning the statistics system's whole hash; every 16th pass scans, but
# no sooner than 10 s after the last scan; and when max is raised far above
# its value at server start, so that the ring cannot hold every entry,
# passes scan again and the bound still holds.
use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);

my $node = PostgreSQL::Test::Cluster->new('ring');
$node->init;
$node->append_conf(
	'postgresql.conf', qq(
shared_preload_libraries = 'pg_stat_queries'
pg_stat_queries.max = 100
pg_stat_queries.min_sweep_interval = 0
log_min_messages = debug1
));
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION pg_stat_queries');

# $count distinct statements, one query id per alias, from $first on
sub run_statements
{
	my ($first, $count) = @_;
	my $last = $first + $count - 1;
	$node->safe_psql('postgres', qq(
SET pg_stat_queries.track = 'all';
DO \$\$
BEGIN
  FOR i IN $first..$last LOOP
    EXECUTE format('SELECT FROM pg_am a%s', i);
  END LOOP;
END \$\$;
));
}

# the passes logged since $offset: (by ring, by scan, numbers of the scans)
sub passes
{
	my ($offset) = @_;
	my $log = slurp_file($node->logfile, $offset);
	my $ring = () = $log =~ /pg_stat_queries sweep pass \d+ by ring/g;
	my @scans = $log =~ /pg_stat_queries sweep pass (\d+) by scan/g;
	return ($ring, scalar(@scans), @scans);
}

# Counts of passes follow from the counts of statements, not from the
# speed of the machine; how many 16th passes scan does (one per 10 s), so
# that is bounded by the time the statements took, measured from outside,
# which only loosens with load.
my $offset = -s $node->logfile;
my $started = time;
run_statements(1, 3000);
my $elapsed = time - $started;
my ($ring, $scan, @scans) = passes($offset);
cmp_ok($ring, '>', 0, "passes by the ring ($ring)");
is(join(',', grep { $_ % 16 != 0 } @scans), '',
	'a complete ring scans only at 16th passes (' . join(',', @scans) . ')');
cmp_ok($scan, '<=', 1 + int($elapsed / 10),
	sprintf('passes by a scan (%d in %.1f s): at most one per 10 s', $scan, $elapsed));
cmp_ok($ring, '>=', 15 * $scan, 'most passes by the ring');

# 10 s after the last scan, a 16th pass scans again (2000 statements make
# some 40 passes, so at least one 16th, and the first of them scans).  The
# sleep is a lower bound: load can only lengthen it.
sleep(11);
$offset = -s $node->logfile;
run_statements(3001, 2000);
my ($ring2, $scan2, @scans2) = passes($offset);
my ($first_pass) = slurp_file($node->logfile, $offset) =~ /pg_stat_queries sweep pass (\d+) by/;
# the first logged may have begun before the sleep; the next 16th did not
my $first_16th = 16 * int(($first_pass + 16) / 16);
cmp_ok($scan2, '>=', 1, "a 16th pass scans 10 s after the last scan ($scan2)");
cmp_ok($scans2[0] // 0, '<=', $first_16th, "no later than the first 16th pass begun after the sleep ($first_16th)");
is(join(',', grep { $_ % 16 != 0 } @scans2), '',
	'again only 16th passes scan (' . join(',', @scans2) . ')');
is( $node->safe_psql(
		'postgres',
		'SELECT num_entries <= 105 AND evicted_entries > 2000 FROM pg_stat_queries_info'),
	't',
	'entries within max + 5% and evicted through the ring');

# The ring was sized for max = 100 (4096 ids, its minimum).  With max 6000
# the entries no longer fit: passes scan, and the bound holds.
$node->append_conf('postgresql.conf', 'pg_stat_queries.max = 6000');
$node->reload;
$node->poll_query_until('postgres',
	"SELECT setting FROM pg_settings WHERE name = 'pg_stat_queries.max'", '6000')
  or die 'max did not become 6000';
$offset = -s $node->logfile;
run_statements(10001, 20000);
($ring, $scan) = passes($offset);
cmp_ok($scan, '>=', 3, "passes by a scan once the ring is full ($scan)");
# Plans (max_plans) are swept from their 950th on, while the ring still
# holds every entry: those passes go by the ring.  Once it is full, passes
# scan: the first scan of a pass other than a 16th follows the ring found
# full, and after it a pass begun while the ring still held every entry
# ends by the ring.
my $log = slurp_file($node->logfile, $offset);
my $after_full = '';
while ($log =~ /pg_stat_queries sweep pass (\d+) by scan/g)
{
	next if $1 % 16 == 0;
	$after_full = substr($log, pos($log));
	last;
}
$ring = () = $after_full =~ /pg_stat_queries sweep pass \d+ by ring/g;
cmp_ok($ring, '<=', 1, "no pass by the ring begins once it is full ($ring)");
is( $node->safe_psql(
		'postgres',
		'SELECT num_entries BETWEEN 5000 AND 6300 FROM pg_stat_queries_info'),
	't',
	'entries within max + 5% with a ring too small');
is( $node->safe_psql(
		'postgres',
		'SELECT count(*) BETWEEN 5000 AND 6300 FROM pg_stat_queries'),
	't',
	'the view shows as many entries');

$node->stop;
unlike(slurp_file($node->logfile), qr/TRAP|PANIC|server process .* was terminated/,
	'no crash');
done_testing();
