/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Test harness: N amrma nodes in one process, each on its own net_ring port, joined by a
 * software switch that forwards by destination IPv4 address, with seeded fault injection
 * (drop, duplicate, reorder, corrupt) in RX callbacks of the ring ports. One thread drives
 * everything, so runs are deterministic up to timer expiry.
 */
#ifndef AMRMA_TEST_HARNESS_H
#define AMRMA_TEST_HARNESS_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_cycles.h>
#include <rte_ring.h>

#include "amrma_am.h"

#define H_MAX_NODES 4
#define H_MAX_Q 4

struct h_fault {
	uint32_t drop_pct;
	uint32_t dup_pct;
	uint32_t reorder_pct;
	uint32_t corrupt_pct;
	uint32_t split_pct;	/* deliver as two segments, split behind the headers */
	bool blackhole;		/* drop everything (a dead node) */
	uint64_t rng;
	/* what was done */
	uint64_t dropped, duplicated, reordered, corrupted, split;
	struct rte_mbuf *held;	/* reordered frame, released on a later burst */
};

struct h_node {
	uint16_t port;
	struct amrma_net_dev dev;
	struct amrma_node *node;
	struct rte_ring *rx[H_MAX_Q];
	struct rte_ring *tx[H_MAX_Q];
	struct h_fault fault;
	const struct rte_eth_rxtx_callback *cb[H_MAX_Q];	/* removed before close */
	rte_be32_t ip;
	bool frozen;		/* not polled: simulates a hung or dead process */
	bool polled_elsewhere;	/* another thread polls it: h_step leaves its queues alone */
};

struct harness {
	struct rte_mempool *pool;	/* shared by all nodes, freed last */
	unsigned int nb_nodes;
	unsigned int nb_q;
	struct amrma_node_conf conf;	/* template for every node */
	struct h_node n[H_MAX_NODES];
};

/** rte_eal_init once per process with test-friendly arguments (no hugepages). */
void h_eal_init(const char *prefix);

/** The same with one extra --vdev (e.g. "dma_skeleton"). */
void h_eal_init_vdev(const char *prefix, const char *vdev);
/**
 * Move every frame the nodes sent to the receive queues of the node it is addressed to:
 * the wire. h_step() does it before it polls; a test whose nodes are polled on other
 * lcores calls it from one lcore (the rings are single-producer, single-consumer).
 * @return frames moved.
 */
int h_switch(struct harness *h);

/** The same with EAL lcores (-l) and service lcores (-S, NULL: none). */
void h_eal_init_lcores(const char *prefix, const char *vdev, const char *lcores,
		       const char *service_lcores);

/** len bytes of a pattern that differs with seed and along the buffer. */
void h_fill(uint8_t *p, size_t len, uint32_t seed);

/** The first byte of p[0..len) that is not h_fill()'s pattern from its byte at, or -1. */
long h_fill_diff(const uint8_t *p, size_t len, uint32_t seed, size_t at);

/** Whether p[0..len) is all zero. */
bool h_is_zero(const uint8_t *p, size_t len);

/** AM done callback: counts the completions of status 0 into the int at arg. */
void h_count_ok(struct amrma_ctx *ctx, void *arg, int status);

/** AM handler that takes a message and does nothing (a request gets the empty reply). */
int h_nothing_handler(struct amrma_ctx *ctx, amrma_am_token_t tok,
		      const struct amrma_am_msg *msg, void *arg);

/** The lcore h_eal_init_service() runs as a service lcore, beside the test's lcore 0. */
#define H_SVC_LCORE 1

/**
 * EAL with lcore 0 for the test and H_SVC_LCORE as a running service lcore. Returns 0, or
 * the exit status for main(): 77 (skip: one CPU) or 1 (the service lcore did not start).
 */
int h_eal_init_service(const char *prefix);

/**
 * h_eal_init_service() for a test whose service lcore spins beside busy test threads:
 * also 77 under valgrind (AMRMA_UNDER_VALGRIND), which runs one thread at a time, so
 * that every wait for a spinning thread costs a whole time slice (minutes in all).
 */
int h_eal_init_busy_service(const char *prefix);

/** Set conf defaults used by tests (small timers so loss recovers quickly). */
void h_conf(struct amrma_node_conf *c);

/** Create nb_nodes nodes with nb_q contexts each, all peers of each other. conf may be NULL. */
int h_create(struct harness *h, unsigned int nb_nodes, unsigned int nb_q,
	     const struct amrma_node_conf *conf);
void h_destroy(struct harness *h);

/** mbufs of the shared pool not in the pool (0 once everything was freed). */
unsigned int h_mbufs_in_use(const struct harness *h);

/** Destroy node i's amrma node and create a new one on the same port (a process restart). */
int h_restart_node(struct harness *h, unsigned int i);

/** Install seeded fault injection on node i's RX path. */
void h_faults(struct harness *h, unsigned int i, uint32_t drop, uint32_t dup,
	      uint32_t reorder, uint32_t corrupt, uint64_t seed);

/** Move frames between ports, then poll every node that is not frozen. Returns work. */
int h_step(struct harness *h);

/** Step until cond(arg) is true or timeout_ms passes; returns true if cond held. */
bool h_run_until(struct harness *h, bool (*cond)(void *), void *arg, unsigned int timeout_ms);

/** Step for ms milliseconds. */
void h_run_for(struct harness *h, unsigned int ms);

/**
 * Run the statement(s) after ms until cond holds or ms milliseconds passed; true if cond
 * held. A macro, so that cond can be any expression over the caller's variables; it is
 * evaluated before each step, as a while loop would.
 */
#define H_UNTIL(cond, ms, ...) __extension__ ({					\
	const uint64_t h_until_end_ = rte_get_tsc_cycles() +			\
				      rte_get_tsc_hz() / 1000 * (uint64_t)(ms);	\
	bool h_until_held_;							\
										\
	while (!(h_until_held_ = (cond)) && rte_get_tsc_cycles() < h_until_end_) { \
		__VA_ARGS__;							\
	}									\
	h_until_held_;								\
})

#define H_CAPTURE_MAX 8

/** What the messages to a handler carried, for a test that stands in for a peer's layer. */
struct h_capture {
	unsigned int n;		/* messages taken, the ones past H_CAPTURE_MAX too */
	uint8_t nargs[H_CAPTURE_MAX];
	uint64_t args[H_CAPTURE_MAX][AMRMA_WIRE_MAX_ARGS];	/* zero past nargs */
	int ret;		/* what the handler returns */
};

/** amrma_am_handler_t keeping each message's arguments in the struct h_capture at arg. */
int h_capture_handler(struct amrma_ctx *ctx, amrma_am_token_t tok,
		      const struct amrma_am_msg *msg, void *arg);

static inline struct amrma_ctx *
h_ctx(struct harness *h, unsigned int node, unsigned int q)
{
	return amrma_node_ctx(h->n[node].node, (uint16_t)q);
}

#endif
