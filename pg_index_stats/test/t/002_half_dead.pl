# Half-dead, deleted and live B-tree pages must be classified exactly as
# pgstattuple's pgstatindex() classifies them.  A half-dead page only exists
# for a moment while VACUUM unlinks a page, so this test makes one by hand:
# with the server stopped it sets the half-dead flag in the special area of a
# live leaf page, then compares every column of both functions.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

# Flag bits of btpo_flags, as defined in access/nbtree.h
use constant {
	BTP_LEAF => 1 << 0,
	BTP_DELETED => 1 << 2,
	BTP_META => 1 << 3,
	BTP_HALF_DEAD => 1 << 4,
};

# The special area of a B-tree page ends the page: btpo_prev, btpo_next and
# btpo_level (uint32 each), then btpo_flags and btpo_cycleid (uint16 each),
# 16 bytes that need no alignment padding.
use constant BT_SPECIAL_SIZE => 16;
use constant BT_FLAGS_OFFSET => 12;

# Modifying a page behind the server's back would break its checksum.
my $node = PostgreSQL::Test::Cluster->new('half_dead');
$node->init(extra => ['--no-data-checksums']);
$node->append_conf('postgresql.conf', 'autovacuum = off');
$node->start;
$node->safe_psql('postgres',
	'CREATE EXTENSION pgstattuple; CREATE EXTENSION pg_index_stats');

# Columns whose values differ between the two functions, as one string
# (empty when the rows are identical, NaN included).
sub mismatches
{
	my ($index) = @_;
	return $node->safe_psql(
		'postgres', qq{
		SELECT coalesce(string_agg(o.key, ',' ORDER BY o.key), '')
		FROM pg_index_stats('$index') AS ours,
			 pgstatindex('$index') AS theirs,
			 jsonb_each(to_jsonb(ours)) AS o
			 JOIN jsonb_each(to_jsonb(theirs)) AS t USING (key)
		WHERE o.value IS DISTINCT FROM t.value});
}

# One column of pg_index_stats() for an index.
sub our_column
{
	my ($index, $column) = @_;
	return $node->safe_psql('postgres',
		"SELECT $column FROM pg_index_stats('$index')");
}

# A tree with many leaves, some of them deleted by VACUUM after a key range
# was emptied, so that live, deleted and (below) half-dead pages coexist.
$node->safe_psql(
	'postgres', q{
	CREATE TABLE hd (id int);
	INSERT INTO hd SELECT g FROM generate_series(1, 60000) g;
	CREATE INDEX hd_id ON hd (id);
	DELETE FROM hd WHERE id BETWEEN 20000 AND 40000;
	VACUUM hd;});

is(mismatches('hd_id'), '', 'before the change: all columns agree');
cmp_ok(our_column('hd_id', 'deleted_pages'),
	'>', 0, 'VACUUM left deleted pages');
is(our_column('hd_id', 'empty_pages'), '0', 'no half-dead page yet');
my $leaves_before = our_column('hd_id', 'leaf_pages');

my $blcksz = $node->safe_psql('postgres', 'SHOW block_size');
my $file = $node->data_dir . '/'
  . $node->safe_psql('postgres', "SELECT pg_relation_filepath('hd_id')");
$node->stop;

# Find the first live leaf page after the metapage and mark it half-dead.
open(my $fh, '+<:raw', $file) or die "could not open $file: $!";
my $nblocks = (-s $file) / $blcksz;
my $target;
for my $blkno (1 .. $nblocks - 1)
{
	my $flags_pos = ($blkno + 1) * $blcksz - BT_SPECIAL_SIZE + BT_FLAGS_OFFSET;
	my $flags;
	sysseek($fh, $flags_pos, 0) or die "seek failed: $!";
	sysread($fh, $flags, 2) == 2 or die "short read at block $blkno";
	$flags = unpack('S', $flags);
	next unless $flags & BTP_LEAF;
	next if $flags & (BTP_DELETED | BTP_HALF_DEAD | BTP_META);

	sysseek($fh, $flags_pos, 0) or die "seek failed: $!";
	syswrite($fh, pack('S', $flags | BTP_HALF_DEAD)) == 2
	  or die "could not write block $blkno: $!";
	$target = $blkno;
	last;
}
close($fh) or die "could not close $file: $!";
ok(defined $target, 'found a live leaf page to mark half-dead');
note("marked block $target half-dead");

$node->start;

is(mismatches('hd_id'), '', 'with a half-dead page: all columns agree');
is(our_column('hd_id', 'empty_pages'),
	'1', 'the half-dead page is counted in empty_pages');
is(our_column('hd_id', 'leaf_pages'),
	$leaves_before - 1, 'the half-dead page is no longer a leaf page');
cmp_ok(our_column('hd_id', 'deleted_pages'),
	'>', 0, 'deleted pages are still counted');
is( $node->safe_psql(
		'postgres',
		"SELECT a IS NOT DISTINCT FROM b FROM pg_index_stats('hd_id') a, pgstatindex('hd_id') b"
	),
	't',
	'whole rows are identical');

$node->stop;

done_testing();
