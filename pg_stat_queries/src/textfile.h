/*-------------------------------------------------------------------------
 *
 * textfile.h
 *		The query text file, across a clean shutdown (textfile.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef PGSQ_TEXTFILE_H
#define PGSQ_TEXTFILE_H

extern void pgsq_textfile_init_backend(void);
extern void pgsq_textfile_give_loaded(void);
extern void pgsq_textfile_save(void);

#endif							/* PGSQ_TEXTFILE_H */
