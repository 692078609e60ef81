/* SPDX-License-Identifier: BSD-3-Clause */
/* Reflection engines on the harness nodes' RMA engines, for the tests of lib/reflect. */
#ifndef AMRMA_TEST_REFLECT_NODES_H
#define AMRMA_TEST_REFLECT_NODES_H

#include "amrma_reflect.h"
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

#endif
