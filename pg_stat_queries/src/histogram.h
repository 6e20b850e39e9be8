/*-------------------------------------------------------------------------
 *
 * histogram.h
 *		Latency histograms: log-spaced buckets in a sliding window
 *		(histogram.c).
 *
 * A doubling of times (milliseconds) is cut into PGSQ_HIST_PER_OCTAVE = 18
 * buckets, at the mantissa values 1 + pgsq_hist_splits[j] / 1024, the
 * nearest 1024ths to 2^(j/18).  A time's bucket number is 18 times its
 * binary exponent plus the bucket of the top ten bits of its mantissa, read
 * from a table of 1024 bytes.  Reporting a bucket [l, u) by the harmonic
 * mean of its bounds, 2lu / (l + u), is off by at most (u - l) / (u + l) of
 * any time in it: 1.963% for the widest bucket, so every percentile is
 * within 2% of the true one.  A histogram keeps PGSQ_HIST_BUCKETS
 * consecutive buckets from "base" on, enough for any set of times whose
 * slowest is up to 10,000 times its fastest (checked by test/t/014); a
 * time beyond the window moves it, and times that fall below a window
 * moved up are counted in its lowest bucket ("collapsed"), so the upper
 * percentiles stay within the bound.
 *
 * A leaf: depends on no other module of ours.
 *
 *-------------------------------------------------------------------------
 */
#ifndef PGSQ_HISTOGRAM_H
#define PGSQ_HISTOGRAM_H

#include <string.h>

#define PGSQ_HIST_BUCKETS 242
#define PGSQ_HIST_PER_OCTAVE 18

/* Mantissa bits that pick a time's bucket within its doubling */
#define PGSQ_HIST_CELL_BITS 10
#define PGSQ_HIST_CELLS (1 << PGSQ_HIST_CELL_BITS)

/*
 * Lowest window index of the first time counted in an empty histogram:
 * 24 buckets, four thirds of a doubling, leave room below it
 */
#define PGSQ_HIST_FIRST_INDEX 24

/* One histogram; all zeroes is a valid empty one */
typedef struct PgsqHistogram
{
	int16		base;			/* bucket number of counts[0] */
	bool		collapsed;		/* counts[0] also counts faster times */
	bool		used;			/* counts something; else base means nothing */
	uint32		counts[PGSQ_HIST_BUCKETS];
} PgsqHistogram;

/*
 * The histogram of versions 1.0 to 1.2: 43 buckets, three per doubling.
 * Saved files and 1.1's entries hold it; pgsq_hist_from_log3 converts it.
 */
#define PGSQ_HIST_LOG3_BUCKETS 43
typedef struct PgsqHistogramLog3
{
	int16		base;
	bool		collapsed;
	bool		used;
	uint32		counts[PGSQ_HIST_LOG3_BUCKETS];
} PgsqHistogramLog3;

/* One non-empty bucket, as pg_stat_queries_histogram() shows it */
typedef struct PgsqHistBucket
{
	double		lower_ms;
	double		upper_ms;
	uint64		count;
} PgsqHistBucket;

/* Bucket within its doubling of each top-ten-bit mantissa (pgsq_hist_init) */
extern uint8 pgsq_hist_cell_bucket[PGSQ_HIST_CELLS];

extern void pgsq_hist_init(void);
extern void pgsq_hist_add_slow(PgsqHistogram *h, int bucket);
extern void pgsq_hist_start(PgsqHistogram *h, double ms);
extern void pgsq_hist_merge(PgsqHistogram *dst, const PgsqHistogram *src,
							double src_min_ms, double src_max_ms);
extern void pgsq_hist_from_log3(PgsqHistogram *dst,
								const PgsqHistogramLog3 *src,
								double min_ms, double max_ms);
extern void pgsq_hist_percentiles(const PgsqHistogram *h,
								  const uint32 *fractions, int n,
								  double min_ms, double max_ms, double *out);
extern int	pgsq_hist_buckets(const PgsqHistogram *h, double min_ms,
							  PgsqHistBucket *out);

/*
 * Bucket number of a time in milliseconds, from the bits of the double:
 * its binary exponent picks the doubling, the top bits of its mantissa the
 * bucket within it.  Zero, negative and subnormal times go to one low
 * bucket.
 */
static inline int
pgsq_hist_bucket_of(double ms)
{
	uint64		bits;
	int			exponent;

	memcpy(&bits, &ms, sizeof(bits));
	exponent = (int) ((bits >> 52) & 0x7FF);
	if (unlikely((bits >> 63) != 0 || exponent == 0))
		exponent = 1;			/* the smallest normal double's doubling */
	return PGSQ_HIST_PER_OCTAVE * (exponent - 1023) +
		pgsq_hist_cell_bucket[(bits >> (52 - PGSQ_HIST_CELL_BITS)) &
							  (PGSQ_HIST_CELLS - 1)];
}

/*
 * Count one execution time: an increment unless the window must move or
 * the bucket is full (then the slow path halves the counts).
 */
static inline void
pgsq_hist_add(PgsqHistogram *h, double ms)
{
	int			bucket = pgsq_hist_bucket_of(ms);
	uint32		index = (uint32) (bucket - h->base);

	if (likely(h->used && index < PGSQ_HIST_BUCKETS &&
			   h->counts[index] < PG_UINT32_MAX))
		h->counts[index]++;
	else
		pgsq_hist_add_slow(h, bucket);
}

#endif							/* PGSQ_HISTOGRAM_H */
