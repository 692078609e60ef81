/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The RMA engine's life: configuration defaults, creation with its per-context state,
 * the generations that keep one engine's slots apart from the next's, and destruction.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_malloc.h>
#include <rte_pause.h>
#include <rte_service.h>
#include <rte_service_component.h>
#include <rte_spinlock.h>

#include "rma_priv.h"

void
amrma_rma_conf_defaults(struct amrma_rma_conf *c)
{
	memset(c, 0, sizeof(*c));
	c->max_regions = 1024;
	c->max_ops = 1024;
	c->short_max = 0;		/* 0: one frame's payload */
	/* measured crossovers, docs/rma.md: rendezvous gets leave the target without a copy,
	 * rendezvous puts pay a round trip and a reply per chunk that pipelined puts skip */
	c->rndv_threshold = UINT64_C(256) << 10;
	c->rndv_put_threshold = UINT64_C(4) << 20;
	c->pipeline_depth = 64;
	c->queue_size = 1024;
	c->zero_copy = true;
	c->progress_ctx = 0;
	c->rndv_timeout_ms = 10000;
	c->completion_slots = 1024;
	c->stream_min = UINT64_C(8) << 20;	/* measured, docs/rma.md */
}

int
amrma_rma_set_copy_engine(struct amrma_ctx *ctx, struct amrma_copy_engine *e)
{
	struct rma_ctx *rc = rc_of(ctx);

	if (rc == NULL || (e != NULL && e->ops == NULL))
		return -EINVAL;
	rc->copy = e != NULL ? e : &rc->cpu;
	return 0;
}

struct amrma_rma *
amrma_rma_of(const struct amrma_ctx *ctx)
{
	const struct rma_ctx *rc = rc_of(ctx);

	return rc ? rc->rma : NULL;
}

struct amrma_region_table *
amrma_rma_regions(struct amrma_rma *rma)
{
	return rma->regions;
}

/*
 * The generation the slots of the next engine start at. An engine destroyed with
 * messages in flight (chunks unanswered, replies, CTS, completions, tagged data on their
 * way) leaves them naming its slots by (index, generation): an engine created after it on
 * the same node must not take them for its own, so its generations start past every one
 * the earlier engines used (equal again only after 65536 uses of a slot, as within an
 * engine). Atomic: engines of several nodes may come and go on several threads.
 */
static uint16_t next_gen_base;

/* how far past base the generations of a context's slots went, at least span */
static uint16_t
gen_span(const struct amrma_rma *rma, const struct rma_ctx *rc, uint16_t span)
{
	uint32_t k;

	for (k = 0; rc->ops != NULL && k < rma->conf.max_ops; k++)
		span = RTE_MAX(span, (uint16_t)(rc->ops[k].gen - rma->gen_base));
	for (k = 0; k < RMA_MAX_RX; k++)
		span = RTE_MAX(span, (uint16_t)(rc->rx[k].gen - rma->gen_base));
	for (k = 0; k < RMA_MAX_DT; k++)
		span = RTE_MAX(span, (uint16_t)(rc->dt[k].gen - rma->gen_base));
	return span;
}

/* rma is going: the next engine's generations start past its */
static void
gen_retire(const struct amrma_rma *rma, uint16_t span)
{
	uint16_t next = (uint16_t)(rma->gen_base + span + 1);
	uint16_t cur = __atomic_load_n(&next_gen_base, __ATOMIC_RELAXED);

	while ((int16_t)(next - cur) > 0 &&
	       !__atomic_compare_exchange_n(&next_gen_base, &cur, next, false,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

static int
rc_init(struct amrma_rma *rma, struct rma_ctx *rc, struct amrma_ctx *ctx, int socket)
{
	struct amrma_tag_config tc = {
		.max_posted = RMA_MAX_RX,
		.max_unexpected = RMA_MAX_RX,
		.max_unexpected_bytes = UINT64_C(1) << 30,
		.socket_id = socket,
	};
	uint32_t k;

	rc->rma = rma;
	rc->ctx = ctx;
	rc->ops = rte_zmalloc_socket(NULL, sizeof(*rc->ops) * rma->conf.max_ops,
				     RTE_CACHE_LINE_SIZE, socket);
	rc->free = rte_malloc_socket(NULL, sizeof(*rc->free) * rma->conf.max_ops, 0, socket);
	rc->ended = rte_malloc_socket(NULL, sizeof(*rc->ended) * rma->conf.max_ops, 0, socket);
	rc->tags = amrma_tag_engine_create(&tc);
	if (rc->ops == NULL || rc->free == NULL || rc->ended == NULL || rc->tags == NULL ||
	    completion_init(rc, rma->conf.completion_slots, socket) != 0)
		return -ENOMEM;
	for (k = 0; k < rma->conf.max_ops; k++) {
		rc->free[k] = rma->conf.max_ops - 1 - k;
		rc->ops[k].gen = rma->gen_base;
	}
	for (k = 0; k < RMA_MAX_RX; k++)
		rc->rx[k].gen = rma->gen_base;
	for (k = 0; k < RMA_MAX_DT; k++)
		rc->dt[k].gen = rma->gen_base;
	rc->nb_free = rma->conf.max_ops;
	TAILQ_INIT(&rc->active);
	TAILQ_INIT(&rc->finishing);
	amrma_copy_cpu_init(&rc->cpu);
	rc->copy = &rc->cpu;
	amrma_ctx_set_priv(ctx, rc);
	amrma_ctx_set_hook(ctx, rma_poll, rc);
	return 0;
}

/*
 * Engines destroyed while chunks still pointed at their ext pool and operation tables:
 * freed by the first create or destroy, on any node and thread, that finds the last of
 * their chunks gone. Without it, a process that destroys and creates engines kept
 * every such engine's pool (3.7 MB) for good: a 5000-seed soak ran out of its 1 GB heap.
 */
static TAILQ_HEAD(, amrma_rma) kept = TAILQ_HEAD_INITIALIZER(kept);
static rte_spinlock_t kept_lock = RTE_SPINLOCK_INITIALIZER;

/* The rest of a destroyed engine: what it keeps while chunks point at it, and itself. */
static void
engine_free(struct amrma_rma *rma)
{
	uint16_t i;

	for (i = 0; rma->rc != NULL && i < rma->nb_ctx; i++)
		rte_free(rma->rc[i].ops);
	rte_free(rma->rc);
	rte_mempool_free(rma->ext_pool);
	rte_free(rma);
}

/*
 * Free the kept engines whose chunks are all back in their pool: a chunk's free callback
 * (which writes its op) runs before the chunk returns, and no chunk is made any more.
 */
static void
kept_reap(void)
{
	struct amrma_rma *rma, *next;

	rte_spinlock_lock(&kept_lock);
	for (rma = TAILQ_FIRST(&kept); rma != NULL; rma = next) {
		next = TAILQ_NEXT(rma, kept_next);
		if (rte_mempool_in_use_count(rma->ext_pool) != 0)
			continue;
		TAILQ_REMOVE(&kept, rma, kept_next);
		engine_free(rma);
	}
	rte_spinlock_unlock(&kept_lock);
}

int
amrma_rma_create(struct amrma_node *node, const struct amrma_rma_conf *conf,
		 struct amrma_rma **out)
{
	struct amrma_region_table_config tc = { 0 };
	struct amrma_rma_conf c;
	char name[RTE_MEMPOOL_NAMESIZE];
	struct amrma_rma *rma;
	int socket = (int)rte_socket_id();
	uint16_t i;
	int ret;

	if (conf == NULL)
		amrma_rma_conf_defaults(&c);
	else
		c = *conf;
	if (node == NULL || out == NULL || c.max_ops == 0 || c.max_ops > RMA_MAX_OPS ||
	    c.pipeline_depth == 0 || c.progress_ctx >= amrma_node_nb_ctx(node) ||
	    !rte_is_power_of_2(c.queue_size) || !rte_is_power_of_2(c.completion_slots))
		return -EINVAL;
	for (i = 0; i < amrma_node_nb_ctx(node); i++)
		if (amrma_ctx_priv(amrma_node_ctx(node, i)) != NULL)
			return -EEXIST;
	kept_reap();
	rma = rte_zmalloc_socket("amrma_rma", sizeof(*rma), RTE_CACHE_LINE_SIZE, socket);
	if (rma == NULL)
		return -ENOMEM;
	rma->iova_va = rte_eal_iova_mode() == RTE_IOVA_VA;
	rma->node = node;
	rma->conf = c;
	rma->timeout_tsc = rte_get_tsc_hz() / 1000 * c.rndv_timeout_ms;
	rma->nb_ctx = amrma_node_nb_ctx(node);
	rma->gen_base = __atomic_load_n(&next_gen_base, __ATOMIC_RELAXED);
	snprintf(name, sizeof(name), "amrma_reg_%u_%p", amrma_node_id(node), (void *)rma);
	tc.name = name;
	tc.capacity = c.max_regions;
	tc.socket_id = socket;
	rma->regions = amrma_region_table_create(&tc);
	snprintf(name, sizeof(name), "amrma_ext_%u_%p", amrma_node_id(node), (void *)rma);
	rma->ext_pool = rte_pktmbuf_pool_create(name, 8191, 256, 0, 0, socket);
	snprintf(name, sizeof(name), "amrma_rq_%u_%p", amrma_node_id(node), (void *)rma);
	rma->queue = rte_ring_create(name, c.queue_size, socket, RING_F_SC_DEQ | RING_F_EXACT_SZ);
	snprintf(name, sizeof(name), "amrma_ri_%u_%p", amrma_node_id(node), (void *)rma);
	rma->rq_pool = rte_mempool_create(name, c.queue_size * 2 - 1, sizeof(struct rq_item),
					  0, 0, NULL, NULL, NULL, NULL, socket, 0);
	rma->rc = rte_zmalloc_socket(NULL, sizeof(*rma->rc) * rma->nb_ctx, RTE_CACHE_LINE_SIZE,
				     socket);
	rma->pending = rte_malloc_socket(NULL, sizeof(*rma->pending) * c.queue_size, 0, socket);
	if (rma->regions == NULL || rma->ext_pool == NULL || rma->queue == NULL ||
	    rma->rq_pool == NULL || rma->rc == NULL || rma->pending == NULL) {
		ret = -ENOMEM;
		goto fail;
	}
	for (i = 0; i < rma->nb_ctx; i++) {
		ret = rc_init(rma, &rma->rc[i], amrma_node_ctx(node, i), socket);
		if (ret != 0)
			goto fail;
	}
	rma_register(node, rma);
	rndv_register(node, rma);
	dt_register(node, rma);
	completion_register(node, rma);
	*out = rma;
	return 0;
fail:
	amrma_rma_destroy(rma);
	return ret;
}

/* How long amrma_rma_destroy() asks the ports to free frames attached to sources. */
#define DESTROY_WAIT_US 10000

/* Destroys that left memory allocated for chunks still held (logged each time). */
static uint32_t nb_destroy_kept;

/*
 * destroy: drop a live zero-copy op's own reference to its source, so the free callback
 * tells when the last chunk is gone (as op_finish() does when the replies are in)
 */
static void
op_cancel_release(struct rma_op *op)
{
	if (op->zero_copy && op->state != OP_FINISHING &&
	    rte_mbuf_ext_refcnt_update(&op->shinfo, -1) == 0)
		__atomic_store_n(&op->ext_released, 1, __ATOMIC_RELEASE);
}

/*
 * destroy: end a live op with -ECANCELED (or its first error), calling back on the
 * caller's lcore; EV_LOCAL only for a source no frame refers to any more
 */
static void
op_cancel(struct rma_ctx *rc, struct rma_op *op)
{
	if (op->zero_copy && !__atomic_load_n(&op->ext_released, __ATOMIC_ACQUIRE))
		op->local_reported = true;
	if (op->status == 0)
		op->status = -ECANCELED;
	op->user_holds = false;		/* its handle dies with the engine */
	op_complete(rc, op);
}

/* mbufs of the ext pool in use: chunks attached to sources, held by channels or ports */
static unsigned int
ext_held(struct amrma_rma *rma)
{
	uint64_t end = rte_get_tsc_cycles() + rte_get_tsc_hz() / 1000000 * DESTROY_WAIT_US;
	unsigned int held;
	uint16_t i;

	if (rma->ext_pool == NULL)
		return 0;
	/* a port may keep sent frames until asked; unacknowledged ones stay with the
	 * channels until acknowledged or their peer is declared dead */
	while ((held = rte_mempool_in_use_count(rma->ext_pool)) != 0 &&
	       rte_get_tsc_cycles() < end) {
		for (i = 0; rma->rc != NULL && i < rma->nb_ctx; i++)
			if (rma->rc[i].ctx != NULL)
				amrma_ctx_tx_cleanup(rma->rc[i].ctx);
		if (rte_mempool_in_use_count(rma->ext_pool) != 0)
			rte_delay_us_sleep(100);
	}
	return held;
}

void
amrma_rma_destroy(struct amrma_rma *rma)
{
	unsigned int held;
	uint16_t i, span = 0;
	uint32_t k;

	if (rma == NULL)
		return;
	if (rma->has_service) {
		rte_service_runstate_set(rma->service_id, 0);
		rte_service_component_runstate_set(rma->service_id, 0);
		/* an iteration under way on a service lcore still uses the engine */
		while (rte_service_may_be_active(rma->service_id) == 1)
			rte_pause();
		rte_service_component_unregister(rma->service_id);
	}
	for (i = AMRMA_RMA_H_PUT; i <= AMRMA_RMA_H_LAST; i++)
		amrma_am_register(rma->node, i, NULL, NULL);
	/* rendezvous requests not served: their initiators are told */
	rndv_drop_unserved(rma);
	/* detached first: a callback below cannot start an operation (-EINVAL) */
	for (i = 0; rma->rc != NULL && i < rma->nb_ctx; i++) {
		struct rma_ctx *rc = &rma->rc[i];

		if (rc->ctx == NULL)
			continue;
		if (rc->ext_fn != NULL)
			RMA_LOG(ERR, "destroyed under an extension (amrma_reflect_destroy() first)");
		amrma_ctx_set_hook(rc->ctx, NULL, NULL);
		amrma_ctx_set_priv(rc->ctx, NULL);
		for (k = 0; rc->ops != NULL && k < rma->conf.max_ops; k++)
			if (rc->ops[k].state != OP_FREE && rc->ops[k].state != OP_COMPLETE)
				op_cancel_release(&rc->ops[k]);
	}
	held = ext_held(rma);
	for (i = 0; rma->rc != NULL && i < rma->nb_ctx; i++) {
		struct rma_ctx *rc = &rma->rc[i];

		if (rc->ctx == NULL)
			continue;
		for (k = 0; rc->ops != NULL && k < rma->conf.max_ops; k++) {
			if (rc->ops[k].state != OP_FREE && rc->ops[k].state != OP_COMPLETE) {
				rndv_cancel_tsend(rc, &rc->ops[k]);
				op_cancel(rc, &rc->ops[k]);
			}
		}
		for (k = 0; k < RMA_MAX_RX; k++)
			if (rc->rx[k].used && rc->rx[k].ref != NULL)
				amrma_region_put(rma->regions, rc->rx[k].ref);
		dt_cleanup(rma, rc);
		completion_cancel(rc);
		completion_cleanup(rc);
		for (k = 0; rc->ops != NULL && k < rma->conf.max_ops; k++)
			dt_op_release(&rc->ops[k]);
		span = gen_span(rma, rc, span);	/* the cancelled ones included */
		amrma_tag_engine_free(rc->tags);
		/* held chunks point at their op's shared info: the table stays */
		if (held == 0) {
			rte_free(rc->ops);
			rc->ops = NULL;
		}
		rte_free(rc->free);
		rte_free(rc->ended);
	}
	gen_retire(rma, span);
	rte_ring_free(rma->queue);
	rte_mempool_free(rma->rq_pool);
	amrma_region_table_free(rma->regions);
	if (held != 0) {
		/* freeing it would let the port or a retransmission read freed memory, and
		 * their free write into it; rma stays too, as its address names the pool */
		RMA_LOG(WARNING, "destroyed with %u zero-copy chunks still held by node %u: "
			"their mbuf pool and operation tables stay allocated until they are "
			"freed (%u time(s))", held, amrma_node_id(rma->node),
			__atomic_add_fetch(&nb_destroy_kept, 1, __ATOMIC_RELAXED));
		rte_spinlock_lock(&kept_lock);
		TAILQ_INSERT_TAIL(&kept, rma, kept_next);
		rte_spinlock_unlock(&kept_lock);
	} else {
		engine_free(rma);
	}
	kept_reap();
}
