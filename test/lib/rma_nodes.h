/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Harness nodes with RMA engines and a region of node 1, the target: the setup most RMA
 * tests start from, stepped, waited on and torn down as one.
 */
#ifndef AMRMA_TEST_RMA_NODES_H
#define AMRMA_TEST_RMA_NODES_H

#include <stdint.h>

#include "amrma_rma.h"
#include "harness.h"

struct h_rma {
	struct harness h;
	struct amrma_rma *r[H_MAX_NODES];	/* NULL: the node runs no engine */
	struct amrma_region *reg;		/* node 1's, NULL: none */
	uint64_t key;
	uint32_t stalled;	/* engines h_rma_step() leaves alone (H_RMA_NODE bits) */
};

/** Engines on every node, or on node i only (h_rma_create()'s engines). */
#define H_RMA_ALL UINT32_MAX
#define H_RMA_NODE(i) (UINT32_C(1) << (i))

/**
 * h_create() (nc NULL: h_conf()), then an engine of conf rc (NULL: the defaults) on each
 * node whose bit is set in engines. 0, or the first error.
 */
int h_rma_create(struct h_rma *p, unsigned int nb_nodes, unsigned int nb_q,
		 const struct amrma_node_conf *nc, const struct amrma_rma_conf *rc,
		 uint32_t engines);

/** Register len bytes at mem (perm: AMRMA_REGION_*) with node 1's engine: p->reg, p->key. */
int h_rma_register(struct h_rma *p, void *mem, size_t len, uint32_t perm);

/** Deregister p->reg: what amrma_region_deregister() returned (0: released at once). */
int h_rma_deregister(struct h_rma *p, amrma_region_release_cb_t released, void *arg);

/** Deregister p->reg if still registered, destroy the engines, then the nodes. */
void h_rma_destroy(struct h_rma *p);

/** h_step(), then the progress of every engine not stalled. Returns work. */
int h_rma_step(struct h_rma *p);

/** h_rma_step() for ms milliseconds. */
void h_rma_run_for(struct h_rma *p, unsigned int ms);

/**
 * Step until ctx's operation req completes (1, its status in *status), ms milliseconds
 * pass (0) or amrma_rma_test() fails (its error).
 */
int h_rma_wait(struct h_rma *p, struct amrma_ctx *ctx, amrma_rma_req_t req, unsigned int ms,
	       int *status);

/** H_SVC_LCORE (h_eal_init_service()) runs node i and its RMA engine as rte_services,
 *  and the wire between the nodes as a third (sid[2]): the test's lcore polls only the
 *  other nodes, without h_step() (the wire is not its to move). 0 or an error. */
int h_rma_services_start(struct h_rma *p, unsigned int i, uint32_t sid[3]);

/** Stop them and wait until none runs; the node's and engine's services go with them. */
void h_rma_services_stop(const uint32_t sid[3]);

#endif
