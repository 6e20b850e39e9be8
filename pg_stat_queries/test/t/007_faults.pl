# Faults: backends killed under churn (crash restart), damaged statistics
# and text files at startup, max and query_text_memory lowered to their
# minimum and raised back under load, and DROP DATABASE of a database under
# load.  Each part ends with a running server, consistent counters and no
# assertion failure or PANIC in the server log.
#
# "Consistent counters", once no client is left (see check_consistent):
#  - pg_stat_queries_info.num_entries is not an estimate: the view counts
#    the live entries of the shared hash on each call (pgsq_count_entries),
#    initialized or not.  The view pg_stat_queries hides entries no
#    execution or planning was merged into yet (an entry is created at
#    parse analysis, and a statement that fails or whose backend dies
#    before it finishes leaves one with no calls), so the two are equal
#    exactly when no such entry exists.  Every statement this test runs
#    while it checks succeeds, and the workloads whose backends are
#    terminated run only statements that already have calls.  (The running
#    count the sweep keeps in shared memory is an estimate, exact only at
#    the end of a pass; it is not what the view shows.)
#  - query_text_bytes is the sum of len + 1 over the stored texts (the
#    chunk includes its terminating NUL, textarea.c); the view shows a text
#    converted to the database encoding, which is the encoding it was
#    stored in here, so sum(octet_length(query) + 1) over the rows must
#    equal it.  Equality also says there is no stored text without a
#    visible entry, since every text counts at least one byte.
use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use Time::HiRes qw(time sleep);

my $test_start = time;
my $tables = 30;

my $node = PostgreSQL::Test::Cluster->new('faults');
$node->init;
$node->append_conf(
	'postgresql.conf', qq(
shared_preload_libraries = 'pg_stat_queries'
pg_stat_queries.max = 1000
pg_stat_queries.query_text_memory = 1MB
pg_stat_queries.min_sweep_interval = 0
max_connections = 30
restart_after_crash = on
fsync = off
log_statement = none
));
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION pg_stat_queries');
$node->safe_psql('postgres',
	join('', map { "CREATE TABLE u$_ (id int); INSERT INTO u$_ VALUES (1);\n" } 1 .. $tables));

my $dir = PostgreSQL::Test::Utils::tempdir;
sub script
{
	my ($name, $body) = @_;
	open(my $fh, '>', "$dir/$name") or die "could not write $dir/$name: $!";
	print $fh $body;
	close $fh;
	return "$dir/$name";
}

# 27,000 distinct statements (a table from each third, and the number of
# columns), far more than max: a table of 100 entries is swept constantly
my $churn = script('churn.sql', qq(\\set a random(1, 10)
\\set b random(11, 20)
\\set c random(21, 30)
\\set k random(1, 27)
\\set r random(1, 999999)
SELECT u:a.id + :r, :k FROM u:a, u:b, u:c WHERE u:a.id = u:b.id AND u:b.id = u:c.id AND u:a.id > :k - 30;
));

# The same 30 statements over and over (merged at idle and every second)
my $hot = script('hot.sql', qq(\\set a random(1, $tables)
SELECT id FROM u:a WHERE id = :a;
));

# Run pgbench in the background; bounded by -T and by an IPC::Run timer
sub start_pgbench
{
	my ($db, $clients, $seconds, @scripts) = @_;
	my ($out, $err) = ('', '');
	# so that its backends can be told apart in pg_stat_activity
	local $ENV{PGAPPNAME} = 'faults_pgbench';
	my $h = IPC::Run::start(
		[
			'pgbench', '-n', '-c', $clients, '-j', '2', '-T', $seconds,
			(map { ('-f', $_) } @scripts),
			'-h', $node->host, '-p', $node->port, $db
		],
		'>', \$out, '2>', \$err,
		IPC::Run::timeout($seconds + 60));
	return { h => $h, out => \$out, err => \$err };
}

# Wait for a background pgbench; returns true if it exited with status 0
sub finish_pgbench
{
	my ($run) = @_;
	my $ok = eval { $run->{h}->finish };
	if ($@)
	{
		diag("pgbench: $@");
		$run->{h}->kill_kill;
		return 0;
	}
	return $ok;
}

# Wait until the server accepts connections again after a crash.  Polling
# with a query alone races the restart: poll_query_until gives psql its
# query on stdin, and a psql refused while the server restarts may exit
# before reading it, so that writing the query fails with EPIPE and the
# test dies (exit status 32, seen once under heavy load).  pg_isready reads
# nothing.
sub wait_accepting
{
	my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
	while (time < $deadline)
	{
		return 1
		  if system('pg_isready', '-q', '-h', $node->host, '-p',
			$node->port) == 0;
		sleep(0.1);
	}
	return 0;
}

# Values of postgresql.conf, in base units, that ALTER SYSTEM RESET returns to
my %conf_value = (
	'pg_stat_queries.max' => 1000,
	'pg_stat_queries.query_text_memory' => 1024);

# Set (value, in base units) or reset (undef) settings with ALTER SYSTEM,
# reload, and wait until a new session sees them
sub set_conf
{
	my (%settings) = @_;
	my $sql = '';
	for my $name (sort keys %settings)
	{
		$sql .= defined $settings{$name}
		  ? "ALTER SYSTEM SET $name = $settings{$name};\n"
		  : "ALTER SYSTEM RESET $name;\n";
	}
	$node->safe_psql('postgres', $sql . "SELECT pg_reload_conf();\n");
	for my $name (sort keys %settings)
	{
		my $want = $settings{$name} // $conf_value{$name};
		$node->poll_query_until('postgres',
			"SELECT setting FROM pg_settings WHERE name = '$name'", $want)
		  or die "$name did not become $want";
	}
}

# Wait until no client backend but the polling one is left
sub wait_no_clients
{
	my ($label) = @_;
	ok( $node->poll_query_until('postgres',
			"SELECT count(*) = 0 FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()"
		),
		"$label: no client left");
}

# Both sides of the consistency check in one statement.  Nothing in this
# statement creates or drops an entry between its two function calls: a
# sweep runs after a statement, and no other session is left.  Its own
# entry, created at parse analysis, is counted by num_entries but shown by
# pg_stat_queries only once an execution was merged, so the statement is
# run twice in one session and the second result is used.
# (plans' texts are in the text area too: the visible texts are those of
# pg_stat_queries and of pg_stat_queries_plans)
my $check_sql = q{SELECT i.num_entries, v.n, i.query_text_bytes, v.b + p.b
FROM pg_stat_queries_info i,
     (SELECT count(*) AS n, coalesce(sum(octet_length(query) + 1), 0) AS b
      FROM pg_stat_queries) v,
     (SELECT coalesce(sum(octet_length(plan) + 1), 0) AS b
      FROM pg_stat_queries_plans) p};

# Check the counters once the load has stopped.  Backends leave
# pg_stat_activity before they merge their last counts at exit, so the
# check is repeated for a few seconds until it holds.  max is raised for the
# check so that no sweep runs between two statements of the checking
# session (its own new entry could be evicted); restored afterwards.
sub check_consistent
{
	my ($label, $restore_max) = @_;
	wait_no_clients($label);
	set_conf('pg_stat_queries.max' => 100000);
	my ($ne, $n, $tb, $b);
	my $deadline = time + 15;
	my $attempts = 0;
	while (++$attempts)
	{
		my $out = $node->safe_psql('postgres',
			"SELECT pg_stat_force_next_flush();\n$check_sql;\n$check_sql;\n");
		($ne, $n, $tb, $b) = split(/\|/, (split(/\n/, $out))[-1]);
		last if ($ne == $n && $tb == $b) || time > $deadline;
		sleep(0.5);
	}
	note("$label: $attempts attempt(s)");
	is($ne, $n, "$label: num_entries equals the rows of pg_stat_queries ($n)");
	is($tb, $b, "$label: query_text_bytes equals the bytes of the visible texts ($b)");
	set_conf('pg_stat_queries.max' => $restore_max);
}

# No assertion failure nor PANIC since a log offset; unless allowed, no
# backend ended by a signal either
sub log_clean
{
	my ($label, $offset, $kills_allowed) = @_;
	my $log = slurp_file($node->logfile, $offset);
	unlike($log, qr/TRAP:|PANIC/, "$label: no assertion failure or PANIC in the log");
	unlike($log, qr/terminated by signal|terminated by exception/,
		"$label: no process ended by a signal")
	  unless $kills_allowed;
	return $log;
}

sub info
{
	my ($cols) = @_;
	return $node->safe_psql('postgres', "SELECT $cols FROM pg_stat_queries_info");
}

###########################################################################
# Part 1: SIGKILL of backends under churn (max = 100, sweeps back to back).
# Each kill makes the postmaster reinitialize shared memory and the startup
# process discard the statistics; which backend is merging or sweeping at
# that moment cannot be chosen, so the kills come at different delays.
###########################################################################
my $offset = -s $node->logfile;
set_conf('pg_stat_queries.max' => 100);

my $round = 0;
for my $delay (0.2, 1.0, 0.5, 1.5, 0.8)
{
	$round++;
	my $run = start_pgbench('postgres', 6, 30, "$churn\@9", "$hot\@1");

	# sweeps are running once entries have been evicted
	my $deadline = time + 15;
	my $evicted = 0;
	while (time < $deadline)
	{
		$evicted = info('evicted_entries');
		last if $evicted > 0;
		sleep(0.2);
	}
	cmp_ok($evicted, '>', 0, "round $round: entries evicted before the kill");
	sleep($delay);

	my @pids = split(/\n/,
		$node->safe_psql('postgres',
			"SELECT pid FROM pg_stat_activity WHERE application_name = 'faults_pgbench' AND backend_type = 'client backend' ORDER BY random()"
		));
	ok(@pids > 0, "round $round: pgbench backends found");
	my $log_before_kill = -s $node->logfile;
	kill 'KILL', $pids[0] if @pids;
	ok(!finish_pgbench($run), "round $round: pgbench lost its connections");

	ok(wait_accepting() && $node->poll_query_until('postgres', 'SELECT 1', '1'),
		"round $round: server accepts queries after the crash restart");
	my $log = slurp_file($node->logfile, $log_before_kill);
	ok($log =~ qr/terminated by signal 9/, "round $round: the kill was seen");
	ok($log =~ qr/all server processes terminated; reinitializing/,
		"round $round: crash restart");

	# statistics were discarded: nothing of the workload, no eviction yet
	is( $node->safe_psql('postgres',
			"SELECT count(*) FROM pg_stat_queries WHERE query LIKE '%FROM u%'"),
		'0', "round $round: workload statements discarded by the crash restart");
	is(info('evicted_entries'), '0', "round $round: eviction count starts afresh");
}

# sweeping works after the last crash restart too (no flag or queue left
# from before: shared memory was created afresh)
my $run = start_pgbench('postgres', 4, 2, "$churn\@9", "$hot\@1");
ok(finish_pgbench($run), 'churn after the last crash restart ran without error')
  or diag(${ $run->{err} });
cmp_ok(info('evicted_entries'), '>', 0, 'entries evicted after the last crash restart');
cmp_ok(info('num_entries'), '<=', 105, 'table within max + 5% after the last crash restart');
check_consistent('after the kills', 100);
log_clean('kills', $offset, 1);

###########################################################################
# Part 2: damaged statistics files at startup.  A clean shutdown writes
# pg_stat/pgstat.stat (the statistics system's) and
# pg_stat/pg_stat_queries.stat (ours, savefile.c); one of them is damaged
# before the next start.  Damage to one never costs the other.
###########################################################################
set_conf('pg_stat_queries.max' => undef);
my $stats_file = $node->data_dir . '/pg_stat/pgstat.stat';
my $saved_file = $node->data_dir . '/pg_stat/pg_stat_queries.stat';

# Statements with texts to save, and a marker to follow across restarts.
# Returns the marker's calls as the seeding session sees them: a session
# merges its own counts before it reads the view, while its counts at exit
# are merged after psql has returned.
my $marker_id;
sub seed
{
	my $out = $node->safe_psql('postgres',
		join('', map { "SELECT id, $_ AS seeded FROM u$_ WHERE id = $_;\n" } 1 .. $tables)
		  . "SELECT 'fault' AS fault_marker;\n" x 3
		  . "SELECT coalesce(sum(calls), 0) FROM pg_stat_queries WHERE "
		  . (defined $marker_id ? "queryid = $marker_id" : "query = 'SELECT \$1 AS fault_marker'")
		  . ";\n");
	return (split(/\n/, $out))[-1];
}

seed();
$marker_id = $node->safe_psql('postgres',
	"SELECT queryid FROM pg_stat_queries WHERE query = 'SELECT \$1 AS fault_marker'");
sub marker_calls
{
	return $node->safe_psql('postgres',
		"SELECT coalesce(sum(calls), 0) FROM pg_stat_queries WHERE queryid = $marker_id");
}

sub read_raw
{
	my ($path) = @_;
	open(my $fh, '<:raw', $path) or die "could not read $path: $!";
	local $/;
	my $data = <$fh>;
	close $fh;
	return $data;
}

sub write_raw
{
	my ($path, $data) = @_;
	open(my $fh, '>:raw', $path) or die "could not write $path: $!";
	print $fh $data;
	close $fh;
}

my $ours_ignored = qr/ignoring pg_stat_queries statistics file "pg_stat\/pg_stat_queries\.stat"/;
my %damage = (
	'statistics file truncated' => sub {
		my $data = read_raw($stats_file);
		write_raw($stats_file, substr($data, 0, int(length($data) * 2 / 3)));
		return qr/corrupted statistics file "pg_stat\/pgstat\.stat"/;
	},
	'statistics file corrupted' => sub {
		# the format identifier: the whole file is refused
		my $data = read_raw($stats_file);
		substr($data, 0, 4) = 'XXXX';
		write_raw($stats_file, $data);
		return qr/corrupted statistics file "pg_stat\/pgstat\.stat"/;
	},
	'our file truncated' => sub {
		my $data = read_raw($saved_file);
		write_raw($saved_file, substr($data, 0, int(length($data) / 2)));
		return qr/$ours_ignored: its checksum does not match/;
	},
	'our file damaged in a text' => sub {
		my $data = read_raw($saved_file);
		my $at = index($data, 'AS seeded');
		die 'no text found in our file' if $at < 0;
		substr($data, $at, 2) = 'as';
		write_raw($saved_file, $data);
		return qr/$ours_ignored: its checksum does not match/;
	},
	'our file corrupted (header)' => sub {
		my $data = read_raw($saved_file);
		substr($data, 0, 4) = 'XXXX';
		write_raw($saved_file, $data);
		return qr/$ours_ignored: it is not a pg_stat_queries statistics file/;
	});

for my $case (sort keys %damage)
{
	my $calls_before = seed();
	$node->stop;
	ok(-s $stats_file && -s $saved_file, "$case: both files written at shutdown");
	my $expect_log = $damage{$case}->();
	$offset = -s $node->logfile;
	$node->start;
	# the first client backend restores ours, and logs what it ignored
	$node->safe_psql('postgres', 'SELECT 1');
	my $log = log_clean($case, $offset);
	ok($log =~ $expect_log, "$case: the damage is logged, naming the file")
	  or diag("log since the start:\n$log");
	my $others = $node->safe_psql('postgres',
		"SELECT coalesce(seq_scan, 0) + coalesce(idx_scan, 0) FROM pg_stat_user_tables WHERE relname = 'u1'");
	if ($case =~ /^statistics/)
	{
		# PostgreSQL's are gone, ours are not
		is(marker_calls(), $calls_before, "$case: our statistics restored");
		is($node->safe_psql('postgres',
				"SELECT count(*) FROM pg_stat_queries WHERE query ~ 'seeded'"),
			$tables, "$case: with their texts");
		is($others, '0', "$case: PostgreSQL's statistics discarded");
	}
	else
	{
		# ours are gone, PostgreSQL's are not
		is(marker_calls(), '0', "$case: our statistics discarded");
		cmp_ok($others, '>', 0, "$case: PostgreSQL's statistics restored");
	}
	ok(!-e $saved_file, "$case: our file removed at startup");
	check_consistent($case);
}

###########################################################################
# Part 3: max lowered to its minimum and query_text_memory to 0, then both
# raised back, at reload while pgbench runs new and known statements.  (The
# minimum of max is 100, not lower; query_text_memory's is 0.)
###########################################################################
$offset = -s $node->logfile;
my ($min_max, $min_mem) = split(/\|/,
	$node->safe_psql('postgres',
		"SELECT (SELECT min_val FROM pg_settings WHERE name = 'pg_stat_queries.max'),"
		  . " (SELECT min_val FROM pg_settings WHERE name = 'pg_stat_queries.query_text_memory')"));
note("minimum max $min_max, minimum query_text_memory $min_mem");
my $missing_before = info('texts_missing');

# Each step waits for what it needs, bounded by the harness timeout, not
# for a fixed time; pgbench runs long enough for all of them under load.
$run = start_pgbench('postgres', 4, 20, "$churn\@3", "$hot\@7");
# the table is larger than the lowered max will allow
ok( $node->poll_query_until('postgres',
		"SELECT num_entries > $min_max * 1.05 FROM pg_stat_queries_info"),
	'pgbench fills the table beyond the minimum of max');
set_conf(
	'pg_stat_queries.max' => $min_max,
	'pg_stat_queries.query_text_memory' => $min_mem);
my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
my $smallest = info('num_entries');
while (time < $deadline)
{
	my $n = info('num_entries');
	$smallest = $n if $n < $smallest;
	last if $smallest <= $min_max * 1.05;
	sleep(0.1);
}
cmp_ok($smallest, '<=', $min_max * 1.05, "table shrank to the lowered max under load ($smallest)");
ok( $node->poll_query_until('postgres',
		"SELECT texts_missing > $missing_before FROM pg_stat_queries_info"),
	'texts are refused while query_text_memory is 0');
set_conf('pg_stat_queries.max' => undef);
# the raised max holds more entries again, texts or not
ok( $node->poll_query_until('postgres',
		"SELECT num_entries > $min_max * 1.05 FROM pg_stat_queries_info"),
	'the table grows again once max is raised back under load');
set_conf('pg_stat_queries.query_text_memory' => undef);
my $ok = finish_pgbench($run);
ok($ok, 'pgbench ran without error while the settings changed');
unlike(${ $run->{err} }, qr/error/i, 'no error reported by pgbench') or diag(${ $run->{err} });
cmp_ok(info('texts_missing'), '>', $missing_before,
	'texts were refused while query_text_memory was 0');
check_consistent('after the settings changed under load');
log_clean('settings under load', $offset);

###########################################################################
# Part 4: DROP DATABASE ... WITH (FORCE) of a database under load.  Entries
# of a dropped database may stay until evicted, with their texts; either
# way the counters must agree.
###########################################################################
$offset = -s $node->logfile;
$node->safe_psql('postgres', 'CREATE DATABASE x');
$node->safe_psql('x',
	join('', map { "CREATE TABLE u$_ (id int); INSERT INTO u$_ VALUES (1);\n" } 1 .. $tables));
# every statement of the workload has calls before the backends are
# terminated, so none is left created at parse analysis without calls
$node->safe_psql('x', join('', map { "SELECT id FROM u$_ WHERE id = 1;\n" } 1 .. $tables));
my $x_oid = $node->safe_psql('postgres', "SELECT oid FROM pg_database WHERE datname = 'x'");
ok( $node->poll_query_until('postgres',
		"SELECT count(*) >= $tables FROM pg_stat_queries WHERE dbid = $x_oid"),
	'statements of x are tracked');

$run = start_pgbench('x', 4, 30, $hot);
# under load: all four clients connected
ok( $node->poll_query_until('postgres',
		"SELECT count(*) = 4 FROM pg_stat_activity WHERE datname = 'x' AND application_name = 'faults_pgbench'"
	),
	'pgbench clients connected to x');
$node->safe_psql('postgres', 'DROP DATABASE x WITH (FORCE)');
finish_pgbench($run);
like(${ $run->{err} }, qr/terminat|server closed|connection/i, 'pgbench clients were terminated');
is($node->safe_psql('postgres', 'SELECT 1'), '1', 'server accepts queries after DROP DATABASE');
check_consistent('after DROP DATABASE under load');
note('entries of the dropped database left: '
	  . $node->safe_psql('postgres', "SELECT count(*) FROM pg_stat_queries WHERE dbid = $x_oid"));
log_clean('DROP DATABASE under load', $offset);

ok(!$node->log_contains('TRAP:|PANIC'), 'no assertion failure or PANIC in the whole log');
$node->stop;
note(sprintf('run time %.1f s', time - $test_start));
done_testing();
