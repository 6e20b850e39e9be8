# Hot statements survive heavy churn: 1000 statements taking 80% of the
# executions, plus 100,000 distinct ones taking 20%, with max = 5000.  All
# 1000 hot statements must be present at every sample, and the table must
# stay within max + 5%.  The table starts 70% full, so eviction begins
# early in the run.  The run is a fixed number of rounds of a fixed number
# of transactions, sampled after each round (and while it runs), so what
# is checked does not depend on the speed of the machine.
use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time sleep);

# rounds of 4 clients x $per_client transactions
my $rounds = $ENV{PGSQ_RETENTION_ROUNDS} // 10;
my $per_client = 2000;

my $node = PostgreSQL::Test::Cluster->new('retention');
$node->init;
$node->append_conf(
	'postgresql.conf', qq(
shared_preload_libraries = 'pg_stat_queries'
pg_stat_queries.max = 5000
fsync = off
));
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION pg_stat_queries');
# t1..t1000 for the hot statements, c1..c100 joined with them for the cold
$node->safe_psql(
	'postgres', q{
DO $$
BEGIN
  FOR i IN 1..1000 LOOP
    EXECUTE format('CREATE TABLE t%s (id int); INSERT INTO t%s VALUES (1)', i, i);
  END LOOP;
  FOR i IN 1..100 LOOP
    EXECUTE format('CREATE TABLE c%s (id int); INSERT INTO c%s VALUES (1)', i, i);
  END LOOP;
END $$});

my $dir = PostgreSQL::Test::Utils::tempdir;
open(my $fh, '>', "$dir/hot.sql") or die;
print $fh "\\set a random(1, 1000)\nSELECT id FROM t:a;\n";
close $fh;
open($fh, '>', "$dir/cold.sql") or die;
print $fh "\\set a random(1, 1000)\n\\set b random(1, 100)\n"
  . "SELECT t:a.id FROM t:a, c:b WHERE t:a.id = c:b.id;\n";
close $fh;

# Cold statements that will not come back take 70% of the table, so the
# run reaches the point where sweeping starts within seconds however fast
# this machine is, and evicts from then on.
$node->safe_psql('postgres', 'SELECT pg_stat_queries_reset()');
open($fh, '>', "$dir/fill.sql") or die;
for my $n (0 .. 3499)
{
	my ($a, $b) = (1 + $n % 1000, 1 + int($n / 1000) * 10 + $n % 7);
	print $fh "SELECT t$a.id FROM t$a, c$b WHERE t$a.id = c$b.id;\n";
}
close $fh;
$node->command_ok(
	[
		'psql', '-X', '-q', '-o', '/dev/null',
		'-d', $node->connstr('postgres'),
		'-f', "$dir/fill.sql"
	],
	'cold statements filling 70% of the table ran');
cmp_ok($node->safe_psql('postgres', 'SELECT num_entries FROM pg_stat_queries_info'),
	'>=', 3500, 'table holds the 3500 cold entries');

# Samples count once every hot statement has run (and has its entry): at
# the latest from the middle of the run on, when each has been drawn some
# 30 times on average (a round has 6,400 hot executions).
my ($samples, $round_samples, $min_hot, $max_entries, $all_seen) =
  (0, 0, 1000, 0, 0);
my $pgbench_ok = 1;

# A sample, while a round runs or after round $round_end has
sub sample
{
	my ($round_end) = @_;
	my ($hot, $entries) = split(
		/\|/,
		$node->safe_psql(
			'postgres', q{
SELECT (SELECT count(*) FROM pg_stat_queries WHERE query ~ '^SELECT id FROM t[0-9]+$'),
       num_entries FROM pg_stat_queries_info}));
	$all_seen = 1
	  if $round_end && ($hot == 1000 || $round_end >= $rounds / 2);
	return unless $all_seen;
	$samples++;
	$round_samples++ if $round_end;
	$min_hot = $hot if $hot < $min_hot;
	$max_entries = $entries if $entries > $max_entries;
}

for my $round (1 .. $rounds)
{
	my ($out, $err) = ('', '');
	my $h = IPC::Run::start(
		[
			'pgbench', '-n', '-c', '4', '-j', '2', '-t', $per_client,
			'-f', "$dir/hot.sql\@8", '-f', "$dir/cold.sql\@2",
			'-h', $node->host, '-p', $node->port, 'postgres'
		],
		'>', \$out, '2>', \$err);
	# while it runs, as often as this machine allows: more checks, not needed
	while ($h->pumpable)
	{
		sleep(0.5);
		$h->pump_nb;
		sample(undef);
	}
	if (!$h->finish)
	{
		$pgbench_ok = 0;
		diag("round $round: $err");
	}
	sample($round);
}
ok($pgbench_ok, "pgbench succeeded in each of the $rounds rounds");
cmp_ok($round_samples, '>=', int($rounds / 2) + 1,
	"a sample after each round from the middle on at least ($samples in all)");
is($min_hot, 1000, 'all 1000 hot statements present at every sample');
cmp_ok($max_entries, '<=', 5250, "table within max + 5% (largest $max_entries)");

my ($evicted, $cold) = split(/\|/,
	$node->safe_psql('postgres',
		"SELECT evicted_entries, (SELECT count(*) FROM pg_stat_queries WHERE query LIKE '%, c%') FROM pg_stat_queries_info"));
cmp_ok($evicted, '>', 0, "cold statements were evicted ($evicted)");
note("cold entries at the end: $cold");

ok(!$node->log_contains('TRAP:|PANIC|terminated by signal'), 'no crash or assertion failure');
$node->stop;
done_testing();
