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
	uint32_t gen;
	bool used;
	bool local;		/* data: local completion seen */
	uint64_t cookie;	/* REFLECT: reported locally if refused */
	struct amrma_ep peer;
	amrma_desc_cb_t cb;	/* data: the descriptor's callback */
	void *cb_arg;
};

/* Internal descriptor: split a striped send that arrived here (stripe.c). Fields: peer
 * the origin's endpoint, key its buffer's key, len, offset the tag, cn.cookie the
 * origin's operation, cn.key the origin node's contexts. */
#define RF_DESC_STRIPE_RECV 0x80
/* Internal completion kind: the end of a striped send, cookie its operation. */
#define RF_CN_STRIPE 3

/* rf_release.state */
#define RF_REL_HELD 0		/* a read may still hold the send's region */
#define RF_REL_GONE 1		/* the region is released: nothing reads the buffer */
#define RF_REL_ORPHAN 2		/* the engine went first: the release completes the send */

/*
 * What a striped send's region release needs to complete the send. Allocated apart from
 * the engine: a get that another lcore serves may hold the region after the engine is
 * destroyed, and its release then calls cb and frees this.
 */
struct rf_release {
	uint32_t state;		/* RF_REL_*, atomic */
	int status;
	struct amrma_ctx *ctx;
	amrma_stripe_cb_t cb;
	void *arg;
};

/* origin: a striped send under way */
struct rf_sop {
	bool used;
	bool accepted;		/* the RTS was taken */
	bool ended;		/* status final: end it on the next poll */
	uint32_t gen;
	struct amrma_ep dst;
	uint32_t peer_epoch;	/* dst's life that took the RTS */
	uint64_t deadline;	/* TSC */
	struct amrma_region *reg;	/* until withdrawn */
	struct rf_release *rel;	/* status, cb and arg; the release's state */
};

/* target: a striped send being received, shared by the contexts pulling its portions */
struct rf_srx {
	uint32_t gen;
	uint32_t left;		/* portions not finished (atomic) */
	int32_t status;		/* first error (atomic) */
	uint32_t nparts;
	uint16_t nctx;		/* the origin node's contexts */
	struct amrma_ep src;	/* the origin's endpoint that sent the RTS */
	uint64_t key, tag, len, op;
	uint8_t *buf;
};

struct rf_ctx {
	struct amrma_reflect *rf;
	struct amrma_ctx *ctx;
	struct rte_ring *fifo;		/* injection: struct amrma_desc, MP/SC */
	struct rte_ring *rx;		/* reception: struct amrma_completion, MP/MC */
	struct amrma_desc cur;		/* taken from the FIFO, not yet run */
	bool has_cur;
	uint32_t nb_local;		/* data descriptors not complete locally */
	uint32_t nb_remote;		/* data descriptors not complete */
	int status;			/* first data error since the last REFLECT */
	struct rf_slot *slots;
	uint32_t *free;
	uint32_t nb_free;
	struct rf_sop *sops;		/* origin: striped sends issued here */
	uint32_t nb_sops;		/* in use */
	uint32_t nb_sops_ended;
	uint64_t next_scan;		/* TSC of the next deadline scan */
	uint32_t split_idx;		/* target: the rf_srx being split here, or RF_NONE */
	uint32_t split_next;		/* its next portion */
	uint32_t *ends;			/* target: rf_srx entries whose end we owe, oldest
					 * first (max_stripes) */
	uint32_t nb_ends;
	struct amrma_reflect_stats st;	/* written by the lcore, injected* excepted */
} __rte_cache_aligned;	/* an array, one per lcore's context: no line shared */

struct amrma_reflect {
	struct amrma_rma *rma;
	struct amrma_node *node;
	struct amrma_region_table *regions;
	struct amrma_reflect_conf conf;
	uint16_t nb_ctx;
	struct rf_ctx *xc;
	struct amrma_stripe_listener listener;
	struct rf_srx *srx;		/* max_stripes entries */
	struct rte_ring *srx_free;	/* their free indices */
	uint64_t scan_tsc;		/* between deadline scans */
	uint64_t timeout_tsc;
};

#define RF_NONE UINT32_MAX

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
rf_status_ok(int s)
{
	return s <= 0 && s > -4096;
}

/* A status for the wire: s itself when a peer may send it, -EIO otherwise. */
static inline int16_t
rf_status(int s)
{
	return rf_status_ok(s) ? (int16_t)s : -EIO;
}

/* The state of the context a handler runs on (the handlers' arg is the engine). */
static inline struct rf_ctx *
rf_handler_ctx(struct amrma_ctx *ctx, void *arg)
{
	return &((struct amrma_reflect *)arg)->xc[amrma_ctx_index(ctx)];
}

/* reflect.c */
struct rf_ctx *rf_ctx_of(struct amrma_ctx *ctx);
/* a completion into the reception FIFO rx (x's or another context's), counted by x */
bool rf_rx_push(struct rf_ctx *x, struct rte_ring *rx, uint64_t cookie, struct amrma_ep from,
		int16_t status);
uint32_t rf_gen_next(void);
int rf_run_data(struct rf_ctx *x, const struct amrma_desc *d);

/* stripe.c */
int rf_stripe_init(struct amrma_reflect *rf);
void rf_stripe_fini(struct amrma_reflect *rf);
int rf_stripe_split(struct rf_ctx *x, const struct amrma_desc *d);
void rf_stripe_end(struct rf_ctx *x, uint64_t cookie, struct amrma_ep src, int16_t status);
int rf_stripe_poll(struct rf_ctx *x);
/* send the ends of striped receives this context owes: work done */
int rf_stripe_ends(struct rf_ctx *x);
int rf_stripe_rts_handler(struct amrma_ctx *ctx, amrma_am_token_t tok,
			  const struct amrma_am_msg *msg, void *arg);

/* notify.c: the handlers at the reflection node and at the notified one */
void rf_register(struct amrma_reflect *rf, bool on);
void rf_word_add(struct rf_ctx *x, uint64_t key, uint64_t offset);
int rf_send_notify(struct rf_ctx *x, const struct amrma_cn *cn);
void rf_notify_done(struct amrma_ctx *ctx, void *arg, int status);

#endif
