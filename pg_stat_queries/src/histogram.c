/*-------------------------------------------------------------------------
 *
 * histogram.c
 *		Latency histograms of execution times, and percentiles read from them.
 *
 * An execution adds one to a bucket of its backend's pending histogram
 * (histogram.h, inline); merging adds bucket counts, so histograms merged
 * in any grouping, from any number of backends, equal the histogram of all
 * their executions as long as no window had to move.  When one does, its
 * slowest times are kept: a window moves up to take a slower time, and the
 * times below it are counted in its lowest bucket.  The design and the
 * error bound are in docs/design.md ("Latency percentiles").
 *
 * A leaf: depends on no other module of ours.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "histogram.h"
#include "utils/float.h"

/*
 * Where each bucket of a doubling starts, in 1024ths of the mantissa: the
 * nearest to 1024 * (2^(j/18) - 1).  Never change these without renaming
 * the saved histogram column (restore.c): they are the buckets' meaning.
 */
static const uint16 pgsq_hist_splits[PGSQ_HIST_PER_OCTAVE + 1] = {
	0, 40, 82, 125, 171, 217, 266, 317, 369, 424, 481, 540, 601, 665, 732,
	801, 872, 947, PGSQ_HIST_CELLS
};

uint8		pgsq_hist_cell_bucket[PGSQ_HIST_CELLS];

/* Fill the table of buckets by mantissa (once per process, at load) */
void
pgsq_hist_init(void)
{
	int			j = 0;

	for (int cell = 0; cell < PGSQ_HIST_CELLS; cell++)
	{
		while (cell >= pgsq_hist_splits[j + 1])
			j++;
		pgsq_hist_cell_bucket[cell] = (uint8) j;
	}
}

/* Lower bound of a bucket, in milliseconds */
static double
bucket_lower_ms(int bucket)
{
	int			octave = bucket / PGSQ_HIST_PER_OCTAVE;
	int			j = bucket % PGSQ_HIST_PER_OCTAVE;

	/* round towards minus infinity */
	if (j < 0)
	{
		j += PGSQ_HIST_PER_OCTAVE;
		octave--;
	}
	return ldexp(1.0 + (double) pgsq_hist_splits[j] / PGSQ_HIST_CELLS, octave);
}

/* First and last non-empty bucket (indexes into counts); false if none */
static bool
occupied_range(const PgsqHistogram *h, int *first, int *last)
{
	int			lo = 0;
	int			hi = PGSQ_HIST_BUCKETS - 1;

	while (lo < PGSQ_HIST_BUCKETS && h->counts[lo] == 0)
		lo++;
	if (lo == PGSQ_HIST_BUCKETS)
		return false;
	while (h->counts[hi] == 0)
		hi--;
	*first = lo;
	*last = hi;
	return true;
}

/*
 * Halve every count, keeping non-empty buckets non-empty: only when a
 * bucket would pass 2^32 executions, so the proportions that percentiles
 * read move by less than one in 2^31.
 */
static void
halve_counts(PgsqHistogram *h)
{
	for (int i = 0; i < PGSQ_HIST_BUCKETS; i++)
		h->counts[i] = h->counts[i] / 2 + (h->counts[i] & 1);
}

/* Add a count to one bucket of the window */
static void
add_count(PgsqHistogram *h, int index, uint64 count)
{
	Assert(index >= 0 && index < PGSQ_HIST_BUCKETS);
	while (count > (uint64) (PG_UINT32_MAX - h->counts[index]))
	{
		halve_counts(h);
		count = (count + 1) / 2;
	}
	h->counts[index] += (uint32) count;
}

/*
 * Move the window so that counts[0] is bucket new_base.  Buckets left
 * below it are added to the new lowest one.  The caller makes sure that
 * no non-empty bucket is left above the window.
 */
static void
move_window(PgsqHistogram *h, int new_base)
{
	int			shift = new_base - h->base;
	uint64		below = 0;

	if (shift == 0)
		return;
	if (shift >= PGSQ_HIST_BUCKETS || -shift >= PGSQ_HIST_BUCKETS)
	{
		/* nothing stays in the window (moving down, nothing was in it) */
		for (int i = 0; i < PGSQ_HIST_BUCKETS; i++)
			below += h->counts[i];
		memset(h->counts, 0, sizeof(h->counts));
	}
	else if (shift > 0)
	{
		/* up: the lowest buckets fall below the new window */
		for (int i = 0; i < shift; i++)
			below += h->counts[i];
		memmove(&h->counts[0], &h->counts[shift],
				(PGSQ_HIST_BUCKETS - shift) * sizeof(uint32));
		memset(&h->counts[PGSQ_HIST_BUCKETS - shift], 0,
			   shift * sizeof(uint32));
	}
	else
	{
		/* down: the caller checked that the top buckets are empty */
		memmove(&h->counts[-shift], &h->counts[0],
				(PGSQ_HIST_BUCKETS + shift) * sizeof(uint32));
		memset(&h->counts[0], 0, -shift * sizeof(uint32));
	}
	h->base = (int16) new_base;
	if (below > 0)
	{
		h->collapsed = true;
		add_count(h, 0, below);
	}
}

/*
 * Add a count to any bucket, moving the window if it is outside.  A slower
 * time than the window holds moves it up; a faster one moves it down as far
 * as the slowest non-empty bucket allows, or else is counted in the lowest.
 */
static void
add_to_bucket(PgsqHistogram *h, int bucket, uint64 count)
{
	int			first;
	int			last;
	int			index;

	if (!h->used)
	{
		/*
		 * An empty window is placed at a multiple of 8 buckets, so that the
		 * pending histograms of a statement mostly fall within the window of
		 * its shared one and merge bucket by bucket, with its first time
		 * PGSQ_HIST_FIRST_INDEX to 7 more buckets from the bottom: room for
		 * times down to 0.4 of the first one before a faster time has to move
		 * the window down.
		 */
		h->base = (int16) ((bucket - PGSQ_HIST_FIRST_INDEX) & ~7);
		h->collapsed = false;
		h->used = true;
	}
	else if (bucket >= h->base + PGSQ_HIST_BUCKETS)
		move_window(h, bucket - (PGSQ_HIST_BUCKETS - 1));
	else if (bucket < h->base && occupied_range(h, &first, &last))
		move_window(h, Max(bucket, h->base + last - (PGSQ_HIST_BUCKETS - 1)));

	index = bucket - h->base;
	if (index < 0)
	{
		index = 0;
		h->collapsed = true;
	}
	add_count(h, index, count);
}

/* The slow path of pgsq_hist_add: a time outside the window, a full bucket */
void
pgsq_hist_add_slow(PgsqHistogram *h, int bucket)
{
	add_to_bucket(h, bucket, 1);
}

/* Make a histogram count one time, whatever its bytes held before */
void
pgsq_hist_start(PgsqHistogram *h, double ms)
{
	memset(h, 0, sizeof(PgsqHistogram));
	add_to_bucket(h, pgsq_hist_bucket_of(ms), 1);
}

/*
 * The window indexes of a histogram's fastest and slowest times, which the
 * caller knows (min and max of the same executions): no scan of its
 * buckets for them.  A fastest time below the window was counted in its
 * lowest bucket.
 */
static void
range_of_times(const PgsqHistogram *h, double min_ms, double max_ms,
			   int *first, int *last)
{
	*first = Max(pgsq_hist_bucket_of(min_ms) - h->base, 0);
	*last = Min(pgsq_hist_bucket_of(max_ms) - h->base, PGSQ_HIST_BUCKETS - 1);
#ifdef USE_ASSERT_CHECKING
	{
		int			scanned_first;
		int			scanned_last;

		Assert(occupied_range(h, &scanned_first, &scanned_last));
		Assert(*first <= scanned_first && scanned_last <= *last);
	}
#endif
}

/*
 * Add one histogram to another; src_min_ms and src_max_ms are the fastest
 * and slowest times src counts.  The window is placed once, over the
 * slowest non-empty bucket of the two and as low as that allows.
 */
void
pgsq_hist_merge(PgsqHistogram *dst, const PgsqHistogram *src,
				double src_min_ms, double src_max_ms)
{
	int			src_first;
	int			src_last;
	int			dst_first;
	int			dst_last;
	int			lowest;
	int			highest;
	int			new_base;

	if (!src->used)
		return;
	if (!dst->used)
	{
		*dst = *src;
		return;
	}
	range_of_times(src, src_min_ms, src_max_ms, &src_first, &src_last);

	/*
	 * The usual case: the source's counts fall within the destination's
	 * window.  Only the destination's buckets that receive counts are read
	 * and written (unless one would overflow): a shared histogram is often
	 * out of the CPU's caches.  (A collapsed source has its slowest bucket at
	 * the top of its window, so its lowest can only fall on the destination's
	 * lowest.)
	 */
	{
		int			offset = src->base - dst->base;

		if (offset + src_first >= 0 &&
			offset + src_last < PGSQ_HIST_BUCKETS)
		{
			for (int i = src_first; i <= src_last; i++)
			{
				if (src->counts[i] != 0)
					add_count(dst, offset + i, src->counts[i]);
			}
			if (src->collapsed)
				dst->collapsed = true;
			return;
		}
	}

	lowest = src->base + src_first;
	highest = src->base + src_last;
	if (occupied_range(dst, &dst_first, &dst_last))
	{
		lowest = Min(lowest, dst->base + dst_first);
		highest = Max(highest, dst->base + dst_last);
	}
	new_base = Max(lowest, highest - (PGSQ_HIST_BUCKETS - 1));
	move_window(dst, new_base);

	for (int i = src_first; i <= src_last; i++)
	{
		int			index = src->base + i - new_base;

		if (src->counts[i] == 0)
			continue;
		if (index < 0)
		{
			index = 0;
			dst->collapsed = true;
		}
		add_count(dst, index, src->counts[i]);
	}
	/* a collapsed source's lowest bucket always lands in dst's lowest */
	if (src->collapsed)
		dst->collapsed = true;
}

/* Bounds of the window's bucket at index, the lowest one widened to min */
static void
index_bounds(const PgsqHistogram *h, int index, double min_ms,
			 double *lower, double *upper)
{
	*lower = bucket_lower_ms(h->base + index);
	*upper = bucket_lower_ms(h->base + index + 1);
	if (index == 0 && h->collapsed && min_ms >= 0 && min_ms < *lower)
		*lower = min_ms;
}

/* The nearest rank of a fraction in parts per 10,000 of total, 1 to total */
static inline uint64
rank_of(uint32 fraction, uint64 total)
{
	uint64		rank = ((uint64) fraction * total + 9999) / 10000;

	return Min(Max(rank, 1), total);
}

/*
 * The times below which the given fractions of executions fall (nearest
 * rank), fractions ascending and in parts per 10,000 so that the ranks
 * ceil(f * count) are exact, in one walk of the buckets from the fastest
 * time's to the slowest's; NaN if the histogram is empty.  The rank-th
 * time lies in the bucket where the running count reaches rank, and that
 * bucket is reported by the harmonic mean of its bounds, whose relative
 * distance to any time in the bucket is at most (u - l) / (u + l); the
 * result is clamped to the executions' minimum and maximum, which only
 * brings it closer.
 */
void
pgsq_hist_percentiles(const PgsqHistogram *h, const uint32 *fractions,
					  int n, double min_ms, double max_ms, double *out)
{
	uint64		total = 0;
	uint64		seen = 0;
	int			first = 0;
	int			last = PGSQ_HIST_BUCKETS - 1;
	int			k = 0;

	/* the fastest and slowest times' buckets, known without a scan */
	if (h->used && max_ms >= min_ms)
		range_of_times(h, min_ms, max_ms, &first, &last);
	else if (!h->used || !occupied_range(h, &first, &last))
	{
		for (k = 0; k < n; k++)
			out[k] = get_float8_nan();
		return;
	}
	for (int i = first; i <= last; i++)
		total += h->counts[i];
	if (total == 0)
	{
		for (k = 0; k < n; k++)
			out[k] = get_float8_nan();
		return;
	}
	for (int i = first; i <= last && k < n; i++)
	{
		double		lower;
		double		upper;
		double		value;

		if (h->counts[i] == 0)
			continue;
		seen += h->counts[i];
		if (seen < rank_of(fractions[k], total))
			continue;

		/* this bucket holds the next ranks: its value, computed once */
		index_bounds(h, i, min_ms, &lower, &upper);
		value = 2.0 * lower * upper / (lower + upper);
		if (max_ms >= min_ms)
			value = Max(Min(value, max_ms), min_ms);
		for (; k < n && seen >= rank_of(fractions[k], total); k++)
			out[k] = value;
	}
	Assert(k == n);
}

/*
 * Convert a histogram of the old shape, three buckets per doubling, that
 * counted times between min_ms and max_ms: each old bucket's count goes to
 * the new bucket of the time it was reported as (the harmonic mean of its
 * bounds, clamped to min and max).  Its percentiles stay what they were,
 * within the old bound of 11.5%, until new executions add precise counts.
 */
void
pgsq_hist_from_log3(PgsqHistogram *dst, const PgsqHistogramLog3 *src,
					double min_ms, double max_ms)
{
	memset(dst, 0, sizeof(PgsqHistogram));
	if (!src->used)
		return;
	for (int i = 0; i < PGSQ_HIST_LOG3_BUCKETS; i++)
	{
		double		lower;
		double		upper;
		double		value;

		if (src->counts[i] == 0)
			continue;
		lower = exp2((double) (src->base + i) / 3.0);
		upper = exp2((double) (src->base + i + 1) / 3.0);
		value = 2.0 * lower * upper / (lower + upper);
		if (max_ms >= min_ms)
			value = Max(Min(value, max_ms), min_ms);
		add_to_bucket(dst, pgsq_hist_bucket_of(value), src->counts[i]);
	}
	if (src->collapsed && dst->used)
		dst->collapsed = true;
}

/* Fill out[] with the non-empty buckets, fastest first; returns how many */
int
pgsq_hist_buckets(const PgsqHistogram *h, double min_ms, PgsqHistBucket *out)
{
	int			n = 0;

	for (int i = 0; i < PGSQ_HIST_BUCKETS; i++)
	{
		if (h->counts[i] == 0)
			continue;
		index_bounds(h, i, min_ms, &out[n].lower_ms, &out[n].upper_ms);
		out[n].count = h->counts[i];
		n++;
	}
	return n;
}
