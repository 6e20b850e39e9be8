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

extern void pgsq_window_begin(PgsqWindow *window);
extern void pgsq_window_end(const PgsqWindow *window, PgsqUsage *usage);
extern void pgsq_query_started(const QueryDesc *query);
extern int	pgsq_query_slot(const QueryDesc *query);
extern void pgsq_query_add(int slot, const QueryDesc *query,
						   const PgsqWindow *window);
extern const PgsqUsage *pgsq_query_ended(const QueryDesc *query);
extern bool pgsq_finish_measured(const QueryDesc *query);
extern void pgsq_measure_init(void);

#endif							/* PGSQ_MEASURE_H */
