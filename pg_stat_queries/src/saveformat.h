/*-------------------------------------------------------------------------
 *
 * saveformat.h
 *		The format of our saved statistics file (saveformat.c): what a
 *		row holds and the named columns it is saved under.
 *
 * savefile.c writes the file, restore.c reads it; the format is described
 * in savefile.c's header and in docs/design.md ("Across restarts").
 *
 *-------------------------------------------------------------------------
 */
#ifndef PGSQ_SAVEFORMAT_H
#define PGSQ_SAVEFORMAT_H

#include "entry.h"

#define PGSQ_SAVE_FILE "pg_stat/pg_stat_queries.stat"
#define PGSQ_SAVE_FILE_TMP PGSQ_SAVE_FILE ".tmp"
#define PGSQ_SAVE_MAGIC 0x50475351	/* "PGSQ" */
#define PGSQ_SAVE_END 0x454E4451	/* "QDNE" */

/*
 * Format version of the files this build writes, and the oldest reader's
 * version that understands them.  Format 3 was 1.1's text file (legacy.c);
 * 4 is the first of this file; 5 added generic_plan_calls and
 * custom_plan_calls; 6 replaced the histogram of three buckets per doubling
 * (exec_hist.log3, still read and converted) with one of eighteen, and
 * added the failed executions' counters; 7 says its texts are literal-free
 * (texts_literal_free: older files' are normalized again when read).  Bump
 * PGSQ_SAVE_FORMAT with any change of columns; raise PGSQ_SAVE_OLDEST_READER
 * only for a change that older builds would misread.
 */
#ifndef PGSQ_TEST_EXTRA_COUNTER
#define PGSQ_SAVE_FORMAT 7
#else
#define PGSQ_SAVE_FORMAT 8		/* test/t/012_upgrade.pl's newer build */
#endif
#define PGSQ_SAVE_OLDEST_READER 4

/* Longest column name */
#define PGSQ_SAVE_NAME_MAX 63

/* One statement as saved: what the entry holds, its rare counters, text */
typedef struct SavedEntry
{
	PgsqEntryData data;
	bool		has_rare;
	PgsqRareCounters rare;
	int32		text_len;		/* -1: no text */
	int32		text_encoding;
	TimestampTz text_stored_at;
	PgsqHistogramLog3 old_hist; /* read from files of format 5 and older */
} SavedEntry;

/* What the statistics say about themselves (pg_stat_queries_info) */
typedef struct SavedInfo
{
	TimestampTz stats_reset;
	uint64		dealloc;
	uint64		evicted_entries;
	uint64		texts_missing;
	bool		texts_literal_free; /* every text passed normalize.c's rule */
} SavedInfo;

/* A column: a field of a row saved under a name */
typedef struct SavedColumn
{
	const char *name;
	uint32		offset;
	uint32		size;
} SavedColumn;

typedef struct SaveFileHeader
{
	uint32		magic;
	uint32		format;
	uint32		oldest_reader;
	uint32		pg_major;
} SaveFileHeader;

/* The file's trailer; the CRC covers every byte before it */
typedef struct SaveFileTrailer
{
	uint32		end;
	uint32		crc;
	uint64		entries;
} SaveFileTrailer;

/* The columns of a statement and of the info row (saveformat.c) */
extern const SavedColumn pgsq_entry_columns[];
extern const int pgsq_entry_column_count;
extern const SavedColumn pgsq_entry_old_columns[];
extern const int pgsq_entry_old_column_count;
extern const SavedColumn pgsq_info_columns[];
extern const int pgsq_info_column_count;

#endif							/* PGSQ_SAVEFORMAT_H */
