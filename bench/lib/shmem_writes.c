/*
 * bench/lib/shmem_writes.c -- count the stores and read-modify-writes a
 * process makes into its shared memory, from valgrind's lackey trace.
 *
 * Usage: valgrind --tool=lackey --trace-mem=yes --log-fd=9 PROGRAM 9>&1 ... |
 *            shmem_writes CONTROL_DIR
 *
 * Reads lackey's trace on stdin ("I  addr,size" for an instruction,
 * " L addr,size", " S addr,size", " M addr,size" for a load, a store and a
 * modify, that is a load and a store of the same address by one instruction:
 * an atomic read-modify-write such as lock xadd or cmpxchg, or a plain
 * add/inc/or to memory).  Counting is driven by files in CONTROL_DIR, looked
 * at whenever the trace has been quiet for 200 ms (the traced process waits
 * for its input, so everything it did up to then has been read):
 *
 *   ranges   appears: "start end" (hex) lines, the process's shared
 *            mappings; counting starts, and the file "armed" is created
 *   stop     appears: counting stops; the results are written to "counts"
 *            and the file "done" is created (the rest of the trace is read
 *            and ignored)
 *
 * "counts" holds "total_S N", "total_M N", "lines N", then one line per
 * instruction address that wrote into a range: "pc S M" (hex pc), for
 * symbolization with the process's maps.
 */
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAXR 256
#define HBITS 18
#define HSIZE (1u << HBITS)

static uint64_t rs[MAXR], re[MAXR];
static int nr;
static uint64_t hk[HSIZE], hs[HSIZE], hm[HSIZE];

static int
exists(const char *dir, const char *name)
{
	char p[4096];

	snprintf(p, sizeof p, "%s/%s", dir, name);
	return access(p, F_OK) == 0;
}

static void
touch(const char *dir, const char *name)
{
	char p[4096];
	FILE *f;

	snprintf(p, sizeof p, "%s/%s", dir, name);
	if ((f = fopen(p, "w")) != NULL)
		fclose(f);
}

static void
load_ranges(const char *dir)
{
	char p[4096];
	FILE *f;
	unsigned long long a, b;

	snprintf(p, sizeof p, "%s/ranges", dir);
	if ((f = fopen(p, "r")) == NULL)
		return;
	while (nr < MAXR && fscanf(f, "%llx %llx", &a, &b) == 2)
	{
		rs[nr] = a;
		re[nr] = b;
		nr++;
	}
	fclose(f);
}

static inline int
in_shared(uint64_t a)
{
	for (int i = 0; i < nr; i++)
		if (a >= rs[i] && a < re[i])
			return 1;
	return 0;
}

static inline void
record(uint64_t pc, int is_m)
{
	uint32_t h = (uint32_t) ((pc * 0x9E3779B97F4A7C15ull) >> (64 - HBITS));

	while (hk[h] != 0 && hk[h] != pc)
		h = (h + 1) & (HSIZE - 1);
	hk[h] = pc;
	if (is_m)
		hm[h]++;
	else
		hs[h]++;
}

int
main(int argc, char **argv)
{
	const char *dir;
	static char buf[1 << 16];
	char line[512];
	size_t ll = 0;
	int state = 0;				/* 0 waiting, 1 counting, 2 done */
	uint64_t pc = 0, ts = 0, tm = 0, lines = 0;
	struct pollfd pfd = {.fd = 0,.events = POLLIN};

	if (argc != 2)
	{
		fprintf(stderr, "usage: shmem_writes CONTROL_DIR < lackey-trace\n");
		return 2;
	}
	dir = argv[1];
	for (;;)
	{
		ssize_t n;

		if (state < 2 && poll(&pfd, 1, 200) == 0)
		{
			if (state == 0 && exists(dir, "ranges"))
			{
				load_ranges(dir);
				state = 1;
				touch(dir, "armed");
			}
			else if (state == 1 && exists(dir, "stop"))
			{
				char p[4096];
				FILE *f;

				snprintf(p, sizeof p, "%s/counts", dir);
				f = fopen(p, "w");
				if (f == NULL)
					return 1;
				fprintf(f, "total_S %llu\ntotal_M %llu\nlines %llu\n",
						(unsigned long long) ts, (unsigned long long) tm,
						(unsigned long long) lines);
				for (uint32_t i = 0; i < HSIZE; i++)
					if (hk[i])
						fprintf(f, "%llx %llu %llu\n", (unsigned long long) hk[i],
								(unsigned long long) hs[i], (unsigned long long) hm[i]);
				fclose(f);
				state = 2;
				touch(dir, "done");
			}
			continue;
		}
		n = read(0, buf, sizeof buf);
		if (n <= 0)
			break;
		if (state != 1)
			continue;
		for (ssize_t i = 0; i < n; i++)
		{
			char c = buf[i];

			if (c != '\n')
			{
				if (ll < sizeof line - 1)
					line[ll++] = c;
				continue;
			}
			line[ll] = '\0';
			lines++;
			if (ll > 3 && line[0] == 'I')
				pc = strtoull(line + 3, NULL, 16);
			else if (ll > 3 && line[0] == ' ' && (line[1] == 'S' || line[1] == 'M'))
			{
				uint64_t a = strtoull(line + 3, NULL, 16);

				if (in_shared(a))
				{
					if (line[1] == 'M')
						tm++;
					else
						ts++;
					record(pc, line[1] == 'M');
				}
			}
			ll = 0;
		}
	}
	if (state == 1)
	{
		fprintf(stderr, "shmem_writes: the trace ended before the stop file appeared\n");
		return 1;
	}
	return 0;
}
