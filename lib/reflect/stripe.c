/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Striped SEND (seed 003_…). The origin exposes its buffer under a fresh key and sends
 * a request to send (RTS) to the first target endpoint. That endpoint's handler only
 * queues the RTS in its own injection FIFO; running it there, the context divides the
 * data into portions, one per context of its node, and posts each portion as a get in
 * that context's FIFO (its own it runs at once). The contexts pull in parallel, each
 * from one of the origin's contexts in turn; the one that finishes last reports the
 * buffer to the listener and sends the end (a NOTIFY of kind RF_CN_STRIPE) to the
 * origin, which then withdraws the key and completes the send.
 */
#include <errno.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_malloc.h>

#include "reflect_priv.h"

/* arguments of the RTS: key, len, tag, the origin's operation, the origin's contexts */
#define RTS_NARGS 5

static inline uint64_t
cookie_of(uint32_t idx, uint32_t gen)
{
	return (uint64_t)gen << 32 | idx;
}

int
rf_stripe_init(struct amrma_reflect *rf)
{
	const uint32_t n = rf->conf.max_stripes;
	char name[RTE_RING_NAMESIZE];
	static uint32_t serial;
	uint32_t i;

	snprintf(name, sizeof(name), "amrma_rfs%u",
		 __atomic_fetch_add(&serial, 1, __ATOMIC_RELAXED));
	rf->srx = rte_zmalloc("amrma_rf", sizeof(*rf->srx) * n, 0);
	rf->srx_free = rte_ring_create_elem(name, sizeof(uint32_t), n, SOCKET_ID_ANY,
					    RING_F_EXACT_SZ);
	if (rf->srx == NULL || rf->srx_free == NULL)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		rte_ring_enqueue_elem(rf->srx_free, &i, sizeof(i));
	rf->scan_tsc = rte_get_tsc_hz() / 100;
	rf->timeout_tsc = rte_get_tsc_hz() / 1000 * rf->conf.stripe_timeout_ms;
	return 0;
}

/* Final status known: the poll ends it (never inside a handler). */
static void
sop_ended(struct rf_ctx *x, struct rf_sop *o, int status)
{
	if (!o->used || o->ended)
		return;
	o->rel->status = status;
	o->ended = true;
	x->nb_sops_ended++;
}

/* The region of a send is released (any thread): its buffer is no longer read. */
static void
sop_released(void *arg, void *addr, size_t len)
{
	struct rf_release *r = arg;
	uint32_t held = RF_REL_HELD;

	RTE_SET_USED(addr);
	RTE_SET_USED(len);
	if (__atomic_compare_exchange_n(&r->state, &held, RF_REL_GONE, false,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return;		/* the origin's poll completes the send */
	/* the engine is gone: complete it here */
	r->cb(r->ctx, r->arg, r->status);
	rte_free(r);
}

/* The engine goes while a get still reads o's buffer: the release completes the send. */
static void
sop_orphan(struct rf_sop *o)
{
	struct rf_release *r = o->rel;
	uint32_t held = RF_REL_HELD;

	o->used = false;
	o->rel = NULL;
	if (__atomic_compare_exchange_n(&r->state, &held, RF_REL_ORPHAN, false,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return;
	/* released meanwhile */
	r->cb(r->ctx, r->arg, r->status);
	rte_free(r);
}

/*
 * Sends under way end with -ECANCELED: their callbacks run here, or, for a send whose
 * buffer a get still reads, when that get lets go of it. Receives are abandoned (their
 * portions' ends find no engine).
 */
void
rf_stripe_fini(struct amrma_reflect *rf)
{
	uint16_t i;
	uint32_t k;

	for (i = 0; rf->xc != NULL && i < rf->nb_ctx; i++) {
		struct rf_ctx *x = &rf->xc[i];

		for (k = 0; x->sops != NULL && k < rf->conf.max_stripes; k++)
			sop_ended(x, &x->sops[k], -ECANCELED);
		if (x->nb_sops_ended != 0)
			rf_stripe_poll(x);
		/* those whose buffer a get still reads end when it is released */
		for (k = 0; x->sops != NULL && k < rf->conf.max_stripes; k++)
			if (x->sops[k].used)
				sop_orphan(&x->sops[k]);
	}
	rte_ring_free(rf->srx_free);
	rte_free(rf->srx);
	rf->srx_free = NULL;
	rf->srx = NULL;
}

int
amrma_stripe_listen(struct amrma_reflect *rf, const struct amrma_stripe_listener *l)
{
	if (rf == NULL || (l != NULL && (l->alloc == NULL || l->done == NULL)))
		return -EINVAL;
	if (l != NULL)
		rf->listener = *l;
	else
		memset(&rf->listener, 0, sizeof(rf->listener));
	return 0;
}

/* ---- origin ---- */

static struct rf_sop *
sop_of(struct rf_ctx *x, uint64_t cookie)
{
	uint32_t idx = (uint32_t)cookie;
	struct rf_sop *o;

	if (x == NULL || idx >= x->rf->conf.max_stripes)
		return NULL;
	o = &x->sops[idx];
	return o->used && o->gen == (uint32_t)(cookie >> 32) ? o : NULL;
}

static void
rts_done(struct amrma_ctx *ctx, void *arg, int status)
{
	struct rf_ctx *x = rf_ctx_of(ctx);
	struct rf_sop *o = sop_of(x, (uintptr_t)arg);

	if (o == NULL)
		return;
	if (status != 0) {
		sop_ended(x, o, status);
		return;
	}
	o->accepted = true;
	o->peer_epoch = amrma_ctx_peer_epoch(ctx, o->dst, NULL);
}

void
rf_stripe_end(struct rf_ctx *x, uint64_t cookie, struct amrma_ep src, int16_t status)
{
	struct rf_sop *o = sop_of(x, cookie);

	/* only the node the RTS went to ends it */
	if (o == NULL || o->ended || src.node != o->dst.node) {
		x->st.stripe_stale++;
		return;
	}
	sop_ended(x, o, status);
}

int
amrma_stripe_send(struct amrma_reflect *rf, struct amrma_ctx *ctx, struct amrma_ep dst,
		  const void *buf, uint64_t len, uint64_t tag, amrma_stripe_cb_t cb, void *arg)
{
	struct rf_ctx *x = ctx != NULL ? rf_ctx_of(ctx) : NULL;
	uint64_t args[RTS_NARGS], key;
	struct rf_sop *o = NULL;
	uint32_t k;
	int ret;

	if (rf == NULL || x == NULL || x->rf != rf || buf == NULL || len == 0 || cb == NULL)
		return -EINVAL;
	for (k = 0; k < rf->conf.max_stripes; k++)
		if (!x->sops[k].used) {
			o = &x->sops[k];
			break;
		}
	if (o == NULL)
		return -EAGAIN;
	o->rel = rte_zmalloc("amrma_rf_rel", sizeof(*o->rel), 0);
	if (o->rel == NULL)
		return -ENOMEM;
	ret = amrma_region_register(rf->regions, (void *)(uintptr_t)buf, len,
				    AMRMA_REGION_READ, &o->reg, &key);
	if (ret != 0) {
		rte_free(o->rel);
		o->rel = NULL;
		return ret;
	}
	o->rel->ctx = ctx;
	o->rel->cb = cb;
	o->rel->arg = arg;
	o->gen = rf_gen_next();
	o->accepted = false;
	o->ended = false;
	o->dst = dst;
	o->deadline = rte_rdtsc() + rf->timeout_tsc;
	o->used = true;		/* before the request: its end names the entry */
	args[0] = key;
	args[1] = len;
	args[2] = tag;
	args[3] = cookie_of(k, o->gen);
	args[4] = amrma_node_nb_ctx(rf->node);
	ret = amrma_am_request(ctx, dst, AMRMA_REFLECT_H_STRIPE_RTS, args, RTS_NARGS, NULL,
			       0, rts_done, (void *)(uintptr_t)args[3]);
	if (ret != 0) {
		/* nobody had the key */
		o->used = false;
		amrma_region_deregister(rf->regions, o->reg, NULL, NULL);
		o->reg = NULL;
		rte_free(o->rel);
		o->rel = NULL;
		return ret;
	}
	x->nb_sops++;
	x->st.stripes_sent++;
	return 0;
}

/* Origin's part of the poll: end what ended, look for targets that went. */
int
rf_stripe_poll(struct rf_ctx *x)
{
	struct amrma_reflect *rf = x->rf;
	uint64_t now = amrma_ctx_now(x->ctx);
	int work = 0;
	uint32_t k;

	if (now >= x->next_scan) {
		x->next_scan = now + rf->scan_tsc;
		for (k = 0; k < rf->conf.max_stripes; k++) {
			struct rf_sop *o = &x->sops[k];
			bool closed = false;
			uint32_t e;

			if (!o->used || o->ended)
				continue;
			if (now >= o->deadline) {
				sop_ended(x, o, -ETIMEDOUT);
				continue;
			}
			if (!o->accepted)
				continue;	/* the AM layer ends the RTS itself */
			e = amrma_ctx_peer_epoch(x->ctx, o->dst, &closed);
			if (closed)
				sop_ended(x, o, -ENOTCONN);
			else if (e != o->peer_epoch)
				sop_ended(x, o, -ECONNRESET);
		}
	}
	for (k = 0; x->nb_sops_ended != 0 && k < rf->conf.max_stripes; k++) {
		struct rf_sop *o = &x->sops[k];

		struct rf_release r;

		if (!o->used || !o->ended)
			continue;
		/*
		 * No new get finds the key once it is withdrawn, but one that another of
		 * our lcores serves may still copy from buf (a send that failed early, or
		 * the last reply of one that did not): the send ends once it let go.
		 */
		if (o->reg != NULL) {
			int held = amrma_region_deregister(rf->regions, o->reg, sop_released,
							   o->rel);

			if (held > 0)
				x->st.stripe_read_wait++;
			else if (held < 0)	/* gone already: no release will come */
				__atomic_store_n(&o->rel->state, RF_REL_GONE, __ATOMIC_RELEASE);
			o->reg = NULL;
		}
		if (__atomic_load_n(&o->rel->state, __ATOMIC_ACQUIRE) != RF_REL_GONE)
			continue;
		r = *o->rel;
		rte_free(o->rel);
		o->rel = NULL;
		o->used = false;
		x->nb_sops--;
		x->nb_sops_ended--;
		if (r.status != 0)
			x->st.stripes_failed++;
		work++;
		r.cb(x->ctx, r.arg, r.status);
	}
	return work;
}

/* ---- target ---- */

/* The end of a striped send, to its origin: 0, or -EAGAIN (no room now: again later). */
static int
send_end(struct rf_ctx *x, struct amrma_ep to, uint64_t op, int status)
{
	const struct amrma_cn cn = {
		.cookie = op, .to = to, .kind = RF_CN_STRIPE, .status = rf_status(status),
	};

	return rf_send_notify(x, &cn);
}

/*
 * Send the ends this context owes (the receives whose last portion it pulled). An entry
 * is freed only once its end left, so that they never pile up beyond max_stripes.
 */
int
rf_stripe_ends(struct rf_ctx *x)
{
	struct amrma_reflect *rf = x->rf;
	int work = 0;

	while (x->nb_ends != 0) {
		uint32_t idx = x->ends[0];
		struct rf_srx *s = &rf->srx[idx];

		if (send_end(x, s->src, s->op, s->status) != 0)
			break;
		__atomic_store_n(&s->gen, 0, __ATOMIC_RELEASE);
		rte_ring_mp_enqueue_elem(rf->srx_free, &idx, sizeof(idx));
		memmove(x->ends, x->ends + 1, --x->nb_ends * sizeof(x->ends[0]));
		work++;
	}
	return work;
}

/* The handler: check, and queue the RTS in this context's own FIFO. */
int
rf_stripe_rts_handler(struct amrma_ctx *ctx, amrma_am_token_t tok,
		      const struct amrma_am_msg *msg, void *arg)
{
	struct amrma_reflect *rf = arg;
	struct rf_ctx *x = rf_handler_ctx(ctx, arg);
	struct amrma_desc d;

	RTE_SET_USED(tok);
	if (msg->nargs != RTS_NARGS || msg->len != 0 || msg->args[1] == 0 ||
	    msg->args[4] == 0 || msg->args[4] > AMRMA_WIRE_MAX_CTX) {
		x->st.bad_requests++;
		return -EINVAL;
	}
	if (rf->listener.alloc == NULL) {
		x->st.stripe_refused++;
		return -ENOTSUP;
	}
	memset(&d, 0, sizeof(d));
	d.op = RF_DESC_STRIPE_RECV;
	d.peer = msg->src;
	d.key = msg->args[0];
	d.len = msg->args[1];
	d.offset = msg->args[2];
	d.cn.cookie = msg->args[3];
	d.cn.key = msg->args[4];
	if (rte_ring_mp_enqueue_elem(x->fifo, &d, sizeof(d)) != 0) {
		x->st.stripe_refused++;
		return -ENOBUFS;
	}
	return 0;
}

/* A portion ended, on the lcore of the context that pulled it. */
static void
part_done(struct amrma_ctx *ctx, void *arg, int status)
{
	struct rf_ctx *x = rf_ctx_of(ctx);
	uint64_t v = (uintptr_t)arg;
	uint32_t idx = (uint32_t)v;
	struct amrma_reflect *rf;
	struct rf_srx *s;
	int32_t none = 0;

	if (x == NULL || idx >= x->rf->conf.max_stripes)
		return;
	rf = x->rf;
	s = &rf->srx[idx];
	if (__atomic_load_n(&s->gen, __ATOMIC_ACQUIRE) != (uint32_t)(v >> 32))
		return;
	x->st.stripe_parts++;
	if (status != 0)
		__atomic_compare_exchange_n(&s->status, &none, status, false, __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED);
	if (__atomic_sub_fetch(&s->left, 1, __ATOMIC_ACQ_REL) != 0)
		return;
	/* the last portion: every other context is done with the entry */
	status = __atomic_load_n(&s->status, __ATOMIC_RELAXED);
	rf->listener.done(ctx, rf->listener.arg, s->src, s->tag, s->buf, s->len, status);
	s->status = status;
	x->ends[x->nb_ends++] = idx;
	rf_stripe_ends(x);
}

/* Take the entry for the RTS d: 0, or the status to end the send with. */
static int
split_begin(struct rf_ctx *x, const struct amrma_desc *d)
{
	struct amrma_reflect *rf = x->rf;
	struct rf_srx *s;
	uint64_t parts;
	uint32_t idx;
	void *buf;

	if (rf->listener.alloc == NULL)
		return -ENOTSUP;
	/* refused, not waited for: this FIFO may hold a portion of a receive that holds
	 * an entry, behind this RTS (measured: the fuzzer's first find, a deadlock) */
	if (rte_ring_mc_dequeue_elem(rf->srx_free, &idx, sizeof(idx)) != 0)
		return -ENOBUFS;
	buf = rf->listener.alloc(x->ctx, rf->listener.arg, d->peer, d->offset, d->len);
	if (buf == NULL) {
		rte_ring_mp_enqueue_elem(rf->srx_free, &idx, sizeof(idx));
		return -ENOBUFS;
	}
	s = &rf->srx[idx];
	parts = d->len / rf->conf.stripe_min_part;
	parts = RTE_MAX(UINT64_C(1), RTE_MIN(parts, (uint64_t)rf->nb_ctx));
	s->nparts = (uint32_t)parts;
	s->left = s->nparts;
	s->status = 0;
	s->nctx = (uint16_t)d->cn.key;
	s->src = d->peer;
	s->key = d->key;
	s->tag = d->offset;
	s->len = d->len;
	s->op = d->cn.cookie;
	s->buf = buf;
	__atomic_store_n(&s->gen, rf_gen_next(), __ATOMIC_RELEASE);
	x->split_idx = idx;
	x->split_next = 0;
	x->st.stripe_recvs++;
	return 0;
}

/*
 * Run the RTS d on its context: portion k goes to context (this + k) of the node and is
 * pulled from the origin's context k (modulo both nodes' counts). Resumable: a FIFO
 * that is full stops it until the next poll.
 */
int
rf_stripe_split(struct rf_ctx *x, const struct amrma_desc *d)
{
	struct amrma_reflect *rf = x->rf;
	const uint16_t self = amrma_ctx_index(x->ctx);
	struct rf_srx *s;
	uint64_t part;
	int ret;

	if (x->split_idx == RF_NONE) {
		ret = split_begin(x, d);
		if (ret != 0) {
			/* nothing taken: if the end finds no room, the whole RTS runs again */
			if (send_end(x, d->peer, d->cn.cookie, ret) != 0)
				return -EAGAIN;
			x->st.stripe_refused++;
			return 0;
		}
	}
	s = &rf->srx[x->split_idx];
	part = (s->len + s->nparts - 1) / s->nparts;
	while (x->split_next < s->nparts) {
		uint32_t k = x->split_next;
		uint16_t to = (uint16_t)((self + k) % rf->nb_ctx);
		struct amrma_desc g;

		memset(&g, 0, sizeof(g));
		g.op = AMRMA_DESC_GET;
		g.peer.node = s->src.node;
		g.peer.ctx = (uint8_t)(k % s->nctx);
		g.key = s->key;
		g.offset = part * k;
		g.local = s->buf + g.offset;
		g.len = RTE_MIN(part, s->len - g.offset);
		/* copied replies: nothing at the origin refers to its buffer once the
		 * last reply is in (the rendezvous get would attach it to frames) */
		g.rma_flags = AMRMA_RMA_F_PIPELINED;
		g.cb = part_done;
		g.cb_arg = (void *)(uintptr_t)cookie_of(x->split_idx, s->gen);
		/*
		 * Our own portion runs here (our FIFO may be full, and only we drain it), and
		 * so does one whose context's FIFO is full: waiting for room there could wait
		 * for good, that context being stuck in a split that waits for room in ours.
		 * Only our own operations in flight may make this wait (-EAGAIN).
		 */
		if (to == self ||
		    rte_ring_mp_enqueue_elem(rf->xc[to].fifo, &g, sizeof(g)) != 0) {
			ret = rf_run_data(x, &g);
			if (ret == -EAGAIN)
				return ret;
		}
		x->split_next++;
	}
	x->split_idx = RF_NONE;
	return 0;
}
