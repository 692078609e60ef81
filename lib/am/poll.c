/* SPDX-License-Identifier: BSD-3-Clause */
/* Progress: the poll loop, idle back-off, rte_service glue, counters. */

#include <sched.h>
#include <stdio.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_pause.h>
#include <rte_service.h>
#include <rte_service_component.h>

#include "am_priv.h"

/* Queued frames leave in the middle of an RX burst once they hold this many bytes. */
#define EARLY_TX_BYTES 4096u
/* An idle poll reads the TSC only this often (power of two): see amrma_ctx_poll(). */
#define IDLE_CLOCK_EVERY 16u

/*
 * Free received frames: the usual one (one direct segment, ours alone) goes straight
 * back to its pool's cache (callgrind: 70 instructions a frame, against 100 through
 * rte_pktmbuf_free_bulk(), which sorts frames by pool).
 */
static inline void
free_rx(struct rte_mbuf **pkts, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];

		if (likely(m->nb_segs == 1 && RTE_MBUF_DIRECT(m) &&
			   rte_mbuf_refcnt_read(m) == 1))
			rte_mbuf_raw_free(m);
		else
			rte_pktmbuf_free(m);
	}
}

/*
 * Handle received frames (redirected: validated by the context that received them).
 * What their handlers sent leaves before they are freed and before the rest of the
 * poll: a round trip does not wait for it.
 */
static inline void
rx_frames(struct amrma_ctx *ctx, struct rte_mbuf **pkts, unsigned int n, uint64_t now,
	  bool redirected)
{
	unsigned int i, nb_free = 0;

	for (i = 0; i < n; i++) {
		if (i + 1 < n)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 1], void *));
		/* nothing of this burst can join the last frame's replies: they leave with
		 * the flush below, unopened */
		ctx->reply_open = i + 1 < n;
		/* in place: nb_free <= i */
		if (am_rx_frame(ctx, pkts[i], now, redirected))
			pkts[nb_free++] = pkts[i];
		/* frames that filled up while handlers replied leave now, not after the
		 * whole burst: the peer works on them while we handle the rest (a few KB
		 * at a time: one call per small frame costs more than it gains) */
		if (ctx->tx_pend_bytes >= EARLY_TX_BYTES)
			ctx_tx_burst(ctx);
	}
	ctx_tx_flush(ctx);
	if (ctx->nb_rx_acks != 0)
		chan_acks_apply(ctx, now);
	free_rx(pkts, nb_free);
}

int
amrma_ctx_poll(struct amrma_ctx *ctx, unsigned int budget)
{
	struct rte_mbuf *pkts[RX_BURST];
	bool queued = ctx->nb_tx + ctx->nb_open != 0;
	uint64_t now, tx0 = ctx->st.tx_frames;
	unsigned int n, work = 0;

	/*
	 * rdtsc costs 20-30 ns on some VMs (the one these numbers come from among them), as
	 * much as the rest of an idle poll. The clock is read when the poll has frames to
	 * send or receive, acks to time, or every IDLE_CLOCK_EVERY idle polls for the
	 * timers (a fraction of a microsecond late while the application keeps polling).
	 */
	if (unlikely(ctx->parked))
		return ctx_parked_poll(ctx);
	if (unlikely(ctx->in_poll))
		return -EPERM;
	ctx->in_poll = true;
	if (queued) {
		/* requests issued since the last poll leave first */
		ctx->now = rte_rdtsc();
		ctx_tx_flush(ctx);
	}
	n = amrma_net_rx(ctx->dev, ctx->idx, pkts, (uint16_t)RTE_MIN(budget, RX_BURST));
	if (!queued && n == 0 && ctx->nb_ack == 0 && rte_ring_empty(ctx->steer) &&
	    (++ctx->idle_polls & (IDLE_CLOCK_EVERY - 1)) != 0) {
		/*
		 * Idle: nothing came, nothing waits to leave and the clock stands still, so
		 * no timer can be due. Only the hook may have work. Short, because a frame
		 * waits half an idle poll on average before it is seen (amrma-perf reports
		 * idle_poll_ns).
		 */
		if (ctx->hook == NULL)
			goto out;
		work = (unsigned int)ctx->hook(ctx, ctx->hook_arg);
		if (ctx->nb_open == 0 && ctx->nb_tx == 0 && ctx->nb_ack == 0)
			goto out;
		now = ctx->now;
		goto tail;
	}
	if (!queued)
		ctx->now = rte_rdtsc();
	now = ctx->now;
	if (n != 0) {
		rx_frames(ctx, pkts, n, now, false);
		work += n;
	}
	/* frames other contexts received for us were validated there */
	if (unlikely(!rte_ring_empty(ctx->steer))) {
		n = rte_ring_sc_dequeue_burst(ctx->steer, (void **)pkts, RX_BURST, NULL);
		rx_frames(ctx, pkts, n, now, true);
		work += n;
	}
	if (ctx->hook != NULL)
		work += ctx->hook(ctx, ctx->hook_arg);
tail:
	/* frames built in this poll carry the acks: send them before deciding on acks */
	if (ctx->nb_open != 0)
		chan_close_all(ctx);
	if (ctx->nb_ack != 0)
		chan_send_acks(ctx, now, false);
	if (now >= ctx->next_tick) {
		ctx->next_tick = now + ctx->node->tick_tsc;
		chan_timers(ctx, now);
	}
	ctx_tx_flush(ctx);
	if (unlikely(ctx->peers_leaving))
		ctx_peer_left(ctx);
out:
	ctx->in_poll = false;
	/* frames that the port did not take are no work done: a link that takes nothing
	 * lets the idle back-off sleep */
	return (int)(work + (ctx->st.tx_frames - tx0));
}

int
amrma_node_poll(struct amrma_node *node, unsigned int budget)
{
	int work = 0, ret;
	uint16_t i;

	for (i = 0; i < node->conf.nb_ctx; i++) {
		ret = amrma_ctx_poll(&node->ctx[i], budget);
		if (unlikely(ret < 0))
			return ret;
		work += ret;
	}
	return work;
}

/*
 * Nothing of ours waits for an ack, no ack is owed, nothing waits to leave. A parked
 * context is settled: its link's one peer left, and with it everything it was owed.
 */
static bool
ctx_settled(const struct amrma_ctx *ctx)
{
	uint32_t i;

	if (ctx->parked)
		return true;
	if (ctx->nb_tx != 0 || ctx->nb_open != 0 || ctx->nb_ack != 0)
		return false;
	for (i = 0; i < ctx->nb_chan; i++) {
		const struct channel *ch = ctx->all[i];

		if (!ch->dead && ch->snd_una != ch->snd_nxt)
			return false;
	}
	return true;
}

uint64_t
node_deadline(const struct amrma_node *node, uint64_t timeout_us)
{
	return rte_rdtsc() + (timeout_us > UINT64_MAX / node->hz ? UINT64_MAX / 2 :
			      timeout_us * node->hz / US_PER_S);
}

bool
node_poll_round(struct amrma_node *node)
{
	bool settled = true;
	uint16_t i;

	for (i = 0; i < node->conf.nb_ctx; i++) {
		struct amrma_ctx *ctx = &node->ctx[i];

		amrma_ctx_poll(ctx, RX_BURST);
		/* owed acks leave now instead of after the ack delay: a peer whose last
		 * frames stay unacknowledged resends them into the void */
		if (ctx->nb_ack != 0 && !ctx->parked) {
			chan_send_acks(ctx, ctx->now, true);
			ctx_tx_flush(ctx);
		}
		settled = settled && ctx_settled(ctx);
	}
	return settled;
}

int
node_poll_here(const struct amrma_node *node)
{
	uint16_t i;

	if (node == NULL)
		return -EINVAL;
	/* stopped is not enough: a service lcore may still be inside an iteration */
	if (node->has_service && (rte_service_runstate_get(node->service_id) == 1 ||
				  rte_service_may_be_active(node->service_id) == 1))
		return -EBUSY;
	for (i = 0; i < node->conf.nb_ctx; i++)
		if (node->ctx[i].in_poll)
			return -EPERM;
	return 0;
}

int
amrma_node_quiesce(struct amrma_node *node, uint64_t timeout_us)
{
	uint64_t end;
	int ret = node_poll_here(node);

	if (ret != 0)
		return ret;
	end = node_deadline(node, timeout_us);
	for (;;) {
		if (node_poll_round(node))
			return 0;
		if (rte_rdtsc() >= end)
			return -ETIMEDOUT;
		rte_pause();
	}
}

void
amrma_ctx_set_hook(struct amrma_ctx *ctx, amrma_ctx_hook_t fn, void *arg)
{
	ctx->hook_arg = arg;
	ctx->hook = fn;
}

uint64_t
amrma_ctx_now(const struct amrma_ctx *ctx)
{
	return ctx->now;
}

void
amrma_ctx_tx_cleanup(struct amrma_ctx *ctx)
{
	if (!ctx->parked)
		amrma_net_tx_cleanup(ctx->dev, ctx->idx);
}

struct rte_mempool *
amrma_ctx_pool(const struct amrma_ctx *ctx)
{
	return ctx->pool;
}

void *
amrma_ctx_priv(const struct amrma_ctx *ctx)
{
	return ctx->priv;
}

void
amrma_ctx_set_priv(struct amrma_ctx *ctx, void *priv)
{
	ctx->priv = priv;
}

void
amrma_idle_step(struct amrma_idle *idle, int work)
{
	if (work > 0 || idle->spin == 0) {	/* spin 0: pure busy polling */
		idle->empty = 0;
		return;
	}
	if (++idle->empty <= idle->spin)
		return;
	if (idle->empty <= 2 * idle->spin || idle->sleep_us == 0)
		sched_yield();
	else
		usleep(idle->sleep_us);
}

static int32_t
service_run(void *arg)
{
	amrma_node_poll(arg, RX_BURST);
	return 0;
}

int
amrma_node_service_register(struct amrma_node *node, uint32_t *service_id)
{
	struct rte_service_spec spec = { 0 };
	int ret;

	snprintf(spec.name, sizeof(spec.name), "amrma_node_%u", node->conf.node_id);
	spec.callback = service_run;
	spec.callback_userdata = node;
	spec.socket_id = node->dev->socket_id;
	ret = rte_service_component_register(&spec, &node->service_id);
	if (ret != 0)
		return ret;
	node->has_service = true;
	rte_service_component_runstate_set(node->service_id, 1);
	if (service_id != NULL)
		*service_id = node->service_id;
	return 0;
}

void
amrma_ctx_stats_get(const struct amrma_ctx *ctx, struct amrma_am_stats *out)
{
	*out = ctx->st;
	out->reply_spares = ctx->nb_reply_spare;	/* a gauge, read where it lives */
}

void
amrma_node_stats_get(const struct amrma_node *node, struct amrma_am_stats *out)
{
	const size_t n = sizeof(*out) / sizeof(uint64_t);
	uint64_t *dst = (uint64_t *)out;
	uint16_t i;
	size_t k;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < node->conf.nb_ctx; i++) {
		const uint64_t *src = (const uint64_t *)&node->ctx[i].st;

		for (k = 0; k < n; k++)
			dst[k] += src[k];
		out->reply_spares += node->ctx[i].nb_reply_spare;
	}
}

void
amrma_am_stats_foreach(const struct amrma_am_stats *s,
		       void (*fn)(const char *name, uint64_t value, void *arg), void *arg)
{
#define F(x) fn(#x, s->x, arg)
	char name[64];
	int i;

	F(rx_frames); F(tx_frames); F(rx_bytes); F(tx_bytes);
	for (i = 1; i < AMRMA_WIRE_ERR__MAX; i++) {
		snprintf(name, sizeof(name), "rx_rejected_%s", amrma_wire_err_name(i));
		fn(name, s->rx_rejected[i], arg);
	}
	F(unknown_peer); F(unknown_handler); F(bad_token); F(bad_ack); F(duplicates);
	F(out_of_window); F(no_reply_room); F(no_reply_mbuf); F(reply_spares);
	F(redirected); F(redirect_drops);
	F(requests_handled); F(replies_handled); F(auto_replies); F(rule_violations);
	F(retransmits); F(fast_retransmits); F(timeouts); F(acks_sent); F(tx_drops);
	F(ops_completed); F(ops_failed); F(peers_dead); F(peer_restarts); F(stale_epoch);
	F(tx_coalesced); F(rx_coalesced); F(sends_handled);
	F(replies_in_place); F(peers_left); F(parks); F(parked_drops);
#undef F
}
