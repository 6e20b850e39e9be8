# Swapping the library between clean restarts -- upgrades, downgrades, a
# newer build with one more counter, version 1.1 (which kept its entries in
# PostgreSQL's statistics file) -- never costs PostgreSQL its statistics,
# and ours are carried over, or dropped with one LOG line.  So are a file of
# a future format, a truncated file and a damaged one.
#
# Texts saved by builds that could keep a utility statement's values as
# typed (1.1, and format 6) are normalized when a new build reads them.
#
# The libraries: 1.1 and the last build writing format 6, built from the
# repository's history (scripts/test extracts them next to the test tree);
# the one installed; and the same
# source built with -DPGSQ_TEST_EXTRA_COUNTER, which adds a counter to every
# entry and to the saved file (format 5).  They are swapped in a private
# copy of the installation.
use strict;
use warnings FATAL => 'all';
use File::Basename qw(dirname);
use File::Copy qw(copy);
use File::Path qw(make_path);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $tmp = PostgreSQL::Test::Utils::tempdir();
my $testdir = $ENV{TESTDIR} || '.';

# 1.1 ran on PostgreSQL 18 only: on later versions the paths from and to
# it are not tried
my $pg_major = (split(/[.\s]/, `pg_config --version`))[1] =~ s/\D.*//r;
my $with_legacy = $pg_major == 18;
note "PostgreSQL $pg_major, " . ($with_legacy ? 'with' : 'without') . ' version 1.1';

# ---- where the earlier builds' sources are: next to the test tree, or
# taken from the history of a checkout
sub history_source
{
	my ($dir, $commit, $file) = @_;
	my $src = "$testdir/../$dir";
	if (!-f "$src/pg_stat_queries/src/$file")
	{
		make_path($src);
		system("git -C '$testdir' archive $commit pg_stat_queries mk 2>/dev/null | tar -x -C '$src'");
	}
	return $src if -f "$src/pg_stat_queries/src/$file";
	plan skip_all => "the source of $dir is not available (no git history)"
	  unless $ENV{PGSQ_REQUIRE_LEGACY};
	BAIL_OUT("the source of $dir is missing in $src");
}
my $legacy_src =
  $with_legacy ? history_source('legacy-1.1', '29275b2', 'textfile.c') : undef;
my $format6_src = history_source('format-6', '2f6efe8', 'textsource.c');

# ---- a private copy of the installation
my $bindir = `pg_config --bindir`;
chomp $bindir;
my $prefix = dirname($bindir);
my $pkglibdir = `pg_config --pkglibdir`;
chomp $pkglibdir;
my $inst = "$tmp/install";
system('cp', '-a', $prefix, $inst) == 0 or die "cannot copy $prefix";
(my $inst_pkglibdir = $pkglibdir) =~ s/^\Q$prefix\E/$inst/;

# Build the extension of $src_root (with its mk/) in a copy; returns the .so
sub build_library
{
	my ($name, $src_root, $copt) = @_;
	my $dir = "$tmp/build-$name";
	make_path("$dir/pg_stat_queries");
	system("cp -r '$src_root/mk' '$dir/'") == 0 or die;
	system("cd '$src_root/pg_stat_queries' && cp -r Makefile *.control src sql compat '$dir/pg_stat_queries/'") == 0
	  or die;
	my $make = "make -s -j2 -C '$dir/pg_stat_queries' PG_CONFIG=pg_config"
	  . ($copt ? " COPT='$copt'" : '');
	# from clean: objects copied along were built another way
	system("$make clean >'$dir/build.log' 2>&1 && $make >>'$dir/build.log' 2>&1") == 0
	  or die "building $name failed: " . slurp_file("$dir/build.log");
	return "$dir/pg_stat_queries/pg_stat_queries.so";
}

my %lib = (
	legacy => $with_legacy ? build_library('legacy', $legacy_src) : undef,
	current => "$tmp/current.so",
	format6 => build_library('format6', $format6_src),
	newer => build_library('newer', "$testdir/..", '-DPGSQ_TEST_EXTRA_COUNTER'),);
copy("$inst_pkglibdir/pg_stat_queries.so", $lib{current}) or die;
note "libraries built in $tmp";

# Put a library in place, as a package upgrade does (a new file, renamed)
sub use_library
{
	my ($which) = @_;
	copy($lib{$which}, "$inst_pkglibdir/pg_stat_queries.so.new") or die;
	rename("$inst_pkglibdir/pg_stat_queries.so.new",
		"$inst_pkglibdir/pg_stat_queries.so")
	  or die;
}

my $node = PostgreSQL::Test::Cluster->new('upgrade', install_path => $inst);
$node->init;
$node->append_conf(
	'postgresql.conf', q{
shared_preload_libraries = 'pg_stat_queries'
autovacuum = off
});
my $datadir = $node->data_dir;
my $saved_file = "$datadir/pg_stat/pg_stat_queries.stat";
my $marker = 'SELECT count(*) FROM upg_t WHERE a > $1';

# Statements that leave marks in both kinds of statistics
sub workload
{
	my ($n) = @_;
	$node->safe_psql(
		'postgres',
		join(
			"\n",
			map {
				"INSERT INTO upg_t SELECT g, 'x' FROM generate_series(1, 10) g;\n"
				  . "UPDATE upg_t SET b = 'y' WHERE a = $_;\n"
				  . "DELETE FROM upg_t WHERE a = 10;\n"
				  . "SELECT count(*) FROM upg_t WHERE a > $_;"
			} 1 .. $n));
}

# Wait until no other client backend is left: their statistics are flushed
sub wait_idle
{
	$node->poll_query_until('postgres',
		"SELECT count(*) = 0 FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()"
	) or die 'backends did not exit';
}

# PostgreSQL's statistics of our table and database
sub pg_stats
{
	wait_idle();
	return $node->safe_psql(
		'postgres', q{
SELECT relname, seq_scan, seq_tup_read, idx_scan, n_tup_ins, n_tup_upd,
       n_tup_del, n_tup_hot_upd, n_live_tup, n_dead_tup
  FROM pg_stat_user_tables ORDER BY relname;
SELECT tup_inserted, tup_updated, tup_deleted, stats_reset
  FROM pg_stat_database WHERE datname = 'postgres';});
}

# Ours, for the workload's statements
sub our_stats
{
	wait_idle();
	return $node->safe_psql(
		'postgres', q{
SELECT query, calls, rows, total_exec_time, min_exec_time, max_exec_time,
       wal_records, wal_bytes, shared_blks_hit, stats_since
  FROM pg_stat_queries
 WHERE query LIKE '%upg_t%' AND query NOT LIKE '%pg_stat%'
 ORDER BY query});
}

# Our texts of the roles created with a planted password, with calls
sub planted_texts
{
	return $node->safe_psql(
		'postgres', q{
SELECT query, calls FROM pg_stat_queries
 WHERE query ~ 'upg_planted|Planted' ORDER BY query});
}

# Start, and return where the server log stood
sub start_node
{
	my $offset = -s $node->logfile;
	$node->start;
	return $offset;
}

# Our saved file, parsed: format, columns, and each statement's raw fields
sub read_saved
{
	my ($path) = @_;
	my $bytes = slurp_file($path);
	my $pos = 0;
	my $take = sub {
		my $s = substr($bytes, $pos, $_[0]);
		$pos += $_[0];
		return $s;
	};
	my (undef, $format, $oldest) = unpack('L<L<L<', $take->(16));
	my $columns = sub {
		my @c;
		for (1 .. unpack('L<', $take->(4)))
		{
			my $name = $take->(unpack('C', $take->(1)));
			push @c, [ $name, unpack('L<', $take->(4)) ];
		}
		return @c;
	};
	my @info_columns = $columns->();
	$take->($_->[1]) for @info_columns;
	my @entry_columns = $columns->();
	my @entries;
	while ($take->(1) eq 'E')
	{
		my %e = map { $_->[0] => $take->($_->[1]) } @entry_columns;
		my $len = unpack('l<', $e{text_len});
		$e{text} = $len >= 0 ? $take->($len) : undef;
		push @entries, \%e;
	}
	return {
		format => $format,
		oldest_reader => $oldest,
		columns => { map { $_->[0] => 1 } @entry_columns },
		entries => \@entries
	};
}

# A counter of the marker statement in a parsed file
sub marker_counter
{
	my ($saved, $column) = @_;
	my ($e) = grep { defined $_->{text} && $_->{text} eq $marker }
	  @{ $saved->{entries} };
	return undef unless $e && exists $e->{$column};
	return unpack('q<', $e->{$column});
}

my ($pg, $ours, $offset, $saved);

if ($with_legacy)
{
	# ---- 1.1, which keeps its entries in PostgreSQL's statistics file
	use_library('legacy');
	$node->start;
	# the SQL definitions 1.1 came with, which later libraries serve too
	$node->safe_psql('postgres',
		"CREATE EXTENSION pg_stat_queries VERSION '1.1'; CREATE TABLE upg_t (a int, b text)"
	);
	workload(5);
	$node->safe_psql('postgres',
		"CREATE ROLE upg_planted_11 PASSWORD 'PlantedUnder11'");
	$pg = pg_stats();
	$ours = our_stats();
	like($ours, qr/\Q$marker\E\|5\|/, '1.1 counted the workload');
	$node->stop;
	ok(-e "$datadir/pg_stat/pg_stat_queries.texts", '1.1 saved its text file');

	# ---- 1.1 to new
	use_library('current');
	$offset = start_node();
	is(pg_stats(), $pg, "1.1 to new: PostgreSQL's statistics kept");
	is(our_stats(), $ours,
		'1.1 to new: ours converted, with their texts and rare counters');
	ok( $node->log_contains(
			qr/pg_stat_queries converted \d+ statement entries saved by version 1.1/,
			$offset),
		'1.1 to new: the conversion is logged');
	ok(!$node->log_contains(qr/corrupted statistics file/, $offset),
		'1.1 to new: no statistics file discarded');
	ok(!-e "$datadir/pg_stat/pg_stat_queries.texts", "1.1's text file removed");
	is(planted_texts(), 'CREATE ROLE upg_planted_11 PASSWORD $1|1',
		"1.1 to new: 1.1's text with a password is normalized");
}
else
{
	use_library('current');
	$node->start;
	$node->safe_psql('postgres',
		'CREATE EXTENSION pg_stat_queries; CREATE TABLE upg_t (a int, b text)');
	workload(5);
}

workload(3);
$pg = pg_stats();
$ours = our_stats();
like($ours, qr/\Q$marker\E\|8\|/, 'new counts on from the converted entries');
is( $node->safe_psql('postgres', 'SELECT dealloc FROM pg_stat_queries_info'),
	'0', 'dealloc: no pass that evicted nothing');
$node->stop;
$saved = read_saved($saved_file);
my $format = $saved->{format};
cmp_ok($format, '>=', 4, "new writes format $format");
is(marker_counter($saved, 'exec.calls'), 8, 'the file holds the counts');
ok(!$saved->{columns}{test_extra}, 'and no extra counter');

# ---- new to newer (one more counter)
use_library('newer');
$offset = start_node();
is(pg_stats(), $pg, "new to newer: PostgreSQL's statistics kept");
is(our_stats(), $ours, 'new to newer: ours carried over');
workload(2);
$pg = pg_stats();
$ours = our_stats();
$node->stop;
$saved = read_saved($saved_file);
is($saved->{format}, $format + 1, 'newer writes the next format');
is(marker_counter($saved, 'exec.calls'),
	10, 'newer: counts carried over and counted on');
is(marker_counter($saved, 'test_extra'),
	2, 'newer: the new counter started at zero');

# ---- newer to newer
$offset = start_node();
is(pg_stats(), $pg, "newer to newer: PostgreSQL's statistics kept");
is(our_stats(), $ours, 'newer to newer: ours carried over');
workload(1);
$pg = pg_stats();
$ours = our_stats();
$node->stop;
$saved = read_saved($saved_file);
is(marker_counter($saved, 'test_extra'),
	3, 'newer to newer: the new counter carried over too');

# ---- newer to new (a downgrade: format 5 can be read by format 4)
use_library('current');
$offset = start_node();
is(pg_stats(), $pg, "newer to new: PostgreSQL's statistics kept");
is(our_stats(), $ours, 'newer to new: ours carried over, less the counter');
ok(!$node->log_contains(qr/ignoring pg_stat_queries/, $offset),
	'newer to new: nothing ignored');
$pg = pg_stats();
$node->stop;

if ($with_legacy)
{
	# ---- new to 1.1 (a downgrade to before our file)
	use_library('legacy');
	$offset = start_node();
	is(pg_stats(), $pg, "new to 1.1: PostgreSQL's statistics kept");
	is(our_stats(), '', 'new to 1.1: ours are not there');
	ok(!$node->log_contains(qr/corrupted statistics file/, $offset),
		'new to 1.1: no statistics file discarded');
	workload(1);
	$pg = pg_stats();
	$ours = our_stats();
	$node->stop;

	# ---- and back: 1.1's statistics are the latest, our older file is stale
	use_library('current');
	$offset = start_node();
	is(pg_stats(), $pg, "1.1 to new again: PostgreSQL's statistics kept");
	is(our_stats(), $ours, "1.1 to new again: 1.1's statistics converted");
	ok( $node->log_contains(
			qr/ignoring pg_stat_queries statistics file ".*pg_stat_queries.stat": it is older than the statistics of version 1.1/,
			$offset),
		'1.1 to new again: the file from before the downgrade is ignored, and logged'
	);
	$pg = pg_stats();
	$node->stop;
}

# the plans' entries of a parsed file, as "queryid:planid"
sub saved_plans
{
	my ($saved) = @_;
	return map { unpack('q<', $_->{queryid}) . ':' . unpack('q<', $_->{planid}) }
	  grep { exists $_->{planid} && unpack('q<', $_->{planid}) != 0 }
	  @{ $saved->{entries} };
}

# ---- new, with plans, to format 6: a file holding plans' entries needs a
# reader of format 8 (an older build would merge a plan's counts into its
# statement's); format 6 drops it with one LOG line, and the new build,
# given it back, reads it, plans included
$saved = read_saved($saved_file);
is($saved->{oldest_reader}, 8, 'a file holding plans needs a reader of format 8');
my @plans_saved = saved_plans($saved);
cmp_ok(scalar(@plans_saved), '>', 0, "and holds plans' entries");
copy($saved_file, "$tmp/with_plans.stat") or die;
use_library('format6');
$offset = start_node();
is(pg_stats(), $pg, "new with plans to format 6: PostgreSQL's statistics kept");
is(our_stats(), '', 'new with plans to format 6: ours dropped');
ok( $node->log_contains(
		qr/LOG:  ignoring pg_stat_queries statistics file ".*pg_stat_queries.stat": its format \d+ needs a reader of format 8 or later, and this build of pg_stat_queries reads format 6/,
		$offset),
	'new with plans to format 6: one LOG line names the file and the reason');
$node->stop;
copy("$tmp/with_plans.stat", $saved_file) or die;
use_library('current');
$offset = start_node();
is(pg_stats(), $pg, "and back to new: PostgreSQL's statistics kept");
is(our_stats(), $ours, 'and back to new: ours read back');
ok(!$node->log_contains(qr/ignoring pg_stat_queries/, $offset),
	'and back to new: nothing ignored');
# (the extension may be at 1.1 here, without pg_stat_queries_plans: the
# plans read back are those saved again)
$node->stop;
my %plans_again = map { $_ => 1 } saved_plans(read_saved($saved_file));
is(join(',', grep { !$plans_again{$_} } @plans_saved),
	'', "and back to new: the plans' entries read back, and saved again");

# With max_plans = 0 no plan is kept nor saved: the file is one that
# older builds read (how to downgrade)
$node->start;
$node->safe_psql('postgres',
	'ALTER SYSTEM SET pg_stat_queries.max_plans = 0; SELECT pg_reload_conf()');
$node->stop;
$saved = read_saved($saved_file);
is($saved->{oldest_reader}, 4, 'max_plans = 0: the file needs a reader of format 4');
ok(!(grep { exists $_->{planid} && unpack('q<', $_->{planid}) != 0 }
	  @{ $saved->{entries} }),
	"max_plans = 0: no plan's entry saved");

# ---- new to format 6 and back: format 6 saved a utility statement's
# values as typed; a new build normalizes them when it reads the file
use_library('format6');
$offset = start_node();
is(our_stats(), $ours, 'new to format 6: ours carried over');
$node->safe_psql('postgres',
	"CREATE ROLE upg_planted_6 PASSWORD 'PlantedUnderFormat6'");
# a text that standard_conforming_strings = on cannot scan, lexed with it
# off: read with the one setting that can read it.  PostgreSQL 19 has no
# other setting.
my $with_unscannable = $pg_major == 18;
$node->safe_psql(
	'postgres', q{
SET standard_conforming_strings = off;
COMMENT ON ROLE upg_planted_6 IS 'it\'s PlantedUnscannable';})
  if $with_unscannable;
$pg = pg_stats();
$node->stop;
$saved = read_saved($saved_file);
is($saved->{format}, 6, 'format 6 written');
ok( (grep { defined $_->{text} && $_->{text} =~ /PlantedUnderFormat6/ }
	  @{ $saved->{entries} }),
	'format 6 saved the password as typed');
ok( (grep { defined $_->{text} && $_->{text} =~ /PlantedUnscannable/ }
	  @{ $saved->{entries} }),
	'and the comment')
  if $with_unscannable;
use_library('current');
$offset = start_node();
$node->safe_psql('postgres',
	'ALTER SYSTEM RESET pg_stat_queries.max_plans; SELECT pg_reload_conf()');
is(pg_stats(), $pg, "format 6 to new: PostgreSQL's statistics kept");
is(our_stats(), $ours, 'format 6 to new: ours carried over');
like(planted_texts(), qr/^CREATE ROLE upg_planted_6 PASSWORD \$1\|1$/m,
	"format 6 to new: format 6's text with a password is normalized");
if ($with_unscannable)
{
	# lexed with standard_conforming_strings off, the one setting that can
	# read it: read with it, the string is one literal
	like(planted_texts(), qr/^COMMENT ON ROLE upg_planted_6 IS \$1\|1$/m,
		'format 6 to new: a text only the other setting can read is read with it');
	unlike(planted_texts(), qr/PlantedUnscannable/,
		'and no literal of it is kept');
}
$node->stop;
$saved = read_saved($saved_file);
ok(!(grep { defined $_->{text} && $_->{text} =~ /Planted/ }
	  @{ $saved->{entries} }),
	'format 6 to new: no password in the file written next');

# ---- a file of a future format, which this build cannot read
sub patch_file
{
	my ($path, $at, $bytes) = @_;
	open(my $fh, '+<:raw', $path) or die "open $path: $!";
	seek($fh, $at, 0);
	print $fh $bytes;
	close $fh;
}
patch_file($saved_file, 4, pack('L<L<', 99, 99));
$offset = start_node();
is(pg_stats(), $pg, "future format: PostgreSQL's statistics kept");
is(our_stats(), '', 'future format: ours dropped');
ok( $node->log_contains(
		qr/LOG:  ignoring pg_stat_queries statistics file ".*pg_stat_queries.stat": its format 99 needs a reader of format 99 or later/,
		$offset),
	'future format: one LOG line names the file and the reason');
ok(!-e $saved_file, 'future format: the file is removed');
workload(1);
$pg = pg_stats();
$node->stop;

# ---- a truncated file
truncate($saved_file, (-s $saved_file) - 20) or die;
$offset = start_node();
is(pg_stats(), $pg, "truncated file: PostgreSQL's statistics kept");
is(our_stats(), '', 'truncated file: ours dropped');
ok( $node->log_contains(
		qr/LOG:  ignoring pg_stat_queries statistics file ".*": its checksum does not match: it is truncated or damaged/,
		$offset),
	'truncated file: logged');
workload(1);
$pg = pg_stats();
$node->stop;

# ---- a damaged byte in the middle
patch_file($saved_file, int((-s $saved_file) / 2), 'Z');
$offset = start_node();
is(pg_stats(), $pg, "damaged file: PostgreSQL's statistics kept");
is(our_stats(), '', 'damaged file: ours dropped');
ok( $node->log_contains(qr/its checksum does not match/, $offset),
	'damaged file: logged');
$node->stop;

# ---- never a crash
ok(!$node->log_contains(qr/TRAP:|terminated by signal|PANIC/),
	'no server process crashed');

done_testing();
