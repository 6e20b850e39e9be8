/*-------------------------------------------------------------------------
 *
 * restore.h
 *		Restoring the statistics saved at the last clean shutdown
 *		(restore.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef PGSQ_RESTORE_H
#define PGSQ_RESTORE_H

extern bool pgsq_restore_saved(bool take_over);
extern bool pgsq_run_guarded(void (*work) (void), const char *what);

#endif							/* PGSQ_RESTORE_H */
