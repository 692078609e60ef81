/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * amrma_rma_destroy() with zero-copy chunks still held by the node's channels or its
 * port: live operations end with -ECANCELED, and the memory the chunks point at (their
 * mbuf pool, the shared info in the operation table) is not freed under them.
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <rte_cycles.h>
#include <rte_malloc.h>

#include "amrma_rma.h"
#include "harness.h"
#include "hold_port.h"
#include "rma_priv.h"	/* the ext pool and the op table */

#define REGION (1u << 20)

static struct harness H;
static struct amrma_rma *R[2];
static uint8_t *target;
static uint64_t key;
static struct amrma_region *reg;

static int
step(void)
{
	int w = h_step(&H);
	unsigned int i;

	for (i = 0; i < 2; i++)
		if (R[i] != NULL)
			w += amrma_rma_progress(R[i]);
	return w;
}

static int
setup(void **state)
{
	struct amrma_rma_conf rc;
	unsigned int i;

	RTE_SET_USED(state);
	/* node 2 has no RMA engine: a bystander that sends what only node 1 may */
	assert_int_equal(h_create(&H, 3, 1, NULL), 0);
	amrma_rma_conf_defaults(&rc);
	for (i = 0; i < 2; i++)
		assert_int_equal(amrma_rma_create(H.n[i].node, &rc, &R[i]), 0);
	target = aligned_alloc(4096, REGION);
	assert_non_null(target);
	assert_int_equal(amrma_region_register(amrma_rma_regions(R[1]), target, REGION,
		AMRMA_REGION_READ | AMRMA_REGION_WRITE, &reg, &key), 0);
	return 0;
}

static int
teardown(void **state)
{
	unsigned int i;

	RTE_SET_USED(state);
	for (i = 0; i < 2; i++) {
		amrma_rma_destroy(R[i]);
		R[i] = NULL;
	}
	h_destroy(&H);
	free(target);
	return 0;
}

struct evlog {
	int seq[4];
	int status;
	unsigned int n;
};

static void
ev_cb(struct amrma_ctx *ctx, void *arg, enum amrma_rma_event ev, int status)
{
	struct evlog *l = arg;

	RTE_SET_USED(ctx);
	if (l->n < RTE_DIM(l->seq))
		l->seq[l->n++] = ev;
	if (ev == AMRMA_RMA_EV_DONE)
		l->status = status;
}

/* attached mbufs of the ext pool */
static struct rte_mbuf *live[256];
static unsigned int nb_live;

static void
collect_live(struct rte_mempool *mp, void *opaque, void *obj, unsigned int idx)
{
	struct rte_mbuf *m = obj;

	RTE_SET_USED(mp);
	RTE_SET_USED(opaque);
	RTE_SET_USED(idx);
	if (RTE_MBUF_HAS_EXTBUF(m) && nb_live < RTE_DIM(live))
		live[nb_live++] = m;
}

/*
 * The target is frozen while a 21-chunk zero-copy put is in flight, so node 0's channels
 * hold every chunk, and the engine is destroyed: the put ends with -ECANCELED (no
 * EV_LOCAL: the channels still read the source), the chunks keep their pool and shared
 * info, and when the target wakes up they are retransmitted, acknowledged and freed.
 * Before, both were freed (and zeroed) under them: a crash in the node's RX path or in
 * amrma_node_destroy().
 */
static void
test_destroy_with_zero_copy_in_flight(void **state)
{
	struct amrma_ctx *ctx = h_ctx(&H, 0, 0);
	uint64_t len = 20 * (uint64_t)amrma_am_max_payload(ctx, 4) + 3;
	uint8_t *src = rte_malloc(NULL, len, 64);
	struct rte_mempool *ext = R[0]->ext_pool;
	char ext_name[RTE_MEMPOOL_NAMESIZE];
	struct evlog l = { .status = 1 };
	uint64_t end;
	unsigned int i, in_use, intact = 0;

	RTE_SET_USED(state);
	assert_non_null(src);
	memset(src, 9, len);
	snprintf(ext_name, sizeof(ext_name), "%s", ext->name);
	H.n[1].frozen = true;
	assert_int_equal(amrma_rma_put(ctx, (struct amrma_ep){ .node = 1 }, key, 0, src, len,
		AMRMA_RMA_F_PIPELINED | AMRMA_RMA_F_LOCAL_CB, ev_cb, &l, NULL), 0);
	for (i = 0; i < 20; i++)
		step();
	in_use = rte_mempool_in_use_count(ext);
	nb_live = 0;
	rte_mempool_obj_iter(ext, collect_live, NULL);
	assert_int_equal(in_use, 21);
	assert_int_equal(nb_live, 21);
	amrma_rma_destroy(R[0]);
	R[0] = NULL;
	/* the callback ran in the destroy, DONE only */
	assert_int_equal(l.n, 1);
	assert_int_equal(l.seq[0], AMRMA_RMA_EV_DONE);
	assert_int_equal(l.status, -ECANCELED);
	/* what the held chunks point at is still there */
	assert_ptr_equal(rte_mempool_lookup(ext_name), ext);
	for (i = 0; i < nb_live; i++)
		intact += live[i]->buf_addr >= (void *)src &&
			  (uint8_t *)live[i]->buf_addr < src + len &&
			  live[i]->pool == ext && rte_mbuf_ext_refcnt_read(live[i]->shinfo) > 0;
	assert_int_equal(intact, 21);
	/* the target wakes up: node 0 retransmits the chunks, they are acknowledged */
	H.n[1].frozen = false;
	end = rte_get_tsc_cycles() + rte_get_tsc_hz() * 10;
	while ((amrma_ctx_outstanding(ctx) != 0 || rte_mempool_in_use_count(ext) != 0) &&
	       rte_get_tsc_cycles() < end)
		step();
	assert_int_equal(amrma_ctx_outstanding(ctx), 0);
	assert_int_equal(rte_mempool_in_use_count(ext), 0);
	assert_memory_equal(target, src, len);
	/* the next destroy, of any node's engine, frees what the chunks no longer need */
	assert_ptr_equal(rte_mempool_lookup(ext_name), ext);
	amrma_rma_destroy(R[1]);
	R[1] = NULL;
	assert_null(rte_mempool_lookup(ext_name));
	rte_free(src);
}

/*
 * Every reply of a zero-copy put is in, the port holds its frames (OP_FINISHING), and the
 * engine is destroyed. A port that lets go when asked: the destroy asks, the source is
 * free (EV_LOCAL, then DONE -ECANCELED) and the pool goes. A port that does not: no
 * EV_LOCAL, and the pool and the op table stay for the frames it frees later.
 */
static void
test_destroy_port_holds(void **state)
{
	struct amrma_net_dev *dev = &H.n[0].dev;
	struct amrma_ctx *ctx = h_ctx(&H, 0, 0);
	uint64_t len = 20 * (uint64_t)amrma_am_max_payload(ctx, 4) + 3;
	uint8_t *src = rte_malloc(NULL, len, 64);
	struct amrma_rma_conf rc;
	unsigned int k;

	RTE_SET_USED(state);
	assert_non_null(src);
	memset(src, 5, len);
	amrma_rma_conf_defaults(&rc);
	hold_port_attach(dev);
	for (k = 0; k < 2; k++) {
		struct rte_mempool *ext = R[0]->ext_pool, *found;
		char ext_name[RTE_MEMPOOL_NAMESIZE];
		uint64_t end = rte_get_tsc_cycles() + rte_get_tsc_hz() * 10;
		struct evlog l = { .status = 1 };
		amrma_rma_req_t req;
		struct rma_op *op;
		bool finishing;

		snprintf(ext_name, sizeof(ext_name), "%s", ext->name);
		hold_stubborn = true;
		assert_int_equal(amrma_rma_put(ctx, (struct amrma_ep){ .node = 1 }, key, 0, src,
			len, AMRMA_RMA_F_PIPELINED | AMRMA_RMA_F_LOCAL_CB, ev_cb, &l, &req), 0);
		op = &rc_of(ctx)->ops[(uint32_t)req];
		while (op->state != OP_FINISHING && rte_get_tsc_cycles() < end)
			step();
		finishing = op->state == OP_FINISHING;
		hold_stubborn = k == 1;
		amrma_rma_destroy(R[0]);
		R[0] = NULL;
		if (k == 1) {
			/* the pool is still there for the frames the port frees now */
			assert_ptr_equal(rte_mempool_lookup(ext_name), ext);
			assert_true(hold_nb_held() > 0);
			hold_port_release();
			assert_int_equal(rte_mempool_in_use_count(ext), 0);
			assert_ptr_equal(rte_mempool_lookup(ext_name), ext);
		} else {
			assert_null(rte_mempool_lookup(ext_name));
			assert_int_equal(hold_nb_held(), 0);
		}
		assert_true(finishing);
		assert_int_equal(l.status, -ECANCELED);
		assert_int_equal(l.n, k == 0 ? 2 : 1);
		assert_int_equal(l.seq[0], k == 0 ? AMRMA_RMA_EV_LOCAL : AMRMA_RMA_EV_DONE);
		assert_memory_equal(target, src, len);
		assert_int_equal(amrma_rma_create(H.n[0].node, &rc, &R[0]), 0);
		/* the kept pool went with the next create, its chunks all back (the new
		 * engine may have the old one's address, and so the pool's name) */
		found = rte_mempool_lookup(ext_name);
		assert_true(found == NULL || found == R[0]->ext_pool);
	}
	rte_free(src);
}

/*
 * The engine is destroyed while a get waits for its replies, and a new engine is created
 * on the same node: it numbers its operations afresh, so its first get names the same
 * operation as the old one. The old get's replies, which come once the target wakes up,
 * must not be taken for the new get's: before, they were placed into the new get's buffer
 * and counted as its packets, so it completed before its own data were in.
 */
static void
test_recreate_with_get_in_flight(void **state)
{
	struct amrma_ctx *ctx = h_ctx(&H, 0, 0);
	uint64_t len = 4 * (uint64_t)amrma_am_max_payload(ctx, 0) - 7;
	uint8_t *old_buf = calloc(1, len), *buf = calloc(1, len);
	struct evlog lo = { .status = 1 }, l = { .status = 1 };
	struct amrma_rma_conf rc;
	uint64_t end, i;

	RTE_SET_USED(state);
	assert_non_null(old_buf);
	assert_non_null(buf);
	h_fill(target, REGION, 71);
	H.n[1].frozen = true;
	assert_int_equal(amrma_rma_get(ctx, (struct amrma_ep){ .node = 1 }, key, 0, old_buf,
		len, AMRMA_RMA_F_PIPELINED, ev_cb, &lo, NULL), 0);
	for (i = 0; i < 5; i++)
		step();
	amrma_rma_destroy(R[0]);
	R[0] = NULL;
	assert_int_equal(lo.status, -ECANCELED);
	amrma_rma_conf_defaults(&rc);
	assert_int_equal(amrma_rma_create(H.n[0].node, &rc, &R[0]), 0);
	/* issued before the target wakes: the old requests, resent first, are served first */
	assert_int_equal(amrma_rma_get(ctx, (struct amrma_ep){ .node = 1 }, key, 65536, buf,
		len, AMRMA_RMA_F_PIPELINED, ev_cb, &l, NULL), 0);
	step();
	step();
	H.n[1].frozen = false;
	end = rte_get_tsc_cycles() + rte_get_tsc_hz() * 10;
	while (l.status == 1 && rte_get_tsc_cycles() < end)
		step();
	assert_int_equal(l.status, 0);
	assert_memory_equal(buf, target + 65536, len);
	/* the old requests are answered; nothing of theirs lands anywhere */
	while (amrma_ctx_outstanding(ctx) != 0 && rte_get_tsc_cycles() < end)
		step();
	assert_int_equal(amrma_ctx_outstanding(ctx), 0);
	assert_memory_equal(buf, target + 65536, len);
	for (i = 0; i < len; i++)
		if (old_buf[i] != 0)
			fail_msg("byte %" PRIu64 " of a cancelled get's buffer written", i);
	free(old_buf);
	free(buf);
}

/*
 * The target's engine is destroyed and created again on the same node (the node's life
 * does not change) while a pipelined put to it is half in. The put was owed one
 * completion, which the old engine now sends, failing it: before, the initiator waited
 * its whole rendezvous timeout for a completion that no engine would send.
 */
static void
test_recreate_target_with_put_in_flight(void **state)
{
	struct amrma_ctx *ctx = h_ctx(&H, 0, 0);
	uint64_t len = 64 * (uint64_t)amrma_am_max_payload(ctx, 0), end, i;
	uint8_t *src = malloc(len);
	struct evlog l = { .status = 1 };
	struct amrma_rma_conf rc;
	struct rma_ctx *trc;

	RTE_SET_USED(state);
	assert_non_null(src);
	h_fill(src, len, 5);
	amrma_rma_conf_defaults(&rc);
	rc.rndv_timeout_ms = 60000;	/* far beyond the test's patience */
	for (i = 0; i < 2; i++) {
		amrma_rma_destroy(R[i]);
		assert_int_equal(amrma_rma_create(H.n[i].node, &rc, &R[i]), 0);
	}
	assert_int_equal(amrma_region_register(amrma_rma_regions(R[1]), target, REGION,
		AMRMA_REGION_READ | AMRMA_REGION_WRITE, &reg, &key), 0);
	assert_int_equal(amrma_rma_put(ctx, (struct amrma_ep){ .node = 1 }, key, 0, src, len,
		AMRMA_RMA_F_PIPELINED | AMRMA_RMA_F_COPY, ev_cb, &l, NULL), 0);
	/* until the target counts some of its bytes, not all */
	trc = rc_of(h_ctx(&H, 1, 0));
	end = rte_get_tsc_cycles() + rte_get_tsc_hz() * 5;
	while (trc->nb_track == 0 && rte_get_tsc_cycles() < end)
		step();
	assert_int_equal(trc->nb_track, 1);
	for (i = 0; i < trc->track_size; i++)
		if (trc->track[i].used)
			assert_int_not_equal(trc->track[i].left, 0);
	amrma_rma_destroy(R[1]);
	assert_int_equal(amrma_rma_create(H.n[1].node, &rc, &R[1]), 0);
	end = rte_get_tsc_cycles() + rte_get_tsc_hz() * 5;
	while (l.status == 1 && rte_get_tsc_cycles() < end)
		step();
	assert_int_equal(l.status, -ECANCELED);
	free(src);
}

/*
 * A completion sent by an engine since destroyed fails later (its initiator is gone):
 * the drop is the old engine's, not counted into the one created after it on the node.
 */
static void
test_old_completion_drop_not_counted_anew(void **state)
{
	struct amrma_ctx *ctx = h_ctx(&H, 0, 0), *tctx = h_ctx(&H, 1, 0);
	uint8_t src[64];
	struct evlog l = { .status = 1 };
	struct amrma_rma_conf rc;
	struct amrma_rma_stats st;
	uint64_t end;

	RTE_SET_USED(state);
	h_fill(src, sizeof(src), 9);
	assert_int_equal(amrma_rma_put(ctx, (struct amrma_ep){ .node = 1 }, key, 0, src,
		sizeof(src), AMRMA_RMA_F_PIPELINED | AMRMA_RMA_F_COPY, ev_cb, &l, NULL), 0);
	H.n[0].frozen = true;		/* the initiator hangs: its completion will fail */
	end = rte_get_tsc_cycles() + rte_get_tsc_hz() * 5;
	do {
		step();
		amrma_rma_stats_get(tctx, &st);
	} while (st.completions_sent == 0 && rte_get_tsc_cycles() < end);
	assert_int_equal(st.completions_sent, 1);
	amrma_rma_destroy(R[1]);
	amrma_rma_conf_defaults(&rc);
	assert_int_equal(amrma_rma_create(H.n[1].node, &rc, &R[1]), 0);
	/* the node gives the frozen peer up, failing the old engine's completion */
	end = rte_get_tsc_cycles() + rte_get_tsc_hz() * 10;
	while (amrma_ctx_outstanding(tctx) != 0 && rte_get_tsc_cycles() < end)
		step();
	assert_int_equal(amrma_ctx_outstanding(tctx), 0);
	amrma_rma_stats_get(tctx, &st);
	assert_int_equal(st.completion_drops, 0);
	H.n[0].frozen = false;
	/* the put, which will see no completion, ends while l is still here */
	amrma_rma_destroy(R[0]);
	R[0] = NULL;
	assert_int_equal(l.status, -ECANCELED);
}

/* As step(), but the target's RMA queue is not served: its requests wait there. */
static void
step_target_unserved(void)
{
	h_step(&H);
	if (R[0] != NULL)
		amrma_rma_progress(R[0]);
}

/* Both engines again with a rendezvous timeout far beyond the tests' patience. */
static void
recreate_patient(void)
{
	struct amrma_rma_conf rc;
	unsigned int i;

	amrma_rma_conf_defaults(&rc);
	rc.rndv_timeout_ms = 60000;
	for (i = 0; i < 2; i++) {
		amrma_rma_destroy(R[i]);
		assert_int_equal(amrma_rma_create(H.n[i].node, &rc, &R[i]), 0);
	}
	assert_int_equal(amrma_region_register(amrma_rma_regions(R[1]), target, REGION,
		AMRMA_REGION_READ | AMRMA_REGION_WRITE, &reg, &key), 0);
}

/*
 * The target's engine is destroyed while a rendezvous get and a rendezvous put wait in
 * its RMA queue (accepted, not served): the destroy tells their initiator, and both end
 * with -ECANCELED at once, nothing written either way. Before, the put waited for a CTS
 * and the get for its data until rndv_timeout_ms (here 60 s).
 */
static void
test_destroy_target_with_rendezvous_queued(void **state)
{
	struct amrma_ctx *ctx = h_ctx(&H, 0, 0);
	const struct amrma_ep to = { .node = 1 };
	const uint64_t len = 3000;
	uint8_t *buf = calloc(1, len), *src = malloc(len);
	struct evlog lg = { .status = 1 }, lp = { .status = 1 };
	struct amrma_rma_stats st;
	uint64_t end;

	RTE_SET_USED(state);
	assert_non_null(buf);
	assert_non_null(src);
	h_fill(src, len, 3);
	recreate_patient();
	memset(target, 0, REGION);
	assert_int_equal(amrma_rma_get(ctx, to, key, 0, buf, len, AMRMA_RMA_F_RENDEZVOUS,
				       ev_cb, &lg, NULL), 0);
	assert_int_equal(amrma_rma_put(ctx, to, key, 8192, src, len,
		AMRMA_RMA_F_RENDEZVOUS | AMRMA_RMA_F_COPY, ev_cb, &lp, NULL), 0);
	end = rte_get_tsc_cycles() + rte_get_tsc_hz() * 5;
	while (rte_ring_count(R[1]->queue) < 2 && rte_get_tsc_cycles() < end)
		step_target_unserved();
	assert_int_equal(rte_ring_count(R[1]->queue), 2);
	amrma_rma_destroy(R[1]);
	R[1] = NULL;
	end = rte_get_tsc_cycles() + rte_get_tsc_hz() * 5;
	while ((lg.status == 1 || lp.status == 1) && rte_get_tsc_cycles() < end)
		step();
	assert_int_equal(lg.status, -ECANCELED);
	assert_int_equal(lp.status, -ECANCELED);
	amrma_rma_stats_get(ctx, &st);
	assert_int_equal(st.rndv_cancelled, 2);
	assert_int_equal(st.rndv_timeouts, 0);
	assert_int_equal(st.bad_replies, 0);
	assert_true(h_is_zero(buf, len));
	assert_true(h_is_zero(target + 8192, len));
	free(buf);
	free(src);
}

/*
 * The target's engine is destroyed while it serves a rendezvous get, part of the data
 * handed to the node: what the node holds still arrives, then the cancel ends the get
 * with -ECANCELED. Before, the get waited for the rest until rndv_timeout_ms.
 */
static void
test_destroy_target_serving_rendezvous_get(void **state)
{
	struct amrma_ctx *ctx = h_ctx(&H, 0, 0);
	uint8_t *buf = calloc(1, REGION);
	struct evlog l = { .status = 1 };
	struct amrma_rma_stats st;
	struct rma_ctx *trc;
	bool partial = false;
	uint64_t end;
	uint32_t k;

	RTE_SET_USED(state);
	assert_non_null(buf);
	recreate_patient();
	h_fill(target, REGION, 17);
	trc = rc_of(h_ctx(&H, 1, 0));
	assert_int_equal(amrma_rma_get(ctx, (struct amrma_ep){ .node = 1 }, key, 0, buf,
				       REGION, AMRMA_RMA_F_RENDEZVOUS, ev_cb, &l, NULL), 0);
	/* until the target's tagged send has handed some chunks to the node, not all */
	end = rte_get_tsc_cycles() + rte_get_tsc_hz() * 5;
	while (!partial && rte_get_tsc_cycles() < end) {
		step();
		for (k = 0; k < R[1]->conf.max_ops; k++)
			partial |= trc->ops[k].kind == OP_TSEND &&
				   trc->ops[k].state == OP_ISSUING &&
				   trc->ops[k].next_chunk > 0 &&
				   trc->ops[k].next_chunk < trc->ops[k].nchunks;
	}
	assert_true(partial);
	amrma_rma_destroy(R[1]);
	R[1] = NULL;
	end = rte_get_tsc_cycles() + rte_get_tsc_hz() * 5;
	while (l.status == 1 && rte_get_tsc_cycles() < end)
		step();
	assert_int_equal(l.status, -ECANCELED);
	amrma_rma_stats_get(ctx, &st);
	assert_int_equal(st.rndv_cancelled, 1);
	assert_int_equal(st.rndv_timeouts, 0);
	free(buf);
}

/*
 * Cancels that name nothing of ours, carry no error, or come from a node that is not the
 * operation's target: counted as bad replies, and the rendezvous put and get they name
 * (waiting for a CTS, for data) go on. Then one that names the get ends it, and the put
 * completes.
 */
static void
test_rendezvous_cancel_refused(void **state)
{
	struct amrma_ctx *ctx = h_ctx(&H, 0, 0), *tctx = h_ctx(&H, 1, 0);
	struct amrma_ctx *bctx = h_ctx(&H, 2, 0);	/* a bystander */
	const struct amrma_ep to0 = { .node = 0 }, to1 = { .node = 1 };
	const uint64_t len = 3000, cancelled = (uint64_t)(int64_t)-ECANCELED;
	uint8_t *src = malloc(len), *buf = calloc(1, len);
	struct evlog l = { .status = 1 }, lg = { .status = 1 };
	struct rma_ctx *irc;
	struct amrma_rma_stats st;
	amrma_rma_req_t req;
	uint64_t a[10][3], rx_id = 0, rx_tag = 0, end;
	unsigned int i, nargs;
	int sent = 0;

	RTE_SET_USED(state);
	assert_non_null(src);
	assert_non_null(buf);
	h_fill(src, len, 4);
	h_fill(target, REGION, 6);	/* what the get reads, once served */
	recreate_patient();
	irc = rc_of(ctx);
	assert_int_equal(amrma_rma_put(ctx, to1, key, 0, src, len,
		AMRMA_RMA_F_RENDEZVOUS | AMRMA_RMA_F_COPY, ev_cb, &l, &req), 0);
	assert_int_equal(amrma_rma_get(ctx, to1, key, 8192, buf, len, AMRMA_RMA_F_RENDEZVOUS,
				       ev_cb, &lg, NULL), 0);
	end = rte_get_tsc_cycles() + rte_get_tsc_hz() * 5;
	while (rte_ring_count(R[1]->queue) < 2 && rte_get_tsc_cycles() < end)
		step_target_unserved();
	assert_int_equal(rte_ring_count(R[1]->queue), 2);
	/* the get's receive */
	for (i = 0; i < RMA_MAX_RX; i++)
		if (irc->rx[i].used && irc->rx[i].ref == NULL) {
			rx_id = (uint64_t)irc->rx[i].gen << 32 | i;
			rx_tag = irc->rx[i].tag;
		}
	assert_int_not_equal(rx_tag, 0);
	/* the put's handle with a status that is no error, a positive one, one out of
	 * range, and with two arguments; a receive that does not exist; the get's receive
	 * under another tag, and of another generation */
	a[0][0] = req, a[0][1] = UINT64_MAX, a[0][2] = 0;
	a[1][0] = req, a[1][1] = UINT64_MAX, a[1][2] = EIO;
	a[2][0] = req, a[2][1] = UINT64_MAX, a[2][2] = (uint64_t)INT64_MIN;
	a[3][0] = req, a[3][1] = UINT64_MAX, a[3][2] = cancelled;	/* sent with 2 */
	a[4][0] = req, a[4][1] = 7, a[4][2] = cancelled;
	a[5][0] = rx_tag + 1, a[5][1] = rx_id, a[5][2] = cancelled;
	a[6][0] = rx_tag, a[6][1] = rx_id + (UINT64_C(1) << 32), a[6][2] = cancelled;
	/* the put's and the get's right cancels, from node 2, which is not their target */
	a[7][0] = req, a[7][1] = UINT64_MAX, a[7][2] = cancelled;
	a[8][0] = rx_tag, a[8][1] = rx_id, a[8][2] = cancelled;
	/* last, the get's own: it ends */
	a[9][0] = rx_tag, a[9][1] = rx_id, a[9][2] = cancelled;
	for (i = 0; i < RTE_DIM(a); i++) {
		nargs = i == 3 ? 2 : 3;
		assert_int_equal(amrma_am_send(i == 7 || i == 8 ? bctx : tctx, to0,
					       AMRMA_RMA_H_RNDV_CANCEL, a[i], nargs, NULL, 0,
					       h_count_ok, &sent), 0);
		/* the bystander's are handled before the target's last one, and end nothing */
		if (i == 8) {
			assert_true(H_UNTIL(sent == 9, 5000, step_target_unserved()));
			step_target_unserved();
			amrma_rma_stats_get(ctx, &st);
			assert_int_equal(st.bad_replies, 9);
			assert_int_equal(st.rndv_cancelled, 0);
			assert_int_equal(lg.status, 1);
		}
	}
	end = rte_get_tsc_cycles() + rte_get_tsc_hz() * 5;
	while ((sent < (int)RTE_DIM(a) || lg.status == 1) && rte_get_tsc_cycles() < end)
		step_target_unserved();
	assert_int_equal(sent, RTE_DIM(a));
	amrma_rma_stats_get(ctx, &st);
	assert_int_equal(st.bad_replies, RTE_DIM(a) - 1);
	assert_int_equal(st.rndv_cancelled, 1);
	assert_int_equal(lg.status, -ECANCELED);
	assert_int_equal(l.status, 1);
	/* served now: the put completes (the get's data, its receive gone, are refused) */
	end = rte_get_tsc_cycles() + rte_get_tsc_hz() * 5;
	while (l.status == 1 && rte_get_tsc_cycles() < end)
		step();
	assert_int_equal(l.status, 0);
	assert_memory_equal(target, src, len);
	free(src);
	free(buf);
}

/* the real port back, whatever the test left */
static int
teardown_hold(void **state)
{
	hold_port_detach(&H.n[0].dev);
	return teardown(state);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_destroy_with_zero_copy_in_flight, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_destroy_port_holds, setup, teardown_hold),
		cmocka_unit_test_setup_teardown(test_recreate_with_get_in_flight, setup, teardown),
		cmocka_unit_test_setup_teardown(test_recreate_target_with_put_in_flight, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_old_completion_drop_not_counted_anew, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_destroy_target_with_rendezvous_queued, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_destroy_target_serving_rendezvous_get, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_rendezvous_cancel_refused, setup, teardown),
	};

	h_eal_init("amrma_test_rma_destroy");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
