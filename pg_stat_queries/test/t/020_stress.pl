# Standing concurrency stress: every statistics operation at once, for a
# fixed number of transactions per round, then exact invariants once the
# load has stopped.
#
# At once, in each round:
#  - new statements at the bound: distinct 2- and 3-way joins (random
#    tables and columns, so that their query ids differ) against max = 100
#    and a small max_plans, swept back to back;
#  - hot statements, prepared, whose plans flip as an index is created and
#    dropped, and simple-protocol statements whose plans flip with
#    enable_seqscan or enable_hashjoin; statements nested in a function
#    (track = all);
#  - pg_stat_queries_reset() of everything, of one database, of one user,
#    of one query, of min/max only; pg_stat_reset(), pg_stat_reset_shared(),
#    snapshots of the cumulative statistics;
#  - reloads of pg_stat_queries.max, max_plans, query_text_memory and
#    min_sweep_interval, up and down;
#  - full reads of pg_stat_queries and pg_stat_queries_plans, incremental
#    reads (pg_stat_queries_changed(), pg_stat_queries_plans(true, since))
#    each from the previous read's start, histograms, pg_stat_queries_info;
#  - pg_terminate_backend() of busy backends (in nested statements too),
#    and of a session idle inside an aborted transaction; their statements
#    cancelled; sessions exiting inside aborted transactions; errors caught
#    in subtransactions;
#  - DROP DATABASE ... WITH (FORCE) of a database with clients running in
#    it, and its creation again;
# then, to end the round, a storm of full and filtered resets against a
# stream of new statements, the table emptied again and again while
# entries are being made.
# The main workloads are pgbench runs with -t (a fixed number of
# transactions per client), each of which must process all of them without
# an error: one whose clients pick every operation above by weight, so that
# all of them go on for the whole run, one of prepared statements, one that
# creates and drops the index.  The sessions meant to be terminated or to
# fail run in loops of
# short pgbench runs whose exit status is ignored (pgbench 18 has no
# --continue-on-error), until the main runs and the round's fixed number of
# terminations and database drops are done.
#
# Then, once no other client is connected (waited for in the checking
# session itself, so that no session exiting after the check merges into
# the table during it), pg_stat_queries_consistency() compares EXACTLY the
# counts kept in shared memory with a walk of the entries: live statements
# and plans counted and found, text bytes counted (query_text_bytes) and
# held by the entries, no room claimed beyond the live entries, no entry
# left closed but not dropped (only a sweep's slice that failed, or whose
# backend died, between closing its victims and dropping them leaves one,
# and nothing here makes it fail or kills a process).  The server log may hold only the errors the
# test causes (terminations, its division by zero, connections to the
# dropped database): any other WARNING, ERROR, FATAL or PANIC, an assertion
# failure (TRAP) or a process ended by a signal fails the round.
#
# A short run by default (one round); with STRESS_MINUTES set, rounds are
# repeated until that many minutes have passed, each checked.
use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use Time::HiRes qw(time);

my $test_start = time;
my $minutes = $ENV{STRESS_MINUTES};
my $tables = 12;
my $columns = 6;

# Per round: transactions per client of each main workload, and the
# terminations of busy backends, of sessions in aborted transactions and
# the database drops done while it runs
my %clients = (main => 5, hot => 2, ddl => 1, creators => 3, resetters => 2);
my %xacts = (main => 1600, hot => 1600, ddl => 320, creators => 5000, resetters => 7000);
my $terminations = 16;

my $node = PostgreSQL::Test::Cluster->new('stress');
$node->init;
$node->append_conf(
	'postgresql.conf', qq(
shared_preload_libraries = 'pg_stat_queries'
pg_stat_queries.max = 100
pg_stat_queries.max_plans = 20
pg_stat_queries.query_text_memory = 64kB
pg_stat_queries.min_sweep_interval = 0
pg_stat_queries.track_planning = on
pg_stat_queries.track = all
max_connections = 50
log_statement = none
autovacuum = off
fsync = off
max_parallel_workers_per_gather = 0
jit = off
));
$node->start;

# Tables t1 .. t12 with columns c1 .. c6 in postgres and in the template of
# the scratch database; the table whose plan flips, in postgres
my $ddl = join('',
	map {
		"CREATE TABLE t$_ (id int, "
		  . join(', ', map { "c$_ int" } 1 .. $columns)
		  . ");\nINSERT INTO t$_ SELECT g, "
		  . join(', ', map { "g % " . ($_ + 2) } 1 .. $columns)
		  . " FROM generate_series(1, 20) g;\n"
	} 1 .. $tables);
$node->safe_psql('postgres', 'CREATE EXTENSION pg_stat_queries');
$node->safe_psql('postgres', $ddl);
$node->safe_psql(
	'postgres', q{
CREATE TABLE flip (id int, v int);
INSERT INTO flip SELECT g, g % 200 FROM generate_series(1, 20000) g;
ANALYZE;
CREATE FUNCTION nested(a int, b int) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
	EXECUTE format('SELECT count(*) FROM t%s x JOIN t%s y ON x.c1 = y.c2', a, b) INTO n;
	RETURN n + (SELECT count(*) FROM flip WHERE v = a);
END $$;
CREATE DATABASE stress_tpl;
});
$node->safe_psql('stress_tpl', "CREATE EXTENSION pg_stat_queries;\n$ddl");
$node->safe_psql('postgres', 'CREATE DATABASE stress_scratch TEMPLATE stress_tpl');

my $dir = PostgreSQL::Test::Utils::tempdir;
my $stop = "$dir/stop";

sub script
{
	my ($name, $body) = @_;
	open(my $fh, '>', "$dir/$name") or die "could not write $dir/$name: $!";
	print $fh $body;
	close $fh;
	return "$dir/$name";
}

# Random tables, columns and a constant for the joins
my $pick = qq(\\set a random(1, $tables)
\\set b random(1, $tables)
\\set c random(1, $tables)
\\set i random(1, $columns)
\\set j random(1, $columns)
\\set k random(1, $columns)
\\set r random(1, 1000000)
);
# The joins: about 10,000 distinct 3-way and 5,000 2-way statements, the
# 3-way ones with a constant (their entry is created at parse analysis),
# the 2-way ones without (created when they end)
# (aliases, which do not change the query id, let a table be joined to
# itself)
my $join3 = "SELECT x.c:i, y.c:j, z.c:k FROM t:a x JOIN t:b y ON x.c1 = y.c1 "
  . "JOIN t:c z ON y.c2 = z.c2 WHERE x.id > :r % 10";
my $join2 = "SELECT x.c:i, y.c:j FROM t:a x JOIN t:b y ON x.id = y.c:k";

my %script;
$script{join3} = script('join3.sql', "$pick$join3;\n");
$script{join2} = script('join2.sql', "$pick$join2;\n");
# 144 statements run again and again, each with a plan or two (hash or
# merge join), and statements nested in a function (track = all)
$script{warm} = script(
	'warm.sql', qq(\\set a random(1, 4)
\\set b random(1, 4)
\\set i random(1, 3)
\\set j random(1, 3)
\\set s random(0, 1)
\\if :s
SET enable_hashjoin = off;
\\else
SET enable_hashjoin = on;
\\endif
SELECT count(x.c:i) FROM t:a x JOIN t:b y ON x.c1 = y.c:j;
SELECT nested(:a, :b);
));
# one statement whose plan flips with enable_seqscan (and the index)
$script{flip} = script(
	'flip.sql', qq(\\set v random(0, 199)
\\set s random(0, 1)
\\if :s
SET enable_seqscan = off;
\\else
SET enable_seqscan = on;
\\endif
SELECT count(*) FROM flip WHERE v = :v;
));
# prepared: a few hot statements, and the flipping one, whose cached plan
# is replanned when the index comes or goes
$script{hot} = script(
	'hot.sql', qq(\\set v random(0, 199)
\\set s random(1, 3)
\\if :s = 1
SELECT c1, c2 FROM t1 WHERE id = :v;
\\elif :s = 2
SELECT count(*) FROM t2 JOIN t3 ON t2.c1 = t3.c1 WHERE t2.id < :v;
\\else
SELECT sum(c3) FROM t4 WHERE c2 = :v;
\\endif
SELECT count(*) FROM flip WHERE v = :v;
));

# resets of every kind, PostgreSQL's statistics operations, reloads
$script{reset_all} = script('reset_all.sql', "SELECT pg_stat_queries_reset();\n");
$script{reset_db} = script(
	'reset_db.sql', q{\set s random(0, 1)
\if :s
SELECT pg_stat_queries_reset(0, (SELECT oid FROM pg_database WHERE datname = current_database()), 0);
\else
SELECT pg_stat_queries_reset(0, (SELECT oid FROM pg_database WHERE datname = 'stress_scratch'), 0);
\endif
});
$script{reset_user} = script('reset_user.sql',
	"SELECT pg_stat_queries_reset((SELECT oid FROM pg_roles WHERE rolname = current_user), 0, 0);\n"
);
$script{reset_query} = script(
	'reset_query.sql', q{SELECT count(pg_stat_queries_reset(0, 0, queryid)) FROM
  (SELECT queryid FROM pg_stat_queries ORDER BY random() LIMIT 2) s;
SELECT count(pg_stat_queries_reset(userid, dbid, queryid)) FROM
  (SELECT userid, dbid, queryid FROM pg_stat_queries_plans ORDER BY random() LIMIT 1) s;
});
$script{reset_minmax} =
  script('reset_minmax.sql', "SELECT pg_stat_queries_reset(0, 0, 0, true);\n");
$script{pgstat} = script(
	'pgstat.sql', q{SELECT pg_stat_reset();
SELECT pg_stat_reset_shared();
SELECT pg_stat_force_next_flush();
BEGIN;
SET LOCAL stats_fetch_consistency = snapshot;
SELECT count(*) FROM pg_stat_user_tables;
SELECT count(*) FROM pg_stat_queries;
COMMIT;
});
$script{reload} = script(
	'reload.sql', q{\set m CASE WHEN random(0, 9) = 0 THEN 5000 ELSE random(100, 300) END
\set p CASE WHEN random(0, 9) = 0 THEN 1000 ELSE random(0, 60) END
\set k CASE WHEN random(0, 9) = 0 THEN 16384 ELSE random(0, 128) END
\set w random(0, 20)
ALTER SYSTEM SET pg_stat_queries.max = :m;
ALTER SYSTEM SET pg_stat_queries.max_plans = :p;
ALTER SYSTEM SET pg_stat_queries.query_text_memory = :k;
ALTER SYSTEM SET pg_stat_queries.min_sweep_interval = :w;
SELECT pg_reload_conf();
});

# reads: full (direct scan, all columns, function scan), incremental from
# the previous read's start (since, kept by each pgbench client), plans,
# histograms, info
$script{full} = script(
	'full.sql', q{SELECT count(*), sum(length(query)), sum(calls) FROM pg_stat_queries;
SELECT sum(length(s::text)) FROM pg_stat_queries s;
SELECT count(*) FROM pg_stat_queries(false) f JOIN pg_stat_queries q USING (userid, dbid, queryid, toplevel);
SELECT count(*), sum(length(plan)) FROM pg_stat_queries_plans;
});
$script{changed} = script(
	'changed.sql', q{SELECT count(*) AS plans_changed FROM pg_stat_queries_plans(true, to_timestamp(:since)) \gset
SELECT extract(epoch FROM statement_timestamp()) AS since,
       count(*) AS changed, count(query) AS texts
  FROM pg_stat_queries_changed(to_timestamp(:since)) \gset
});
$script{histogram} = script(
	'histogram.sql', q{SELECT count(*) FROM
  (SELECT userid, dbid, queryid, toplevel FROM pg_stat_queries ORDER BY calls DESC LIMIT 3) s,
  LATERAL pg_stat_queries_histogram(s.userid, s.dbid, s.queryid, s.toplevel);
SELECT * FROM pg_stat_queries_info;
});

# the index of the flipping statement, created and dropped
$script{index} = script(
	'index.sql', q{\set s random(0, 1)
\if :s
CREATE INDEX IF NOT EXISTS flip_v ON flip (v);
\else
DROP INDEX IF EXISTS flip_v;
\endif
});

# sessions to be terminated: busy, often inside a transaction block
$script{victim} = script(
	'victim.sql', qq($pick\\set v random(0, 199)
BEGIN;
$join3;
SELECT count(*) FROM flip f1 JOIN flip f2 ON f1.v = f2.v WHERE f1.id < 200 AND f2.id < 2000;
$join2;
SELECT count(*) FROM flip WHERE v = :v;
COMMIT;
));
# the same, as nested statements: full reads, errors caught in
# subtransactions, a new statement each time
$script{victim_nested} = script(
	'victim_nested.sql', qq($pick
DO \$\$BEGIN FOR i IN 1..20 LOOP
	PERFORM count(*) FROM pg_stat_queries;
	BEGIN PERFORM 1 / 0; EXCEPTION WHEN others THEN NULL; END;
	EXECUTE format('SELECT x.c%s, y.c%s FROM t%s x JOIN t%s y ON x.id = y.c%s',
		1 + (i + :r) % $columns, 1 + i % $columns, 1 + (i * :r) % $tables,
		1 + (i + :a) % $tables, 1 + :r % $columns);
END LOOP; END\$\$;
));
# sessions that exit inside an aborted transaction (pgbench ends a client
# at its first error and disconnects)
$script{aborter} = script(
	'aborter.sql', qq($pick
BEGIN;
$join3;
$join2;
SELECT 1 / (:a - :a);
));

# A main workload: pgbench with -t, in the background, output to a file
sub start_pgbench
{
	my ($name, $db, $mode, @scripts) = @_;
	local $ENV{PGAPPNAME} = "stress_$name";
	my $out = "$dir/$name.out";
	my $h = IPC::Run::start(
		[
			'pgbench', '-n', '-M', $mode,
			'-c', $clients{$name},
			'-j', $clients{$name},
			'-t', $xacts{$name},
			'-D', 'since=0',
			(map { ('-f', $_) } @scripts),
			'-h', $node->host, '-p', $node->port, $db
		],
		'>', $out, '2>&1');
	return { name => $name, h => $h, out => $out };
}

# A loop of short pgbench runs until the stop file exists; their exit
# status is ignored (they are terminated, or fail on purpose, or find their
# database dropped).  Each run's output is appended to a file.
sub start_loop
{
	my ($name, $db, $clients, $xacts, @scripts) = @_;
	my $cmd = join(' ',
		'pgbench', '-n', '-c', $clients, '-j', $clients, '-t', $xacts,
		(map { ('-f', $_) } @scripts),
		'-h', $node->host, '-p', $node->port, $db);
	my $sh = qq{n=0; while [ ! -e '$stop' ]; do n=\$((n + 1)); }
	  . qq{PGAPPNAME=stress_$name $cmd >>'$dir/$name.out' 2>&1 || sleep 0.1; done; }
	  . qq{echo \$n >'$dir/$name.runs'};
	return { name => $name, h => IPC::Run::start([ 'bash', '-c', $sh ]) };
}

# The consistency check, in one session that first waits until it is the
# only client left (a backend leaves pg_stat_activity only after its last
# merge): "field=value" pairs
my $timeout = $PostgreSQL::Test::Utils::timeout_default;
my @fields = qw(live_statements statements_found live_plans plans_found
  closed_found text_bytes text_bytes_found texts_found claims_outstanding);
my $check_sql = qq{SET statement_timeout = '${timeout}s';
DO \$\$
BEGIN
	LOOP
		PERFORM pg_stat_clear_snapshot();
		EXIT WHEN NOT EXISTS (SELECT FROM pg_stat_activity
			WHERE backend_type = 'client backend' AND pid <> pg_backend_pid());
		PERFORM pg_sleep(0.05);
	END LOOP;
END
\$\$;
SELECT } . join(', ', @fields) . qq{ FROM pg_stat_queries_consistency();
};

sub check_invariants
{
	my ($label) = @_;
	my %c;
	@c{@fields} = split(/\|/, $node->safe_psql('postgres', $check_sql));
	note("$label: " . join(', ', map { "$_=$c{$_}" } @fields));
	is($c{statements_found}, $c{live_statements},
		"$label: live statements counted = found ($c{live_statements})");
	is($c{plans_found}, $c{live_plans},
		"$label: live plans counted = found ($c{live_plans})");
	is($c{text_bytes_found}, $c{text_bytes},
		"$label: text bytes counted = held by entries ($c{text_bytes}, $c{texts_found} texts)");
	is($c{claims_outstanding}, '0', "$label: no claim outstanding");
	is($c{closed_found}, '0', "$label: no entry left closed");
	return \%c;
}

# Messages the test causes on purpose; anything else at WARNING or above
# is an error (of ours, or one the test did not expect).  A termination
# that arrives during parse analysis has the position being parsed.
my @expected = (
	qr/^FATAL:  terminating connection due to administrator command(?: at character \d+)?$/,
	qr/^ERROR:  division by zero$/,
	qr/^ERROR:  canceling statement due to user request$/,
	qr/^FATAL:  database "stress_scratch" does not exist$/,
	qr/^FATAL:  cannot connect to invalid database "stress_scratch"$/,
	qr/^ERROR:  database "stress_scratch" is being accessed by other users$/,
);

sub check_log
{
	my ($label, $offset) = @_;
	my $log = slurp_file($node->logfile, $offset);
	my @unexpected;
	for my $line (split(/\n/, $log))
	{
		# the errors our code swallows are logged at LOG, naming us (the
		# reloads' "parameter ... changed" lines name our settings)
		if ($line =~ /\bLOG:  (.*)$/)
		{
			my $msg = $1;
			push @unexpected, $line
			  if $msg =~ /pg_stat_queries/
			  && $msg !~ /^parameter "pg_stat_queries\.\w+" (?:changed to|removed from)/
			  && $msg !~ /^registered custom cumulative statistics "pg_stat_queries/;
			next;
		}
		next unless $line =~ /\b((?:WARNING|ERROR|FATAL|PANIC):  .*)$/;
		my $msg = $1;
		push @unexpected, $line unless grep { $msg =~ $_ } @expected;
	}
	my @traps = grep { /TRAP:|PANIC|terminated by signal|terminated by exception/ }
	  split(/\n/, $log);
	is(scalar(@traps), 0,
		"$label: no assertion failure, PANIC or process ended by a signal")
	  or diag(join("\n", @traps[ 0 .. ($#traps < 19 ? $#traps : 19) ]));
	is(scalar(@unexpected), 0, "$label: no unexpected message in the server log")
	  or diag(join("\n", @unexpected[ 0 .. ($#unexpected < 19 ? $#unexpected : 19) ]));
}

# Terminate (or cancel the statement of) one busy backend of the given
# application, retried until one is found busy; returns true once one was
sub signal_busy
{
	my ($app, $function, @states) = @_;
	my $states = join(', ', map { "'$_'" } @states);
	return $node->poll_query_until(
		'postgres', qq{SELECT count(*) > 0 FROM
  (SELECT $function(pid) AS t FROM pg_stat_activity
    WHERE application_name = '$app' AND backend_type = 'client backend'
      AND state IN ($states) LIMIT 1) s
 WHERE t});
}

# A session that ran new statements inside a transaction that then failed,
# terminated while it sits in that aborted transaction
sub terminate_aborted
{
	my ($n) = @_;
	my $bg = $node->background_psql('postgres', on_error_stop => 0);
	my $pid = $bg->query_safe('SELECT pg_backend_pid()');
	my $t = 1 + $n % $tables;
	my $u = 1 + int($n / $tables) % $tables;
	my $c = 1 + $n % $columns;
	my ($out, $failed) = $bg->query(
		"BEGIN; SELECT count(x.c$c) FROM t$t x JOIN t$u y ON x.c1 = y.c$c; SELECT 1 / (id - id) FROM t$u;"
	);
	my $state = $node->safe_psql('postgres',
		"SELECT state FROM pg_stat_activity WHERE pid = $pid");
	my $ok = $failed && $state eq 'idle in transaction (aborted)'
	  && $node->safe_psql('postgres', "SELECT pg_terminate_backend($pid)") eq 't'
	  && $node->poll_query_until('postgres',
		"SELECT count(*) = 0 FROM pg_stat_activity WHERE pid = $pid");
	eval { $bg->quit };
	return $ok;
}

# Drop the scratch database under its clients and create it again.  DROP
# DATABASE ... WITH (FORCE) waits 5 seconds for the backends it terminated
# to exit, then fails ("is being accessed by other users"): retried until
# it succeeds, so a backend that never exits fails the test.
sub drop_and_create
{
	my $deadline = time + $timeout;
	my ($ret, $err);
	do
	{
		$ret = $node->psql('postgres', 'DROP DATABASE stress_scratch WITH (FORCE)',
			stderr => \$err);
		note("DROP DATABASE: $err") if $ret != 0;
	} while ($ret != 0 && $err =~ /is being accessed by other users/ && time < $deadline);
	return $ret == 0
	  && $node->psql('postgres', 'CREATE DATABASE stress_scratch TEMPLATE stress_tpl') == 0;
}

# Wait for a main workload: it must have run all its transactions
sub finish_pgbench
{
	my ($run, $label) = @_;
	my $ok = eval { $run->{h}->finish };
	my $out = slurp_file($run->{out});
	my $want = $clients{ $run->{name} } * $xacts{ $run->{name} };
	ok($ok && $out =~ m{number of transactions actually processed: $want/$want}
		  && $out =~ /number of failed transactions: 0 /,
		"$label: $run->{name}: $want transactions, no error")
	  or diag($out);
	note("$label: $run->{name}: $1") if $out =~ /^(tps = .*)$/m;
}

# Stop the loops and report how many runs each made
sub finish_loops
{
	my ($label, @loops) = @_;
	open(my $fh, '>', $stop) or die;
	close $fh;
	for my $loop (@loops)
	{
		$loop->{h}->finish;
		my $runs = slurp_file("$dir/$loop->{name}.runs");
		chomp $runs;
		note("$label: $loop->{name}: $runs pgbench runs");
	}
	unlink $stop;
}

sub round
{
	my ($n) = @_;
	my $label = "round $n";
	my $offset = -s $node->logfile;
	my $round_start = time;

	# the terminated and failing sessions, and the scratch database's
	my @loops = (
		start_loop('victim', 'postgres', 2, 50, $script{victim},
			$script{victim_nested}),
		start_loop('aborter', 'postgres', 2, 1, $script{aborter}),
		start_loop('scratch', 'stress_scratch', 2, 100,
			"$script{join3}\@4", "$script{join2}\@2", "$script{full}\@1"));
	# every operation by every client of one run, so that all go on from
	# its start to its end; the prepared statements and the index in runs
	# of their own
	my @runs = (
		start_pgbench(
			'main', 'postgres', 'simple',
			"$script{join3}\@8", "$script{join2}\@4",
			"$script{warm}\@4", "$script{flip}\@3",
			"$script{reset_all}\@1", "$script{reset_db}\@2",
			"$script{reset_user}\@1", "$script{reset_query}\@4",
			"$script{reset_minmax}\@1", "$script{pgstat}\@2",
			"$script{reload}\@3", "$script{full}\@3",
			"$script{changed}\@4", "$script{histogram}\@1"),
		start_pgbench('hot', 'postgres', 'prepared', $script{hot}),
		start_pgbench('ddl', 'postgres', 'simple', $script{index}));

	# while they run: terminations, and the scratch database dropped under
	# its clients and created again
	my ($busy, $cancelled, $aborted, $drops) = (0, 0, 0, 0);
	for my $i (1 .. $terminations)
	{
		$busy++
		  if signal_busy('stress_victim', 'pg_terminate_backend', 'active',
			'idle in transaction');
		$cancelled++
		  if signal_busy('stress_victim', 'pg_cancel_backend', 'active');
		$aborted++ if terminate_aborted($n * $terminations + $i);
		$drops++ if drop_and_create();
	}
	is($busy, $terminations, "$label: busy backends terminated");
	is($cancelled, $terminations, "$label: busy backends' statements cancelled");
	is($aborted, $terminations,
		"$label: sessions in an aborted transaction terminated");
	is($drops, $terminations,
		"$label: database dropped under its clients and created again");

	finish_pgbench($_, $label) for @runs;
	finish_loops($label, @loops);
	note(sprintf("$label: load ran %.1f s", time - $round_start));

	# Then, with the settings back to known values, a storm of resets
	# against a stream of new statements: the table is emptied again and
	# again while entries are being created (a reset that drops an entry
	# before its creator counted it live takes the count below zero there)
	my $storm_start = time;
	$node->safe_psql('postgres', q{ALTER SYSTEM RESET ALL; SELECT pg_reload_conf();});
	finish_pgbench($_, "$label, storm")
	  for (
		start_pgbench('creators', 'postgres', 'simple',
			"$script{join3}\@1", "$script{join2}\@1"),
		start_pgbench('resetters', 'postgres', 'simple',
			"$script{reset_all}\@4", "$script{reset_query}\@1",
			"$script{reset_db}\@1"));
	note(sprintf("$label: storm ran %.1f s", time - $storm_start));

	# the log of the load first: after a crash the checks below may die
	check_log($label, $offset);

	eval {
		check_invariants($label);
		1;
	} or fail("$label: invariants checked: $@");
}

# Rounds until a round fails, or STRESS_MINUTES have passed
my $rounds = 0;
do
{
	round(++$rounds);
} while (defined $minutes
	&& Test::More->builder->is_passing
	&& time - $test_start < $minutes * 60);

# A full reset leaves only what the checking sessions ran since; a restart
# saves and restores the entries: still consistent (unless a round failed:
# the server may be gone)
if (Test::More->builder->is_passing)
{
	$node->safe_psql('postgres', 'SELECT pg_stat_queries_reset()');
	my $c = check_invariants('after a full reset');
	cmp_ok($c->{live_statements}, '<=', 10,
		'a full reset left only the checks\' statements');
	$node->restart;
	$node->safe_psql('postgres', 'SELECT count(*) FROM pg_stat_queries');
	check_invariants('after a restart');
}
check_log('whole run', 0);

note(sprintf('%d round(s), run time %.1f s', $rounds, time - $test_start));
$node->stop;
done_testing();
