/*
 * pg_index_stats.c
 *		Module entry point of pg_index_stats and the read stream wrapper that
 *		both statistics functions use to visit every block of an index.
 *
 * The wrapper asks the read stream machinery for the contiguous block range
 * [0, nblocks), so that consecutive blocks can be merged into large reads and
 * issued ahead of the consumer (asynchronously when io_method allows it).
 * Buffers come from a BAS_BULKREAD ring, so a scan of a large index does not
 * evict the rest of shared_buffers.
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/read_stream.h"
#include "utils/rel.h"

#include "pg_index_stats.h"

PG_MODULE_MAGIC_EXT(.name = "pg_index_stats",.version = "1.0");

/* Start a forward pass over all blocks that the index has right now. */
static void
pis_scan_begin(PisIndexScan *scan, Relation rel)
{
	scan->rel = rel;
	scan->nblocks = RelationGetNumberOfBlocks(rel);
	scan->range.current_blocknum = 0;
	scan->range.last_exclusive = scan->nblocks;
	scan->strategy = GetAccessStrategy(BAS_BULKREAD);

	/*----------
	 * block_range_read_stream_cb never blocks nor takes locks, which is what
	 * batch mode requires of a callback.  The whole range is wanted, so let
	 * the stream ramp up to its full look-ahead distance at once.
	 *
	 * Alternatives that were measured on cold 1 GB indexes and not kept
	 * (bench/index_stats.sh, see bench/results/index_stats.md):
	 *
	 * - READ_STREAM_SEQUENTIAL only turns off the stream's posix_fadvise
	 *   advice under io_method=sync, and for an ascending range the stream
	 *   stops advising as soon as its reads catch up with its first advice,
	 *   leaving the rest to the kernel's read-ahead.  It changes nothing
	 *   under worker or io_uring, and under sync the difference stayed
	 *   within the disk's drift (1 GB, 4 rounds).
	 * - Our own posix_fadvise(WILLNEED) hints 32 MB or 128 MB ahead of the
	 *   stream were no faster (the larger window was slower): the kernel's
	 *   read-ahead already streams this file in large ordered requests.
	 * - A larger ring (GetAccessStrategyWithSize) or none does not raise the
	 *   look-ahead: at default settings the BAS_BULKREAD ring (256 kB plus
	 *   effective_io_concurrency reads of io_combine_limit, 288 buffers)
	 *   already holds more than the stream pins at most
	 *   ((effective_io_concurrency + 1) * io_combine_limit, 272 buffers).
	 *
	 * What did help is more I/O concurrency (io_workers and
	 * effective_io_concurrency), which is the administrator's choice, so we
	 * keep to the configured values rather than overriding them.
	 *----------
	 */
	scan->stream = read_stream_begin_relation(READ_STREAM_FULL |
											  READ_STREAM_USE_BATCHING,
											  scan->strategy,
											  rel,
											  MAIN_FORKNUM,
											  block_range_read_stream_cb,
											  &scan->range,
											  0);
}

/* Return the next pinned buffer of the pass, or InvalidBuffer at the end. */
static Buffer
pis_scan_next(PisIndexScan *scan)
{
	CHECK_FOR_INTERRUPTS();

	return read_stream_next_buffer(scan->stream, NULL);
}

/* Release the stream and its buffer ring once the pass is finished. */
static void
pis_scan_end(PisIndexScan *scan)
{
	read_stream_end(scan->stream);
	scan->stream = NULL;
	FreeAccessStrategy(scan->strategy);
	scan->strategy = NULL;
}

/*
 * Visit every block of an index in order, each share-locked while the
 * visitor runs.  Returns the number of blocks.  Block 0 is the metapage of
 * both access methods we serve, so an index without blocks is corrupted.
 */
BlockNumber
pis_visit_blocks(Relation rel, PisBlockVisitor visit, void *arg)
{
	PisIndexScan scan;
	Buffer		buf;
	BlockNumber nblocks;

	pis_scan_begin(&scan, rel);
	nblocks = scan.nblocks;
	if (nblocks == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" has no metapage",
						RelationGetRelationName(rel))));

	while ((buf = pis_scan_next(&scan)) != InvalidBuffer)
	{
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		visit(rel, buf, BufferGetBlockNumber(buf), arg);
		UnlockReleaseBuffer(buf);
	}

	pis_scan_end(&scan);
	return nblocks;
}
