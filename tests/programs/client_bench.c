/*
 * rpctest-client's measurements: the time (and with -u the process CPU
 * time) of each call, the -b table per operation and size, and the
 * descriptors and resident size that -R compares.
 */
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "client.h"

/* Timing per (op, size), for -b. */
struct stat_cell {
	unsigned long calls;
	double seconds;
	double cpu_seconds;	/* -u: process CPU time inside the calls */
	unsigned long long bytes;
	double *lat;		/* -l: each call's seconds */
	size_t nlat, lat_cap;
};

static struct stat_cell stats[MAX_LIST][MAX_LIST];
static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;
bool measure_latency;
/* -T: the run's wall time and CPU time, for calls/s and cpu_us. */
static double threads_wall, threads_cpu;

/* -b: from the first handle's creation to its first reply, in seconds. */
static double create_t0, first_reply = -1;

/* --- timing --------------------------------------------------------------- */

double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double
cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * The timing of one call: call_begin() just before it, call_end() just
 * after, which returns the seconds it took.  With -u the CPU time this
 * process spent meanwhile is kept in last_call_cpu.
 */
bool measure_cpu;
static double call_cpu0, last_call_cpu;

double
call_begin(void)
{
	if (measure_cpu)
		call_cpu0 = cpu_now();
	return now();
}

double
call_end(double t0)
{
	double t = now() - t0;

	if (measure_cpu)
		last_call_cpu = cpu_now() - call_cpu0;
	return t;
}

/* A call that returned: its seconds, its payload bytes both ways. */
void
stats_add(unsigned int oi, unsigned int si, double seconds,
	  unsigned long long bytes)
{
	struct stat_cell *c = &stats[oi][si];

	if (first_reply < 0 && create_t0 > 0)
		first_reply = now() - create_t0;
	c->calls++;
	c->seconds += seconds;
	c->cpu_seconds += last_call_cpu;
	c->bytes += bytes;
	if (!measure_latency)
		return;
	if (c->nlat == c->lat_cap) {
		size_t cap = c->lat_cap ? 2 * c->lat_cap : 1024;
		double *n = realloc(c->lat, cap * sizeof(*n));

		if (!n)
			return;
		c->lat = n;
		c->lat_cap = cap;
	}
	c->lat[c->nlat++] = seconds;
}

/* The same from threads sharing a CLIENT (-T). */
void
stats_add_locked(unsigned int oi, unsigned int si, double seconds,
		 unsigned long long bytes)
{
	pthread_mutex_lock(&stats_lock);
	stats_add(oi, si, seconds, bytes);
	pthread_mutex_unlock(&stats_lock);
}

void
stats_threads_done(double wall, double cpu)
{
	threads_wall = wall;
	threads_cpu = cpu;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The p-th percentile (nearest rank) of a cell's latencies, in us. */
static double
percentile_us(struct stat_cell *c, double p)
{
	size_t rank;

	if (!c->nlat)
		return 0.0;
	qsort(c->lat, c->nlat, sizeof(*c->lat), cmp_double);
	rank = (size_t)(p / 100.0 * (double)c->nlat + 0.999999);
	if (rank < 1)
		rank = 1;
	return c->lat[rank - 1] * 1e6;
}

/* Just before the first handle is made: the start of "create". */
void
bench_mark_create(void)
{
	if (create_t0 == 0)
		create_t0 = now();
}

void
print_bench(const struct options *o)
{
	unsigned long all = 0;

	if (first_reply >= 0)
		printf("create %.6f\n", first_reply);
	for (unsigned int oi = 0; oi < o->nops; oi++)
		for (unsigned int si = 0; si < o->nsizes; si++)
			all += stats[oi][si].calls;
	printf("%-7s %10s %8s %10s %11s %10s %11s%s%s\n",
	       "op", "size", "calls", "seconds", "calls/s", "MB/s", "mean_us",
	       measure_cpu ? "      cpu_us" : "",
	       measure_latency ? "      p50_us      p99_us" : "");
	for (unsigned int oi = 0; oi < o->nops; oi++) {
		enum op op = o->ops[oi];
		unsigned int n = op_desc[op].sized ? o->nsizes : 1;

		for (unsigned int si = 0; si < n; si++) {
			struct stat_cell *c = &stats[oi][si];
			/* -T: the calls of every thread over the run's wall time. */
			double wall = threads_wall > 0 && all ?
				      threads_wall * (double)c->calls / (double)all :
				      c->seconds;
			double secs = wall > 0 ? wall : 1e-9;
			double cpu = threads_wall > 0 && all ?
				     threads_cpu * (double)c->calls / (double)all :
				     c->cpu_seconds;

			printf("%-7s %10zu %8lu %10.4f %11.1f %10.2f %11.1f",
			       op_desc[op].name,
			       op_desc[op].sized ? o->sizes[si] : (size_t)0,
			       c->calls, wall, (double)c->calls / secs,
			       (double)c->bytes / secs / 1e6,
			       c->calls ? c->seconds * 1e6 / (double)c->calls : 0.0);
			if (measure_cpu)
				printf(" %11.1f", c->calls ? cpu * 1e6 /
				       (double)c->calls : 0.0);
			if (measure_latency)
				printf(" %11.1f %11.1f", percentile_us(c, 50),
				       percentile_us(c, 99));
			printf("\n");
		}
	}
}

/* --- resources ------------------------------------------------------------- */

/* Open descriptors of this process (the directory's own one included). */
long
count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	long n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* Resident set size in KiB (VmRSS), or -1. */
long
rss_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}
