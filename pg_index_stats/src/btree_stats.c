/*
 * btree_stats.c
 *		pg_index_stats(regclass): page-level statistics of a B-tree index,
 *		reported with the same columns and values as pgstattuple's
 *		pgstatindex(), but gathered through a read stream.
 */
#include "postgres.h"

#include <math.h>
#include <stdlib.h>

#include "access/htup_details.h"
#include "access/nbtree.h"
#include "catalog/pg_am_d.h"
#include "funcapi.h"
#include "storage/bufmgr.h"
#include "utils/float.h"
#include "utils/rel.h"

#include "pg_index_stats.h"

PG_FUNCTION_INFO_V1(pg_index_stats_btree);

#define PIS_BTREE_NCOLUMNS 10

/* Counters accumulated while walking the pages of one B-tree. */
typedef struct BtreeTotals
{
	uint32		version;		/* btm_version of the metapage */
	uint32		level;			/* btm_level: height of the true root */
	BlockNumber root;			/* btm_root: block of the true root */
	int64		internal_pages; /* live non-leaf pages */
	int64		leaf_pages;		/* live leaf pages */
	int64		empty_pages;	/* half-dead pages */
	int64		deleted_pages;	/* deleted pages, leaf or internal */
	uint64		leaf_capacity;	/* item space of all live leaf pages */
	uint64		leaf_free;		/* unused part of that space */
	int64		backward_links; /* leaves whose right sibling is earlier */
} BtreeTotals;

/*
 * Round a percentage to two decimals exactly the way a "%.2f" text round
 * trip does, which is how pgstatindex() produces its float columns.  Going
 * through the same conversion (rather than rint(x * 100) / 100) keeps the
 * two functions bit-for-bit identical even at rounding boundaries.
 */
static double
round_percentage(double value)
{
	char		buf[64];

	snprintf(buf, sizeof(buf), "%.2f", value);
	return strtod(buf, NULL);
}

/* Pull version, level and root out of the metapage held in "buf". */
static void
read_btree_metapage(Relation rel, Buffer buf, BtreeTotals *totals)
{
	Page		page = BufferGetPage(buf);
	BTPageOpaque opaque;
	BTMetaPageData *meta;

	if (PageIsNew(page) ||
		PageGetSpecialSize(page) != MAXALIGN(sizeof(BTPageOpaqueData)))
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" has an invalid metapage",
						RelationGetRelationName(rel))));

	opaque = BTPageGetOpaque(page);
	meta = BTPageGetMeta(page);
	if (!P_ISMETA(opaque) || meta->btm_magic != BTREE_MAGIC)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" has an invalid metapage",
						RelationGetRelationName(rel)),
				 errdetail("Block 0 is not a B-tree metapage.")));

	totals->version = meta->btm_version;
	totals->level = meta->btm_level;
	totals->root = meta->btm_root;
}

/* Classify one non-meta page and add it to the running totals. */
static void
account_btree_page(Relation rel, Page page, BlockNumber blkno,
				   BtreeTotals *totals)
{
	BTPageOpaque opaque;

	/*
	 * A never-initialized page carries no B-tree flags at all.  pgstatindex
	 * reads its (zeroed) flag word, finds neither the leaf, deleted nor
	 * half-dead bit, and so reports it among the internal pages; do the same
	 * so that both functions keep agreeing, without looking at the special
	 * space of a page that does not have one.
	 */
	if (PageIsNew(page))
	{
		totals->internal_pages++;
		return;
	}

	if (PageGetSpecialSize(page) != MAXALIGN(sizeof(BTPageOpaqueData)))
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" has a corrupted page at block %u",
						RelationGetRelationName(rel), blkno),
				 errdetail("The page has an unexpected special space size.")));

	opaque = BTPageGetOpaque(page);

	/*
	 * Order matters: a deleted page may still carry the leaf bit, and the
	 * deleted state takes precedence over half-dead.  Deleted pages are
	 * counted together regardless of the level they came from.
	 */
	if (P_ISDELETED(opaque))
		totals->deleted_pages++;
	else if (P_ISHALFDEAD(opaque))
		totals->empty_pages++;
	else if (P_ISLEAF(opaque))
	{
		PageHeader	header = (PageHeader) page;

		totals->leaf_pages++;
		totals->leaf_capacity += header->pd_special - SizeOfPageHeaderData;
		totals->leaf_free += PageGetExactFreeSpace(page);

		/* the key-space successor lives physically before this page */
		if (opaque->btpo_next != P_NONE && opaque->btpo_next < blkno)
			totals->backward_links++;
	}
	else
		totals->internal_pages++;
}

/* Block visitor: the metapage or one B-tree page */
static void
visit_btree_block(Relation rel, Buffer buf, BlockNumber blkno, void *arg)
{
	BtreeTotals *totals = (BtreeTotals *) arg;

	if (blkno == BTREE_METAPAGE)
		read_btree_metapage(rel, buf, totals);
	else
		account_btree_page(rel, BufferGetPage(buf), blkno, totals);
}

/* Walk all blocks of "rel" through a read stream and fill "totals". */
static void
collect_btree_totals(Relation rel, BtreeTotals *totals)
{
	memset(totals, 0, sizeof(BtreeTotals));
	(void) pis_visit_blocks(rel, visit_btree_block, totals);
}

/* SQL-callable pg_index_stats(regclass). */
Datum
pg_index_stats_btree(PG_FUNCTION_ARGS)
{
	Oid			indexoid = PG_GETARG_OID(0);
	Relation	rel;
	BtreeTotals totals;
	TupleDesc	tupdesc;
	Datum		values[PIS_BTREE_NCOLUMNS];
	bool		nulls[PIS_BTREE_NCOLUMNS] = {0};
	int64		total_pages;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("function returning record called in context that cannot accept type record")));
	tupdesc = BlessTupleDesc(tupdesc);

	rel = pis_open_index(indexoid, BTREE_AM_OID, "B-tree");
	collect_btree_totals(rel, &totals);
	pis_close_index(rel);

	/* every block visited was put in exactly one class, plus the metapage */
	total_pages = 1 + totals.internal_pages + totals.leaf_pages +
		totals.empty_pages + totals.deleted_pages;

	values[0] = Int32GetDatum((int32) totals.version);
	values[1] = Int32GetDatum((int32) totals.level);
	values[2] = Int64GetDatum(total_pages * BLCKSZ);
	values[3] = Int64GetDatum((int64) totals.root);
	values[4] = Int64GetDatum(totals.internal_pages);
	values[5] = Int64GetDatum(totals.leaf_pages);
	values[6] = Int64GetDatum(totals.empty_pages);
	values[7] = Int64GetDatum(totals.deleted_pages);

	/* both ratios are undefined, hence NaN, for a tree without live leaves */
	if (totals.leaf_capacity > 0)
		values[8] = Float8GetDatum(round_percentage(100.0 -
													(double) totals.leaf_free /
													(double) totals.leaf_capacity * 100.0));
	else
		values[8] = Float8GetDatum(get_float8_nan());

	if (totals.leaf_pages > 0)
		values[9] = Float8GetDatum(round_percentage((double) totals.backward_links /
													(double) totals.leaf_pages * 100.0));
	else
		values[9] = Float8GetDatum(get_float8_nan());

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
