/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal state of the reflection engine; not installed. */
#ifndef AMRMA_REFLECT_PRIV_H
#define AMRMA_REFLECT_PRIV_H

#include <rte_log.h>
#include <rte_ring.h>

#include "amrma_reflect.h"

extern int amrma_reflect_logtype;
#define REFLECT_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, amrma_reflect_logtype, "amrma_reflect: " fmt "\n", \
		##__VA_ARGS__)

/* A data descriptor or REFLECT under way: the callback's argument names it by index and
 * generation, so one that ends after its engine went finds nothing. */
struct rf_slot {
	uint16_t gen;
	bool used;
	bool local;		/* data: local completion seen */
	uint64_t cookie;	/* REFLECT: reported locally if refused */
	struct amrma_ep peer;
};

struct rf_ctx {
	struct amrma_reflect *rf;
	struct amrma_ctx *ctx;
	struct rte_ring *fifo;		/* injection: struct amrma_desc, MP/SC */
	struct rte_ring *rx;		/* reception: struct amrma_completion, SP/MC */
	struct amrma_desc cur;		/* taken from the FIFO, not yet run */
	bool has_cur;
	uint32_t nb_local;		/* data descriptors not complete locally */
	uint32_t nb_remote;		/* data descriptors not complete */
	int status;			/* first data error since the last REFLECT */
	struct rf_slot *slots;
	uint32_t *free;
	uint32_t nb_free;
	struct amrma_reflect_stats st;	/* written by the lcore, injected* excepted */
};

struct amrma_reflect {
	struct amrma_rma *rma;
	struct amrma_node *node;
	struct amrma_region_table *regions;
	struct amrma_reflect_conf conf;
	uint16_t nb_ctx;
	struct rf_ctx *xc;
};

/* wire: both messages carry 4 arguments */
#define RF_NARGS 4
/* arg 0 of REFLECT: to.node (bits 0-15), to.ctx (16-23), kind (24-31), status (32-47);
 * of NOTIFY: kind (bits 0-7), status (32-47). The other bits are zero. */
static inline uint64_t
rf_word0(struct amrma_ep to, uint8_t kind, int16_t status)
{
	return (uint64_t)to.node | (uint64_t)to.ctx << 16 | (uint64_t)kind << 24 |
	       (uint64_t)(uint16_t)status << 32;
}

/* A status a peer may send: 0 or an errno below 4096, negated. */
static inline bool
rf_status_ok(int16_t s)
{
	return s <= 0 && s > -4096;
}

/* reflect.c */
struct rf_ctx *rf_ctx_of(struct amrma_ctx *ctx);
bool rf_rx_push(struct rf_ctx *x, uint64_t cookie, struct amrma_ep from, int16_t status);

/* notify.c: the handlers at the reflection node and at the notified one */
void rf_register(struct amrma_reflect *rf, bool on);
int rf_send_notify(struct rf_ctx *x, const struct amrma_cn *cn);

#endif
