# pg_upgrade from PostgreSQL 18 to the version under test (19 and later)
# of a cluster with pg_stat_queries, pg_index_stats and the
# pg_stat_statements drop-in installed: it succeeds, the views work after
# it, and the drop-in updates to the version of the new server.  Statistics
# are not carried by pg_upgrade (PostgreSQL's neither): the new server's hold
# only what pg_upgrade ran on it.
#
# The old server is a private copy of the cached PostgreSQL 18 build
# (scripts/install-postgres), into which this source is built and
# installed; skipped when testing 18, or when no 18 build is there.
use strict;
use warnings FATAL => 'all';
use File::Basename qw(dirname);
use File::Path qw(make_path);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $pg_major = (split(/[.\s]/, `pg_config --version`))[1] =~ s/\D.*//r;
plan skip_all => 'pg_upgrade is tested from 18 to later versions'
  if $pg_major <= 18;
my $cache = $ENV{PGSQ_CACHE} || '/opt/pgsq';
my $old_prefix = "$cache/18-assert";
plan skip_all => "no PostgreSQL 18 build in $old_prefix"
  unless -f "$old_prefix/.complete";

my $tmp = PostgreSQL::Test::Utils::tempdir();
my $testdir = $ENV{TESTDIR} || '.';

# ---- the old installation: 18, with this source built into it
my $old_inst = "$tmp/install-18";
system('cp', '-a', $old_prefix, $old_inst) == 0 or die "cannot copy $old_prefix";
my $src = "$tmp/src";
make_path($src);
system("cp -r '$testdir/../mk' '$testdir/../Makefile' '$src/'") == 0 or die;
for my $ext ('pg_stat_queries', 'pg_index_stats')
{
	make_path("$src/$ext");
	system("cd '$testdir/../$ext' && cp -r Makefile *.control src sql "
		  . ($ext eq 'pg_stat_queries' ? 'compat ' : '')
		  . "'$src/$ext/'") == 0
	  or die "cannot copy $ext";
}
my $make = "make -s -C '$src' PG_CONFIG='$old_inst/bin/pg_config'";
system("$make clean >'$tmp/build.log' 2>&1 && $make install >>'$tmp/build.log' 2>&1") == 0
  or die 'building for 18 failed: ' . slurp_file("$tmp/build.log");

# Settings both servers need; the drop-in's directory of each installation
sub configure
{
	my ($node, $pg_config) = @_;
	my $sharedir = `'$pg_config' --sharedir`;
	chomp $sharedir;
	$node->append_conf(
		'postgresql.conf', qq{
shared_preload_libraries = 'pg_stat_queries'
extension_control_path = '$sharedir/pg_stat_queries_compat:\$system'
});
}

# ---- the old cluster
my $old = PostgreSQL::Test::Cluster->new('old18', install_path => $old_inst);
$old->init;
configure($old, "$old_inst/bin/pg_config");
$old->start;
$old->safe_psql(
	'postgres', q{
CREATE EXTENSION pg_stat_queries;
CREATE EXTENSION pg_index_stats;
CREATE EXTENSION pg_stat_statements;
CREATE TABLE up_t (a int PRIMARY KEY);
INSERT INTO up_t SELECT generate_series(1, 1000);
SELECT count(*) FROM up_t WHERE a > 10;
});
is( $old->safe_psql(
		'postgres',
		"SELECT string_agg(extname || ' ' || extversion, ', ' ORDER BY extname) FROM pg_extension WHERE extname <> 'plpgsql'"
	),
	'pg_index_stats 1.0, pg_stat_queries 1.4, pg_stat_statements 1.12',
	'18: both extensions and the drop-in installed');
my $old_index = $old->safe_psql('postgres',
	"SELECT leaf_pages, tree_level FROM pg_index_stats('up_t_pkey')");
$old->stop;

# ---- pg_upgrade to the new version
my $new = PostgreSQL::Test::Cluster->new('new');
$new->init;
configure($new, 'pg_config');
my $upgrade_dir = "$tmp/upgrade";
make_path($upgrade_dir);
command_ok(
	[
		'pg_upgrade', '--no-sync',
		'--old-datadir' => $old->data_dir,
		'--new-datadir' => $new->data_dir,
		'--old-bindir' => "$old_inst/bin",
		'--new-bindir' => $new->config_data('--bindir'),
		'--socketdir' => $new->host,
		'--old-port' => $old->port,
		'--new-port' => $new->port,
	],
	"pg_upgrade from 18 to $pg_major");

$new->start;
is( $new->safe_psql(
		'postgres',
		"SELECT string_agg(extname || ' ' || extversion, ', ' ORDER BY extname) FROM pg_extension WHERE extname <> 'plpgsql'"
	),
	'pg_index_stats 1.0, pg_stat_queries 1.4, pg_stat_statements 1.12',
	'after pg_upgrade: the same extensions and versions');
# (what pg_upgrade itself ran on the new server is there: CREATE TABLE ...)
is( $new->safe_psql('postgres',
		"SELECT count(*) FROM pg_stat_queries WHERE query LIKE 'INSERT INTO up_t%' OR query LIKE 'SELECT count(*) FROM up_t%'"
	),
	'0',
	"after pg_upgrade: the old server's statistics are not carried");
$new->safe_psql('postgres', 'SELECT count(*) FROM up_t WHERE a > 20');
is( $new->safe_psql('postgres',
		"SELECT calls FROM pg_stat_queries WHERE query = 'SELECT count(*) FROM up_t WHERE a > \$1'"),
	'1', 'after pg_upgrade: statements are counted');
is( $new->safe_psql('postgres',
		"SELECT calls FROM pg_stat_statements WHERE query = 'SELECT count(*) FROM up_t WHERE a > \$1'"),
	'1', "after pg_upgrade: the drop-in's 1.12 definitions still read");
is( $new->safe_psql('postgres',
		"SELECT leaf_pages, tree_level FROM pg_index_stats('up_t_pkey')"),
	$old_index, 'after pg_upgrade: pg_index_stats reads the index');

# the drop-in updates to the new server's pg_stat_statements version
$new->safe_psql('postgres', 'ALTER EXTENSION pg_stat_statements UPDATE');
is( $new->safe_psql('postgres',
		"SELECT extversion FROM pg_extension WHERE extname = 'pg_stat_statements'"),
	'1.13', 'the drop-in updates to 1.13');
is( $new->safe_psql('postgres',
		"SELECT calls, generic_plan_calls, custom_plan_calls FROM pg_stat_statements WHERE query = 'SELECT count(*) FROM up_t WHERE a > \$1'"),
	'1|0|0', "with 1.13's plan cache columns");
$new->stop;

done_testing();
