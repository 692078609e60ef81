/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include "rma_nodes.h"

int
h_rma_create(struct h_rma *p, unsigned int nb_nodes, unsigned int nb_q,
	     const struct amrma_node_conf *nc, const struct amrma_rma_conf *rc,
	     uint32_t engines)
{
	unsigned int i;
	int ret;

	memset(p, 0, sizeof(*p));
	ret = h_create(&p->h, nb_nodes, nb_q, nc);
	for (i = 0; ret == 0 && i < nb_nodes; i++)
		if (engines & H_RMA_NODE(i))
			ret = amrma_rma_create(p->h.n[i].node, rc, &p->r[i]);
	return ret;
}

int
h_rma_register(struct h_rma *p, void *mem, size_t len, uint32_t perm)
{
	return amrma_region_register(amrma_rma_regions(p->r[1]), mem, len, perm, &p->reg,
				     &p->key);
}

int
h_rma_deregister(struct h_rma *p, amrma_region_release_cb_t released, void *arg)
{
	struct amrma_region *reg = p->reg;

	p->reg = NULL;
	return amrma_region_deregister(amrma_rma_regions(p->r[1]), reg, released, arg);
}

void
h_rma_destroy(struct h_rma *p)
{
	unsigned int i;

	if (p->reg != NULL)
		h_rma_deregister(p, NULL, NULL);
	for (i = 0; i < p->h.nb_nodes; i++)
		if (p->r[i] != NULL)
			amrma_rma_destroy(p->r[i]);
	h_destroy(&p->h);
	memset(p->r, 0, sizeof(p->r));
}

int
h_rma_step(struct h_rma *p)
{
	int work = h_step(&p->h);
	unsigned int i;

	for (i = 0; i < p->h.nb_nodes; i++)
		if (p->r[i] != NULL && !(p->stalled & H_RMA_NODE(i)))
			work += amrma_rma_progress(p->r[i]);
	return work;
}

void
h_rma_run_for(struct h_rma *p, unsigned int ms)
{
	H_UNTIL(false, ms, h_rma_step(p));
}

int
h_rma_wait(struct h_rma *p, struct amrma_ctx *ctx, amrma_rma_req_t req, unsigned int ms,
	   int *status)
{
	int ret = 0;

	H_UNTIL((ret = amrma_rma_test(ctx, req, status)) != 0, ms, h_rma_step(p));
	return ret;
}
