/*-------------------------------------------------------------------------
 *
 * measure.h
 *		Time, buffer and WAL usage of statements (measure.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef PGSQ_MEASURE_H
#define PGSQ_MEASURE_H

#include "postgres.h"
#include "executor/execdesc.h"
#include "executor/instrument.h"
#include "portability/instr_time.h"
#include "storage/bufmgr.h"

/* Time, buffer and WAL usage summed over measured windows */
typedef struct PgsqUsage
{
	instr_time	time;
	BufferUsage bufusage;
	WalUsage	walusage;
} PgsqUsage;

/* One window being measured */
typedef struct PgsqWindow
{
	instr_time	start;
	BufferUsage buf_start;
	WalUsage	wal_start;
} PgsqWindow;

extern void pgsq_query_started(const QueryDesc *query);
extern int	pgsq_query_slot(const QueryDesc *query);
extern void pgsq_query_add(int slot, const QueryDesc *query,
						   const PgsqWindow *window);
extern const PgsqUsage *pgsq_query_ended(const QueryDesc *query);
extern void pgsq_measure_init(void);

/*
 * The functions run on every execution are inline: each call saved is a
 * few instructions of the few hundred we add per statement.
 */

/* Start measuring a window */
static inline void
pgsq_window_begin(PgsqWindow *window)
{
	window->buf_start = pgBufferUsage;
	window->wal_start = pgWalUsage;
	INSTR_TIME_SET_CURRENT(window->start);
}

/*
 * Add the time and buffer and WAL usage since the window began to usage,
 * or, for the first window of a total, set usage to it: the caller passes
 * "first" as a constant, so each inlined copy either adds or stores, and no
 * total is zeroed beforehand (a 168-byte memset, about 70 instructions per
 * statement).  Always inlined, as a call would cost some of that back.  I/O
 * times are only ever non-zero with track_io_timing on: otherwise their six
 * fields are only zeroed, for a first window.
 */
static pg_attribute_always_inline void
pgsq_window_end(const PgsqWindow *window, PgsqUsage *usage, bool first)
{
	const BufferUsage *b0 = &window->buf_start;
	const WalUsage *w0 = &window->wal_start;
	BufferUsage *b = &usage->bufusage;
	WalUsage   *w = &usage->walusage;
	instr_time	now;

	INSTR_TIME_SET_CURRENT(now);
	if (first)
		INSTR_TIME_SET_ZERO(usage->time);
	INSTR_TIME_ACCUM_DIFF(usage->time, now, window->start);
	b->shared_blks_hit = (first ? 0 : b->shared_blks_hit) +
		(pgBufferUsage.shared_blks_hit - b0->shared_blks_hit);
	b->shared_blks_read = (first ? 0 : b->shared_blks_read) +
		(pgBufferUsage.shared_blks_read - b0->shared_blks_read);
	b->shared_blks_dirtied = (first ? 0 : b->shared_blks_dirtied) +
		(pgBufferUsage.shared_blks_dirtied - b0->shared_blks_dirtied);
	b->shared_blks_written = (first ? 0 : b->shared_blks_written) +
		(pgBufferUsage.shared_blks_written - b0->shared_blks_written);
	b->local_blks_hit = (first ? 0 : b->local_blks_hit) +
		(pgBufferUsage.local_blks_hit - b0->local_blks_hit);
	b->local_blks_read = (first ? 0 : b->local_blks_read) +
		(pgBufferUsage.local_blks_read - b0->local_blks_read);
	b->local_blks_dirtied = (first ? 0 : b->local_blks_dirtied) +
		(pgBufferUsage.local_blks_dirtied - b0->local_blks_dirtied);
	b->local_blks_written = (first ? 0 : b->local_blks_written) +
		(pgBufferUsage.local_blks_written - b0->local_blks_written);
	b->temp_blks_read = (first ? 0 : b->temp_blks_read) +
		(pgBufferUsage.temp_blks_read - b0->temp_blks_read);
	b->temp_blks_written = (first ? 0 : b->temp_blks_written) +
		(pgBufferUsage.temp_blks_written - b0->temp_blks_written);
	if (first)
	{
		INSTR_TIME_SET_ZERO(b->shared_blk_read_time);
		INSTR_TIME_SET_ZERO(b->shared_blk_write_time);
		INSTR_TIME_SET_ZERO(b->local_blk_read_time);
		INSTR_TIME_SET_ZERO(b->local_blk_write_time);
		INSTR_TIME_SET_ZERO(b->temp_blk_read_time);
		INSTR_TIME_SET_ZERO(b->temp_blk_write_time);
	}
	if (unlikely(track_io_timing))
	{
		INSTR_TIME_ACCUM_DIFF(b->shared_blk_read_time,
							  pgBufferUsage.shared_blk_read_time, b0->shared_blk_read_time);
		INSTR_TIME_ACCUM_DIFF(b->shared_blk_write_time,
							  pgBufferUsage.shared_blk_write_time, b0->shared_blk_write_time);
		INSTR_TIME_ACCUM_DIFF(b->local_blk_read_time,
							  pgBufferUsage.local_blk_read_time, b0->local_blk_read_time);
		INSTR_TIME_ACCUM_DIFF(b->local_blk_write_time,
							  pgBufferUsage.local_blk_write_time, b0->local_blk_write_time);
		INSTR_TIME_ACCUM_DIFF(b->temp_blk_read_time,
							  pgBufferUsage.temp_blk_read_time, b0->temp_blk_read_time);
		INSTR_TIME_ACCUM_DIFF(b->temp_blk_write_time,
							  pgBufferUsage.temp_blk_write_time, b0->temp_blk_write_time);
	}
	w->wal_records = (first ? 0 : w->wal_records) +
		(pgWalUsage.wal_records - w0->wal_records);
	w->wal_fpi = (first ? 0 : w->wal_fpi) + (pgWalUsage.wal_fpi - w0->wal_fpi);
	w->wal_bytes = (first ? 0 : w->wal_bytes) +
		(pgWalUsage.wal_bytes - w0->wal_bytes);
	w->wal_buffers_full = (first ? 0 : w->wal_buffers_full) +
		(pgWalUsage.wal_buffers_full - w0->wal_buffers_full);
}

/*
 * Does ExecutorFinish of this statement need measuring?  A SELECT without a
 * data-modifying WITH has no trigger or CTE to finish.
 */
static inline bool
pgsq_finish_measured(const QueryDesc *query)
{
	return query->operation != CMD_SELECT ||
		query->plannedstmt->hasModifyingCTE;
}

#endif							/* PGSQ_MEASURE_H */
