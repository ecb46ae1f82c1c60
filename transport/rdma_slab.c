/*
 * Small send buffers shared by the connections of a device (rdma_dev.h):
 * fixed-size buffers carved from registered chunks, so that a connection
 * holds send memory only while it has a Send in flight, not for its
 * lifetime.  One slab per buffer size; a chunk is registered when no
 * buffer is free, and given back when all of its buffers are free again
 * and another chunk has room.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "rdma_dev.h"

/* Octets registered at a time (at least one buffer). */
#define SLAB_CHUNK ((size_t)64 << 10)

struct rdma_slab_chunk {
	struct rdma_slab *slab;
	struct rdma_buf buf;
	struct rdma_sbuf *objs;
	unsigned int nobjs, nfree;
	struct rdma_slab_chunk *next;
};

struct rdma_slab {
	uint32_t size;
	pthread_mutex_t lock;
	struct rdma_slab_chunk *chunks;
	struct rdma_sbuf *free;
	unsigned int nfree;
	struct rdma_slab *next;
};

/* Guards every device's list of slabs; taken under devs_lock, not around it. */
static pthread_mutex_t slabs_lock = PTHREAD_MUTEX_INITIALIZER;

void
rdma_slabs_fork_lock(void)
{
	pthread_mutex_lock(&slabs_lock);
}

void
rdma_slabs_fork_unlock(void)
{
	pthread_mutex_unlock(&slabs_lock);
}

struct rdma_slab *
rdma_slab_of(struct rdma_dev *dev, uint32_t size)
{
	struct rdma_slab *s;

	pthread_mutex_lock(&slabs_lock);
	for (s = dev->slabs; s; s = s->next)
		if (s->size == size)
			break;
	if (!s) {
		s = calloc(1, sizeof(*s));
		if (s) {
			s->size = size;
			pthread_mutex_init(&s->lock, NULL);
			s->next = dev->slabs;
			dev->slabs = s;
		}
	}
	pthread_mutex_unlock(&slabs_lock);
	return s;
}

/* Register one more chunk and free its buffers.  Holds s->lock. */
static int
slab_grow_locked(struct rdma_dev *dev, struct rdma_slab *s)
{
	struct rdma_slab_chunk *c = calloc(1, sizeof(*c));
	size_t len = SLAB_CHUNK > s->size ? SLAB_CHUNK / s->size * s->size :
					     s->size;
	unsigned int i;
	int ret;

	if (!c)
		return -ENOMEM;
	ret = rdma_buf_alloc(dev, &c->buf, len, IBV_ACCESS_LOCAL_WRITE);
	if (ret)
		goto out_free;
	c->slab = s;
	c->nobjs = (unsigned int)(c->buf.len / s->size);
	c->objs = calloc(c->nobjs, sizeof(*c->objs));
	if (!c->objs) {
		rdma_buf_free(&c->buf);
		ret = -ENOMEM;
		goto out_free;
	}
	for (i = 0; i < c->nobjs; i++) {
		struct rdma_sbuf *b = &c->objs[i];

		b->addr = c->buf.addr + (size_t)i * s->size;
		b->lkey = c->buf.mr->lkey;
		b->chunk = c;
		b->next = s->free;
		s->free = b;
	}
	c->nfree = c->nobjs;
	s->nfree += c->nobjs;
	c->next = s->chunks;
	s->chunks = c;
	return 0;

out_free:
	free(c);
	return ret;
}

struct rdma_sbuf *
rdma_sbuf_get(struct rdma_dev *dev, struct rdma_slab *s)
{
	struct rdma_sbuf *b = NULL;

	pthread_mutex_lock(&s->lock);
	if (s->free || slab_grow_locked(dev, s) == 0) {
		b = s->free;
		s->free = b->next;
		b->next = NULL;
		s->nfree--;
		b->chunk->nfree--;
	}
	pthread_mutex_unlock(&s->lock);
	return b;
}

/* Unlink chunk c and its buffers from the slab.  Holds s->lock. */
static void
chunk_unlink_locked(struct rdma_slab *s, struct rdma_slab_chunk *c)
{
	struct rdma_slab_chunk **cp;
	struct rdma_sbuf **bp;

	for (cp = &s->chunks; *cp; cp = &(*cp)->next) {
		if (*cp == c) {
			*cp = c->next;
			break;
		}
	}
	for (bp = &s->free; *bp;) {
		if ((*bp)->chunk == c)
			*bp = (*bp)->next;
		else
			bp = &(*bp)->next;
	}
	s->nfree -= c->nobjs;
}

static void
chunk_free(struct rdma_slab_chunk *c)
{
	rdma_buf_free(&c->buf);
	free(c->objs);
	free(c);
}

void
rdma_sbuf_put(struct rdma_sbuf *b)
{
	struct rdma_slab_chunk *c, *drop = NULL;
	struct rdma_slab *s;

	if (!b)
		return;
	c = b->chunk;
	s = c->slab;
	pthread_mutex_lock(&s->lock);
	b->next = s->free;
	s->free = b;
	s->nfree++;
	/* A chunk wholly free goes when others still have room. */
	if (++c->nfree == c->nobjs && s->nfree > c->nobjs) {
		chunk_unlink_locked(s, c);
		drop = c;
	}
	pthread_mutex_unlock(&s->lock);
	if (drop)
		chunk_free(drop);
}

void
rdma_slabs_free(struct rdma_dev *dev)
{
	struct rdma_slab *s;

	pthread_mutex_lock(&slabs_lock);
	while ((s = dev->slabs) != NULL) {
		dev->slabs = s->next;
		while (s->chunks) {
			struct rdma_slab_chunk *c = s->chunks;

			s->chunks = c->next;
			chunk_free(c);
		}
		pthread_mutex_destroy(&s->lock);
		free(s);
	}
	pthread_mutex_unlock(&slabs_lock);
}
