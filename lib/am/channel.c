/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reliable channels: sequence numbers, cumulative + selective acks, retransmission of the
 * held mbufs with exponential back-off, and a retry budget after which the peer is dead.
 */

#include <assert.h>
#include <string.h>

#include <rte_cycles.h>

#include "am_priv.h"

static inline int32_t
seq_diff(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b);
}

/* The inline entry of a slot: its sequence number modulo TX_INLINE_SLOTS. */
static inline unsigned int
inl_entry(const struct channel *ch, const struct txslot *s)
{
	return (unsigned int)(s - ch->slot) & (TX_INLINE_SLOTS - 1);
}

/*
 * Copy a small frame in whole 64-byte blocks: fixed-size copies compile to a few vector
 * moves, where a variable-length one is a call. Both buffers have room for the round-up
 * (the store's entries are TX_INLINE_MAX long, mbufs are checked by the caller).
 */
static_assert(TX_INLINE_MAX % 64 == 0, "the inline store is copied in 64-byte blocks");

static __rte_always_inline void
copy_blocks(void *dst, const void *src, unsigned int len)
{
	unsigned int o;

	for (o = 0; o < len; o += 64)
		memcpy((uint8_t *)dst + o, (const uint8_t *)src + o, 64);
}

/*
 * Keep a finalized small frame as a copy instead of a second reference: a port frees
 * an mbuf of refcnt 2 with an atomic decrement, whose wait for the store buffer to drain
 * cost about 10 % of a small round trip over net_memif (docs/bench.md), more than the
 * copy. Returns false when the frame stays an mbuf (long, chained, external, offloads,
 * or its entry still taken by a frame TX_INLINE_SLOTS older).
 */
static bool
slot_keep_inline(const struct amrma_ctx *ctx, struct channel *ch, struct txslot *s)
{
	const struct rte_mbuf *m = s->m;
	unsigned int e = inl_entry(ch, s);

	if (m->nb_segs != 1 || m->data_len > ctx->node->conf.tx_inline_max ||
	    RTE_MBUF_HAS_EXTBUF(m) || (m->ol_flags & RTE_MBUF_F_TX_OFFLOAD_MASK) != 0 ||
	    (ch->inl_busy & (1u << e)) ||
	    rte_pktmbuf_tailroom(m) < TX_INLINE_MAX - m->data_len)
		return false;
	copy_blocks(ch->inl[e], rte_pktmbuf_mtod(m, const void *), m->data_len);
	ch->inl_busy |= 1u << e;
	s->inl_len = m->data_len;
	s->m = NULL;
	return true;
}

/* A frame for the port rebuilt from the inline store: the port may free it at once. */
static struct rte_mbuf *
inline_frame(struct amrma_ctx *ctx, const struct channel *ch, const struct txslot *s)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(ctx->pool);

	if (m == NULL)
		return NULL;
	if (unlikely(rte_pktmbuf_tailroom(m) < TX_INLINE_MAX)) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	copy_blocks(rte_pktmbuf_mtod(m, void *), ch->inl[inl_entry(ch, s)], s->inl_len);
	m->data_len = s->inl_len;
	m->pkt_len = s->inl_len;
	m->l2_len = sizeof(struct rte_ether_hdr);
	m->l3_len = sizeof(struct rte_ipv4_hdr);
	return m;
}

/*
 * A retransmission of a frame sent before the peer's life was known names it now
 * (frame_set_dst_epoch). A frame that the port or the receiver may still read is not
 * written: the slot takes a copy. False when there is no mbuf for that copy.
 */
static bool
resend_names_peer(struct amrma_ctx *ctx, struct channel *ch, struct txslot *s)
{
	struct rte_mbuf *m = s->m, *c;
	uint8_t *frame;

	if (m == NULL) {
		frame = ch->inl[inl_entry(ch, s)];
		if (amrma_wire_hdr_of(frame)->dst_epoch == 0)
			frame_set_dst_epoch(ctx, frame, NULL, s->inl_len, ch->peer_epoch);
		return true;
	}
	if (amrma_wire_hdr_of(rte_pktmbuf_mtod(m, void *))->dst_epoch != 0)
		return true;
	if (rte_mbuf_refcnt_read(m) != 1 || !RTE_MBUF_DIRECT(m) || m->nb_segs != 1) {
		c = rte_pktmbuf_copy(m, ctx->pool, 0, UINT32_MAX);
		if (c == NULL)
			return false;
		c->ol_flags = m->ol_flags;
		c->tx_offload = m->tx_offload;
		rte_pktmbuf_free(m);
		s->m = m = c;
	}
	frame_set_dst_epoch(ctx, rte_pktmbuf_mtod(m, uint8_t *), m, rte_pktmbuf_data_len(m),
			    ch->peer_epoch);
	return true;
}

static void
transmit(struct amrma_ctx *ctx, struct channel *ch, struct txslot *s, uint64_t now)
{
	struct rte_mbuf *m;

	/* an empty pipe starts the timer; otherwise it runs from the last progress */
	if (ch->snd_una == ch->snd_sent || ch->timer_due == 0)
		ch->timer_due = now + ch->rto;
	s->sent_tsc = now;
	if (unlikely(s->tries != 0) && ch->peer_epoch != 0 && !resend_names_peer(ctx, ch, s)) {
		ctx->st.tx_drops++;	/* the timer tries again */
		return;
	}
	m = s->m;
	s->tries++;
	if (unlikely(ch->silence_from_tx)) {
		ch->silence_from_tx = false;
		ch->last_rx = RTE_MAX(ch->last_rx, now);
	}
	if (m == NULL) {
		/* a retransmission from the inline store; without an mbuf the timer
		 * tries again */
		m = inline_frame(ctx, ch, s);
		if (m == NULL) {
			ctx->st.tx_drops++;
			return;
		}
	} else if (!slot_keep_inline(ctx, ch, s)) {
		/* the channel keeps its reference for retransmission; the port gets
		 * another */
		mbuf_ref_chain(m);
	}
	ctx_tx(ctx, m);
}

/* Send queued frames as the window opens; the open frame waits to be closed. */
static inline void
chan_push(struct amrma_ctx *ctx, struct channel *ch)
{
	uint16_t window = ctx->node->conf.window;
	uint32_t end = ch->snd_nxt - (ch->open != NULL);

	if (ch->snd_sent == end)
		return;
	/* outside a poll the poll's clock may be old: frames are timed from now (requests
	 * are stamped here, when they leave, not when they are issued) */
	if (!ctx->in_poll)
		ctx->now = rte_rdtsc();
	while (ch->snd_sent != end && ch->snd_sent - ch->snd_una < window) {
		struct txslot *s = &ch->slot[ch->snd_sent & (CH_SLOTS - 1)];

		frame_finalize(ctx, ch, s->m, ch->snd_sent);
		transmit(ctx, ch, s, ctx->now);
		ch->snd_sent++;
	}
}

/*
 * Queue a frame. With open, later messages to the same endpoint may join it
 * (frame_append) until the context's next TX flush closes it; a frame queued after it
 * closes it first, so frames keep their order.
 */
int
chan_queue(struct amrma_ctx *ctx, struct channel *ch, struct rte_mbuf *m, bool open)
{
	struct txslot *s;

	if (chan_queued(ch) >= CH_SLOTS)
		return -EAGAIN;
	ch->open = NULL;
	if (open && ctx->node->coalesce_max != 0 && m->nb_segs == 1) {
		ch->open = m;
		ch->open_msgs = 1;
		if (!ch->in_open_list) {
			ch->in_open_list = true;
			ctx->open_list[ctx->nb_open++] = ch;
		}
	}
	s = &ch->slot[ch->snd_nxt & (CH_SLOTS - 1)];
	s->m = m;
	s->sent_tsc = 0;
	s->tries = 0;
	s->inl_len = 0;
	s->send_op = 0;
	if (ch->snd_una == ch->snd_nxt)
		ch->retries = 0;	/* the timer starts from this frame */
	ch->snd_nxt++;
	chan_push(ctx, ch);
	return 0;
}

/* Every open frame leaves: the flush that sends them is about to happen. */
void
chan_close_all(struct amrma_ctx *ctx)
{
	/* popped before the push, so the list is consistent whatever the push does */
	while (ctx->nb_open != 0) {
		struct channel *ch = ctx->open_list[--ctx->nb_open];

		ch->in_open_list = false;
		if (ch->open != NULL) {
			ch->open = NULL;
			chan_push(ctx, ch);
		}
	}
}

/* The slot no longer holds its frame; returns the mbuf to free, if it had one. */
static inline struct rte_mbuf *
slot_take(struct channel *ch, struct txslot *s)
{
	struct rte_mbuf *m = s->m;

	s->m = NULL;
	if (s->inl_len != 0) {
		ch->inl_busy &= ~(1u << inl_entry(ch, s));
		s->inl_len = 0;
	}
	return m;
}

static void
slot_release(struct channel *ch, struct txslot *s)
{
	rte_pktmbuf_free(slot_take(ch, s));
}

/* RFC 6298 estimator; the timeout never goes below the configured minimum. */
static void
rtt_sample(struct amrma_ctx *ctx, struct channel *ch, uint64_t rtt)
{
	uint64_t err;

	if (ch->srtt == 0) {
		ch->srtt = rtt;
		ch->rttvar = rtt / 2;
	} else {
		err = rtt > ch->srtt ? rtt - ch->srtt : ch->srtt - rtt;
		ch->rttvar = (3 * ch->rttvar + err) / 4;
		ch->srtt = (7 * ch->srtt + rtt) / 8;
	}
	ch->rto = RTE_MAX(ctx->node->rto_tsc, ch->srtt + 4 * ch->rttvar);
	ch->rto = RTE_MIN(ch->rto, ctx->node->rto_max_tsc);
}

void
chan_on_ack(struct amrma_ctx *ctx, struct channel *ch, uint32_t ack, uint32_t sack,
	    uint64_t now)
{
	uint32_t sent_ops[CH_SLOTS];	/* one-way messages acknowledged now */
	unsigned int i, nb_sent = 0;
	bool progress = false;

	/* acking what we never sent is hostile or corrupt: ignore it */
	if (seq_diff(ack, ch->snd_sent) > 0) {
		ctx->st.bad_ack++;
		return;
	}
	if (seq_diff(ack, ch->snd_una) < 0)
		return;		/* stale: an older frame, or a retransmission */
	if (ack != ch->snd_una) {
		const struct txslot *last = &ch->slot[(ack - 1) & (CH_SLOTS - 1)];

		if (slot_held(last) && last->tries == 1 && now > last->sent_tsc)
			rtt_sample(ctx, ch, now - last->sent_tsc);
	}
	while (ch->snd_una != ack) {
		struct rte_mbuf *done[64];
		unsigned int n = 0;

		/* one bulk free per burst of acknowledged frames */
		for (; ch->snd_una != ack && n < RTE_DIM(done); ch->snd_una++) {
			struct txslot *s = &ch->slot[ch->snd_una & (CH_SLOTS - 1)];
			struct rte_mbuf *m = slot_take(ch, s);

			if (m != NULL)
				done[n++] = m;
			if (s->send_op != 0) {
				sent_ops[nb_sent++] = s->send_op - 1;
				s->send_op = 0;
			}
		}
		if (n != 0)
			rte_pktmbuf_free_bulk(done, n);
		progress = true;
	}
	/* the receiver holds frames past a hole: resend the hole once, now (fast
	 * retransmit), instead of waiting for the timer */
	if (ack == ch->snd_una && ack != ch->snd_sent && __builtin_popcount(sack) >= 3) {
		struct txslot *hole = &ch->slot[ack & (CH_SLOTS - 1)];

		if (slot_held(hole) && hole->tries == 1) {
			ctx->st.fast_retransmits++;
			ctx->st.retransmits++;
			transmit(ctx, ch, hole, now);
		}
	}
	/* a receiver never discards what it acknowledged selectively: free those now */
	for (i = 0; sack != 0 && i < AMRMA_WIRE_SACK_BITS; i++, sack >>= 1) {
		uint32_t seq = ack + 1 + i;

		if ((sack & 1) && seq_diff(seq, ch->snd_sent) < 0) {
			struct txslot *s = &ch->slot[seq & (CH_SLOTS - 1)];

			if (slot_held(s)) {
				slot_release(ch, s);
				progress = true;
				if (s->send_op != 0) {
					sent_ops[nb_sent++] = s->send_op - 1;
					s->send_op = 0;
				}
			}
		}
	}
	if (progress) {
		ch->timer_due = now + ch->rto;
		if (ch->retries != 0) {
			/* undo the back-off: the estimate is good again */
			ch->retries = 0;
			ch->rto = ch->srtt ? RTE_MAX(ctx->node->rto_tsc,
					     ch->srtt + 4 * ch->rttvar) : ctx->node->rto_tsc;
			ch->rto = RTE_MIN(ch->rto, ctx->node->rto_max_tsc);
		}
		chan_push(ctx, ch);
	}
	/* last: their callbacks may queue frames on this channel */
	for (i = 0; i < nb_sent; i++)
		op_sent_acked(ctx, sent_ops[i]);
}

/*
 * The acknowledgements of the frames just handled, in the order they came. They wait
 * until the handlers ran and their replies left: freeing acknowledged frames and sampling
 * the RTT is bookkeeping that a round trip should not wait for.
 */
void
chan_acks_apply(struct amrma_ctx *ctx, uint64_t now)
{
	uint32_t i, n = ctx->nb_rx_acks;

	ctx->nb_rx_acks = 0;	/* first: what runs below may receive nothing, but be safe */
	for (i = 0; i < n; i++) {
		const struct rx_ack *a = &ctx->rx_acks[i];

		if (!a->ch->dead && a->ch->peer_epoch == a->peer_epoch)
			chan_on_ack(ctx, a->ch, a->ack, a->sack, now);
	}
}

void
chan_ack_later(struct amrma_ctx *ctx, struct channel *ch, uint64_t now)
{
	if (ch->ack_pending++ == 0)
		ch->ack_due = now + ctx->node->ack_delay_tsc;
	if (!ch->in_ack_list) {
		ch->in_ack_list = true;
		ctx->ack_list[ctx->nb_ack++] = ch;
	}
}

/* d = seq - rcv_next: seq was received already */
static inline bool
seq_is_copy(const struct channel *ch, int32_t d)
{
	return d < 0 || (d > 0 && d < (int32_t)RCV_WIN && ((ch->rcv_mask >> (d - 1)) & 1));
}

static void
ack_again(struct amrma_ctx *ctx, struct channel *ch, uint64_t now)
{
	ctx->st.duplicates++;
	ch->ack_now = true;
	chan_ack_later(ctx, ch, now);
}

void
chan_closed_rx(struct amrma_ctx *ctx, struct channel *ch, uint32_t seq, uint64_t now)
{
	if (seq_is_copy(ch, seq_diff(seq, ch->rcv_next)))
		ack_again(ctx, ch, now);
}

int
chan_on_seq(struct amrma_ctx *ctx, struct channel *ch, uint32_t seq, uint64_t now)
{
	int32_t d = seq_diff(seq, ch->rcv_next);

	/* bounds first: the bitmap only covers the window (a hostile seq is anything) */
	if (d >= (int32_t)RCV_WIN) {
		ctx->st.out_of_window++;
		return 0;
	}
	if (seq_is_copy(ch, d)) {
		/* the sender missed our ack: tell it again at once */
		ack_again(ctx, ch, now);
		return 0;
	}
	if (d == 0) {
		ch->rcv_next++;
		while (ch->rcv_mask & 1) {
			ch->rcv_mask >>= 1;
			ch->rcv_next++;
		}
		ch->rcv_mask >>= 1;
	} else {
		ch->rcv_mask |= UINT64_C(1) << (d - 1);
	}
	chan_ack_later(ctx, ch, now);
	return 1;
}

static void
send_ack(struct amrma_ctx *ctx, struct channel *ch)
{
	struct amrma_wire_fields f;
	struct rte_mbuf *m;

	msg_fields(ctx, ch, AMRMA_WIRE_ACK, AMRMA_WIRE_NO_HANDLER, 0, 0, 0, 0, &f);
	m = frame_alloc(ctx, ch, &f, NULL, NULL);

	if (m == NULL)
		return;		/* try again at the next poll */
	frame_finalize(ctx, ch, m, 0);
	ctx->st.acks_sent++;
	ctx_tx(ctx, m);
}

void
chan_send_acks(struct amrma_ctx *ctx, uint64_t now, bool all)
{
	uint16_t every = ctx->node->conf.ack_every;
	uint32_t i, keep = 0;

	for (i = 0; i < ctx->nb_ack; i++) {
		struct channel *ch = ctx->ack_list[i];

		if (ch->ack_pending == 0 && !ch->ack_now) {
			ch->in_ack_list = false;	/* a data frame carried it */
			continue;
		}
		if (all || ch->ack_now || ch->ack_pending >= every || now >= ch->ack_due) {
			send_ack(ctx, ch);
			if (ch->ack_pending == 0) {
				ch->in_ack_list = false;
				continue;
			}
		}
		ctx->ack_list[keep++] = ch;
	}
	ctx->nb_ack = keep;
}

/* Drop everything the channel holds and mark its operations to fail (op_fail_marked). */
static void
chan_drop(struct amrma_ctx *ctx, struct channel *ch)
{
	uint32_t seq;

	ch->open = NULL;
	for (seq = ch->snd_una; seq != ch->snd_nxt; seq++) {
		slot_release(ch, &ch->slot[seq & (CH_SLOTS - 1)]);
		ch->slot[seq & (CH_SLOTS - 1)].send_op = 0;	/* failed below, not acked */
	}
	ch->snd_una = ch->snd_sent = ch->snd_nxt;
	op_mark_channel(ctx, ch);
}

void
chan_fail(struct amrma_ctx *ctx, struct channel *ch, int status)
{
	if (!ch->dead && status == -ETIMEDOUT) {
		ctx->st.peers_dead++;
		AM_LOG(WARNING, "node %u ctx %u: peer %u.%u not answering, failing its operations",
		       ctx->node->conf.node_id, ctx->idx, ch->peer_node, ch->peer_ctx);
	}
	ch->dead = true;
	chan_drop(ctx, ch);
	op_fail_marked(ctx, status);
}

/* The peer restarted: forget both sequence spaces and start over with its new life. */
void
chan_reset(struct amrma_ctx *ctx, struct channel *ch, uint32_t peer_epoch, bool closed)
{
	chan_drop(ctx, ch);
	/* a dead channel comes back with the peer's new life; one closed to a peer that
	 * left stays dead, and remembers what that life sent (chan_closed_rx()) */
	ch->dead = closed;
	ch->closed = closed;
	ch->snd_una = ch->snd_sent = ch->snd_nxt = 0;
	if (!closed) {
		ch->rcv_next = 0;
		ch->rcv_mask = 0;
	}
	ch->ack_pending = 0;
	ch->ack_now = false;
	ch->retries = 0;
	ch->timer_due = 0;
	ch->srtt = ch->rttvar = 0;
	ch->rto = ctx->node->rto_tsc;
	ch->peer_epoch = peer_epoch;
	ch->left = false;	/* a new life, or closed now */
	ch->bye = false;
}

/*
 * One retransmission timer per channel (RFC 6298 style): it runs from the last progress;
 * on expiry every unacknowledged frame older than the timeout is resent, the timeout
 * doubles, and max_retries expiries in a row without progress declare the peer dead.
 */
static void
chan_timer(struct amrma_ctx *ctx, struct channel *ch, uint64_t now)
{
	const struct amrma_node *node = ctx->node;
	uint32_t seq;

	if (ch->dead)
		return;
	if (ch->snd_una != ch->snd_sent) {
		if (now < ch->timer_due)
			return;
		if (ch->retries >= node->conf.max_retries) {
			chan_fail(ctx, ch, -ETIMEDOUT);
			return;
		}
		for (seq = ch->snd_una; seq != ch->snd_sent; seq++) {
			struct txslot *s = &ch->slot[seq & (CH_SLOTS - 1)];

			/* frames sent while this poll ran are younger than `now` */
			if (slot_held(s) && (seq == ch->snd_una ||
					     (now > s->sent_tsc && now - s->sent_tsc >= ch->rto))) {
				ctx->st.retransmits++;
				transmit(ctx, ch, s, now);
			}
		}
		ctx->st.timeouts++;
		ch->retries++;
		ch->rto = RTE_MIN(ch->rto * 2, node->rto_max_tsc);
		ch->timer_due = now + ch->rto;
		return;
	}
	/* everything acknowledged but replies missing and the peer silent: it died after
	 * taking our requests */
	if (ch->ops != 0 && now > ch->last_rx && now - ch->last_rx > node->dead_tsc)
		chan_fail(ctx, ch, -ETIMEDOUT);
}

void
chan_timers(struct amrma_ctx *ctx, uint64_t now)
{
	uint32_t i;

	for (i = 0; i < ctx->nb_chan; i++) {
		struct channel *ch = ctx->all[i];

		if (ch->snd_una != ch->snd_sent || ch->ops != 0)
			chan_timer(ctx, ch, now);
	}
}
