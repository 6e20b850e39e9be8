/*
 * hash_stats.c
 *		pg_hash_index_stats(regclass): page-level statistics of a hash index,
 *		reported with the same columns and values as pgstattuple's
 *		pgstathashindex(), but gathered through a read stream.
 */
#include "postgres.h"

#include "access/hash.h"
#include "access/htup_details.h"
#include "catalog/pg_am_d.h"
#include "funcapi.h"
#include "storage/bufmgr.h"
#include "utils/rel.h"

#include "pg_index_stats.h"

PG_FUNCTION_INFO_V1(pg_index_stats_hash);

#define PIS_HASH_NCOLUMNS 8

/* Counters accumulated while walking the pages of one hash index. */
typedef struct HashTotals
{
	uint32		version;		/* hashm_version of the metapage */
	uint32		page_capacity;	/* hashm_bsize: item space of one page */
	int64		bucket_pages;	/* primary bucket pages */
	int64		overflow_pages; /* overflow pages chained to buckets */
	int64		bitmap_pages;	/* overflow-allocation bitmap pages */
	int64		unused_pages;	/* zeroed or freed pages */
	int64		live_items;		/* line pointers not marked dead */
	int64		dead_items;		/* line pointers marked LP_DEAD */
	uint64		free_space;		/* free bytes on bucket/overflow pages */
} HashTotals;

/* Complain that block "blkno" of "rel" does not look like a hash page. */
pg_noreturn static void
report_bad_hash_page(Relation rel, BlockNumber blkno, const char *detail)
{
	ereport(ERROR,
			(errcode(ERRCODE_INDEX_CORRUPTED),
			 errmsg("hash index \"%s\" has a corrupted page at block %u",
					RelationGetRelationName(rel), blkno),
			 errdetail_internal("%s", detail)));
}

/* True if "page" has exactly the special space a hash page must have. */
static bool
has_hash_special(Page page)
{
	return PageGetSpecialSize(page) == MAXALIGN(sizeof(HashPageOpaqueData));
}

/* Pull the version and per-page capacity out of the metapage in "buf". */
static void
read_hash_metapage(Relation rel, Buffer buf, HashTotals *totals)
{
	Page		page = BufferGetPage(buf);
	HashMetaPage meta;

	if (PageIsNew(page) || !has_hash_special(page) ||
		(HashPageGetOpaque(page)->hasho_flag & LH_META_PAGE) == 0)
		report_bad_hash_page(rel, HASH_METAPAGE,
							 "Block 0 is not a hash metapage.");

	meta = HashPageGetMeta(page);
	if (meta->hashm_magic != HASH_MAGIC)
		report_bad_hash_page(rel, HASH_METAPAGE,
							 "The metapage carries a wrong magic number.");

	totals->version = meta->hashm_version;
	totals->page_capacity = meta->hashm_bsize;
}

/* Count the line pointers and free space of a bucket or overflow page. */
static void
account_hash_items(Page page, HashTotals *totals)
{
	OffsetNumber last = PageGetMaxOffsetNumber(page);

	for (OffsetNumber off = FirstOffsetNumber; off <= last; off++)
	{
		if (ItemIdIsDead(PageGetItemId(page, off)))
			totals->dead_items++;
		else
			totals->live_items++;
	}
	totals->free_space += PageGetExactFreeSpace(page);
}

/* Classify one non-meta page and add it to the running totals. */
static void
account_hash_page(Relation rel, Page page, BlockNumber blkno,
				  HashTotals *totals)
{
	uint16		pagetype;

	/* blocks reserved for future bucket splits stay all-zero until used */
	if (PageIsNew(page))
	{
		totals->unused_pages++;
		return;
	}

	if (!has_hash_special(page))
		report_bad_hash_page(rel, blkno,
							 "The page has an unexpected special space size.");

	pagetype = HashPageGetOpaque(page)->hasho_flag & LH_PAGE_TYPE;
	switch (pagetype)
	{
		case LH_BUCKET_PAGE:
			totals->bucket_pages++;
			account_hash_items(page, totals);
			break;
		case LH_OVERFLOW_PAGE:
			totals->overflow_pages++;
			account_hash_items(page, totals);
			break;
		case LH_BITMAP_PAGE:
			totals->bitmap_pages++;
			break;
		case LH_UNUSED_PAGE:
			totals->unused_pages++;
			break;
		default:
			report_bad_hash_page(rel, blkno,
								 psprintf("Page type flags 0x%04X are not valid here.",
										  HashPageGetOpaque(page)->hasho_flag));
	}
}

/* Block visitor: the metapage or one hash page */
static void
visit_hash_block(Relation rel, Buffer buf, BlockNumber blkno, void *arg)
{
	HashTotals *totals = (HashTotals *) arg;

	if (blkno == HASH_METAPAGE)
		read_hash_metapage(rel, buf, totals);
	else
		account_hash_page(rel, BufferGetPage(buf), blkno, totals);
}

/* Walk all blocks of "rel" through a read stream and fill "totals". */
static BlockNumber
collect_hash_totals(Relation rel, HashTotals *totals)
{
	memset(totals, 0, sizeof(HashTotals));
	return pis_visit_blocks(rel, visit_hash_block, totals);
}

/* SQL-callable pg_hash_index_stats(regclass). */
Datum
pg_index_stats_hash(PG_FUNCTION_ARGS)
{
	Oid			indexoid = PG_GETARG_OID(0);
	Relation	rel;
	HashTotals	totals;
	BlockNumber nblocks;
	TupleDesc	tupdesc;
	Datum		values[PIS_HASH_NCOLUMNS];
	bool		nulls[PIS_HASH_NCOLUMNS] = {0};
	uint64		free_bytes;
	uint64		usable_bytes;
	double		free_percent;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("function returning record called in context that cannot accept type record")));
	tupdesc = BlessTupleDesc(tupdesc);

	rel = pis_open_index(indexoid, HASH_AM_OID, "hash");
	nblocks = collect_hash_totals(rel, &totals);
	pis_close_index(rel);

	/*
	 * Unused pages are entirely free.  The metapage and bitmap pages never
	 * hold index tuples, so they are left out of the space that could.
	 */
	free_bytes = totals.free_space +
		(uint64) totals.unused_pages * totals.page_capacity;
	usable_bytes = (uint64) (nblocks - (totals.bitmap_pages + 1)) *
		totals.page_capacity;
	if (usable_bytes > 0)
		free_percent = 100.0 * free_bytes / usable_bytes;
	else
		free_percent = 0.0;

	values[0] = Int32GetDatum((int32) totals.version);
	values[1] = Int64GetDatum(totals.bucket_pages);
	values[2] = Int64GetDatum(totals.overflow_pages);
	values[3] = Int64GetDatum(totals.bitmap_pages);
	values[4] = Int64GetDatum(totals.unused_pages);
	values[5] = Int64GetDatum(totals.live_items);
	values[6] = Int64GetDatum(totals.dead_items);
	values[7] = Float8GetDatum(free_percent);

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
