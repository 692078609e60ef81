/* SPDX-License-Identifier: BSD-3-Clause */
/* Reflection engines on the harness nodes' RMA engines, for the tests of lib/reflect. */
#ifndef AMRMA_TEST_REFLECT_NODES_H
#define AMRMA_TEST_REFLECT_NODES_H

#include <errno.h>

#include "amrma_reflect.h"
#include "guarded.h"
#include "rma_nodes.h"

/* An engine on each of the first n nodes of p, conf c on node `with` (others: defaults);
 * 0 or the first error. */
static inline int
h_reflect_create(struct h_rma *p, struct amrma_reflect **r, unsigned int n, unsigned int with,
		 const struct amrma_reflect_conf *c)
{
	unsigned int i;
	int ret = 0;

	for (i = 0; i < n && ret == 0; i++)
		ret = amrma_reflect_create(p->r[i], i == with ? c : NULL, &r[i]);
	return ret;
}

/* Destroy the n engines (NULL ones skipped) before their RMA engines go. */
static inline void
h_reflect_destroy(struct amrma_reflect **r, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		amrma_reflect_destroy(r[i]);
		r[i] = NULL;
	}
}

/* The counters of context q of an engine. */
static inline struct amrma_reflect_stats
h_reflect_stats(struct amrma_reflect *r, unsigned int q)
{
	struct amrma_reflect_stats s;

	amrma_reflect_stats_get(r, (uint16_t)q, &s);
	return s;
}

/* Done callback (AM or striped send): the int at arg becomes 1 on success, else the error. */
static inline void
h_status_cb(struct amrma_ctx *ctx, void *arg, int status)
{
	RTE_SET_USED(ctx);
	*(int *)arg = status == 0 ? 1 : status;
}

#define H_SBUF_MAX 64

/*
 * A striped-send listener's buffers: n guarded buffers of len bytes, handed out in
 * order (h_sbufs_take()) and each to be reported back exactly once (h_sbufs_back()).
 */
struct h_sbufs {
	uint8_t *buf[H_SBUF_MAX];	/* guarded: the data at buf[i] + H_GUARD */
	bool back[H_SBUF_MAX];
	unsigned int n, taken, nb_back;
	size_t len;
};

/* 0, or -ENOMEM (nothing left allocated). */
static inline int
h_sbufs_init(struct h_sbufs *s, unsigned int n, size_t len)
{
	unsigned int i;

	memset(s, 0, sizeof(*s));
	s->n = n < H_SBUF_MAX ? n : H_SBUF_MAX;
	s->len = len;
	for (i = 0; i < s->n; i++)
		if ((s->buf[i] = h_guarded_alloc(len)) == NULL) {
			while (i-- > 0)
				free(s->buf[i]);
			return -ENOMEM;
		}
	return 0;
}

static inline void
h_sbufs_free(struct h_sbufs *s)
{
	unsigned int i;

	for (i = 0; i < s->n; i++)
		free(s->buf[i]);
	s->n = 0;
}

/* None handed out, none back (the buffers keep their contents). */
static inline void
h_sbufs_reset(struct h_sbufs *s)
{
	s->taken = s->nb_back = 0;
	memset(s->back, 0, sizeof(s->back));
}

/* The next buffer for a receive of len bytes, or NULL (too long, or all handed out). */
static inline void *
h_sbufs_take(struct h_sbufs *s, uint64_t len)
{
	if (len > s->len || s->taken == s->n)
		return NULL;
	return s->buf[s->taken++] + H_GUARD;
}

/* buf reported back: 0, -EALREADY (a second time) or -ENOENT (never handed out). */
static inline int
h_sbufs_back(struct h_sbufs *s, const void *buf)
{
	unsigned int i;

	for (i = 0; i < s->taken; i++)
		if (s->buf[i] + H_GUARD == buf) {
			if (s->back[i])
				return -EALREADY;
			s->back[i] = true;
			s->nb_back++;
			return 0;
		}
	return -ENOENT;
}

/* Whether every buffer's guards are intact. */
static inline bool
h_sbufs_guards_ok(const struct h_sbufs *s)
{
	unsigned int i;

	for (i = 0; i < s->n; i++)
		if (!h_guards_ok(s->buf[i], s->len))
			return false;
	return true;
}

#endif
