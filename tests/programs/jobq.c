/*
 * A queue of calls for worker threads (jobq.h).
 */
#include <stdio.h>
#include <string.h>

#include "jobq.h"

void
jobq_push(struct jobq *q, struct jobq_item *it)
{
	it->next = NULL;
	pthread_mutex_lock(&q->lock);
	*q->tail = it;
	q->tail = &it->next;
	pthread_cond_signal(&q->cond);
	pthread_mutex_unlock(&q->lock);
}

struct jobq_item *
jobq_pop(struct jobq *q)
{
	struct jobq_item *it;

	pthread_mutex_lock(&q->lock);
	while (!q->head)
		pthread_cond_wait(&q->cond, &q->lock);
	it = q->head;
	q->head = it->next;
	if (!q->head)
		q->tail = &q->head;
	pthread_mutex_unlock(&q->lock);
	return it;
}

int
jobq_threads(int n, void *(*fn)(void *), const char *prog)
{
	pthread_t t;
	int i, err;

	for (i = 0; i < n; i++) {
		err = pthread_create(&t, NULL, fn, NULL);
		if (err) {
			fprintf(stderr, "%s: pthread_create: %s\n", prog, strerror(err));
			return -1;
		}
		pthread_detach(t);
	}
	return 0;
}
