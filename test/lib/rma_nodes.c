/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_pause.h>
#include <rte_service.h>
#include <rte_service_component.h>

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

/* the wire between the nodes, as a service */
static int32_t
switch_run(void *arg)
{
	return h_switch(arg) > 0 ? 0 : -EAGAIN;
}

int
h_rma_services_start(struct h_rma *p, unsigned int i, uint32_t sid[3])
{
	struct rte_service_spec spec = { .callback = switch_run, .callback_userdata = &p->h };
	unsigned int k;
	int ret;

	p->h.n[i].polled_elsewhere = true;
	ret = amrma_node_service_register(p->h.n[i].node, &sid[0]);
	if (ret == 0)
		ret = amrma_rma_service_register(p->r[i], &sid[1]);
	snprintf(spec.name, sizeof(spec.name), "h_switch");
	if (ret == 0)
		ret = rte_service_component_register(&spec, &sid[2]);
	if (ret == 0)
		ret = rte_service_component_runstate_set(sid[2], 1);
	for (k = 0; k < 3 && ret == 0; k++) {
		ret = rte_service_map_lcore_set(sid[k], H_SVC_LCORE, 1);
		if (ret == 0)
			ret = rte_service_runstate_set(sid[k], 1);
	}
	return ret;
}

void
h_rma_services_stop(const uint32_t sid[3])
{
	unsigned int k;

	for (k = 0; k < 3; k++)
		rte_service_runstate_set(sid[k], 0);
	for (k = 0; k < 3; k++)
		while (rte_service_may_be_active(sid[k]) == 1)
			rte_pause();
	rte_service_component_runstate_set(sid[2], 0);
	rte_service_component_unregister(sid[2]);
}
