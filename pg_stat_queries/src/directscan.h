/*-------------------------------------------------------------------------
 *
 * directscan.h
 *		Reading the statistics views with a custom scan (directscan.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef PGSQ_DIRECTSCAN_H
#define PGSQ_DIRECTSCAN_H

extern void pgsq_install_direct_scan(void);

#endif							/* PGSQ_DIRECTSCAN_H */
