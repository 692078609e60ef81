/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Peers that leave for good (amrma_node_leave()).
 *
 * The leaving node tells every context of each peer it heard from, in a one-way message
 * whose ack is the answer: the handler runs before anything acks its frame. A context
 * that is told closes its channels to that node and, on a port whose link goes with its
 * one peer (net_memif), parks: it touches the port no more until the link has gone down
 * and come up again. net_memif of DPDK 22.11 unmaps a side's rings in its control thread
 * when the peer disconnects, with nothing that holds off a poll running in them; parked
 * contexts are not in them. A closed channel still acks what it had from the life that
 * left (chan_closed_rx()): when the ack of the LEAVE is lost, the copy the leaving node
 * sends again gets one, where a request's reply could not be sent again.
 */

#include <rte_cycles.h>

#include "am_priv.h"

/*
 * A parked context whose link did not go down resumes after this long: the peer that
 * left is not closing the link on its way out, or is not on the other end of it (testpmd
 * forwarding between two memif ports is). Meanwhile the context answers nobody.
 */
#define PARK_MAX_MS 500u

int
leave_handler(struct amrma_ctx *ctx, amrma_am_token_t tok, const struct amrma_am_msg *msg,
	      void *arg)
{
	uint8_t k;

	RTE_SET_USED(tok);
	RTE_SET_USED(arg);
	/* a one-way message says that a peer leaves (a request too, as before: its
	 * automatic reply answers); a reply naming this handler is no such thing */
	if (ctx->in_handler == IN_REPLY)
		return 0;
	ctx->st.peers_left++;
	/* its ack leaves in this poll, ahead of the closing */
	ctx_channel(ctx, msg->src.node, msg->src.ctx)->ack_now = true;
	/* not now: the answer must reach the port first. Every channel to that node is
	 * marked, so peers leaving in one poll are all handled */
	for (k = 0; k < ctx->peer_nb_ctx[msg->src.node]; k++) {
		struct channel *ch = ctx_channel(ctx, msg->src.node, k);

		/* one it never heard from closes to that life too, not to epoch 0: the
		 * node's next life must find it open */
		if (ch->peer_epoch == 0)
			ch->peer_epoch = msg->src_epoch;
		ch->left = true;
	}
	ctx->peers_leaving = true;
	return 0;
}

void
ctx_peer_left(struct amrma_ctx *ctx)
{
	bool closed = false;
	uint32_t i;

	if (ctx->nb_tx != 0 || ctx->nb_open != 0)
		return;		/* the port took not all yet: the next poll tries again */
	ctx->peers_leaving = false;
	/*
	 * What we hold for the peer is dropped, what waits for it fails, and the channels
	 * stay closed to the life that left (its frames still on the way are dropped,
	 * requests to it fail with -ENOTCONN) until its next life speaks. A channel whose
	 * peer restarted meanwhile lost its mark in chan_reset().
	 */
	for (i = 0; i < ctx->nb_chan; i++) {
		struct channel *ch = ctx->all[i];

		if (!ch->left)
			continue;
		chan_reset(ctx, ch, ch->peer_epoch, true);
		closed = true;
	}
	/* closed first: a callback's request to the peer fails at once (-ENOTCONN) */
	op_fail_marked(ctx, -ECONNRESET);
	if (!closed || !ctx->dev->link_per_peer)
		return;
	ctx->parked = true;
	ctx->park_saw_down = false;
	ctx->park_tsc = ctx->now;
	ctx->st.parks++;
}

int
ctx_parked_poll(struct amrma_ctx *ctx)
{
	struct rte_mbuf *pkts[RX_BURST];
	unsigned int n;

	ctx->now = rte_rdtsc();
	/* other contexts took these off the port for us: the leaving peer's last frames */
	while ((n = rte_ring_sc_dequeue_burst(ctx->steer, (void **)pkts, RX_BURST,
					      NULL)) != 0) {
		ctx->st.parked_drops += n;
		rte_pktmbuf_free_bulk(pkts, n);
	}
	if (!amrma_net_link_up(ctx->dev))
		ctx->park_saw_down = true;
	else if (ctx->park_saw_down ||
		 ctx->now - ctx->park_tsc >= ctx->node->hz / 1000 * PARK_MAX_MS)
		ctx->parked = false;	/* the next peer attached */
	return 0;
}

/* A LEAVE's arg: the call that sent it and the peer context it tells. */
static inline void *
leave_arg(uint16_t gen, struct amrma_ep ep)
{
	return (void *)(uintptr_t)((uint64_t)gen << 32 | (uint64_t)ep.node << 8 | ep.ctx);
}

static void
leave_done(struct amrma_ctx *ctx, void *arg, int status)
{
	struct amrma_node *node = ctx->node;
	uint64_t a = (uintptr_t)arg;
	struct channel *ch = ctx_channel(ctx, (uint16_t)(a >> 8), (uint8_t)a);

	/*
	 * The ack means that context closed its channels to this life of ours: it drops
	 * what we send it from now on, so no later call tells it again. An ack for an
	 * earlier call that timed out counts only for that.
	 */
	if (status == 0)
		ch->bye = true;
	if ((uint16_t)(a >> 32) != node->leave_gen)
		return;
	node->leave_pending--;
	/* asked again while the answer to an earlier call was on its way: that one counts */
	if (status != 0 && !ch->bye && node->leave_status == 0)
		node->leave_status = status;
}

/* Whether a channel of ours to node id carries its current life (we heard from it). */
static bool
talked_to(struct amrma_node *node, uint16_t id)
{
	uint16_t i;
	uint8_t k;

	for (i = 0; i < node->conf.nb_ctx; i++) {
		struct amrma_ctx *ctx = &node->ctx[i];

		for (k = 0; k < ctx->peer_nb_ctx[id]; k++) {
			const struct channel *ch = ctx_channel(ctx, id, k);

			if (ch->peer_epoch != 0 && !ch->dead)
				return true;
		}
	}
	return false;
}

/*
 * Ask every peer we heard from, from our context 0: its contexts other than 0 (others),
 * or its context 0; then poll until all answered or the deadline passed.
 */
static void
ask_peers(struct amrma_node *node, bool others, uint64_t end)
{
	struct amrma_ctx *ctx0 = &node->ctx[0];
	uint16_t id;
	unsigned int k;

	for (id = 0; id < node->conf.max_nodes; id++) {
		unsigned int nb = ctx0->peer_nb_ctx[id];

		if (nb == 0 || !talked_to(node, id))
			continue;
		for (k = others ? 1 : 0; k < (others ? nb : 1); k++) {
			struct amrma_ep ep = { .node = id, .ctx = (uint8_t)k };
			int ret;

			if (ctx_channel(ctx0, id, (uint8_t)k)->bye)
				continue;	/* it acked an earlier call's */
			while ((ret = amrma_am_send(ctx0, ep, AMRMA_AM_H_LEAVE, NULL, 0, NULL, 0,
						    leave_done,
						    leave_arg(node->leave_gen, ep))) == -EAGAIN &&
			       rte_rdtsc() < end)
				node_poll_round(node);
			if (ret == 0)
				node->leave_pending++;
			else if (node->leave_status == 0)
				node->leave_status = ret;
		}
	}
	while (node->leave_pending != 0 && rte_rdtsc() < end)
		node_poll_round(node);
}

int
amrma_node_leave(struct amrma_node *node, uint64_t timeout_us)
{
	uint64_t end;
	int settled = node_poll_here(node);

	if (settled != 0)
		return settled;
	end = node_deadline(node, timeout_us);
	settled = amrma_node_quiesce(node, timeout_us);
	node->leave_gen++;
	node->leave_pending = 0;
	node->leave_status = 0;
	/*
	 * A peer's other contexts first: on a port that delivers on the queue a frame came
	 * in (net_memif), their LEAVEs reach the peer's context 0, which hands them over,
	 * so context 0 must not be parked before they are acked.
	 */
	ask_peers(node, true, end);
	if (node->leave_pending == 0)
		ask_peers(node, false, end);
	/* the acks we owe leave now: a peer that stays up resends nothing */
	node_poll_round(node);
	if (node->leave_pending != 0)
		return -ETIMEDOUT;
	if (settled != 0)
		return settled;
	return node->leave_status;
}
