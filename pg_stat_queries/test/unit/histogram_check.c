/*-------------------------------------------------------------------------
 *
 * histogram_check.c
 *		Checks the 2% bound of histogram.c's percentiles on synthetic times,
 *		outside the server (test/t/014_histogram_accuracy.pl builds and runs
 *		it).
 *
 * Times from a microsecond to ten hours, spread log-uniformly over ratios
 * up to 10,000, in point masses (the same time many times, or a few times
 * each repeated), bimodal, and adversarial (the fastest time just below a
 * bucket boundary, the slowest 10,000 times it), are counted in several
 * histograms as backends would and merged in random order.  Every
 * percentile from 0.01% to 100% (in steps of 0.01%) is compared with the
 * true nearest-rank time.  Prints the worst relative error seen and exits
 * with 1 if any is above 2%.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "histogram.h"

/* histogram.c's Asserts, outside the server */
void
ExceptionalCondition(const char *conditionName, const char *fileName,
					 int lineNumber)
{
	fprintf(stderr, "assertion failed: %s (%s:%d)\n", conditionName,
			fileName, lineNumber);
	abort();
}

#define MAX_TIMES 20000
#define MAX_PARTS 8

static uint64 rng_state = UINT64CONST(0x9E3779B97F4A7C15);

/* A pseudo-random number in [0, 1) */
static double
uniform(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (double) (rng_state >> 11) / (double) (UINT64CONST(1) << 53);
}

/* qsort comparator of doubles */
static int
compare_doubles(const void *a, const void *b)
{
	double		x = *(const double *) a;
	double		y = *(const double *) b;

	return (x > y) - (x < y);
}

static double worst_error = 0;
static long checked = 0;
static long failed = 0;

/*
 * Count the times in "parts" histograms as that many backends would, merge
 * them in random order, and check every percentile against the sorted
 * times.
 */
static void
check_times(const char *what, double *times, int n)
{
	static PgsqHistogram parts[MAX_PARTS];
	static double sorted[MAX_TIMES];
	PgsqHistogram merged;
	double		part_min[MAX_PARTS];
	double		part_max[MAX_PARTS];
	int			nparts = 1 + (int) (uniform() * MAX_PARTS);
	double		min = INFINITY;
	double		max = -INFINITY;
	uint32		fractions[10000];
	double		found[10000];
	double		case_worst = 0;

	memset(parts, 0, sizeof(parts));
	memset(&merged, 0, sizeof(merged));
	for (int p = 0; p < nparts; p++)
	{
		part_min[p] = INFINITY;
		part_max[p] = -INFINITY;
	}
	for (int i = 0; i < n; i++)
	{
		int			p = (int) (uniform() * nparts);

		pgsq_hist_add(&parts[p], times[i]);
		part_min[p] = Min(part_min[p], times[i]);
		part_max[p] = Max(part_max[p], times[i]);
		min = Min(min, times[i]);
		max = Max(max, times[i]);
	}
	/* merge in a random order */
	for (int left = nparts; left > 0; left--)
	{
		int			p = (int) (uniform() * left);

		if (part_max[p] >= part_min[p])
			pgsq_hist_merge(&merged, &parts[p], part_min[p], part_max[p]);
		parts[p] = parts[left - 1];
		part_min[p] = part_min[left - 1];
		part_max[p] = part_max[left - 1];
	}

	memcpy(sorted, times, n * sizeof(double));
	qsort(sorted, n, sizeof(double), compare_doubles);
	for (int k = 0; k < 10000; k++)
		fractions[k] = k + 1;
	pgsq_hist_percentiles(&merged, fractions, 10000, min, max, found);
	for (int k = 0; k < 10000; k++)
	{
		uint64		rank = ((uint64) fractions[k] * n + 9999) / 10000;
		double		truth = sorted[Max(rank, 1) - 1];
		double		error = fabs(found[k] / truth - 1);

		checked++;
		case_worst = Max(case_worst, error);
		if (error > 0.02)
		{
			if (failed++ < 10)
				fprintf(stderr, "%s: n %d, p%.2f: %.9g for %.9g (%.3f%%)\n",
						what, n, fractions[k] / 100.0, found[k], truth,
						100 * error);
		}
	}
	worst_error = Max(worst_error, case_worst);
}

int
main(void)
{
	static double times[MAX_TIMES];
	static const double ratios[] = {1.001, 2, 10, 100, 1000, 5000, 10000};
	int			cases = 0;

	pgsq_hist_init();

	/* scales from a microsecond to ten hours, in milliseconds */
	for (double scale = 0.001; scale <= 3.6e7; scale *= 2.7)
	{
		for (int r = 0; r < lengthof(ratios); r++)
		{
			double		ratio = ratios[r];
			double		lowest = scale * (1 + uniform());
			int			n;

			/* log-uniform spread over the ratio, both ends present */
			n = 2 + (int) (uniform() * (MAX_TIMES - 2));
			times[0] = lowest;
			times[1] = lowest * ratio;
			for (int i = 2; i < n; i++)
				times[i] = lowest * pow(ratio, uniform());
			check_times("spread", times, n);

			/* bimodal: 90% fast, 10% slow */
			n = 10 + (int) (uniform() * 5000);
			for (int i = 0; i < n; i++)
				times[i] = (i % 10 == 0 ? lowest * ratio : lowest) *
					(1 + 0.001 * uniform());
			check_times("bimodal", times, n);

			/* a few point masses across the ratio */
			n = 10 + (int) (uniform() * 5000);
			{
				double		masses[4];

				for (int m = 0; m < 4; m++)
					masses[m] = lowest * pow(ratio, uniform());
				for (int i = 0; i < n; i++)
					times[i] = masses[(int) (uniform() * 4)];
			}
			check_times("masses", times, n);

			/*
			 * adversarial: the fastest just below a bucket's upper bound, so
			 * that the slowest, ratio times it, is as many buckets above as
			 * can be
			 */
			n = 100;
			for (int b = 0; b < PGSQ_HIST_PER_OCTAVE; b++)
			{
				int			bucket = pgsq_hist_bucket_of(lowest) + b;
				double		below = lowest;
				double		above = lowest * 1.1;
				double		edge;

				/* bisect to the last double of the bucket */
				while (pgsq_hist_bucket_of(above) <= bucket)
					above *= 1.1;
				while (pgsq_hist_bucket_of(below) < bucket)
					below *= 1.001;
				while (nextafter(below, INFINITY) < above)
				{
					double		middle = below + (above - below) / 2;

					if (middle <= below || middle >= above)
						break;
					if (pgsq_hist_bucket_of(middle) <= bucket)
						below = middle;
					else
						above = middle;
				}
				edge = below;
				for (int i = 0; i < n; i++)
					times[i] = i == 0 ? edge * ratio :
						edge * pow(ratio, uniform());
				times[1] = edge;
				check_times("edges", times, n);
			}
			cases += 3 + PGSQ_HIST_PER_OCTAVE;
		}
	}

	/* one point mass: a single time, however often */
	for (double t = 0.0004; t < 4e7; t *= 3.1)
	{
		for (int i = 0; i < 1000; i++)
			times[i] = t;
		check_times("point", times, 1000);
		cases++;
	}

	printf("%d cases, %ld percentiles checked, %ld above 2%%, worst %.4f%%\n",
		   cases, checked, failed, 100 * worst_error);
	return failed > 0 ? 1 : 0;
}
