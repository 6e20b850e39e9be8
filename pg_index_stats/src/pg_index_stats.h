/*
 * pg_index_stats.h
 *		Declarations shared by the pg_index_stats source files: the helper
 *		that opens and validates an index, and the small wrapper around a
 *		read stream that walks every block of an index in order.
 */
#ifndef PG_INDEX_STATS_H
#define PG_INDEX_STATS_H

#include "storage/bufmgr.h"
#include "storage/read_stream.h"
#include "utils/relcache.h"

/*
 * State of one full-index pass.  The block range, the bulk-read ring and the
 * stream itself live together so that callers only deal with buffers.
 */
typedef struct PisIndexScan
{
	Relation	rel;			/* index being read */
	BlockNumber nblocks;		/* number of blocks when the pass began */
	BlockRangeReadStreamPrivate range;	/* state for the range callback */
	BufferAccessStrategy strategy;	/* BAS_BULKREAD ring */
	ReadStream *stream;			/* stream producing the buffers */
} PisIndexScan;

/* index_checks.c */
extern Relation pis_open_index(Oid indexoid, Oid amoid, const char *amlabel);
extern void pis_close_index(Relation rel);

/* Called for every block of an index, with the buffer share-locked */
typedef void (*PisBlockVisitor) (Relation rel, Buffer buf, BlockNumber blkno,
								 void *arg);

/* pg_index_stats.c */
extern BlockNumber pis_visit_blocks(Relation rel, PisBlockVisitor visit,
									void *arg);

#endif							/* PG_INDEX_STATS_H */
