/* SPDX-License-Identifier: BSD-3-Clause */
/* Requests, replies, handler dispatch and the request/reply rules. */

#include <rte_cycles.h>
#include <rte_ip.h>

#include "am_priv.h"

#define TOKEN_IDX(t)	((t) & 0xffffu)
#define TOKEN_GEN(t)	((uint16_t)((t) >> 16))

static int
check_size(const struct amrma_ctx *ctx, unsigned int nargs, const void *payload,
	   uint16_t len)
{
	if (nargs > AMRMA_WIRE_MAX_ARGS || (len != 0 && payload == NULL))
		return -EINVAL;
	if (len > max_payload(ctx, nargs))
		return -EMSGSIZE;
	return 0;
}

uint16_t
amrma_am_max_payload(const struct amrma_ctx *ctx, unsigned int nargs)
{
	return max_payload(ctx, nargs);
}

/* Everything a request needs before its frame exists: rules, sizes, room. */
static void peer_restarted(struct amrma_ctx *ctx, uint16_t node, uint32_t epoch);

/*
 * A channel that died with a peer's life (it left, or stopped answering) speaks to the
 * peer's newer life once any context of this node heard it: this one may never hear
 * from it first (a context that only ever asks). true if ch is open again.
 */
static bool
peer_reopen(struct amrma_ctx *ctx, struct channel *ch, uint16_t node)
{
	uint32_t life = __atomic_load_n(&ctx->node->peer_life[node], __ATOMIC_RELAXED);

	if (life == 0 || ch->peer_epoch == 0 || (int32_t)(life - ch->peer_epoch) <= 0)
		return false;
	peer_restarted(ctx, node, life);
	return !ch->dead;
}

static int
request_check(struct amrma_ctx *ctx, struct amrma_ep dst, uint16_t handler, unsigned int nargs,
	      uint32_t len, amrma_am_done_t done, struct channel **chp)
{
	struct channel *ch;

	if (unlikely(ctx->in_handler != IN_NONE)) {
		ctx->st.rule_violations++;
		return -EPERM;
	}
	if (nargs > AMRMA_WIRE_MAX_ARGS || handler >= AMRMA_WIRE_MAX_HANDLERS || done == NULL)
		return -EINVAL;
	if (len > max_payload(ctx, nargs))
		return -EMSGSIZE;
	ch = ctx_channel(ctx, dst.node, dst.ctx);
	if (ch == NULL)
		return -EINVAL;
	if (unlikely(ch->dead) && !peer_reopen(ctx, ch, dst.node))
		return -ENOTCONN;
	if (ctx->nb_op_free == 0 || chan_queued(ch) >= CH_REQ_SLOTS)
		return -EAGAIN;
	*chp = ch;
	return 0;
}

/* The token of the operation the next request takes. */
static inline uint32_t
request_token(const struct amrma_ctx *ctx)
{
	uint32_t idx = ctx->op_free[ctx->nb_op_free - 1];

	return ((uint32_t)ctx->ops[idx].gen << 16) | idx;
}

/*
 * The request's operation waits for its reply from now on (OP_WAIT), a one-way message's
 * for the acknowledgement of its frame (OP_SENT). Returns the operation's index.
 */
static uint32_t
request_track(struct amrma_ctx *ctx, struct channel *ch, amrma_am_done_t done, void *arg,
	      uint8_t state)
{
	uint32_t idx = ctx->op_free[--ctx->nb_op_free];
	struct op *op = &ctx->ops[idx];

	op->done = done;
	op->arg = arg;
	op->ch = ch;
	op->state = state;
	/* silence is measured from now, or outside a poll from when the request leaves
	 * (the clock is read then anyway; rdtsc costs 10-30 ns on VMs) */
	if (ch->ops++ == 0) {
		if (ctx->in_poll)
			ch->last_rx = ctx->now;
		else
			ch->silence_from_tx = true;
	}
	return idx;
}

/*
 * Queue a request's or one-way message's own frame. The operation is tracked first: a
 * frame that leaves at once must find its silence timer set. A one-way message travels at
 * the head of its frame (later messages may join it), so its slot names exactly one
 * operation, completed when the frame is acked.
 */
static void
msg_queue(struct amrma_ctx *ctx, struct channel *ch, struct rte_mbuf *m, uint8_t type,
	  bool open, amrma_am_done_t done, void *arg)
{
	uint32_t seq = ch->snd_nxt;
	uint32_t idx = request_track(ctx, ch, done, arg,
				     type == AMRMA_WIRE_SEND ? OP_SENT : OP_WAIT);

	chan_queue(ctx, ch, m, open);	/* cannot fail: room was checked */
	if (type == AMRMA_WIRE_SEND)
		ch->slot[seq & (CH_SLOTS - 1)].send_op = idx + 1;
}

/* A request (it may join an open frame) or a one-way message with a copied payload. */
static __rte_always_inline int
queue_copy(struct amrma_ctx *ctx, struct amrma_ep dst, uint8_t type, uint16_t handler,
	   const uint64_t *args, unsigned int nargs, const void *payload, uint16_t len,
	   amrma_am_done_t done, void *arg)
{
	struct amrma_wire_fields f;
	struct channel *ch;
	struct rte_mbuf *m;
	bool at_once;
	int ret;

	if (len != 0 && payload == NULL)
		return -EINVAL;
	ret = request_check(ctx, dst, handler, nargs, len, done, &ch);
	if (ret != 0)
		return ret;
	/*
	 * Outside a poll, a message to an idle channel leaves at once: nothing is in flight
	 * for it to wait behind, and coalescing only pays while frames queue up. (The next
	 * poll would send it anyway; a round trip need not wait for the application to
	 * call it.)
	 */
	at_once = !ctx->in_poll && ch->snd_una == ch->snd_nxt;
	if (!at_once && type != AMRMA_WIRE_SEND &&
	    frame_append(ctx, ch, type, handler, args, nargs, payload, len, 0,
			 request_token(ctx))) {
		request_track(ctx, ch, done, arg, OP_WAIT);
		return 0;
	}
	msg_fields(ctx, ch, type, handler, nargs, len, 0, request_token(ctx), &f);
	m = frame_alloc(ctx, ch, &f, args, payload);
	if (m == NULL)
		return -ENOBUFS;
	msg_queue(ctx, ch, m, type, !at_once, done, arg);
	if (at_once)
		ctx_tx_burst(ctx);
	return 0;
}

int
amrma_am_request(struct amrma_ctx *ctx, struct amrma_ep dst, uint16_t handler,
		 const uint64_t *args, unsigned int nargs, const void *payload,
		 uint16_t len, amrma_am_done_t done, void *arg)
{
	return queue_copy(ctx, dst, AMRMA_WIRE_REQUEST, handler, args, nargs, payload, len,
			  done, arg);
}

int
amrma_am_send(struct amrma_ctx *ctx, struct amrma_ep dst, uint16_t handler,
	      const uint64_t *args, unsigned int nargs, const void *payload, uint16_t len,
	      amrma_am_done_t done, void *arg)
{
	return queue_copy(ctx, dst, AMRMA_WIRE_SEND, handler, args, nargs, payload, len,
			  done, arg);
}

/*
 * A request or one-way message whose payload is an mbuf chain, in a frame of its own.
 * The chain is ours from the call on: freed on failure.
 */
static int
queue_mbuf(struct amrma_ctx *ctx, struct amrma_ep dst, uint8_t type, uint16_t handler,
	   const uint64_t *args, unsigned int nargs, struct rte_mbuf *payload,
	   amrma_am_done_t done, void *arg)
{
	struct amrma_wire_fields f;
	struct channel *ch;
	struct rte_mbuf *m;
	int ret;

	if (payload == NULL)
		return -EINVAL;
	ret = request_check(ctx, dst, handler, nargs, rte_pktmbuf_pkt_len(payload), done, &ch);
	if (ret == 0) {
		msg_fields(ctx, ch, type, handler, nargs, rte_pktmbuf_pkt_len(payload), 0,
			   request_token(ctx), &f);
		m = frame_alloc_chain(ctx, ch, &f, args, payload);
		if (m != NULL) {
			msg_queue(ctx, ch, m, type, false, done, arg);
			return 0;
		}
		ret = -ENOBUFS;
	}
	rte_pktmbuf_free(payload);
	return ret;
}

int
amrma_am_request_mbuf(struct amrma_ctx *ctx, struct amrma_ep dst, uint16_t handler,
		      const uint64_t *args, unsigned int nargs, struct rte_mbuf *payload,
		      amrma_am_done_t done, void *arg)
{
	return queue_mbuf(ctx, dst, AMRMA_WIRE_REQUEST, handler, args, nargs, payload, done,
			  arg);
}

int
amrma_am_send_mbuf(struct amrma_ctx *ctx, struct amrma_ep dst, uint16_t handler,
		   const uint64_t *args, unsigned int nargs, struct rte_mbuf *payload,
		   amrma_am_done_t done, void *arg)
{
	return queue_mbuf(ctx, dst, AMRMA_WIRE_SEND, handler, args, nargs, payload, done, arg);
}

/* A reply in the channel's open frame or in a frame of its own. */
static int
reply_queue(struct amrma_ctx *ctx, uint16_t handler, const uint64_t *args,
	    unsigned int nargs, const void *payload, uint16_t len, int16_t status)
{
	struct amrma_wire_fields f;
	struct rte_mbuf *m;

	if (!frame_append(ctx, ctx->tok_ch, AMRMA_WIRE_REPLY, handler, args, nargs, payload, len,
			  status, ctx->tok_wire)) {
		msg_fields(ctx, ctx->tok_ch, AMRMA_WIRE_REPLY, handler, nargs, len, status,
			   ctx->tok_wire, &f);
		m = frame_alloc(ctx, ctx->tok_ch, &f, args, payload);
		if (m == NULL)
			return -ENOBUFS;
		/* room for this reply was reserved before the handler ran */
		chan_queue(ctx, ctx->tok_ch, m, ctx->reply_open);
	}
	return 0;
}

/*
 * The reply can wait to be built over its request's frame: its payload is empty or in
 * that frame, the frame has the room, and no open frame would carry it for less.
 */
static inline bool
reply_fits_request(const struct amrma_ctx *ctx, unsigned int nargs, const void *payload,
		   uint16_t len)
{
	const struct rte_mbuf *m = ctx->tok_mbuf;
	uintptr_t base, p = (uintptr_t)payload;

	if (m == NULL || ctx->tok_ch->open != NULL)
		return false;
	base = (uintptr_t)rte_pktmbuf_mtod(m, const void *);
	return (len == 0 || (p >= base && p + len <= base + m->data_len)) &&
	       amrma_wire_hdr_len(nargs) + len <= (uint32_t)(m->buf_len - m->data_off);
}

/*
 * The handler returned: a waiting reply goes out, over the request's frame unless the
 * handler kept it. Returns true when the frame now carries the reply (the channel holds
 * it; the caller must not free it).
 */
static bool
reply_flush(struct amrma_ctx *ctx, struct rte_mbuf *m, bool kept)
{
	struct amrma_wire_fields f;

	ctx->reply_pend = false;
	if (kept) {
		/* the payload is in the kept frame, still there */
		if (reply_queue(ctx, ctx->pend.handler, ctx->pend.args, ctx->pend.nargs,
				ctx->pend.payload, ctx->pend.len, ctx->pend.status) != 0)
			ctx->st.tx_drops++;
		return false;
	}
	msg_fields(ctx, ctx->tok_ch, AMRMA_WIRE_REPLY, ctx->pend.handler, ctx->pend.nargs,
		   ctx->pend.len, ctx->pend.status, ctx->tok_wire, &f);
	frame_over(ctx->tok_ch, m, &f, ctx->pend.args, ctx->pend.payload);
	chan_queue(ctx, ctx->tok_ch, m, ctx->reply_open);
	ctx->st.replies_in_place++;
	return true;
}

int
amrma_am_reply(struct amrma_ctx *ctx, amrma_am_token_t tok, uint16_t handler,
	       const uint64_t *args, unsigned int nargs, const void *payload,
	       uint16_t len, int16_t status)
{
	int ret;

	if (ctx->in_handler != IN_REQUEST || tok != ctx->tok) {
		ctx->st.rule_violations++;
		return -EPERM;
	}
	if (ctx->replied) {
		ctx->st.rule_violations++;
		return -EALREADY;
	}
	ret = check_size(ctx, nargs, payload, len);
	if (ret != 0)
		return ret;
	if (handler >= AMRMA_WIRE_MAX_HANDLERS && handler != AMRMA_WIRE_NO_HANDLER)
		return -EINVAL;
	if (reply_fits_request(ctx, nargs, payload, len)) {
		ctx->pend.handler = handler;
		ctx->pend.nargs = (uint8_t)nargs;
		ctx->pend.status = status;
		ctx->pend.len = len;
		ctx->pend.payload = payload;
		if (nargs != 0)
			memcpy(ctx->pend.args, args, 8u * nargs);
		ctx->reply_pend = true;
	} else {
		ret = reply_queue(ctx, handler, args, nargs, payload, len, status);
		if (ret != 0)
			return ret;
	}
	ctx->replied = true;
	return 0;
}

static __rte_always_inline void
op_complete(struct amrma_ctx *ctx, uint32_t idx, int status)
{
	struct op *op = &ctx->ops[idx];
	amrma_am_done_t done = op->done;
	void *arg = op->arg;

	op->state = OP_FREE;
	op->gen++;
	op->ch->ops--;
	ctx->op_free[ctx->nb_op_free++] = idx;
	if (status == 0)
		ctx->st.ops_completed++;
	else
		ctx->st.ops_failed++;
	done(ctx, arg, status);
}

/*
 * The channel's operations are to fail (it was dropped). Marked first and failed apart,
 * by op_fail_marked() once the channel is in its new state: their callbacks may issue
 * requests (a retry to the peer's new life), which must neither be failed with them nor
 * queued into a channel about to be cleared.
 */
void
op_mark_channel(struct amrma_ctx *ctx, struct channel *ch)
{
	uint32_t i, n = ch->ops;

	for (i = 0; i < ctx->max_ops && n != 0; i++)
		if ((ctx->ops[i].state == OP_WAIT || ctx->ops[i].state == OP_SENT) &&
		    ctx->ops[i].ch == ch) {
			ctx->ops[i].state = OP_FAILING;
			ctx->nb_failing++;
			n--;
		}
}

void
op_fail_marked(struct amrma_ctx *ctx, int status)
{
	uint32_t i;

	for (i = 0; i < ctx->max_ops && ctx->nb_failing != 0; i++)
		if (ctx->ops[i].state == OP_FAILING) {
			ctx->nb_failing--;
			op_complete(ctx, i, status);
		}
}

uint32_t
amrma_ctx_peer_epoch(struct amrma_ctx *ctx, struct amrma_ep ep, bool *closed)
{
	const struct channel *ch = ctx_channel(ctx, ep.node, ep.ctx);

	if (closed != NULL)
		*closed = ch != NULL && ch->dead;
	return ch != NULL ? ch->peer_epoch : 0;
}

void
op_sent_acked(struct amrma_ctx *ctx, uint32_t idx)
{
	if (ctx->ops[idx].state == OP_SENT)
		op_complete(ctx, idx, 0);
}

/*
 * Point msg->payload at the payload: in place when the frame was parsed from one
 * buffer (linear), otherwise copied when it spans segments.
 */
static __rte_always_inline const void *
payload_of(struct amrma_ctx *ctx, struct rte_mbuf *m, const struct amrma_wire_view *v,
	   bool linear)
{
	if (v->hdr.payload_len == 0)
		return NULL;
	if (linear)
		return v->payload;
	return rte_pktmbuf_read(m, amrma_wire_hdr_len(v->hdr.nargs), v->hdr.payload_len,
				ctx->scratch);
}

static __rte_always_inline void
fill_msg(struct amrma_ctx *ctx, struct rte_mbuf *m, const struct amrma_wire_view *v,
	 bool linear, struct amrma_am_msg *msg)
{
	unsigned int i;

	msg->src.node = v->hdr.src_node;
	msg->src.ctx = v->hdr.src_ctx;
	msg->src_epoch = v->hdr.src_epoch;
	msg->handler = v->hdr.handler;
	msg->nargs = v->hdr.nargs;
	msg->status = v->hdr.status;
	for (i = 0; i < v->hdr.nargs; i++)
		msg->args[i] = amrma_wire_arg(v, i);
	msg->payload = payload_of(ctx, m, v, linear);
	msg->len = v->hdr.payload_len;
	msg->mbuf = m;
	msg->op_arg = NULL;
}

/* Returns true when the handler kept the mbuf. */
static __rte_always_inline bool
on_request(struct amrma_ctx *ctx, struct channel *ch, struct rte_mbuf *m,
	   const struct amrma_wire_view *v, bool linear)
{
	const struct handler_ent *h = &ctx->node->handlers[v->hdr.handler];
	struct amrma_am_msg msg;
	int ret = -ENOENT;
	bool over = false;

	ctx->in_handler = IN_REQUEST;
	ctx->replied = false;
	ctx->tok = ++ctx->tok_gen;
	ctx->tok_ch = ch;
	ctx->tok_wire = v->hdr.token;
	/* a frame of one message, in one direct segment that only we reference, can carry
	 * the reply back */
	ctx->tok_mbuf = !(v->hdr.flags & AMRMA_WIRE_F_MORE) && linear && RTE_MBUF_DIRECT(m) &&
			rte_mbuf_refcnt_read(m) == 1 ? m : NULL;
	if (h->fn != NULL) {
		fill_msg(ctx, m, v, linear, &msg);
		ctx->st.requests_handled++;
		ret = h->fn(ctx, ctx->tok, &msg, h->arg);
	} else {
		ctx->st.unknown_handler++;
	}
	if (!ctx->replied) {
		ctx->st.auto_replies++;
		amrma_am_reply(ctx, ctx->tok, AMRMA_WIRE_NO_HANDLER, NULL, 0, NULL, 0,
			       (int16_t)(ret < 0 ? ret : 0));
	}
	if (ctx->reply_pend)
		over = reply_flush(ctx, m, ret == AMRMA_AM_KEEP_MBUF);
	ctx->tok_mbuf = NULL;
	ctx->in_handler = IN_NONE;
	ctx->tok = 0;
	return ret == AMRMA_AM_KEEP_MBUF || over;
}

/* A one-way message: its handler runs, no reply is allowed or sent. */
static bool
on_send(struct amrma_ctx *ctx, struct rte_mbuf *m, const struct amrma_wire_view *v,
	bool linear)
{
	const struct handler_ent *h = &ctx->node->handlers[v->hdr.handler];
	struct amrma_am_msg msg;
	int ret;

	if (h->fn == NULL) {
		ctx->st.unknown_handler++;
		return false;
	}
	fill_msg(ctx, m, v, linear, &msg);
	ctx->st.sends_handled++;
	ctx->in_handler = IN_SEND;
	ret = h->fn(ctx, 0, &msg, h->arg);
	ctx->in_handler = IN_NONE;
	return ret == AMRMA_AM_KEEP_MBUF;
}

static __rte_always_inline bool
on_reply(struct amrma_ctx *ctx, struct channel *ch, struct rte_mbuf *m,
	 const struct amrma_wire_view *v, bool linear)
{
	uint32_t idx = TOKEN_IDX(v->hdr.token);
	struct amrma_am_msg msg;
	int status = v->hdr.status;
	struct op *op;
	int ret = 0;

	/* the token must name a waiting operation sent to exactly this endpoint */
	if (idx >= ctx->max_ops || ctx->ops[idx].state != OP_WAIT ||
	    ctx->ops[idx].gen != TOKEN_GEN(v->hdr.token) || ctx->ops[idx].ch != ch) {
		ctx->st.bad_token++;
		return false;
	}
	op = &ctx->ops[idx];
	if (v->hdr.handler != AMRMA_WIRE_NO_HANDLER) {
		const struct handler_ent *h = &ctx->node->handlers[v->hdr.handler];

		if (h->fn == NULL) {
			ctx->st.unknown_handler++;
			status = -ENOENT;
		} else {
			fill_msg(ctx, m, v, linear, &msg);
			msg.op_arg = op->arg;
			ctx->in_handler = IN_REPLY;
			ret = h->fn(ctx, 0, &msg, h->arg);
			ctx->in_handler = IN_NONE;
			if (ret < 0)
				status = ret;
		}
	}
	ctx->st.replies_handled++;
	op_complete(ctx, idx, status);
	return ret == AMRMA_AM_KEEP_MBUF;
}

static bool
csum_ok(const struct rte_mbuf *m)
{
	const uint64_t mask = RTE_MBUF_F_RX_IP_CKSUM_MASK | RTE_MBUF_F_RX_L4_CKSUM_MASK;

	return (m->ol_flags & mask) == (RTE_MBUF_F_RX_IP_CKSUM_GOOD | RTE_MBUF_F_RX_L4_CKSUM_GOOD);
}

/*
 * *linear: the view's pointers cover every message (one segment, or a copy of all).
 * A frame in segments gets the verdict it would get in one (test_seg_verdict).
 */
static enum amrma_wire_err
parse_mbuf(struct amrma_ctx *ctx, struct rte_mbuf *m, bool trusted,
	   struct amrma_wire_view *v, bool *linear)
{
	const struct amrma_wire_rx_params *rxp =
		(trusted || csum_ok(m)) ? &ctx->rxp_nocsum : &ctx->rxp;
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t len = rte_pktmbuf_pkt_len(m), hlen = rte_pktmbuf_data_len(m);
	const struct rte_ipv4_hdr *ip;
	enum amrma_wire_err err;

	*linear = m->nb_segs == 1;
	if (*linear)
		return amrma_wire_parse(p, hlen, rxp, v);
	if (unlikely(hlen < RTE_MIN(len, (uint32_t)sizeof(ctx->hdr_copy)))) {
		/* the first segment ends inside the headers or arguments (a port's small RX
		 * buffers): they are read from a copy, which the view's args point into */
		hlen = RTE_MIN(len, (uint32_t)sizeof(ctx->hdr_copy));
		p = rte_pktmbuf_read(m, 0, hlen, ctx->hdr_copy);
	}
	if (hlen >= AMRMA_WIRE_HDR_LEN &&
	    (amrma_wire_hdr_of((void *)(uintptr_t)p)->flags & AMRMA_WIRE_F_MORE)) {
		/* a coalesced frame the port split into segments: parse a copy of it. What
		 * lies past the longest datagram is padding, which the codec ignores */
		len = RTE_MIN(len, (uint32_t)sizeof(ctx->scratch));
		p = rte_pktmbuf_read(m, 0, len, ctx->scratch);
		*linear = true;
		return amrma_wire_parse(p, len, rxp, v);
	}
	err = amrma_wire_parse_hdr(p, hlen, len, rxp, v);
	if (err != AMRMA_WIRE_OK || rxp->skip_csum)
		return err;
	ip = (const void *)(p + sizeof(struct rte_ether_hdr));
	if (((const struct rte_udp_hdr *)(ip + 1))->dgram_cksum == 0)
		return rxp->require_csum ? AMRMA_WIRE_ERR_BAD_UDP_CSUM : AMRMA_WIRE_OK;
	if (frame_udp_sum(m, ip) != 0xffff)
		return AMRMA_WIRE_ERR_BAD_UDP_CSUM;
	return AMRMA_WIRE_OK;
}

static __rte_always_inline bool
dispatch(struct amrma_ctx *ctx, struct channel *ch, struct rte_mbuf *m,
	 const struct amrma_wire_view *v, bool linear)
{
	if (v->hdr.type == AMRMA_WIRE_REQUEST)
		return on_request(ctx, ch, m, v, linear);
	if (unlikely(v->hdr.type == AMRMA_WIRE_SEND))
		return on_send(ctx, m, v, linear);
	return on_reply(ctx, ch, m, v, linear);
}

/* An mbuf set aside for each of want replies; false (nothing taken) if the pool is short. */
static bool
reply_spares_fill(struct amrma_ctx *ctx, unsigned int want)
{
	unsigned int have = ctx->nb_reply_spare;

	if (rte_pktmbuf_alloc_bulk(ctx->pool, &ctx->reply_spare[have], want - have) != 0)
		return false;
	ctx->nb_reply_spare = (uint8_t)want;
	return true;
}

/* A node restarts as a whole: reset every channel of ours to any of its contexts. */
static void
peer_restarted(struct amrma_ctx *ctx, uint16_t node, uint32_t epoch)
{
	uint8_t k;

	for (k = 0; k < ctx->peer_nb_ctx[node]; k++) {
		struct channel *c = ctx_channel(ctx, node, k);

		if (c->peer_epoch != 0 && c->peer_epoch != epoch)
			chan_reset(ctx, c, epoch, false);
		else
			c->peer_epoch = epoch;
	}
	ctx->st.peer_restarts++;
	/* every channel to the new life is ready for what the callbacks issue */
	op_fail_marked(ctx, -ECONNRESET);
}

bool
am_rx_frame(struct amrma_ctx *ctx, struct rte_mbuf *m, uint64_t now, bool redirected)
{
	struct amrma_wire_view v;
	enum amrma_wire_err err;
	struct channel *ch;
	bool keep = false, linear, burst_more;

	ctx->st.rx_frames++;
	ctx->st.rx_bytes += m->pkt_len;
	err = parse_mbuf(ctx, m, redirected, &v, &linear);
	if (unlikely(err != AMRMA_WIRE_OK)) {
		ctx->st.rx_rejected[err]++;
		goto out;
	}
	if (v.hdr.dst_ctx != ctx->idx) {
		/* the port delivered it to the wrong queue: hand it to its context */
		struct amrma_ctx *to = &ctx->node->ctx[v.hdr.dst_ctx];

		if (!redirected && rte_ring_mp_enqueue(to->steer, m) == 0) {
			ctx->st.redirected++;
			ctx->st.rx_frames--;
			ctx->st.rx_bytes -= m->pkt_len;
			return false;
		}
		ctx->st.redirect_drops++;
		goto out;
	}
	ch = ctx_channel(ctx, v.hdr.src_node, v.hdr.src_ctx);
	if (unlikely(ch == NULL)) {
		ctx->st.unknown_peer++;
		goto out;
	}
	if (unlikely(v.hdr.src_epoch != ch->peer_epoch || v.hdr.dst_epoch != ctx->node->epoch ||
		     v.hdr.src_epoch == 0)) {
		/* from an earlier life of the peer, or from none: 0 is no node's life, it
		 * means "not known yet" in a channel, and a reset to it would take the old
		 * life's frames for a first contact (its requests would run again) */
		if (v.hdr.src_epoch == 0 ||
		    (ch->peer_epoch != 0 && (int32_t)(v.hdr.src_epoch - ch->peer_epoch) < 0)) {
			ctx->st.stale_epoch++;
			goto out;
		}
		if (ch->peer_epoch == 0)
			ch->peer_epoch = v.hdr.src_epoch;	/* first contact */
		else if (v.hdr.src_epoch != ch->peer_epoch)
			peer_restarted(ctx, v.hdr.src_node, v.hdr.src_epoch);
		node_peer_life_seen(ctx->node, v.hdr.src_node, v.hdr.src_epoch);
		if (v.hdr.dst_epoch != 0 && v.hdr.dst_epoch != ctx->node->epoch) {
			/* meant for our previous life: an ACK with our epoch makes the sender
			 * reset its channel instead of retrying into the void */
			ctx->st.stale_epoch++;
			ch->ack_now = true;
			chan_ack_later(ctx, ch, now);
			goto out;
		}
	}
	if (unlikely(ch->dead)) {
		/* closed to a life that left: nothing of it runs, but a frame it sends again
		 * (its LEAVE, whose ack was lost) is acked again, or it would wait for good */
		if (ch->closed && v.hdr.type != AMRMA_WIRE_ACK)
			chan_closed_rx(ctx, ch, v.hdr.seq, now);
		goto out;
	}
	ch->last_rx = now;
	if (v.hdr.flags & AMRMA_WIRE_F_ACK_VALID) {
		/* applied after the handlers (chan_acks_apply); one entry per frame of a
		 * burst, so the table only fills if a caller hands over more than a burst */
		struct rx_ack *a;

		if (unlikely(ctx->nb_rx_acks == RX_BURST))
			chan_acks_apply(ctx, now);
		a = &ctx->rx_acks[ctx->nb_rx_acks++];

		a->ch = ch;
		a->peer_epoch = ch->peer_epoch;
		a->ack = v.hdr.ack;
		a->sack = v.hdr.sack;
	}
	if (v.hdr.type == AMRMA_WIRE_ACK)
		goto out;
	/* requests run only if each reply will fit; otherwise the frame is resent later.
	 * The acks that came so far may make the room. */
	if (v.nb_req != 0 && chan_queued(ch) + v.nb_req > CH_SLOTS) {
		chan_acks_apply(ctx, now);
		if (chan_queued(ch) + v.nb_req > CH_SLOTS) {
			ctx->st.no_reply_room++;
			goto out;
		}
	}
	if (unlikely(v.nb_req > ctx->nb_reply_spare) && !reply_spares_fill(ctx, v.nb_req)) {
		ctx->st.no_reply_mbuf++;
		goto out;
	}
	if (!chan_on_seq(ctx, ch, v.hdr.seq, now))
		goto out;
	if (likely(!(v.hdr.flags & AMRMA_WIRE_F_MORE))) {
		keep = dispatch(ctx, ch, m, &v, linear);
		goto out;
	}
	/* a coalesced frame: its messages in order; a handler keeping the mbuf gets a
	 * reference of its own */
	ctx->st.rx_coalesced += v.nb_msgs - 1u;
	burst_more = ctx->reply_open;
	for (;;) {
		/* the frame's later messages may still join a reply's frame */
		ctx->reply_open = burst_more || v.more_len != 0;
		if (dispatch(ctx, ch, m, &v, linear))
			mbuf_ref_chain(m);
		if (v.more_len == 0)
			break;
		amrma_wire_next(&v);
	}
out:
	return !keep;
}
