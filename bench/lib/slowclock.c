/*
 * bench/lib/slowclock.c -- an LD_PRELOAD library that slows the clocks a
 * process reads (clock_gettime, gettimeofday, time) by the factor in
 * $SLOWCLOCK_FACTOR, from the moment each clock is first read.
 *
 * bench/footprint runs backends under valgrind, 50 to 200 times slower
 * than at full speed; what PostgreSQL and the extensions do once a second
 * (the statistics system's flush, pg_stat_queries' merge) would then come
 * every few executions and be counted as a cost per execution.  With the
 * clocks slowed by a larger factor, no such once-a-second work falls between
 * the two barriers, and the slope is the cost of an execution between merges.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>

static int	(*real_clock_gettime) (clockid_t, struct timespec *);
static double factor = -1;
static long long base_ns[16];
static int	have_base[16];

static long long
dilate(clockid_t id, long long ns)
{
	if (factor < 0)
	{
		const char *f = getenv("SLOWCLOCK_FACTOR");

		factor = f ? atof(f) : 1;
		if (factor < 1)
			factor = 1;
	}
	if (factor == 1 || id < 0 || id >= 16)
		return ns;
	if (!have_base[id])
	{
		have_base[id] = 1;
		base_ns[id] = ns;
	}
	return base_ns[id] + (long long) ((ns - base_ns[id]) / factor);
}

int
clock_gettime(clockid_t id, struct timespec *ts)
{
	int			r;
	long long	ns;

	if (!real_clock_gettime)
		real_clock_gettime = dlsym(RTLD_NEXT, "clock_gettime");
	r = real_clock_gettime(id, ts);
	if (r != 0)
		return r;
	ns = dilate(id, ts->tv_sec * 1000000000LL + ts->tv_nsec);
	ts->tv_sec = ns / 1000000000LL;
	ts->tv_nsec = ns % 1000000000LL;
	return 0;
}

int
gettimeofday(struct timeval *tv, void *tz)
{
	struct timespec ts;

	(void) tz;
	if (clock_gettime(CLOCK_REALTIME, &ts) != 0)
		return -1;
	if (tv)
	{
		tv->tv_sec = ts.tv_sec;
		tv->tv_usec = ts.tv_nsec / 1000;
	}
	return 0;
}

time_t
time(time_t *t)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	if (t)
		*t = ts.tv_sec;
	return ts.tv_sec;
}
