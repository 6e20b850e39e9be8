/*-------------------------------------------------------------------------
 *
 * savefile.h
 *		Our statistics across a clean shutdown (savefile.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef PGSQ_SAVEFILE_H
#define PGSQ_SAVEFILE_H

extern void pgsq_savefile_at_startup(void);
extern void pgsq_savefile_write(void);
extern void pgsq_savefile_at_shutdown(void);

#endif							/* PGSQ_SAVEFILE_H */
