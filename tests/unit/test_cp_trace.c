/*
 * Unit tests of the call-path timeline's recorder (transport/cp_trace.c):
 * nothing without RPCRDMA_CP_TRACE, the dump's form, threads, the
 * cap, a child of fork(), and the file written at exit.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "cp_trace.h"

#define ENV "RPCRDMA_CP_TRACE"

struct dump {
	double ticks_per_us;
	unsigned int lines[CP_NPOINTS];
	unsigned int other;		/* lines naming no point */
	bool ordered;			/* each point's stamps never go back */
};

static void
parse(const char *text, struct dump *d)
{
	unsigned long long last[CP_NPOINTS] = { 0 }, stamp;
	char *copy = strdup(text), *line, *save = NULL, name[32];
	unsigned int p;

	memset(d, 0, sizeof(*d));
	d->ordered = true;
	for (line = strtok_r(copy, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (sscanf(line, "# ticks_per_us %lf", &d->ticks_per_us) == 1)
			continue;
		if (sscanf(line, "%31s %llu", name, &stamp) != 2) {
			d->other++;
			continue;
		}
		for (p = 0; p < CP_NPOINTS; p++)
			if (!strcmp(name, cp_point_name(p)))
				break;
		if (p == CP_NPOINTS) {
			d->other++;
			continue;
		}
		if (stamp < last[p])
			d->ordered = false;
		last[p] = stamp;
		d->lines[p]++;
	}
	free(copy);
}

/* cp_dump() into *d; returns its result. */
static int
dump_into(struct dump *d)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int ret = cp_dump(f);

	fclose(f);
	parse(text ? text : "", d);
	if (!len)
		d->ticks_per_us = -1;
	free(text);
	return ret;
}

static void
test_off(void)
{
	struct dump d;

	unsetenv(ENV);
	cp_reset();
	cp_record(CP_CALL);
	cp_record(CP_SVC_CALL);
	CHECK(dump_into(&d) == 0 && d.ticks_per_us < 0,
	      "without %s: nothing recorded, nothing dumped", ENV);
	setenv(ENV, "", 1);
	cp_reset();
	cp_record(CP_CALL);
	CHECK(dump_into(&d) == 0 && d.ticks_per_us < 0,
	      "an empty %s is off too", ENV);
}

static void
test_dump(char *dir)
{
	struct dump d;
	unsigned int i;

	setenv(ENV, dir, 1);
	cp_reset();
	for (i = 0; i < 100; i++) {
		cp_record(CP_CALL);
		cp_record(CP_CALL_POST);
		cp_record(CP_CALL_POSTED);
		cp_record(CP_REPLY);
		cp_record(CP_RETURN);
	}
	cp_record(CP_NPOINTS);
	CHECK(dump_into(&d) == 0, "dumped");
	CHECK(d.ticks_per_us > 0, "the dump starts with ticks per microsecond (%.1f)",
	      d.ticks_per_us);
	CHECK(d.lines[CP_CALL] == 100 && d.lines[CP_CALL_POST] == 100 &&
	      d.lines[CP_CALL_POSTED] == 100 && d.lines[CP_REPLY] == 100 &&
	      d.lines[CP_RETURN] == 100,
	      "one line per stamp, named by its point");
	CHECK(d.lines[CP_SVC_CALL] == 0 && d.other == 0,
	      "no line for a point not met, none for a point out of range");
	CHECK(d.ordered, "each point's stamps in the order taken");
	CHECK(!strcmp(cp_point_name(CP_SVC_POSTED), "svc_posted") &&
	      !strcmp(cp_point_name(CP_NPOINTS), "?"),
	      "point names, and one out of range");
}

#define ROUNDS 200
#define STAMPS 100

static pthread_barrier_t start_line;

/* The threads take their first stamps together, while recording starts. */
static void *
recorder(void *arg)
{
	unsigned int i;

	pthread_barrier_wait(&start_line);
	for (i = 0; i < STAMPS; i++)
		cp_record(CP_SVC_REPLY);
	return arg;
}

static void
test_threads_and_cap(void)
{
	unsigned int i, round, short_rounds = 0, got = 0;
	pthread_t t[4];
	struct dump d;

	/* Each round starts recording afresh, so its first stamps race the start. */
	pthread_barrier_init(&start_line, NULL, 4);
	for (round = 0; round < ROUNDS; round++) {
		cp_reset();
		for (i = 0; i < 4; i++)
			pthread_create(&t[i], NULL, recorder, NULL);
		for (i = 0; i < 4; i++)
			pthread_join(t[i], NULL);
		dump_into(&d);
		if (d.lines[CP_SVC_REPLY] != 4 * STAMPS) {
			short_rounds++;
			got = d.lines[CP_SVC_REPLY];
		}
	}
	pthread_barrier_destroy(&start_line);
	CHECK(short_rounds == 0,
	      "four threads recording together: every stamp kept, in each of %u rounds",
	      ROUNDS);
	if (short_rounds)
		printf("#   %u rounds short, the last with %u stamps of %u\n",
		       short_rounds, got, 4 * STAMPS);

	cp_reset();
	for (i = 0; i < CP_TRACE_CAP + 10; i++)
		cp_record(CP_SVC_CALL);
	dump_into(&d);
	CHECK_EQ_U(d.lines[CP_SVC_CALL], CP_TRACE_CAP,
		   "past the cap, later stamps are dropped");
}

static void
test_fork_and_exit(const char *dir)
{
	struct dump d;
	char path[256], *text;
	int status, fds[2];
	pid_t pid;
	FILE *f;
	long n;

	cp_reset();
	cp_record(CP_CALL);
	if (pipe(fds))
		return;
	fflush(stdout);		/* the child's exit() flushes its copy */
	pid = fork();
	if (pid == 0) {
		dump_into(&d);
		status = d.lines[CP_CALL] == 0 && d.ticks_per_us > 0;
		cp_record(CP_RETURN);
		cp_record(CP_RETURN);
		(void)!write(fds[1], &status, sizeof(status));
		exit(0);	/* the destructor writes cp.<pid> */
	}
	close(fds[1]);
	status = 0;
	(void)!read(fds[0], &status, sizeof(status));
	close(fds[0]);
	CHECK(status == 1, "a child of fork() starts with none of its parent's stamps");
	waitpid(pid, &status, 0);
	snprintf(path, sizeof(path), "%s/cp.%d", dir, (int)pid);
	f = fopen(path, "r");
	CHECK(f != NULL, "at exit the stamps are written to $%s/cp.<pid>", ENV);
	if (!f)
		return;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	text = calloc(1, (size_t)n + 1);
	if (fread(text, 1, (size_t)n, f) != (size_t)n)
		n = 0;
	fclose(f);
	unlink(path);
	parse(text, &d);
	free(text);
	CHECK(d.ticks_per_us > 0 && d.lines[CP_RETURN] == 2 &&
	      d.lines[CP_CALL] == 0,
	      "the file holds the child's own stamps");
}

int
main(void)
{
	char dir[] = "/tmp/cp_trace.XXXXXX";

	if (!mkdtemp(dir))
		return 1;
	test_off();
	test_dump(dir);
	test_threads_and_cap();
	test_fork_and_exit(dir);
	/* This process writes nothing at its exit. */
	unsetenv(ENV);
	rmdir(dir);
	return check_done();
}
