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

extern void pgsq_restore_saved(void);

#endif							/* PGSQ_RESTORE_H */
