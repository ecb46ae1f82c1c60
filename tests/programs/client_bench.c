/*
 * rpctest-client's measurements: the time (and with -u the process CPU
 * time) of each call, the -b table per operation and size, and the
 * descriptors and resident size that -R compares.
 */
#include <dirent.h>
#include <stdio.h>
#include <time.h>

#include "client.h"

/* Timing per (op, size), for -b. */
struct stat_cell {
	unsigned long calls;
	double seconds;
	double cpu_seconds;	/* -u: process CPU time inside the calls */
	unsigned long long bytes;
};

static struct stat_cell stats[MAX_LIST][MAX_LIST];

/* -b: from the first handle's creation to its first reply, in seconds. */
static double create_t0, first_reply = -1;

/* --- timing --------------------------------------------------------------- */

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Process CPU time (user and system, every thread), in seconds. */
static double
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
	if (first_reply >= 0)
		printf("create %.6f\n", first_reply);
	printf("%-7s %10s %8s %10s %11s %10s %11s%s\n",
	       "op", "size", "calls", "seconds", "calls/s", "MB/s", "mean_us",
	       measure_cpu ? "      cpu_us" : "");
	for (unsigned int oi = 0; oi < o->nops; oi++) {
		enum op op = o->ops[oi];
		unsigned int n = op_desc[op].sized ? o->nsizes : 1;

		for (unsigned int si = 0; si < n; si++) {
			const struct stat_cell *c = &stats[oi][si];
			double secs = c->seconds > 0 ? c->seconds : 1e-9;

			printf("%-7s %10zu %8lu %10.4f %11.1f %10.2f %11.1f",
			       op_desc[op].name,
			       op_desc[op].sized ? o->sizes[si] : (size_t)0,
			       c->calls, c->seconds, (double)c->calls / secs,
			       (double)c->bytes / secs / 1e6,
			       c->calls ? c->seconds * 1e6 / (double)c->calls : 0.0);
			if (measure_cpu)
				printf(" %11.1f", c->calls ? c->cpu_seconds * 1e6 /
				       (double)c->calls : 0.0);
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
