/*-------------------------------------------------------------------------
 *
 * histogram.h
 *		Latency histograms: log-spaced buckets in a sliding window
 *		(histogram.c).
 *
 * Bucket g holds times t (milliseconds) with gamma^g <= t < gamma^(g+1),
 * gamma = 2^(1/3): three buckets per doubling.  Reporting a bucket by the
 * harmonic mean of its bounds is off by at most (gamma - 1) / (gamma + 1)
 * = 11.5% of any time in it.  A histogram keeps PGSQ_HIST_BUCKETS
 * consecutive buckets from "base" on, covering a ratio of 2^(43/3), about
 * 20,000, between its fastest and slowest times; a time beyond the window
 * moves it, and times that fall below a window moved up are counted in
 * its lowest bucket ("collapsed"), so the upper percentiles stay within
 * the bound.
 *
 * A leaf: depends on no other module of ours.
 *
 *-------------------------------------------------------------------------
 */
#ifndef PGSQ_HISTOGRAM_H
#define PGSQ_HISTOGRAM_H

#include <string.h>

#define PGSQ_HIST_BUCKETS 43
#define PGSQ_HIST_PER_OCTAVE 3

/* Lowest window index of the first time counted in an empty histogram */
#define PGSQ_HIST_FIRST_INDEX 1

/*
 * Mantissa thresholds of the second and third bucket of a doubling:
 * (2^(1/3) - 1) * 2^52 and (2^(2/3) - 1) * 2^52.
 */
#define PGSQ_HIST_SPLIT1 UINT64CONST(1170580343452299)
#define PGSQ_HIST_SPLIT2 UINT64CONST(2645419158761021)

/* One histogram; all zeroes is a valid empty one */
typedef struct PgsqHistogram
{
	int16		base;			/* bucket number of counts[0] */
	bool		collapsed;		/* counts[0] also counts faster times */
	bool		used;			/* counts something; else base means nothing */
	uint32		counts[PGSQ_HIST_BUCKETS];
} PgsqHistogram;

/* One non-empty bucket, as pg_stat_queries_histogram() shows it */
typedef struct PgsqHistBucket
{
	double		lower_ms;
	double		upper_ms;
	uint64		count;
} PgsqHistBucket;

extern void pgsq_hist_add_slow(PgsqHistogram *h, int bucket);
extern void pgsq_hist_start(PgsqHistogram *h, double ms);
extern void pgsq_hist_merge(PgsqHistogram *dst, const PgsqHistogram *src,
							double src_min_ms, double src_max_ms);
extern void pgsq_hist_percentiles(const PgsqHistogram *h,
								  const double *fractions, int n,
								  double min_ms, double max_ms, double *out);
extern int	pgsq_hist_buckets(const PgsqHistogram *h, double min_ms,
							  PgsqHistBucket *out);

/*
 * Bucket number of a time in milliseconds, from the bits of the double:
 * its binary exponent picks the doubling, two comparisons of its mantissa
 * the third of it.  Zero, negative and subnormal times go to one low
 * bucket.
 */
static inline int
pgsq_hist_bucket_of(double ms)
{
	uint64		bits;
	int			exponent;
	uint64		mantissa;

	memcpy(&bits, &ms, sizeof(bits));
	exponent = (int) ((bits >> 52) & 0x7FF);
	if (unlikely((bits >> 63) != 0 || exponent == 0))
		exponent = 1;			/* the smallest normal double's doubling */
	mantissa = bits & ((UINT64CONST(1) << 52) - 1);
	return PGSQ_HIST_PER_OCTAVE * (exponent - 1023) +
		(mantissa >= PGSQ_HIST_SPLIT1) + (mantissa >= PGSQ_HIST_SPLIT2);
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
