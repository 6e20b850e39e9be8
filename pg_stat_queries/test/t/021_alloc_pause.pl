# After a failed allocation of shared memory, nobody allocates for a while.
#
# An injection point (pg-stat-queries-shared-alloc) makes every allocation
# of ours that may create a segment fail as a full /dev/shm does (an error
# of class 53), after running its own action: a notice, logged, one per
# attempt.  Four clients then run new statements for 4 s.  Without
# the pause each one would try, and fail, at least once; with it, the
# whole server tries once per area at first (or once per client, when they
# fail together), then once per pause: 1 s, doubled up to 10 s.  Every
# transaction succeeds and the statements are counted as untracked.  Once
# the point is detached, allocations resume by themselves when the pause
# is over; a reset, which frees entries, ends the pause at once.
#
# The injected failure needs a server built with --enable-injection-points.
use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use Time::HiRes qw(time usleep);

my $tables = 60;
my $point = 'pg-stat-queries-shared-alloc';
my $attempt_re = qr/notice triggered for injection point $point/;

my $node = PostgreSQL::Test::Cluster->new('pause');

# Run a statement, then count our entries whose text has $fragment, in the
# same session (a read merges the session's own counts first)
sub run_and_find
{
	my ($sql, $fragment) = @_;
	my @lines = split /\n/, $node->safe_psql('postgres',
		"$sql;\nSELECT count(*) FROM pg_stat_queries WHERE query LIKE '%$fragment%'");
	return $lines[-1];
}

$node->init;
$node->append_conf(
	'postgresql.conf', qq(
shared_preload_libraries = 'pg_stat_queries'
pg_stat_queries.max = 20000
pg_stat_queries.save = off
autovacuum = off
log_min_messages = notice
log_statement = none
));
$node->start;

SKIP:
{
	skip 'injection points not available', 14
	  unless $node->check_extension('injection_points');

	$node->safe_psql('postgres',
		'CREATE EXTENSION pg_stat_queries; CREATE EXTENSION injection_points');
	$node->safe_psql('postgres',
		join('', map { "CREATE TABLE u$_ (id int); INSERT INTO u$_ VALUES (1);\n" } 1 .. $tables));

	# Distinct statements: a three-way join, 8,000 shapes
	my $dir = PostgreSQL::Test::Utils::tempdir;
	open(my $fh, '>', "$dir/new.sql") or die;
	print $fh qq(\\set a random(1, 20)
\\set b random(21, 40)
\\set c random(41, 60)
SELECT count(*) FROM u:a, u:b, u:c WHERE u:a.id = u:b.id AND u:b.id = u:c.id;
);
	close $fh;

	my ($untracked_before, $missing_before) = split /\|/, $node->safe_psql('postgres',
		'SELECT untracked_executions, texts_missing FROM pg_stat_queries_info');
	my $log_offset = -s $node->logfile;
	$node->safe_psql('postgres', "SELECT injection_points_attach('$point', 'notice')");

	my $start = time;
	my ($out, $err) = ('', '');
	my $ok = IPC::Run::run(
		[
			'pgbench', '-n', '-c', '4', '-j', '2', '-T', '4',
			'-f', "$dir/new.sql",
			'-h', $node->host, '-p', $node->port, 'postgres'
		],
		'>', \$out, '2>', \$err);
	my $elapsed = time - $start;
	ok($ok, 'pgbench with new statements completed') or diag($err);
	like($out, qr/number of failed transactions: 0 /, 'no transaction failed');
	my ($done) = $out =~ /number of transactions actually processed: (\d+)/;
	$done //= 0;

	# In each area (the statistics system's, for entries, and ours, for
	# texts), one attempt per client at most at first, then one per pause
	# over: the pauses are at least 1 s, so one per second of the run is
	# ample.
	my $log = slurp_file($node->logfile, $log_offset);
	my $attempts = () = $log =~ /$attempt_re/g;
	my $bound = 2 * (4 + int($elapsed) + 1);
	cmp_ok($attempts, '>', 0, 'the injected failure was hit');
	cmp_ok($attempts, '<=', $bound,
		sprintf('%d allocation attempts for %d new statements in %.1f s',
			$attempts, $done, $elapsed));
	like($log, qr/pg_stat_queries could not allocate shared memory \(SQLSTATE 53100\)/,
		'the log says why');

	# (the clients add their counts as they exit)
	ok( $node->poll_query_until(
			'postgres',
			'SELECT untracked_executions - ' . ($untracked_before + 0)
			  . " >= $done - $attempts FROM pg_stat_queries_info"),
		'the statements that did not try are counted as untracked');
	# their texts, not made for entries that could not be, are not missing
	cmp_ok(
		$node->safe_psql('postgres', 'SELECT texts_missing FROM pg_stat_queries_info')
		  - $missing_before,
		'<=', $attempts, 'no text made for a statement that could not have an entry');

	# Detached, the point fails nothing: the first retry after the pause
	# allocates, and new statements are tracked again.
	$node->safe_psql('postgres', "SELECT injection_points_detach('$point')");
	my $tracked = 0;
	for my $i (1 .. 300)
	{
		$tracked = run_and_find("SELECT count(*) FROM u1 x$i, u2 y WHERE x$i.id = y.id",
			"FROM u1 x$i, u2 y");
		last if $tracked;
		usleep(100_000);
	}
	is($tracked, 1, 'allocations resume once the pause is over');

	# A failure starts a new pause, which a reset ends at once
	$node->safe_psql('postgres', "SELECT injection_points_attach('$point', 'notice')");
	$node->safe_psql('postgres', 'SELECT count(*) FROM u3 x, u4 y WHERE x.id = y.id');
	$node->safe_psql('postgres', "SELECT injection_points_detach('$point')");
	is(run_and_find('SELECT count(*) FROM u5 x, u6 y WHERE x.id = y.id', 'FROM u5 x, u6 y'),
		'0', 'a new statement in the pause is not tracked');
	$node->safe_psql('postgres', 'SELECT pg_stat_queries_reset()');
	is(run_and_find('SELECT count(*) FROM u7 x, u8 y WHERE x.id = y.id', 'FROM u7 x, u8 y'),
		'1', 'a reset ends the pause');

	# An error of another class (a /dev/shm this user may not write: 42501)
	# fails no statement either, and pauses allocations the same way
	my $denied = 'pg-stat-queries-shared-alloc-denied';
	$log_offset = -s $node->logfile;
	my $untracked = $node->safe_psql('postgres',
		'SELECT untracked_executions FROM pg_stat_queries_info');
	$node->safe_psql('postgres', "SELECT injection_points_attach('$denied', 'notice')");
	my ($rc, $stdout, $stderr) = $node->psql('postgres',
		"SELECT count(*) AS denied_rows FROM u9 x, u10 y WHERE x.id = y.id;
"
		  . "SELECT count(*) FROM u11 x, u12 y WHERE x.id = y.id;");
	$node->safe_psql('postgres', "SELECT injection_points_detach('$denied')");
	is($rc, 0, 'new statements succeed while the allocation is denied');
	unlike($stderr, qr/ERROR/, 'no error reaches the client') or diag($stderr);
	like(slurp_file($node->logfile, $log_offset),
		qr/pg_stat_queries could not allocate shared memory \(SQLSTATE 42501\)/,
		'the log gives the error\'s SQLSTATE');
	# (the session adds its counts as it exits)
	ok( $node->poll_query_until('postgres',
			"SELECT untracked_executions >= $untracked + 2 FROM pg_stat_queries_info"),
		'both executions counted as untracked');
	$node->safe_psql('postgres', 'SELECT pg_stat_queries_reset()');
}

ok(!$node->log_contains(qr/TRAP:|PANIC|server process .* was terminated/),
	'no crash');
$node->stop;
done_testing();
