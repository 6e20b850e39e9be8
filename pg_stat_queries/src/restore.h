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

#endif							/* PGSQ_RESTORE_H */
