# Thousands of distinct statements against a small max, with concurrent full
# and filtered resets, full-text view reads, and reloads of max and
# query_text_memory.  Checks: the entry count stays within max + 5%, no
# literal of the workload reaches a stored text, text memory returns to
# about zero after a full reset, and the server log stays clean.
use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time sleep);

my $phase_seconds = $ENV{PGSQ_STRESS_SECONDS} // 15;
my $tables = 60;

my $node = PostgreSQL::Test::Cluster->new('stress');
$node->init;
$node->append_conf(
	'postgresql.conf', qq(
shared_preload_libraries = 'pg_stat_queries'
pg_stat_queries.max = 100
pg_stat_queries.query_text_memory = 1MB
max_connections = 30
));
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION pg_stat_queries');
$node->safe_psql('postgres',
	join('', map { "CREATE TABLE u$_ (id int); INSERT INTO u$_ VALUES (1);\n" } 1 .. $tables));

my $dir = PostgreSQL::Test::Utils::tempdir;
sub script
{
	my ($name, $body) = @_;
	open(my $fh, '>', "$dir/$name") or die;
	print $fh $body;
	close $fh;
	return "$dir/$name";
}

# 8000 distinct statements (one table from each third), each with literals
# that must never be stored
my $work = script('work.sql', qq(\\set a random(1, 20)
\\set b random(21, 40)
\\set c random(41, 60)
\\set r random(1, 999999)
SELECT 'secret_:r' AS s, u:a.id + :r FROM u:a, u:b, u:c WHERE u:a.id = u:b.id AND u:b.id = u:c.id AND u:a.id <> -:r;
));
my $full_reset = script('full_reset.sql', "SELECT pg_stat_queries_reset();\n");
my $filtered_reset = script('filtered_reset.sql',
	"SELECT pg_stat_queries_reset(0, 0, (SELECT queryid FROM pg_stat_queries WHERE queryid IS NOT NULL LIMIT 1));\n"
	  . "SELECT pg_stat_queries_reset(0, (SELECT oid FROM pg_database WHERE datname = 'postgres'), 0, true);\n");
# full reads by the direct scan, one of them two reads at once (a join)
my $reader = script('reader.sql',
	"SELECT count(*), sum(length(query)) FROM pg_stat_queries;\n"
	  . "SELECT count(*) FROM pg_stat_queries a JOIN pg_stat_queries(false) b USING (userid, dbid, queryid, toplevel) WHERE a.calls >= 0;\n"
);
my $reload = script('reload.sql', qq(\\set m random(100, 400)
\\set k random(16, 512)
ALTER SYSTEM SET pg_stat_queries.max = :m;
ALTER SYSTEM SET pg_stat_queries.query_text_memory = :k;
SELECT pg_reload_conf();
));

# Run pgbench in the background for $seconds with the given scripts
sub start_pgbench
{
	my ($seconds, @scripts) = @_;
	my ($out, $err) = ('', '');
	my $h = IPC::Run::start(
		[
			'pgbench', '-n', '-c', '4', '-j', '2', '-T', $seconds,
			(map { ('-f', $_) } @scripts),
			'-h', $node->host, '-p', $node->port, 'postgres'
		],
		'>', \$out, '2>', \$err);
	return ($h, \$out, \$err);
}

# Sample num_entries and evicted_entries until pgbench ends; return the
# largest values seen.  A full reset clears evicted_entries, so the count is
# sampled during the run rather than read once at its end.
sub sample_until_done
{
	my ($h) = @_;
	my $largest = 0;
	my $most_evicted = 0;
	my $samples = 0;
	while ($h->pumpable)
	{
		my ($n, $e) = split(/\|/,
			$node->safe_psql('postgres',
				'SELECT num_entries, evicted_entries FROM pg_stat_queries_info'));
		$largest = $n if $n > $largest;
		$most_evicted = $e if $e > $most_evicted;
		$samples++;
		sleep(0.25);
		$h->pump_nb;
	}
	my $ok = $h->finish;
	return ($largest, $samples, $ok, $most_evicted);
}

# Phase 1: fixed max = 100, resets and readers racing with the workload
my ($h, $out, $err) = start_pgbench($phase_seconds, "$work\@4000",
	"$full_reset\@1", "$filtered_reset\@1", "$reader\@2");
my ($largest, $samples, $ok, $most_evicted) = sample_until_done($h);
ok($ok, 'phase 1 pgbench succeeded') or diag($$err);
cmp_ok($samples, '>=', 10, "sampled the entry count ($samples samples)");
cmp_ok($largest, '<=', 105, "entry count stayed within max + 5% (largest $largest)");
note("most evicted entries seen $most_evicted, largest $largest");
cmp_ok($most_evicted, ">", 0, "eviction happened during phase 1");

# Phase 2: reloads of max and query_text_memory racing with the workload
($h, $out, $err) = start_pgbench($phase_seconds, "$work\@40", "$reload\@1", "$reader\@2");
(undef, undef, $ok) = sample_until_done($h);
ok($ok, 'phase 2 pgbench succeeded') or diag($$err);

# back to max = 100: the table shrinks promptly
$node->safe_psql('postgres',
	"ALTER SYSTEM SET pg_stat_queries.max = 100; ALTER SYSTEM SET pg_stat_queries.query_text_memory = '1MB'; SELECT pg_reload_conf();");
# each poll is a new backend, which starts with the postmaster's settings
ok($node->poll_query_until('postgres', "SELECT current_setting('pg_stat_queries.max') = '100'"),
	'max = 100 reloaded');
($h, $out, $err) = start_pgbench(3, "$work\@1");
sample_until_done($h);
cmp_ok($node->safe_psql('postgres', 'SELECT num_entries FROM pg_stat_queries_info'),
	'<=', 105, 'entry count back within the lowered max');

# no literal of the workload in any stored text
is( $node->safe_psql('postgres',
		"SELECT count(*) FROM pg_stat_queries WHERE query ~ 'secret_[0-9]|<> -[0-9]|\\+ [0-9]'"),
	'0', 'no literal value stored');
cmp_ok($node->safe_psql('postgres',
		"SELECT count(*) FROM pg_stat_queries WHERE query LIKE '%secret%'"),
	'==', 0, 'not even the literal prefix');
cmp_ok($node->safe_psql('postgres',
		"SELECT count(*) FROM pg_stat_queries WHERE query LIKE 'SELECT \$1 AS s,%'"),
	'>', 10, 'normalized workload texts are stored');
# nor in a plan's text (the workload's plans filter on its literal)
is( $node->safe_psql('postgres',
		"SELECT count(*) FROM pg_stat_queries_plans WHERE plan ~ 'Scan on u[0-9]' AND plan ~ 'secret|[0-9]{3}'"),
	'0', "no literal value in a plan's text");
cmp_ok($node->safe_psql('postgres',
		"SELECT count(*) FROM pg_stat_queries_plans WHERE plan ~ 'Scan on u[0-9]+'"),
	'>', 0, "the workload's plans are stored");

# a full reset frees the text memory
$node->safe_psql('postgres', 'SELECT pg_stat_queries_reset()');
cmp_ok($node->safe_psql('postgres', 'SELECT query_text_bytes FROM pg_stat_queries_info'),
	'<', 500, 'text bytes back to about zero after a full reset');

ok(!$node->log_contains('TRAP:|PANIC|terminated by signal'), 'no crash or assertion failure');
ok(!$node->log_contains('ERROR:'), 'no error in the server log');
$node->stop;
done_testing();
