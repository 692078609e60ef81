/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The two messages of reflection. REFLECT (a request, at the reflection node): its
 * handler only injects the completion notification descriptor it carries into the
 * context's own FIFO, which the poll then runs like any other. NOTIFY (one-way, at the
 * notified node): the completion packet, landing in the reception FIFO or a word.
 * Both come from the wire: every field is checked before it is used.
 */
#include <errno.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_pause.h>
#include <rte_power_intrinsics.h>

#include "reflect_priv.h"

void
rf_notify_done(struct amrma_ctx *ctx, void *arg, int status)
{
	struct rf_ctx *x = rf_ctx_of(ctx);

	RTE_SET_USED(arg);
	if (x != NULL && status != 0)
		x->st.notify_failed++;
}

/*
 * A notification for this node: no message, delivered here (a REFLECT whose reflection
 * node is also who is told, or a NOTIFY to ourselves). Counted by this context.
 */
static int
notify_local(struct rf_ctx *x, const struct amrma_cn *cn)
{
	struct amrma_reflect *rf = x->rf;
	const struct amrma_ep self = { amrma_node_id(rf->node), amrma_ctx_index(x->ctx) };

	x->st.notifies_sent++;
	if (cn->to.ctx >= rf->nb_ctx) {
		x->st.notify_failed++;
		return 0;
	}
	if (cn->kind == AMRMA_CN_FIFO)
		rf_rx_push(x, rf->xc[cn->to.ctx].rx, cn->cookie, self, cn->status);
	else if (cn->kind == AMRMA_CN_WORD)
		rf_word_add(x, cn->key, cn->offset);
	else if (cn->to.ctx == self.ctx)	/* another context's sends are its own */
		rf_stripe_end(x, cn->cookie, self, cn->status);
	else
		x->st.notify_failed++;
	return 0;
}

int
rf_send_notify(struct rf_ctx *x, const struct amrma_cn *cn)
{
	uint64_t args[RF_NARGS];
	int ret;

	if (cn->to.node == amrma_node_id(x->rf->node))
		return notify_local(x, cn);

	args[0] = (uint64_t)cn->kind | (uint64_t)(uint16_t)cn->status << 32;
	args[1] = cn->key;
	args[2] = cn->offset;
	args[3] = cn->cookie;
	ret = amrma_am_send(x->ctx, cn->to, AMRMA_REFLECT_H_NOTIFY, args, RF_NARGS, NULL, 0,
			    rf_notify_done, NULL);
	if (ret == -EAGAIN || ret == -ENOBUFS)
		return -EAGAIN;
	x->st.notifies_sent++;
	if (ret != 0)
		x->st.notify_failed++;
	return 0;
}

/* The reflection node: take the descriptor in, nothing else. */
static int
reflect_handler(struct amrma_ctx *ctx, amrma_am_token_t tok, const struct amrma_am_msg *msg,
		void *arg)
{
	struct rf_ctx *x = rf_handler_ctx(ctx, arg);
	uint64_t w = msg->args[0];
	struct amrma_desc d;

	RTE_SET_USED(tok);
	memset(&d, 0, sizeof(d));
	d.op = AMRMA_DESC_NOTIFY;
	d.cn.to.node = (uint16_t)w;
	d.cn.to.ctx = (uint8_t)(w >> 16);
	d.cn.kind = (uint8_t)(w >> 24);
	d.cn.status = (int16_t)(w >> 32);
	d.cn.key = msg->args[1];
	d.cn.offset = msg->args[2];
	d.cn.cookie = msg->args[3];
	if (msg->nargs != RF_NARGS || msg->len != 0 || (w >> 48) != 0 ||
	    (d.cn.kind != AMRMA_CN_FIFO && d.cn.kind != AMRMA_CN_WORD) ||
	    !rf_status_ok(d.cn.status)) {
		x->st.bad_requests++;
		return -EINVAL;
	}
	if (rte_ring_mp_enqueue_elem(x->fifo, &d, sizeof(d)) != 0) {
		x->st.cn_full++;
		return -ENOBUFS;
	}
	x->st.cn_injected++;
	return 0;
}

void
rf_word_add(struct rf_ctx *x, uint64_t key, uint64_t offset)
{
	struct amrma_region *ref;
	void *p;

	if ((offset & 7) != 0 ||
	    amrma_region_check(x->rf->regions, key, offset, 8, AMRMA_REGION_WRITE, &p,
			       &ref) != 0) {
		x->st.word_refused++;
		return;
	}
	/* the region's base may be anywhere: the word's own address must be aligned */
	if (((uintptr_t)p & 7) != 0) {
		x->st.word_refused++;
	} else {
		__atomic_fetch_add((uint64_t *)p, 1, __ATOMIC_RELEASE);
		x->st.words++;
	}
	amrma_region_put(x->rf->regions, ref);
}

/* The notified node: the completion packet lands. */
static int
notify_handler(struct amrma_ctx *ctx, amrma_am_token_t tok, const struct amrma_am_msg *msg,
	       void *arg)
{
	struct rf_ctx *x = rf_handler_ctx(ctx, arg);
	uint64_t w = msg->args[0];
	uint8_t kind = (uint8_t)w;
	int16_t status = (int16_t)(w >> 32);

	RTE_SET_USED(tok);
	if (msg->nargs != RF_NARGS || msg->len != 0 ||
	    (w & ~(UINT64_C(0xff) | UINT64_C(0xffff) << 32)) != 0 ||
	    (kind != AMRMA_CN_FIFO && kind != AMRMA_CN_WORD && kind != RF_CN_STRIPE) ||
	    !rf_status_ok(status)) {
		x->st.bad_requests++;
		return -EINVAL;
	}
	if (kind == AMRMA_CN_FIFO)
		rf_rx_push(x, x->rx, msg->args[3], msg->src, status);
	else if (kind == AMRMA_CN_WORD)
		rf_word_add(x, msg->args[1], msg->args[2]);
	else
		rf_stripe_end(x, msg->args[3], msg->src, status);
	return 0;
}

void
rf_register(struct amrma_reflect *rf, bool on)
{
	amrma_am_register(rf->node, AMRMA_REFLECT_H_REFLECT, on ? reflect_handler : NULL,
			  on ? rf : NULL);
	amrma_am_register(rf->node, AMRMA_REFLECT_H_NOTIFY, on ? notify_handler : NULL,
			  on ? rf : NULL);
	amrma_am_register(rf->node, AMRMA_REFLECT_H_STRIPE_RTS,
			  on ? rf_stripe_rts_handler : NULL, on ? rf : NULL);
}

/* rte_power_monitor() callback: -1 (do not sleep) once the word reached opaque[0]. */
static int
word_reached(const uint64_t val, const uint64_t opaque[RTE_POWER_MONITOR_OPAQUE_SZ])
{
	return val >= opaque[0] ? -1 : 0;
}

int
amrma_reflect_word_wait(struct amrma_ctx *ctx, const volatile uint64_t *word,
			uint64_t value, uint64_t timeout_us)
{
	const uint64_t hz = rte_get_tsc_hz();
	uint64_t deadline = rte_rdtsc() + timeout_us * (hz / 1000000);
	struct rte_power_monitor_cond pmc;
	struct rte_cpu_intrinsics cpu;
	unsigned int n = 0;

	if (word == NULL || ((uintptr_t)word & 7) != 0)
		return -EINVAL;
	if (ctx != NULL) {
		while (__atomic_load_n(word, __ATOMIC_ACQUIRE) < value) {
			if (amrma_ctx_poll(ctx, 32) == -EPERM)
				return -EPERM;
			if ((++n & 15) == 0 && rte_rdtsc() >= deadline)
				return -ETIMEDOUT;
		}
		return 0;
	}
	rte_cpu_get_intrinsics_support(&cpu);
	memset(&pmc, 0, sizeof(pmc));
	pmc.addr = (volatile void *)(uintptr_t)word;
	pmc.size = sizeof(uint64_t);
	pmc.fn = word_reached;
	pmc.opaque[0] = value;
	while (__atomic_load_n(word, __ATOMIC_ACQUIRE) < value) {
		uint64_t now = rte_rdtsc();

		if (now >= deadline)
			return -ETIMEDOUT;
		/* woken by the write; the timeout bounds a wake-up the CPU did not give */
		if (!cpu.power_monitor ||
		    rte_power_monitor(&pmc, RTE_MIN(deadline, now + hz / 10000)) != 0)
			rte_pause();
	}
	return 0;
}
