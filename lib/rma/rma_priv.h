/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal state of the RMA engine; not installed. */
#ifndef AMRMA_RMA_PRIV_H
#define AMRMA_RMA_PRIV_H

#include <assert.h>
#include <errno.h>
#include <sys/queue.h>

#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_ring.h>
#include <rte_tailq.h>

#include "amrma_dgsp.h"
#include "amrma_dma.h"
#include "amrma_rma.h"
#include "amrma_tag.h"

extern int amrma_rma_logtype;
#define RMA_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, amrma_rma_logtype, "amrma_rma: " fmt "\n", ##__VA_ARGS__)

enum op_kind { OP_PUT = 1, OP_GET, OP_TSEND, OP_PUT_DT, OP_GET_DT };
enum op_state {
	OP_FREE = 0,
	OP_ISSUING,	/* chunks left to send */
	OP_WAIT_CTS,	/* rendezvous put: waiting for the target to post its receive */
	OP_DRAINING,	/* everything sent, replies outstanding */
	OP_FINISHING,	/* replies in, waiting for the source buffer to be released */
	OP_COMPLETE,	/* done, waiting for amrma_rma_test/wait */
};

#define RETRY_MAX 64

struct rma_op {
	uint8_t kind;
	uint8_t state;
	uint8_t proto;			/* AMRMA_RMA_F_SHORT/PIPELINED/RENDEZVOUS */
	bool zero_copy;
	bool want_done;			/* pipelined put: one completion message (PUT_DONE) */
	bool done_in;			/* ... and it arrived */
	bool user_holds;		/* a handle was returned: test/wait releases */
	bool local_reported;
	uint16_t gen;
	uint32_t flags;
	struct amrma_ep dst;		/* where the chunks go */
	struct amrma_ep ep;		/* the endpoint the caller named (flush): a
					 * rendezvous put's dst moves to the target's
					 * progress context with the CTS */
	uint64_t key;
	uint64_t offset;		/* remote offset (put/get), 0 for tagged sends */
	uint8_t *buf;
	uint64_t len;
	uint32_t nchunks;		/* packets of the operation (1 when len is 0) */
	uint32_t next_chunk;		/* next one to hand to the AM layer */
	uint64_t done;			/* bytes whose packet completed */
	uint32_t chunk;			/* bytes per chunk */
	uint32_t in_flight;		/* chunks sent, not completed */
	uint32_t nb_retry;		/* chunks to resend (receiver not ready) */
	uint32_t retry[RETRY_MAX];
	int status;			/* first error */
	uint64_t deadline;		/* rendezvous: TSC by which the peer must progress */
	/* the target's life that took the request and owes a message of its own (CTS,
	 * rendezvous data, PUT_DONE); a tagged send's: the initiator's life that asked
	 * for the data; 0: none yet */
	uint32_t peer_epoch;
	uint64_t tag;			/* rendezvous / tagged send */
	uint64_t rid;			/* rendezvous put: receiver's id */
	struct amrma_region *ref;	/* tagged send from a region: held until done */
	amrma_rma_cb_t cb;
	void *arg;
	struct amrma_dgsm *dgsm;	/* noncontiguous: the local layout machine */
	uint64_t slot;			/* noncontiguous: the target's program slot */
	/* zero-copy in IOVA-as-PA mode: the memseg the last chunk lay in (len 0: none) */
	uintptr_t seg_va;
	size_t seg_len;
	rte_iova_t seg_iova;
	/* zero-copy: one shared info for every chunk attached to buf */
	struct rte_mbuf_ext_shared_info shinfo;
	volatile uint32_t ext_released;	/* set by the free callback (any lcore) */
	TAILQ_ENTRY(rma_op) next;
};
TAILQ_HEAD(rma_op_list, rma_op);

/*
 * The last operation that a deregistration of its region ended in a receive or program
 * slot (the slot is free again or reused): its packets still on the way are refused
 * with -ENOKEY as its first was, since the operation reports the first refusal that
 * comes back, in any order.
 */
struct dereg_end {
	uint64_t tag;			/* rendezvous receives: the put's tag; slots: 0 */
	uint16_t gen;			/* the slot's generation then */
	uint16_t src_node;
	bool set;
};

static inline void
dereg_end_set(struct dereg_end *e, uint16_t gen, uint16_t src_node, uint64_t tag)
{
	e->tag = tag;
	e->gen = gen;
	e->src_node = src_node;
	e->set = true;
}

/* Whether a packet naming slot id (generation in bits 32-47) belongs to that operation. */
static inline bool
dereg_end_match(const struct dereg_end *e, uint64_t id, uint16_t src_node, uint64_t tag)
{
	return e->set && e->gen == (uint16_t)(id >> 32) && e->src_node == src_node &&
	       e->tag == tag;
}

/* A tagged message being received on a context (matched to a posted receive). */
struct rma_rx {
	bool used;
	bool matched;			/* the tag engine matched it to the message */
	bool complete;			/* all placed, or status set: finish on the poll */
	uint16_t gen;
	int status;			/* our get: a packet could not be placed */
	struct amrma_ep src;		/* put: the initiator; get: the target (node only) */
	uint32_t src_epoch;		/* put: the initiator's life that asked for it */
	uint64_t tag;
	uint64_t recv_id;		/* tag engine receive, posted for (tag, tag_src(src)) */
	uint8_t *buf;
	uint64_t len;
	uint64_t left;			/* bytes not yet placed */
	struct amrma_region *ref;	/* target region (rendezvous put) */
	uint32_t op;			/* rendezvous get: our op index... */
	uint16_t op_gen;		/* ...and its generation */
	uint64_t deadline;		/* TSC by which the next data must arrive */
	struct dereg_end dead;		/* the last put its region's deregistration ended */
};

#define RMA_MAX_RX 256
#define RMA_MAX_DT 64

/* A verified program installed by a peer for one noncontiguous operation. */
struct rma_dt {
	bool used;
	uint16_t gen;
	uint32_t perm;
	struct amrma_ep src;		/* the initiator's context that installed it... */
	uint32_t src_epoch;		/* ...in this life: another one sends it nothing */
	struct amrma_dgsp *prog;
	struct amrma_dgsm m;		/* resumable: packets usually come in order */
	struct amrma_region *ref;
	uint64_t total;			/* packed bytes of the operation */
	uint64_t moved;			/* bytes placed or served; freed at total */
	uint64_t deadline;
	struct dereg_end dead;		/* the last operation its deregistration ended */
};

struct rma_ctx {
	struct amrma_rma *rma;
	struct amrma_ctx *ctx;
	struct rma_op *ops;
	uint32_t *free;
	uint32_t nb_free;
	struct rma_op_list active;	/* ops with chunks to send */
	struct rma_op_list finishing;	/* ops waiting for their source buffer */
	uint32_t rx_done[RMA_MAX_RX];	/* received tagged messages to finish */
	uint32_t nb_rx_done;
	uint32_t nb_ended;
	amrma_rma_req_t *ended;		/* ops a one-way message ended: finish on the hook */
	struct amrma_tag_engine *tags;	/* tagged receives of this context */
	struct amrma_copy_engine *copy;	/* places received bytes */
	struct amrma_copy_engine cpu;
	uint64_t next_scan;		/* TSC of the next deadline scan */
	/* entries of rx[] and dt[] in use: the scan skips a table that has none (it
	 * spans hundreds of cache lines, and most scans find nothing to expire) */
	uint32_t nb_rx_used;
	uint32_t nb_dt_used;
	uint64_t next_cleanup;		/* TSC from which the port may be asked again */
	amrma_ctx_hook_t ext_fn;	/* a layer above (rma_ext.h): first on every poll */
	void *ext_arg;
	struct rma_rx rx[RMA_MAX_RX];
	struct rma_dt dt[RMA_MAX_DT];
	uint8_t scratch[AMRMA_WIRE_MAX_PAYLOAD];	/* gathered get data */
	struct put_track *track;	/* completion.c: completion_slots entries */
	struct put_done *done;		/* ring of done_size */
	uint32_t track_size;
	uint32_t nb_track;
	uint32_t done_size;		/* power of two: room for an entry of each track
					 * and RMA_MAX_REFUSED refusals */
	uint32_t done_head;
	uint32_t nb_done;
	uint32_t nb_done_refusals;	/* queued completions that hold no entry */
	/* puts refused for want of room, until all their bytes came (completion.c) */
	struct put_refused *refused;
	uint32_t nb_refused;		/* entries with bytes to come */
	uint32_t refused_next;		/* the next entry to take (the oldest) */
	struct amrma_rma_stats st;
} __rte_cache_aligned;	/* an array, one per lcore's context: no line shared */

/* target: the bytes of a pipelined put still to come (completion.c) */
struct put_track {
	struct amrma_ep src;		/* the initiator's context */
	uint32_t src_epoch;		/* ...in this life: a restart numbers ops afresh */
	uint64_t handle;		/* its operation */
	uint64_t total;
	uint64_t left;
	uint64_t deadline;		/* TSC: dropped if no chunk comes by then */
	int status;			/* first error */
	bool used;
	bool done_queued;		/* its completion waits to be sent: held till then */
	uint64_t key;			/* the region the first chunk named... */
	struct amrma_region *ref;	/* ...held for the operation (NULL: unknown key):
					 * one lookup, not one per chunk */
};

/*
 * target: a put refused for want of a table entry; its other chunks are refused too
 * (its initiator was told it failed), also once an entry has freed up
 */
struct put_refused {
	struct amrma_ep src;
	uint32_t src_epoch;
	uint64_t handle;
	uint64_t left;			/* bytes still to come (0: entry free) */
	uint64_t deadline;		/* TSC: forgotten if no chunk comes by then */
};

#define RMA_MAX_REFUSED 64		/* refused puts remembered per context */

/* target: a completion waiting to be sent */
struct put_done {
	struct amrma_ep to;
	uint32_t epoch;			/* the initiator's life it answers */
	uint64_t handle;
	int status;
	uint32_t track;			/* the entry freed once it is sent, or UINT32_MAX */
};

/* RMA queue entries: what handlers hand to the progress engine. */
enum rq_type { RQ_POST_RECV = 1, RQ_SEND, RQ_RECV_DONE };

struct rq_item {
	uint8_t type;
	bool posted;			/* RQ_POST_RECV: receive posted, CTS not sent yet */
	struct amrma_ep peer;		/* the initiator */
	uint32_t epoch;			/* ...in the life that asked (msg src_epoch) */
	uint8_t reply_ctx;		/* rendezvous get: initiator's receiving context */
	uint64_t tag;
	uint8_t *ptr;
	uint64_t len;
	struct amrma_region *ref;
	uint64_t recv_id;
	uint32_t rx;
};

struct amrma_rma {
	struct amrma_node *node;
	struct amrma_rma_conf conf;
	struct amrma_region_table *regions;
	struct rte_mempool *ext_pool;	/* mbufs that only carry an attached buffer */
	bool iova_va;			/* EAL IOVA mode is VA: buffers' IOVA is their address */
	uint64_t timeout_tsc;		/* conf.rndv_timeout_ms in TSC cycles */
	struct rte_ring *queue;		/* the RMA queue: handlers -> progress engine */
	struct rte_mempool *rq_pool;
	struct rq_item **pending;	/* dequeued, not yet served (AM layer busy) */
	uint32_t nb_pending;
	uint32_t service_id;
	bool has_service;
	uint16_t nb_ctx;
	uint16_t gen_base;		/* first generation of every slot (rc_init) */
	struct rma_ctx *rc;		/* one per context */
	/* destroyed with chunks still pointing at ext_pool and rc[].ops (engine.c) */
	TAILQ_ENTRY(amrma_rma) kept_next;
};

/*
 * Operations per context at most. An op argument ((index + 1) << 48, op_arg()) then never
 * has bit 63 set, which every handle has (op_handle()), and read as an op argument a
 * handle names index RMA_MAX_OPS, which is none: whichever reply handler a peer names, a
 * reply to a chunk is not taken for one to a setup or an RTS, nor the other way round.
 */
#define RMA_MAX_OPS 32767u
static_assert((((uint64_t)RMA_MAX_OPS) << 48) >> 63 == 0, "op arguments look like handles");

/* handle encoding: never 0 */
static inline amrma_rma_req_t
op_handle(const struct rma_ctx *rc, const struct rma_op *op)
{
	return (UINT64_C(1) << 63) | ((uint64_t)op->gen << 32) | (uint64_t)(op - rc->ops);
}

/* The live op a handle names, or NULL. */
static inline struct rma_op *
op_from_handle(struct rma_ctx *rc, amrma_rma_req_t h)
{
	uint32_t idx = (uint32_t)h;

	if (!(h >> 63) || idx >= rc->rma->conf.max_ops)
		return NULL;
	if (rc->ops[idx].state == OP_FREE || rc->ops[idx].gen != (uint16_t)(h >> 32))
		return NULL;
	return &rc->ops[idx];
}

/*
 * A chunk's identity in the AM op argument: op index + 1, generation, chunk index. Never
 * NULL: the AM core hands a message that is not a reply op_arg NULL, and an index of 0
 * would make that a valid handle of the first op of a context.
 */
static inline void *
op_arg(const struct rma_ctx *rc, const struct rma_op *op, uint32_t chunk)
{
	return (void *)(uintptr_t)(((uint64_t)(op - rc->ops + 1) << 48) |
				   ((uint64_t)op->gen << 32) | chunk);
}

/* The live op an op argument names (and its chunk), or NULL. */
static inline struct rma_op *
op_of_arg(struct rma_ctx *rc, const void *arg, uint32_t *chunk)
{
	uint64_t v = (uintptr_t)arg;
	uint32_t idx = (uint32_t)(v >> 48) - 1;	/* 0 (not ours): UINT32_MAX */
	struct rma_op *op;

	if (idx >= rc->rma->conf.max_ops)
		return NULL;
	op = &rc->ops[idx];
	if (op->state == OP_FREE || op->gen != (uint16_t)(v >> 32))
		return NULL;
	*chunk = (uint32_t)v;
	return op;
}

/*
 * initiator: the op of kind a reply-only handler's message answers, or NULL (counted):
 * it must be a reply to one of our chunks, from the endpoint the op sends to, while the
 * op still waits for replies. Handler indices are public: any peer can send to them.
 */
struct rma_op *reply_op(struct rma_ctx *rc, const struct amrma_am_msg *msg, uint8_t kind,
			uint32_t *chunk);
struct rma_op *op_alloc(struct rma_ctx *rc);

/*
 * Whether life epoch of endpoint ep, for which a target keeps state (a receive, a program
 * slot, a completion entry, a queued request), is gone as ctx sees it: another life
 * speaks on the channel, or the channel is closed. One that has not heard from ep yet (0)
 * cannot tell: those frames name no life.
 */
static inline bool
peer_life_gone(struct amrma_ctx *ctx, struct amrma_ep ep, uint32_t epoch)
{
	bool closed;
	uint32_t e = amrma_ctx_peer_epoch(ctx, ep, &closed);

	return closed || (e != 0 && e != epoch);
}

/* Whether a status from the wire is 0 or a negative errno (*status), as a peer may say. */
static inline bool
wire_status(uint64_t v, int *status)
{
	int64_t x = (int64_t)v;

	if (x > 0 || x < -4095)
		return false;
	*status = (int)x;
	return true;
}

/*
 * The status an AM request of ours completed with: 0 or an errno of the AM layer, or the
 * status the peer replied, which may be anything; one that is no errno (positive, below
 * -4095) fails the operation with -EPROTO, so that a caller testing for < 0 sees it.
 */
static inline int
am_status(int status)
{
	return wire_status((uint64_t)(int64_t)status, &status) ? status : -EPROTO;
}

/*
 * A target's state kept for an initiator's life (a receive, a program slot, a completion
 * entry): 0 while it may still progress; once it ends, counted, -ETIMEDOUT when the
 * initiator sent nothing by deadline, -ECONNRESET when that life is gone (what else it
 * sent will not come: not waited for).
 */
static inline int
target_wait_end(struct rma_ctx *rc, uint64_t now, uint64_t deadline, struct amrma_ep src,
		uint32_t epoch)
{
	if (now >= deadline) {
		rc->st.rndv_timeouts++;
		return -ETIMEDOUT;
	}
	if (peer_life_gone(rc->ctx, src, epoch)) {
		rc->st.stale_requests++;
		return -ECONNRESET;
	}
	return 0;
}

/* The target now owes op a message of its own: remember which life of it does. */
static inline void
op_peer_owes(struct rma_ctx *rc, struct rma_op *op)
{
	op->peer_epoch = amrma_ctx_peer_epoch(rc->ctx, op->dst, NULL);
}

/*
 * 0 while the target life that owes op a message may still send it; otherwise the
 * status to fail op with: -ECONNRESET when it restarted (its new life knows nothing of
 * op), -ENOTCONN when the channel closed (it stopped answering or left). Not waited for
 * until the rendezvous timeout: the AM layer knows.
 */
static inline int
op_peer_lost(struct rma_ctx *rc, const struct rma_op *op)
{
	bool closed;
	uint32_t e;

	if (op->peer_epoch == 0)
		return 0;
	e = amrma_ctx_peer_epoch(rc->ctx, op->dst, &closed);
	if (e != 0 && e != op->peer_epoch)	/* 0: not heard from on this channel yet */
		return -ECONNRESET;
	return closed ? -ENOTCONN : 0;
}

/* Some operation is allocated (a scan of ops[] can find something). */
static inline bool
ops_in_use(const struct rma_ctx *rc)
{
	return rc->nb_free != rc->rma->conf.max_ops;
}
/*
 * Allocate an operation of len bytes cut into frame-sized chunks; NULL with *err =
 * -EAGAIN (table full) or -EINVAL (more than 2^32 packets).
 */
struct rma_op *op_new(struct rma_ctx *rc, uint8_t kind, uint32_t flags, struct amrma_ep dst,
		      uint64_t key, uint64_t offset, uint8_t *buf, uint64_t len,
		      amrma_rma_cb_t cb, void *arg, bool user_holds, int *err);
/* Count a put or get of len bytes, once started: one refused in the call never existed. */
void op_count(struct rma_ctx *rc, uint8_t kind, uint64_t len);
void op_packet_done(struct rma_ctx *rc, struct rma_op *op, uint64_t bytes, int status);
int op_issue(struct rma_ctx *rc, struct rma_op *op, bool in_poll);
void op_fail(struct rma_ctx *rc, struct rma_op *op, int status);
void op_end_later(struct rma_ctx *rc, struct rma_op *op, int status);
void op_finish(struct rma_ctx *rc, struct rma_op *op);
void op_complete(struct rma_ctx *rc, struct rma_op *op);
void op_zero_copy_init(struct rma_op *op);
/* rma.c: the poll hook of every context, and the short/pipelined handlers */
int rma_poll(struct amrma_ctx *ctx, void *arg);
void rma_register(struct amrma_node *node, struct amrma_rma *rma);
/*
 * target: validate a put chunk of msg at offset off of a held region (NULL: unknown key)
 * and copy it; 0 or the error, counted
 */
int rma_place_held(struct rma_ctx *rc, const struct amrma_region *ref, uint64_t off,
		   const struct amrma_am_msg *msg);
/* the same, looking the key up */
int rma_place_put(struct rma_ctx *rc, uint64_t key, uint64_t off,
		  const struct amrma_am_msg *msg);

/* Two endpoints are the same context of the same node. */
static inline bool
ep_same(struct amrma_ep a, struct amrma_ep b)
{
	return a.node == b.node && a.ctx == b.ctx;
}

/*
 * An endpoint as a tag engine source. Tags are operation handles, unique per initiator
 * context only: two contexts of one node must not look like one source.
 */
static inline uint32_t
tag_src(struct amrma_ep ep)
{
	return (uint32_t)ep.node << 8 | ep.ctx;
}

static inline struct rma_ctx *
rc_of(const struct amrma_ctx *ctx)
{
	return amrma_ctx_priv(ctx);
}

/* dt.c */
void dt_register(struct amrma_node *node, struct amrma_rma *rma);
int dt_send_chunk(struct rma_ctx *rc, struct rma_op *op, uint32_t chunk, uint32_t len,
		  uint64_t off, void *arg);
int dt_expire(struct rma_ctx *rc, uint64_t now);
void dt_cleanup(struct amrma_rma *rma, struct rma_ctx *rc);
void dt_op_release(struct rma_op *op);
void chunk_done(struct amrma_ctx *ctx, void *arg, int status);
void op_release(struct rma_ctx *rc, struct rma_op *op);

/* Deadlines run this long from the last progress (set per packet: kept to an add). */
static inline uint64_t
rndv_timeout_tsc(const struct amrma_rma *rma)
{
	return rma->timeout_tsc;
}

/* Fetch the lines of [at, at + len) that lie below end (addresses as integers: the
 * range may begin past the end of the buffer). */
static __rte_always_inline void
fetch_lines(uintptr_t at, uintptr_t len, uintptr_t end, bool write)
{
	uintptr_t n, o;

	if (at >= end)
		return;
	n = RTE_MIN(len, end - at);
	for (o = 0; o < n; o += RTE_CACHE_LINE_SIZE) {
		if (write)
			rte_prefetch0_write((void *)(at + o));
		else
			rte_prefetch0((void *)(at + o));
	}
}

/*
 * Place a packet of a transfer at dst with the copy engine; 0 or the engine's error.
 * Packets of one transfer arrive in order, each placed right after the last. Placing
 * into memory that is not in the cache waits for every line to be read before it is
 * written: 16-64 MiB puts ran at 4.8 GB/s, and at 8.2 with the target's writes folded
 * into a cached 1 MiB window (docs/rma.md). So after a CPU copy the lines of the packet
 * after next are fetched for writing (no further than end, the transfer's or region's
 * end): by the time it comes they are there, and the fetches of two packets overlap.
 */
static inline int
rma_place(const struct rma_ctx *rc, uint8_t *dst, const void *src, uint32_t len,
	  const uint8_t *end)
{
	int ret = amrma_copy(rc->copy, dst, src, len);

	if (ret == 0 && rc->copy == &rc->cpu)
		fetch_lines((uintptr_t)dst + 2 * (uintptr_t)len, len, (uintptr_t)end, true);
	return ret;
}

/*
 * The sending side's half: the source of the packet after next is fetched while this
 * one goes out (copied into its frame, or read by the port). Only for operations of
 * conf.stream_min bytes or more, whose source is unlikely to be in the cache: with it
 * 16-64 MiB puts and gets went 7-12 % faster, 4 MiB ones 2-4 % slower (docs/rma.md).
 */
static inline void
rma_send_ahead(const struct rma_ctx *rc, const struct rma_op *op, uint64_t off, uint32_t len)
{
	if (op->len >= rc->rma->conf.stream_min)
		fetch_lines((uintptr_t)op->buf + off + 2 * (uintptr_t)len, len,
			    (uintptr_t)op->buf + op->len, false);
}

/* completion.c */
int completion_init(struct rma_ctx *rc, uint32_t size, int socket);
void completion_cancel(struct rma_ctx *rc);
void completion_cleanup(struct rma_ctx *rc);
void completion_register(struct amrma_node *node, struct amrma_rma *rma);
int completion_flush(struct rma_ctx *rc);
int completion_expire(struct rma_ctx *rc, uint64_t now);

/* rndv.c */
void rndv_register(struct amrma_node *node, struct amrma_rma *rma);
int rndv_start(struct rma_ctx *rc, struct rma_op *op);
int rndv_finish_rx(struct rma_ctx *rc);
int rndv_expire(struct rma_ctx *rc, uint64_t now);
/* destroy: the queued and pending requests, their initiators told (RNDV_CANCEL) */
void rndv_drop_unserved(struct amrma_rma *rma);
void rndv_cancel_tsend(struct rma_ctx *rc, const struct rma_op *op);

#endif
