/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The reflection engine's life and its injection FIFOs: descriptors in, run in order on
 * the context's lcore (PUT/GET as RMA operations, REFLECT once the data before it is
 * done, NOTIFY as a completion packet), completions out through the reception FIFOs.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_malloc.h>

#include "reflect_priv.h"
#include "rma_ext.h"

RTE_LOG_REGISTER(amrma_reflect_logtype, lib.amrma.reflect, NOTICE);

/* Descriptors one poll runs at most (the rest wait for the next poll). */
#define RF_BURST 32

/* Flags a descriptor may pass to the RMA operation. */
#define RF_RMA_FLAGS (AMRMA_RMA_F_SHORT | AMRMA_RMA_F_PIPELINED | AMRMA_RMA_F_RENDEZVOUS | \
		      AMRMA_RMA_F_COPY)

/* Generations of slots, process-wide: a callback of a destroyed engine's operation never
 * names a slot of the engine created after it. */
static uint32_t rf_gen;
/* Engines created: ring names stay unique. */
static uint32_t rf_serial;

void
amrma_reflect_conf_defaults(struct amrma_reflect_conf *c)
{
	memset(c, 0, sizeof(*c));
	c->fifo_size = 1024;
	c->rx_size = 1024;
	c->max_inflight = 256;
	c->max_stripes = 64;
	c->stripe_min_part = UINT64_C(64) << 10;
	c->stripe_timeout_ms = 30000;
}

struct rf_ctx *
rf_ctx_of(struct amrma_ctx *ctx)
{
	return rma_ext_arg(ctx);
}

static struct rf_ctx *
rf_xc(struct amrma_reflect *rf, uint16_t ctx_idx)
{
	return rf != NULL && ctx_idx < rf->nb_ctx ? &rf->xc[ctx_idx] : NULL;
}

bool
rf_rx_push(struct rf_ctx *x, struct rte_ring *rx, uint64_t cookie, struct amrma_ep from,
	   int16_t status)
{
	struct amrma_completion c = { .cookie = cookie, .from = from, .status = status };

	if (rte_ring_mp_enqueue_elem(rx, &c, sizeof(c)) != 0) {
		x->st.rx_full++;
		return false;
	}
	x->st.completions++;
	return true;
}

uint32_t
rf_gen_next(void)
{
	uint32_t g;

	do	/* 0 names nothing */
		g = __atomic_add_fetch(&rf_gen, 1, __ATOMIC_RELAXED);
	while (g == 0);
	return g;
}

static void *
slot_take(struct rf_ctx *x, struct rf_slot **out)
{
	uint32_t i = x->free[--x->nb_free];
	struct rf_slot *s = &x->slots[i];

	s->gen = rf_gen_next();
	s->cb = NULL;
	s->used = true;
	s->local = false;
	*out = s;
	return (void *)(uintptr_t)((uint64_t)s->gen << 32 | i);
}

static void
slot_give(struct rf_ctx *x, struct rf_slot *s)
{
	s->used = false;
	x->free[x->nb_free++] = (uint32_t)(s - x->slots);
}

/* The slot a callback's argument names, if it is still that one's. */
static struct rf_slot *
slot_of(struct rf_ctx *x, void *arg)
{
	uint64_t v = (uintptr_t)arg;
	uint32_t i = (uint32_t)v;
	struct rf_slot *s;

	if (x == NULL || i >= x->rf->conf.max_inflight)
		return NULL;
	s = &x->slots[i];
	return s->used && s->gen == (uint32_t)(v >> 32) ? s : NULL;
}

static void
data_error(struct rf_ctx *x, int status)
{
	x->st.data_errors++;
	if (x->status == 0)
		x->status = rf_status(status);
}

static void
data_cb(struct amrma_ctx *ctx, void *arg, enum amrma_rma_event ev, int status)
{
	struct rf_ctx *x = rf_ctx_of(ctx);
	struct rf_slot *s = slot_of(x, arg);
	amrma_desc_cb_t cb;
	void *cb_arg;

	if (s == NULL || ev == AMRMA_RMA_EV_PACKET)
		return;
	if (!s->local) {
		s->local = true;
		x->nb_local--;
	}
	if (ev != AMRMA_RMA_EV_DONE)
		return;
	x->nb_remote--;
	if (status != 0)
		data_error(x, status);
	cb = s->cb;
	cb_arg = s->cb_arg;
	slot_give(x, s);
	if (cb != NULL)
		cb(ctx, cb_arg, status);
}

int
rf_run_data(struct rf_ctx *x, const struct amrma_desc *d)
{
	uint32_t flags = d->rma_flags & RF_RMA_FLAGS;
	struct rf_slot *s;
	uint32_t gen;
	void *arg;
	int ret;

	if (x->nb_free == 0)
		return -EAGAIN;
	arg = slot_take(x, &s);
	gen = s->gen;
	s->cb = d->cb;
	s->cb_arg = d->cb_arg;
	x->nb_local++;
	x->nb_remote++;
	if (d->op == AMRMA_DESC_PUT)
		ret = amrma_rma_put(x->ctx, d->peer, d->key, d->offset, d->local, d->len,
				    flags | AMRMA_RMA_F_LOCAL_CB, data_cb, arg, NULL);
	else
		ret = amrma_rma_get(x->ctx, d->peer, d->key, d->offset, d->local, d->len,
				    flags, data_cb, arg, NULL);
	if (ret == 0) {
		x->st.data_started++;
		return 0;
	}
	/* refused before it started: no callback ran for it */
	if (s->used && s->gen == gen) {
		if (!s->local)
			x->nb_local--;
		x->nb_remote--;
		slot_give(x, s);
	}
	if (ret == -EAGAIN || ret == -ENOBUFS)
		return -EAGAIN;
	x->st.data_started++;
	data_error(x, ret);
	if (d->cb != NULL)
		d->cb(x->ctx, d->cb_arg, ret);
	return 0;
}

static void
reflect_done(struct amrma_ctx *ctx, void *arg, int status)
{
	struct rf_ctx *x = rf_ctx_of(ctx);
	struct rf_slot *s = slot_of(x, arg);

	if (s == NULL)
		return;
	if (status != 0) {
		x->st.reflect_refused++;
		rf_rx_push(x, x->rx, s->cookie, s->peer, rf_status(status));
	}
	slot_give(x, s);
}

static int
run_reflect(struct rf_ctx *x, const struct amrma_desc *d)
{
	uint64_t args[RF_NARGS];
	struct rf_slot *s;
	void *arg;
	int ret;

	if ((d->flags & AMRMA_DESC_F_REMOTE ? x->nb_remote : x->nb_local) != 0 ||
	    x->nb_free == 0)
		return -EAGAIN;
	if (d->peer.node == amrma_node_id(x->rf->node)) {
		/* reflected by this node: its notification leaves from here */
		struct amrma_cn cn = d->cn;

		cn.status = (int16_t)x->status;
		ret = rf_send_notify(x, &cn);
		if (ret == 0)
			x->status = 0;	/* (kept for the retry when there was no room) */
		return ret;
	}
	args[0] = rf_word0(d->cn.to, d->cn.kind, (int16_t)x->status);
	args[1] = d->cn.key;
	args[2] = d->cn.offset;
	args[3] = d->cn.cookie;
	arg = slot_take(x, &s);
	s->cookie = d->cn.cookie;
	s->peer = d->peer;
	ret = amrma_am_request(x->ctx, d->peer, AMRMA_REFLECT_H_REFLECT, args, RF_NARGS,
			       NULL, 0, reflect_done, arg);
	if (ret == -EAGAIN || ret == -ENOBUFS) {
		slot_give(x, s);
		return -EAGAIN;
	}
	x->status = 0;
	x->st.reflects_sent++;
	if (ret != 0) {
		/* never sent: unknown or dead reflection node */
		x->st.reflect_refused++;
		slot_give(x, s);
		rf_rx_push(x, x->rx, d->cn.cookie, d->peer, rf_status(ret));
	}
	return 0;
}

static int
run_one(struct rf_ctx *x, const struct amrma_desc *d)
{
	switch (d->op) {
	case AMRMA_DESC_PUT:
	case AMRMA_DESC_GET:
		return rf_run_data(x, d);
	case AMRMA_DESC_REFLECT:
		return run_reflect(x, d);
	case RF_DESC_STRIPE_RECV:
		return rf_stripe_split(x, d);
	default:
		return rf_send_notify(x, &d->cn);
	}
}

static __rte_noinline int
rf_run(struct rf_ctx *x)
{
	int work = x->nb_sops != 0 ? rf_stripe_poll(x) : 0, n;

	if (x->nb_ends != 0)
		work += rf_stripe_ends(x);

	for (n = 0; n < RF_BURST; n++) {
		if (!x->has_cur) {
			if (rte_ring_sc_dequeue_elem(x->fifo, &x->cur, sizeof(x->cur)) != 0)
				break;
			x->has_cur = true;
		}
		if (run_one(x, &x->cur) == -EAGAIN)
			break;
		x->has_cur = false;
		work++;
	}
	return work;
}

/* Part of the RMA engine's poll hook: the common case is an empty FIFO. */
static int
rf_poll(struct amrma_ctx *ctx, void *arg)
{
	struct rf_ctx *x = arg;

	RTE_SET_USED(ctx);
	if (likely(!x->has_cur && x->nb_sops == 0 && x->nb_ends == 0 &&
		   rte_ring_empty(x->fifo)))
		return 0;
	return rf_run(x);
}

static bool
cn_valid(const struct amrma_cn *cn)
{
	return (cn->kind == AMRMA_CN_FIFO || cn->kind == AMRMA_CN_WORD) &&
	       rf_status_ok(cn->status);
}

int
amrma_reflect_inject(struct amrma_reflect *rf, uint16_t ctx_idx, const struct amrma_desc *d)
{
	struct rf_ctx *x = rf_xc(rf, ctx_idx);
	bool ok;

	if (x == NULL || d == NULL)
		return -EINVAL;
	switch (d->op) {
	case AMRMA_DESC_PUT:
	case AMRMA_DESC_GET:
		ok = d->flags == 0 && (d->rma_flags & ~RF_RMA_FLAGS) == 0 &&
		     (d->len == 0 || d->local != NULL);
		break;
	case AMRMA_DESC_REFLECT:
		ok = (d->flags & ~AMRMA_DESC_F_REMOTE) == 0 && cn_valid(&d->cn);
		break;
	case AMRMA_DESC_NOTIFY:
		ok = d->flags == 0 && cn_valid(&d->cn);
		break;
	default:
		ok = false;
	}
	if (!ok)
		return -EINVAL;
	if (rte_ring_mp_enqueue_elem(x->fifo, (void *)(uintptr_t)d, sizeof(*d)) != 0) {
		__atomic_fetch_add(&x->st.inject_full, 1, __ATOMIC_RELAXED);
		return -ENOBUFS;
	}
	__atomic_fetch_add(&x->st.injected, 1, __ATOMIC_RELAXED);
	return 0;
}

unsigned int
amrma_reflect_completions(struct amrma_reflect *rf, uint16_t ctx_idx,
			  struct amrma_completion *out, unsigned int n)
{
	struct rf_ctx *x = rf_xc(rf, ctx_idx);

	if (x == NULL || out == NULL)
		return 0;
	return rte_ring_mc_dequeue_burst_elem(x->rx, out, sizeof(*out), n, NULL);
}

unsigned int
amrma_reflect_pending(struct amrma_reflect *rf, uint16_t ctx_idx)
{
	struct rf_ctx *x = rf_xc(rf, ctx_idx);

	if (x == NULL)
		return 0;
	return rte_ring_count(x->fifo) + x->has_cur + rf->conf.max_inflight - x->nb_free;
}

void
amrma_reflect_stats_get(struct amrma_reflect *rf, uint16_t ctx_idx,
			struct amrma_reflect_stats *out)
{
	struct rf_ctx *x = rf_xc(rf, ctx_idx);

	memset(out, 0, sizeof(*out));
	if (x == NULL)
		return;
	*out = x->st;
	out->injected = __atomic_load_n(&x->st.injected, __ATOMIC_RELAXED);
	out->inject_full = __atomic_load_n(&x->st.inject_full, __ATOMIC_RELAXED);
}

static void
ctx_free(struct rf_ctx *x)
{
	if (x->ctx != NULL && rf_ctx_of(x->ctx) == x)
		rma_ext_set(x->ctx, NULL, NULL);
	rte_ring_free(x->fifo);
	rte_ring_free(x->rx);
	rte_free(x->slots);
	rte_free(x->free);
	rte_free(x->sops);
	rte_free(x->ends);
}

static int
ctx_init(struct amrma_reflect *rf, struct rf_ctx *x, uint16_t i, uint32_t serial)
{
	const struct amrma_reflect_conf *c = &rf->conf;
	int socket = (int)rte_socket_id();
	char name[RTE_RING_NAMESIZE];
	uint32_t k;

	x->rf = rf;
	x->ctx = amrma_node_ctx(rf->node, i);
	x->split_idx = RF_NONE;
	snprintf(name, sizeof(name), "amrma_rf%u_i%u", serial, i);
	x->fifo = rte_ring_create_elem(name, sizeof(struct amrma_desc), c->fifo_size, socket,
				       RING_F_SC_DEQ | RING_F_EXACT_SZ);
	snprintf(name, sizeof(name), "amrma_rf%u_r%u", serial, i);
	/* multi-producer: a notification for another context of this node is delivered
	 * by the lcore of the context that sends it (rf_send_notify()) */
	x->rx = rte_ring_create_elem(name, sizeof(struct amrma_completion), c->rx_size,
				     socket, RING_F_EXACT_SZ);
	x->slots = rte_zmalloc_socket("amrma_rf", sizeof(*x->slots) * c->max_inflight, 0,
				      socket);
	x->free = rte_malloc_socket("amrma_rf", sizeof(*x->free) * c->max_inflight, 0,
				    socket);
	x->sops = rte_zmalloc_socket("amrma_rf", sizeof(*x->sops) * c->max_stripes, 0,
				     socket);
	x->ends = rte_malloc_socket("amrma_rf", sizeof(*x->ends) * c->max_stripes, 0,
				    socket);
	if (x->fifo == NULL || x->rx == NULL || x->slots == NULL || x->free == NULL ||
	    x->sops == NULL || x->ends == NULL)
		return -ENOMEM;
	for (k = 0; k < c->max_inflight; k++)
		x->free[k] = c->max_inflight - 1 - k;
	x->nb_free = c->max_inflight;
	return rma_ext_set(x->ctx, rf_poll, x);
}

int
amrma_reflect_create(struct amrma_rma *rma, const struct amrma_reflect_conf *conf,
		     struct amrma_reflect **out)
{
	struct amrma_reflect_conf c;
	struct amrma_reflect *rf;
	uint32_t serial;
	uint16_t i;
	int ret = 0;

	if (rma == NULL || out == NULL)
		return -EINVAL;
	if (conf == NULL)
		amrma_reflect_conf_defaults(&c);
	else
		c = *conf;
	if (c.fifo_size == 0 || c.rx_size == 0 || c.max_inflight == 0 ||
	    c.max_stripes == 0 || c.max_stripes > UINT16_MAX || c.stripe_min_part == 0 ||
	    c.stripe_timeout_ms == 0 ||
	    c.fifo_size > RTE_RING_SZ_MASK || c.rx_size > RTE_RING_SZ_MASK ||
	    c.max_inflight > UINT16_MAX)
		return -EINVAL;
	rf = rte_zmalloc("amrma_reflect", sizeof(*rf), 0);
	if (rf == NULL)
		return -ENOMEM;
	rf->rma = rma;
	rf->node = rma_node(rma);
	rf->regions = amrma_rma_regions(rma);
	rf->conf = c;
	rf->nb_ctx = amrma_node_nb_ctx(rf->node);
	rf->xc = rte_zmalloc("amrma_reflect", sizeof(*rf->xc) * rf->nb_ctx, RTE_CACHE_LINE_SIZE);
	if (rf->xc == NULL) {
		rte_free(rf);
		return -ENOMEM;
	}
	serial = __atomic_fetch_add(&rf_serial, 1, __ATOMIC_RELAXED);
	for (i = 0; i < rf->nb_ctx && ret == 0; i++)
		ret = ctx_init(rf, &rf->xc[i], i, serial);
	if (ret == 0)
		ret = rf_stripe_init(rf);
	if (ret != 0) {
		REFLECT_LOG(ERR, "create: %s", strerror(-ret));
		rf_stripe_fini(rf);
		for (i = 0; i < rf->nb_ctx; i++)
			ctx_free(&rf->xc[i]);
		rte_free(rf->xc);
		rte_free(rf);
		return ret;
	}
	rf_register(rf, true);
	*out = rf;
	return 0;
}

void
amrma_reflect_destroy(struct amrma_reflect *rf)
{
	uint16_t i;

	if (rf == NULL)
		return;
	rf_register(rf, false);
	rf_stripe_fini(rf);
	for (i = 0; i < rf->nb_ctx; i++)
		ctx_free(&rf->xc[i]);
	rte_free(rf->xc);
	rte_free(rf);
}
