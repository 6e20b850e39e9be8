/*-------------------------------------------------------------------------
 *
 * measure.h
 *		Time, buffer and WAL usage of statements (measure.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef PGSQ_MEASURE_H
#define PGSQ_MEASURE_H

#include "compat.h"
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

/*
 * The statement inside ExecutorStart (hooks.c), left set if that throws;
 * the transaction's or subtransaction's abort clears it.
 */
extern PGDLLIMPORT QueryDesc *pgsq_starting_query;
extern double pgsq_query_failed_ms(int slot, const PgsqWindow *window);
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
static pgsq_always_inline void
pgsq_window_end(const PgsqWindow *window, PgsqUsage *usage, bool first)
{
	const BufferUsage *b0 = &window->buf_start;
	const WalUsage *w0 = &window->wal_start;
	BufferUsage *b = &usage->bufusage;
	WalUsage   *w = &usage->walusage;
	instr_time	now;

/* one counter of the totals: set to the window's difference, or add it */
#define PGSQ_WINDOW_COUNT(total, current, start) \
	((total) = (first ? 0 : (total)) + ((current) - (start)))
#define PGSQ_WINDOW_BUF(field) \
	PGSQ_WINDOW_COUNT(b->field, pgBufferUsage.field, b0->field)
#define PGSQ_WINDOW_WAL(field) \
	PGSQ_WINDOW_COUNT(w->field, pgWalUsage.field, w0->field)
#define PGSQ_WINDOW_IO_TIME(field) \
	INSTR_TIME_ACCUM_DIFF(b->field, pgBufferUsage.field, b0->field)

	INSTR_TIME_SET_CURRENT(now);
	if (first)
		INSTR_TIME_SET_ZERO(usage->time);
	INSTR_TIME_ACCUM_DIFF(usage->time, now, window->start);
	PGSQ_WINDOW_BUF(shared_blks_hit);
	PGSQ_WINDOW_BUF(shared_blks_read);
	PGSQ_WINDOW_BUF(shared_blks_dirtied);
	PGSQ_WINDOW_BUF(shared_blks_written);
	PGSQ_WINDOW_BUF(local_blks_hit);
	PGSQ_WINDOW_BUF(local_blks_read);
	PGSQ_WINDOW_BUF(local_blks_dirtied);
	PGSQ_WINDOW_BUF(local_blks_written);
	PGSQ_WINDOW_BUF(temp_blks_read);
	PGSQ_WINDOW_BUF(temp_blks_written);
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
		PGSQ_WINDOW_IO_TIME(shared_blk_read_time);
		PGSQ_WINDOW_IO_TIME(shared_blk_write_time);
		PGSQ_WINDOW_IO_TIME(local_blk_read_time);
		PGSQ_WINDOW_IO_TIME(local_blk_write_time);
		PGSQ_WINDOW_IO_TIME(temp_blk_read_time);
		PGSQ_WINDOW_IO_TIME(temp_blk_write_time);
	}
	PGSQ_WINDOW_WAL(wal_records);
	PGSQ_WINDOW_WAL(wal_fpi);
	PGSQ_WINDOW_WAL(wal_bytes);
	PGSQ_WINDOW_WAL(wal_buffers_full);
#ifdef PGSQ_HAS_WAL_FPI_BYTES
	PGSQ_WINDOW_WAL(wal_fpi_bytes);
#endif

#undef PGSQ_WINDOW_COUNT
#undef PGSQ_WINDOW_BUF
#undef PGSQ_WINDOW_WAL
#undef PGSQ_WINDOW_IO_TIME
}

/* Milliseconds since a window began (for an error cutting it short) */
static inline double
pgsq_window_elapsed_ms(const PgsqWindow *window)
{
	instr_time	now;

	INSTR_TIME_SET_CURRENT(now);
	INSTR_TIME_SUBTRACT(now, window->start);
	return INSTR_TIME_GET_MILLISEC(now);
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
