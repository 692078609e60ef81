/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal state of the AM core; not installed. */
#ifndef AMRMA_AM_PRIV_H
#define AMRMA_AM_PRIV_H

#include <rte_log.h>
#include <rte_ring.h>

#include "amrma_am.h"

extern int amrma_am_logtype;
#define AM_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, amrma_am_logtype, "amrma_am: " fmt "\n", ##__VA_ARGS__)

/* Frames a channel may hold (queued + unacked); power of two. Requests may fill half, the
 * rest is kept for replies so a handler can always reply. */
#define CH_SLOTS	256u
#define CH_REQ_SLOTS	(CH_SLOTS / 2)
/* The receiver accepts seq in [rcv_next, rcv_next + RCV_WIN): one 64-bit bitmap. */
#define RCV_WIN		64u
#define TX_BUF		64u
#define RX_BURST	32u

/*
 * Small frames are kept for retransmission as a copy in the channel's inline store
 * (channel.c): the port then gets the only reference, and freeing it costs no atomic.
 * Entry seq % TX_INLINE_SLOTS; a frame whose entry is still taken is held as an mbuf.
 */
#define TX_INLINE_MAX	192u
#define TX_INLINE_SLOTS	32u

struct txslot {
	struct rte_mbuf *m;	/* held reference (queued, or sent and kept); NULL otherwise */
	uint64_t sent_tsc;
	uint32_t tries;		/* transmissions; RTT is sampled only when 1 (Karn) */
	uint16_t inl_len;	/* sent and kept in the inline store, this many bytes */
	uint32_t send_op;	/* a one-way message's operation + 1, completed by the ack */
};

/* The slot holds a frame not yet acknowledged. */
static inline bool
slot_held(const struct txslot *s)
{
	return s->m != NULL || s->inl_len != 0;
}

/* One (local context, remote endpoint) channel. */
struct channel {
	/* sender side: una <= sent <= nxt */
	uint32_t snd_una;	/* oldest unacknowledged seq */
	uint32_t snd_sent;	/* next seq to transmit for the first time */
	uint32_t snd_nxt;	/* next seq to assign */
	uint32_t retries;	/* timer expiries since last progress */
	uint64_t timer_due;	/* retransmission timer; meaningful while una != sent */
	uint64_t rto;		/* current timeout with back-off, TSC cycles */
	uint64_t srtt;		/* smoothed RTT (RFC 6298), 0 = no sample yet */
	uint64_t rttvar;
	uint32_t ops;		/* requests waiting for their reply */
	bool silence_from_tx;	/* last_rx := time of the next transmission */
	bool dead;
	bool in_open_list;
	uint8_t open_msgs;	/* messages in the open frame */
	struct rte_mbuf *open;	/* last queued frame, not sent yet: more messages may join */
	/* receiver side */
	bool in_ack_list;
	bool ack_now;
	uint16_t ack_pending;	/* frames received since our last ack went out */
	uint32_t rcv_next;	/* every seq below was received */
	uint64_t rcv_mask;	/* bit i: seq rcv_next + 1 + i received */
	uint64_t ack_due;
	uint64_t last_rx;
	uint32_t peer_epoch;	/* peer's incarnation, 0 until first contact */
	bool left;		/* that incarnation said it leaves: close at the poll's end */
	bool closed;		/* dead because it left: its receive state is kept, and what
				 * it sends again gets our ack again (its LEAVE's was lost) */
	bool bye;		/* it answered our leave: closed to this life of ours */
	struct amrma_wire_addr addr;
	struct amrma_wire_tmpl tmpl;	/* our headers toward this endpoint, built once */
	uint16_t peer_node;
	uint8_t peer_ctx;
	uint32_t inl_busy;	/* bit i: inline entry i holds a frame */
	struct txslot slot[CH_SLOTS];
	uint8_t inl[TX_INLINE_SLOTS][TX_INLINE_MAX] __rte_cache_aligned;
};

/* OP_WAIT: a request waiting for its reply; OP_SENT: a one-way message for its ack;
 * OP_FAILING: its channel was dropped, it fails in op_fail_marked() */
enum op_state { OP_FREE = 0, OP_WAIT, OP_SENT, OP_FAILING };

struct op {
	amrma_am_done_t done;
	void *arg;
	struct channel *ch;
	uint16_t gen;
	uint8_t state;
};

enum in_handler { IN_NONE = 0, IN_REQUEST, IN_REPLY, IN_SEND };

/* An acknowledgement a received frame carried, applied after the burst's handlers ran. */
struct rx_ack {
	struct channel *ch;
	uint32_t peer_epoch;	/* the channel's peer when it came: a reset voids it */
	uint32_t ack;
	uint32_t sack;
};

struct amrma_ctx {
	struct amrma_node *node;
	struct amrma_net_dev *dev;
	struct rte_mempool *pool;
	uint16_t idx;
	uint16_t nb_tx;
	uint32_t tx_pend_bytes;		/* bytes in tx[] */
	bool tx_stalled;		/* the last burst sent nothing, retries and all */
	bool in_poll;
	/* some channel's peer left (leave.c, channel.left): handled once what this poll
	 * sent reached the port */
	bool peers_leaving;
	/* parked for it: the port is not touched until its link went down and up */
	bool parked;
	bool park_saw_down;
	uint64_t park_tsc;
	/* a reply may stay open for later messages of its RX burst (set per message) */
	bool reply_open;
	uint32_t idle_polls;		/* polls since the clock was last read when idle */
	uint64_t now;			/* TSC of this poll (at most one rdtsc per poll) */
	/* handler bookkeeping */
	uint8_t in_handler;
	bool replied;
	uint64_t tok;			/* token of the running request handler */
	uint64_t tok_gen;
	struct channel *tok_ch;
	uint32_t tok_wire;		/* initiator's token to echo */
	/*
	 * A reply whose payload is empty or inside its request's frame waits (reply_pend)
	 * until the handler returned: unless the handler keeps the request's mbuf, the
	 * reply is then built over it, with no mbuf to allocate and none to free.
	 */
	struct rte_mbuf *tok_mbuf;	/* the request's frame, if it can carry the reply */
	bool reply_pend;
	uint8_t nb_reply_spare;		/* reply_spare[] below */
	struct {
		uint16_t handler;
		uint8_t nargs;
		int16_t status;
		uint16_t len;
		const void *payload;
		uint64_t args[AMRMA_WIRE_MAX_ARGS];
	} pend;
	/* channels: by_node[node] -> array of the peer's contexts; all[] for scans */
	struct channel **by_node;
	uint8_t *peer_nb_ctx;
	struct channel **all;
	uint32_t nb_chan;
	struct channel **ack_list;
	uint32_t nb_ack;
	struct channel **open_list;	/* channels with an open frame */
	uint32_t nb_open;
	/* operations */
	struct op *ops;
	uint32_t *op_free;
	uint32_t nb_op_free;
	uint32_t nb_failing;		/* ops in OP_FAILING */
	uint32_t max_ops;
	uint64_t next_tick;
	struct rte_ring *steer;		/* frames other contexts received for us */
	struct amrma_wire_rx_params rxp;
	struct amrma_wire_rx_params rxp_nocsum;
	struct amrma_am_stats st;
	amrma_ctx_hook_t hook;
	void *hook_arg;
	void *priv;
	struct rte_mbuf *tx[TX_BUF];
	struct rx_ack rx_acks[RX_BURST];	/* of the frames being handled (chan_acks_apply) */
	uint32_t nb_rx_acks;
	/*
	 * A request is accepted (and acknowledged) only with an mbuf set aside for each of
	 * its frame's replies: with the pool empty, a reply would otherwise be lost and its
	 * operation wait for ever. Replies take from here when the pool has none. At the
	 * end, with the other large arrays: the fields above keep their cache lines.
	 */
	struct rte_mbuf *reply_spare[AMRMA_WIRE_MAX_BUNDLE];
	/*
	 * Payloads split across segments; coalesced frames that arrived in several, whole:
	 * as long as an IPv4 datagram can be, so that one gets the verdict it would get in
	 * one segment (an MTU over 9132 makes them longer than a frame of one message).
	 */
	uint8_t scratch[RTE_ETHER_HDR_LEN + UINT16_MAX];
	/* headers and arguments of a frame whose first segment ends inside them (the
	 * codec reads 2-byte aligned buffers) */
	uint8_t hdr_copy[AMRMA_WIRE_HDR_LEN + 8 * AMRMA_WIRE_MAX_ARGS] __rte_aligned(8);
} __rte_cache_aligned;

struct handler_ent {
	amrma_am_handler_t fn;
	void *arg;
};

struct amrma_node {
	struct amrma_node_conf conf;
	struct amrma_net_dev *dev;
	struct rte_mempool *pool;
	bool own_pool;
	uint32_t epoch;		/* our incarnation, carried in every frame */
	bool csum;		/* conf.csum resolved: UDP checksums sent and verified */
	uint64_t hz;
	uint64_t rto_tsc;
	uint64_t rto_max_tsc;
	uint64_t ack_delay_tsc;
	uint64_t dead_tsc;
	uint64_t tick_tsc;
	uint16_t max_payload;
	uint16_t coalesce_max;	/* largest coalesced frame we build; 0: never coalesce */
	uint32_t service_id;
	bool has_service;
	struct handler_ent handlers[AMRMA_WIRE_MAX_HANDLERS];
	/* amrma_node_leave(): answers awaited, the first error; here, not on the caller's
	 * stack, because answers that come too late still complete their operation */
	uint32_t leave_pending;
	int leave_status;
	uint16_t leave_gen;	/* amrma_node_leave() calls; late answers name an older one */
	/* the newest life of each peer node any of our contexts heard (0: none), so that
	 * a context whose channel closed to an older one may speak to it first */
	uint32_t *peer_life;	/* max_nodes entries, written atomically by any context */
	struct amrma_ctx *ctx;		/* nb_ctx entries */
};

/* A context heard life `epoch` of peer node `node`: keep the newest. */
static inline void
node_peer_life_seen(struct amrma_node *node, uint16_t peer, uint32_t epoch)
{
	uint32_t old = __atomic_load_n(&node->peer_life[peer], __ATOMIC_RELAXED);

	while ((old == 0 || (int32_t)(epoch - old) > 0) &&
	       !__atomic_compare_exchange_n(&node->peer_life[peer], &old, epoch, true,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

/* channel.c: reliability */
int chan_queue(struct amrma_ctx *ctx, struct channel *ch, struct rte_mbuf *m, bool open);
void chan_close_all(struct amrma_ctx *ctx);
void chan_on_ack(struct amrma_ctx *ctx, struct channel *ch, uint32_t ack, uint32_t sack,
		 uint64_t now);
void chan_acks_apply(struct amrma_ctx *ctx, uint64_t now);
/* 1: deliver, 0: drop (duplicate / out of window); `room` says whether we may accept */
int chan_on_seq(struct amrma_ctx *ctx, struct channel *ch, uint32_t seq, uint64_t now);
/* a frame of the life a closed channel was closed to: a copy of one we had is acked again */
void chan_closed_rx(struct amrma_ctx *ctx, struct channel *ch, uint32_t seq, uint64_t now);
void chan_ack_later(struct amrma_ctx *ctx, struct channel *ch, uint64_t now);
void chan_timers(struct amrma_ctx *ctx, uint64_t now);
void chan_send_acks(struct amrma_ctx *ctx, uint64_t now, bool all);
void chan_fail(struct amrma_ctx *ctx, struct channel *ch, int status);
/* the channel starts over with the peer's life peer_epoch (closed: dead to it); its
 * operations are only marked: the caller fails them, op_fail_marked(-ECONNRESET) */
void chan_reset(struct amrma_ctx *ctx, struct channel *ch, uint32_t peer_epoch, bool closed);
static inline uint32_t chan_queued(const struct channel *ch)
{
	return ch->snd_nxt - ch->snd_una;
}

/* The header fields of a message to ch's endpoint. */
static inline void
msg_fields(const struct amrma_ctx *ctx, const struct channel *ch, uint8_t type,
	   uint16_t handler, unsigned int nargs, uint32_t len, int16_t status, uint32_t token,
	   struct amrma_wire_fields *f)
{
	*f = (struct amrma_wire_fields){
		.type = type,
		.nargs = (uint8_t)nargs,
		.src_ctx = (uint8_t)ctx->idx,
		.dst_ctx = ch->peer_ctx,
		.handler = handler,
		.src_node = ctx->node->conf.node_id,
		.dst_node = ch->peer_node,
		.payload_len = (uint16_t)len,
		.status = status,
		.token = token,
		.dst_epoch = ch->peer_epoch,
	};
}

/* frame.c: building frames */
struct rte_mbuf *frame_alloc(struct amrma_ctx *ctx, const struct channel *ch,
			     const struct amrma_wire_fields *f, const uint64_t *args,
			     const void *payload);
void frame_over(const struct channel *ch, struct rte_mbuf *m,
		const struct amrma_wire_fields *f, const uint64_t *args, const void *payload);
struct rte_mbuf *frame_alloc_chain(struct amrma_ctx *ctx, const struct channel *ch,
				   const struct amrma_wire_fields *f, const uint64_t *args,
				   struct rte_mbuf *payload);
/* UDP checksum of a frame in segments: see frame.c */
uint16_t frame_udp_sum(const struct rte_mbuf *m, const struct rte_ipv4_hdr *ip);
void frame_set_dst_epoch(const struct amrma_ctx *ctx, uint8_t *frame, struct rte_mbuf *m,
			 size_t len, uint32_t epoch);
void frame_finalize(struct amrma_ctx *ctx, struct channel *ch, struct rte_mbuf *m,
		    uint32_t seq);
void ctx_tx(struct amrma_ctx *ctx, struct rte_mbuf *m);
/* hand the queued frames to the port; open frames stay open */
void ctx_tx_burst(struct amrma_ctx *ctx);

/* Close the open frames (they join the TX queue) and hand the queue to the port. Inline:
 * an idle poll calls it and should cost no call. */
static inline void
ctx_tx_flush(struct amrma_ctx *ctx)
{
	if (ctx->nb_open != 0)
		chan_close_all(ctx);
	if (ctx->nb_tx != 0)
		ctx_tx_burst(ctx);
}

/* poll.c: one round over every context, owed acks sent at once; true when settled */
bool node_poll_round(struct amrma_node *node);
/* 0 when this thread may poll the whole node now: -EINVAL (NULL), -EBUSY (its service
 * runs), -EPERM (inside one of its polls: a handler or a completion callback) */
int node_poll_here(const struct amrma_node *node);
/* TSC at which timeout_us from now has passed */
uint64_t node_deadline(const struct amrma_node *node, uint64_t timeout_us);

/* leave.c: peers that leave */
int leave_handler(struct amrma_ctx *ctx, amrma_am_token_t tok, const struct amrma_am_msg *msg,
		  void *arg);
void ctx_peer_left(struct amrma_ctx *ctx);
int ctx_parked_poll(struct amrma_ctx *ctx);

/* am.c: operations */
void op_mark_channel(struct amrma_ctx *ctx, struct channel *ch);
void op_fail_marked(struct amrma_ctx *ctx, int status);
/* A one-way message's frame was acknowledged: its operation completes. */
void op_sent_acked(struct amrma_ctx *ctx, uint32_t idx);
/* true: the caller frees m (not kept by a handler, not handed to another context) */
bool am_rx_frame(struct amrma_ctx *ctx, struct rte_mbuf *m, uint64_t now, bool redirected);

/* Take a reference on every segment: freeing a chain drops one on each. */
static inline void
mbuf_ref_chain(struct rte_mbuf *m)
{
	for (; m != NULL; m = m->next)
		rte_mbuf_refcnt_update(m, 1);
}

/* amrma_am_max_payload() for the hot paths */
static inline uint16_t
max_payload(const struct amrma_ctx *ctx, unsigned int nargs)
{
	uint16_t max = ctx->node->max_payload;
	unsigned int a = 8u * RTE_MIN(nargs, (unsigned int)AMRMA_WIRE_MAX_ARGS);

	return max > a ? max - a : 0;
}

static inline struct channel *
ctx_channel(struct amrma_ctx *ctx, uint16_t node, uint8_t pctx)
{
	struct channel *arr;

	if (node >= ctx->node->conf.max_nodes || ctx->by_node[node] == NULL ||
	    pctx >= ctx->peer_nb_ctx[node])
		return NULL;
	arr = ctx->by_node[node];
	return &arr[pctx];
}

/*
 * Add a message to the channel's open frame (the last one queued, not sent yet) when it
 * fits there; one frame then carries several messages for the cost of one. Inline: it
 * runs once per message on the hot paths.
 */
static inline bool
frame_append(struct amrma_ctx *ctx, struct channel *ch, uint8_t type, uint16_t handler,
	     const uint64_t *args, unsigned int nargs, const void *payload, uint16_t len,
	     int16_t status, uint32_t token)
{
	struct rte_mbuf *m = ch->open;
	uint32_t n = (uint32_t)amrma_wire_sub_len(nargs, len);

	/* coalesce_max fits the node pool's data room (node.c), but a reply open over its
	 * request's frame lives in an RX mbuf, whose pool may be smaller */
	if (m == NULL || ch->open_msgs >= AMRMA_WIRE_MAX_BUNDLE ||
	    m->data_len + n > ctx->node->coalesce_max || n > rte_pktmbuf_tailroom(m))
		return false;
	amrma_wire_sub_put(rte_pktmbuf_mtod_offset(m, void *, m->data_len), type, handler,
			   status, token, args, nargs, payload, len);
	m->data_len = (uint16_t)(m->data_len + n);
	m->pkt_len += n;
	/* lengths and checksums are settled once, when the frame is finalized */
	if (ch->open_msgs++ == 1)
		amrma_wire_hdr_of(rte_pktmbuf_mtod(m, void *))->flags |= AMRMA_WIRE_F_MORE;
	ctx->st.tx_coalesced++;
	return true;
}

#endif /* AMRMA_AM_PRIV_H */
