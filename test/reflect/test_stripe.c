/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Striped SEND (seed 003_…) over net_ring, nodes of four contexts: node 0 sends, node 1
 * receives, node 2 is a bystander. Checked: the data, the split (one portion per target
 * context, each pulled from another of the origin's contexts), exactly one end on each
 * side under faults, refusals, a target that goes away, hostile messages, limits.
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

#include "amrma_reflect.h"
#include "amrma_wire.h"
#include "harness.h"
#include "reflect_nodes.h"
#include "rma_nodes.h"

#define NQ 4
#define MAX_LEN (1u << 20)
#define NBUF 8

static struct h_rma P;
static struct amrma_reflect *R[3];
static uint8_t *src;

/* the target's side: buffers handed out, ends seen */
static struct {
	bool refuse;
	unsigned int allocs, dones, errors;
	uint8_t *buf[NBUF];
	uint64_t tag[NBUF], len[NBUF];
	struct amrma_ep from;
	int status[NBUF];
	bool done[NBUF];
} L;

/* the origin's side */
struct sent {
	int status;
	unsigned int calls;
};

static void *
l_alloc(struct amrma_ctx *ctx, void *arg, struct amrma_ep from, uint64_t tag, uint64_t len)
{
	RTE_SET_USED(ctx);
	RTE_SET_USED(arg);
	if (L.refuse || L.allocs == NBUF || len > MAX_LEN)
		return NULL;
	L.from = from;
	L.tag[L.allocs] = tag;
	L.len[L.allocs] = len;
	return L.buf[L.allocs++];
}

static void
l_done(struct amrma_ctx *ctx, void *arg, struct amrma_ep from, uint64_t tag, void *buf,
       uint64_t len, int status)
{
	unsigned int i;

	RTE_SET_USED(ctx);
	RTE_SET_USED(arg);
	RTE_SET_USED(from);
	for (i = 0; i < NBUF; i++)
		if (L.buf[i] == buf) {
			assert_false(L.done[i]);
			assert_int_equal(L.tag[i], tag);
			assert_int_equal(L.len[i], len);
			L.done[i] = true;
			L.status[i] = status;
		}
	L.dones++;
	if (status != 0)
		L.errors++;
}

static const struct amrma_stripe_listener LISTENER = { l_alloc, l_done, NULL };

static void
sent_cb(struct amrma_ctx *ctx, void *arg, int status)
{
	struct sent *s = arg;

	RTE_SET_USED(ctx);
	s->status = status;
	s->calls++;
}

static void
engines(const struct amrma_reflect_conf *c0)
{
	assert_int_equal(h_reflect_create(&P, R, 3, 0, c0), 0);
	assert_int_equal(amrma_stripe_listen(R[1], &LISTENER), 0);
}

static int
setup(void **state)
{
	unsigned int i;

	RTE_SET_USED(state);
	assert_int_equal(h_rma_create(&P, 3, NQ, NULL, NULL, H_RMA_ALL), 0);
	memset(&L, 0, sizeof(L));
	src = aligned_alloc(4096, MAX_LEN);
	assert_non_null(src);
	h_fill(src, MAX_LEN, 11);
	for (i = 0; i < NBUF; i++) {
		L.buf[i] = calloc(1, MAX_LEN);
		assert_non_null(L.buf[i]);
	}
	engines(NULL);
	return 0;
}

static void
engines_destroy(void)
{
	h_reflect_destroy(R, 3);
}

static int
teardown(void **state)
{
	unsigned int i;

	RTE_SET_USED(state);
	engines_destroy();
	h_rma_destroy(&P);
	for (i = 0; i < NBUF; i++)
		free(L.buf[i]);
	free(src);
	return 0;
}

static struct amrma_reflect_stats
stats(unsigned int node, unsigned int q)
{
	return h_reflect_stats(R[node], q);
}

static uint32_t
regions_live(unsigned int node)
{
	struct amrma_region_stats s;

	amrma_region_stats_get(amrma_rma_regions(P.r[node]), &s);
	return s.descriptors;
}

static int
ssend(uint8_t q0, uint8_t q1, uint64_t off, uint64_t len, uint64_t tag, struct sent *s)
{
	const struct amrma_ep dst = { 1, q1 };

	return amrma_stripe_send(R[0], h_ctx(&P.h, 0, q0), dst, src + off, len, tag, sent_cb,
				 s);
}

static bool
sent_all(const struct sent *s, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (s[i].calls == 0)
			return false;
	return true;
}

/* Node 1 stops answering (a hung process whose frames are lost), or comes back. */
static void
target_gone(bool gone)
{
	P.h.n[1].frozen = gone;
	P.h.n[1].fault.blackhole = gone;
}

/* 1 MiB: four portions, one per target context, each from another origin context. */
static void
test_stripe_parallel(void **state)
{
	struct sent s = { 0 };
	unsigned int q;

	RTE_SET_USED(state);
	assert_int_equal(ssend(0, 0, 0, MAX_LEN, 77, &s), 0);
	assert_int_equal(regions_live(0), 1);
	assert_true(H_UNTIL(s.calls != 0, 5000, h_rma_step(&P)));
	assert_int_equal(s.calls, 1);
	assert_int_equal(s.status, 0);
	assert_int_equal(L.dones, 1);
	assert_int_equal(L.status[0], 0);
	assert_int_equal(L.tag[0], 77);
	assert_int_equal(L.from.node, 0);
	assert_int_equal(h_fill_diff(L.buf[0], MAX_LEN, 11, 0), -1);
	assert_int_equal(stats(1, 0).stripe_recvs, 1);
	for (q = 0; q < NQ; q++) {
		struct amrma_rma_stats r;

		/* each target context pulled a quarter... */
		assert_int_equal(stats(1, q).stripe_parts, 1);
		amrma_rma_stats_get(h_ctx(&P.h, 1, q), &r);
		assert_int_equal(r.get_bytes, MAX_LEN / NQ);
		/* ...from its own origin context */
		amrma_rma_stats_get(h_ctx(&P.h, 0, q), &r);
		assert_int_equal(r.served_get_bytes, MAX_LEN / NQ);
	}
	assert_int_equal(stats(0, 0).stripes_sent, 1);
	assert_int_equal(regions_live(0), 0);	/* the key is withdrawn */
	h_rma_run_for(&P, 20);
	assert_int_equal(s.calls, 1);
	assert_int_equal(L.dones, 1);
}

/* Sizes that do not divide evenly, below a portion, and a first endpoint other than 0. */
static void
test_stripe_sizes(void **state)
{
	const uint64_t lens[] = { 1, 100, (64u << 10) - 1, (64u << 10) * 3 + 7, MAX_LEN - 5 };
	struct sent s[RTE_DIM(lens)];
	unsigned int i;

	RTE_SET_USED(state);
	memset(s, 0, sizeof(s));
	for (i = 0; i < RTE_DIM(lens); i++)
		assert_int_equal(ssend((uint8_t)(i % NQ), (uint8_t)((i + 2) % NQ), i, lens[i], i,
				      &s[i]), 0);
	assert_true(H_UNTIL(sent_all(s, RTE_DIM(lens)), 5000, h_rma_step(&P)));
	for (i = 0; i < RTE_DIM(lens); i++) {
		unsigned int b;

		assert_int_equal(s[i].calls, 1);
		assert_int_equal(s[i].status, 0);
		for (b = 0; b < L.allocs && L.tag[b] != i; b++)
			;
		assert_true(b < L.allocs);
		assert_int_equal(L.len[b], lens[i]);
		assert_int_equal(h_fill_diff(L.buf[b], lens[i], 11, i), -1);
	}
	/* portions: 1 + 1 + 1 + 3 + 4 */
	{
		uint64_t parts = 0;

		for (i = 0; i < NQ; i++)
			parts += stats(1, i).stripe_parts;
		assert_int_equal(parts, 10);
	}
}

/* Faults on both nodes: every send ends once on each side, every byte right. */
static void
test_stripe_faults(void **state)
{
	struct sent s[NBUF];
	uint32_t rng = 99;
	unsigned int i;
	uint64_t rtx = 0;

	RTE_SET_USED(state);
	memset(s, 0, sizeof(s));
	h_faults(&P.h, 0, 5, 3, 5, 1, 7);
	h_faults(&P.h, 1, 5, 3, 5, 1, 8);
	for (i = 0; i < NBUF; i++) {
		rng = rng * 1103515245 + 12345;
		assert_int_equal(ssend((uint8_t)(i % NQ), (uint8_t)(i % NQ), i,
				      1 + (rng >> 4) % (MAX_LEN - NBUF), 100 + i, &s[i]), 0);
	}
	assert_true(H_UNTIL(sent_all(s, NBUF), 20000, h_rma_step(&P)));
	h_rma_run_for(&P, 50);
	for (i = 0; i < NBUF; i++) {
		unsigned int b;

		assert_int_equal(s[i].calls, 1);
		assert_int_equal(s[i].status, 0);
		for (b = 0; b < L.allocs && L.tag[b] != 100 + i; b++)
			;
		assert_true(b < L.allocs);
		assert_true(L.done[b]);
		assert_int_equal(h_fill_diff(L.buf[b], L.len[b], 11, i), -1);
	}
	assert_int_equal(L.dones, NBUF);
	assert_int_equal(L.errors, 0);
	for (i = 0; i < 2; i++) {
		struct amrma_am_stats a;

		amrma_node_stats_get(P.h.n[i].node, &a);
		rtx += a.retransmits;
		h_faults(&P.h, i, 0, 0, 0, 0, 0);
	}
	assert_true(rtx > 0);
	assert_int_equal(regions_live(0), 0);
}

/* No listener, or no buffer: refused, and the origin hears why. */
static void
test_stripe_refused(void **state)
{
	struct sent a = { 0 }, b = { 0 };

	RTE_SET_USED(state);
	L.refuse = true;
	assert_int_equal(ssend(0, 0, 0, 1000, 1, &a), 0);
	assert_true(H_UNTIL(a.calls != 0, 5000, h_rma_step(&P)));
	assert_int_equal(a.status, -ENOBUFS);
	assert_int_equal(amrma_stripe_listen(R[1], NULL), 0);
	assert_int_equal(ssend(0, 1, 0, 1000, 2, &b), 0);
	assert_true(H_UNTIL(b.calls != 0, 5000, h_rma_step(&P)));
	assert_int_equal(b.status, -ENOTSUP);
	assert_int_equal(stats(1, 0).stripe_refused + stats(1, 1).stripe_refused, 2);
	assert_int_equal(stats(0, 0).stripes_failed, 2);
	assert_int_equal(L.dones, 0);
	assert_int_equal(regions_live(0), 0);
}

/* The target stops after taking the send: the origin ends it with an error, in time. */
static void
test_stripe_target_gone(void **state)
{
	struct sent s = { 0 };

	RTE_SET_USED(state);
	assert_int_equal(ssend(0, 0, 0, MAX_LEN, 1, &s), 0);
	assert_true(H_UNTIL(stats(1, 0).stripe_recvs == 1, 5000, h_rma_step(&P)));
	target_gone(true);
	assert_true(H_UNTIL(s.calls != 0, 10000, h_rma_step(&P)));
	assert_true(s.status == -ENOTCONN || s.status == -ETIMEDOUT);
	assert_int_equal(regions_live(0), 0);
	target_gone(false);
}

/* Malformed RTS, forged ends, a REFLECT asking for an end: refused and counted. */
static void
test_stripe_hostile(void **state)
{
	struct amrma_ctx *c2 = h_ctx(&P.h, 2, 0);
	const struct amrma_ep t = { 1, 0 }, o = { 0, 0 };
	/* one reason each: the rest of these RTSs is well formed */
	const uint64_t bad[][5] = {
		{ 1, 0, 0, 0, 1 },	/* length 0 */
		{ 1, 10, 0, 0, 0 },	/* no contexts */
		{ 1, 10, 0, 0, 65 },	/* too many */
	};
	const uint64_t good[5] = { 1, 10, 0, 0, 1 };
	uint64_t end[4] = { 3, 0, 0, 0 }, refl[4] = { 0 | (uint64_t)3 << 24, 0, 0, 0 };
	int st[RTE_DIM(bad) + 3] = { 0 }, acked = 0;
	struct sent s = { 0 };
	unsigned int i;

	RTE_SET_USED(state);
	for (i = 0; i < RTE_DIM(bad); i++)
		assert_int_equal(amrma_am_request(c2, t, AMRMA_REFLECT_H_STRIPE_RTS, bad[i], 5,
						  NULL, 0, h_status_cb, &st[i]), 0);
	/* four arguments; a payload */
	assert_int_equal(amrma_am_request(c2, t, AMRMA_REFLECT_H_STRIPE_RTS, good, 4, NULL,
					  0, h_status_cb, &st[i++]), 0);
	assert_int_equal(amrma_am_request(c2, t, AMRMA_REFLECT_H_STRIPE_RTS, good, 5, "x",
					  1, h_status_cb, &st[i++]), 0);
	/* a reflection node never sends an end for others */
	assert_int_equal(amrma_am_request(c2, t, AMRMA_REFLECT_H_REFLECT, refl, 4, NULL, 0,
					  h_status_cb, &st[i]), 0);
	/* a send under way, and a bystander that forges its end */
	assert_int_equal(ssend(0, 0, 0, MAX_LEN, 5, &s), 0);
	end[3] = 0;	/* slot 0; the generation a guess */
	assert_int_equal(amrma_am_send(c2, o, AMRMA_REFLECT_H_NOTIFY, end, 4, NULL, 0,
				       h_count_ok, &acked), 0);
	assert_true(H_UNTIL(s.calls != 0 && st[RTE_DIM(st) - 1] != 0, 5000, h_rma_step(&P)));
	for (i = 0; i < RTE_DIM(st); i++)
		assert_int_equal(st[i], -EINVAL);
	assert_int_equal(stats(1, 0).bad_requests, RTE_DIM(st));
	assert_int_equal(stats(0, 0).stripe_stale, 1);
	assert_int_equal(s.status, 0);
	assert_int_equal(h_fill_diff(L.buf[0], MAX_LEN, 11, 0), -1);
	assert_int_equal(stats(1, 0).stripe_recvs, 1);
}

/* What amrma_stripe_send() refuses, and its limit. */
static void
test_stripe_checks(void **state)
{
	struct amrma_reflect_conf c;
	struct amrma_ctx *c0 = h_ctx(&P.h, 0, 0);
	const struct amrma_ep t = { 1, 0 };
	struct sent s[3];
	unsigned int i;

	RTE_SET_USED(state);
	memset(s, 0, sizeof(s));
	assert_int_equal(amrma_stripe_send(NULL, c0, t, src, 1, 0, sent_cb, &s[0]), -EINVAL);
	assert_int_equal(amrma_stripe_send(R[0], c0, t, NULL, 1, 0, sent_cb, &s[0]), -EINVAL);
	assert_int_equal(amrma_stripe_send(R[0], c0, t, src, 0, 0, sent_cb, &s[0]), -EINVAL);
	assert_int_equal(amrma_stripe_send(R[0], c0, t, src, 1, 0, NULL, &s[0]), -EINVAL);
	assert_int_equal(amrma_stripe_send(R[1], c0, t, src, 1, 0, sent_cb, &s[0]), -EINVAL);
	assert_int_equal(amrma_stripe_listen(R[1], &(struct amrma_stripe_listener){ 0 }),
			 -EINVAL);
	engines_destroy();
	amrma_reflect_conf_defaults(&c);
	c.max_stripes = 2;
	engines(&c);
	for (i = 0; i < 2; i++)
		assert_int_equal(ssend(0, 0, 0, 1000, i, &s[i]), 0);
	assert_int_equal(ssend(0, 0, 0, 1000, 2, &s[2]), -EAGAIN);
	assert_int_equal(regions_live(0), 2);
	assert_true(H_UNTIL(sent_all(s, 2), 5000, h_rma_step(&P)));
	assert_int_equal(ssend(0, 0, 0, 1000, 2, &s[2]), 0);
	assert_true(H_UNTIL(sent_all(s, 3), 5000, h_rma_step(&P)));
	for (i = 0; i < 3; i++)
		assert_int_equal(s[i].status, 0);
}

/* Sends i of s[] to context i % NQ of node 1: those refused for a full FIFO go again.
 * Returns how many ended with status 0. */
static unsigned int
resend_refused(struct sent *s)
{
	unsigned int i, ok = 0;

	for (i = 0; i < NBUF; i++) {
		if (s[i].calls != 0 && s[i].status == -ENOBUFS) {
			memset(&s[i], 0, sizeof(s[i]));
			assert_int_equal(ssend((uint8_t)(i % NQ), (uint8_t)(i % NQ), i * 4096,
					       64 << 10, 200 + i, &s[i]), 0);
		}
		if (s[i].calls != 0 && s[i].status == 0)
			ok++;
	}
	return ok;
}

/*
 * Small FIFOs on the target, striped sends to each of its contexts at once: a split
 * finds another context's FIFO full while that one's split finds ours full. Neither
 * may wait for the other (a context pulls a portion itself when the FIFO it was meant
 * for is full): every send ends, with all of its bytes.
 */
static void
test_stripe_full_fifos(void **state)
{
	struct amrma_reflect_conf c;
	struct sent s[NBUF];
	unsigned int i, b;

	RTE_SET_USED(state);
	h_reflect_destroy(R, 3);
	amrma_reflect_conf_defaults(&c);
	c.fifo_size = 2;
	c.stripe_min_part = 512;
	assert_int_equal(h_reflect_create(&P, R, 3, 1, &c), 0);
	assert_int_equal(amrma_stripe_listen(R[1], &LISTENER), 0);
	memset(s, 0, sizeof(s));
	for (i = 0; i < NBUF; i++)
		assert_int_equal(ssend((uint8_t)(i % NQ), (uint8_t)(i % NQ), i * 4096, 64 << 10,
				       200 + i, &s[i]), 0);
	/* an RTS finding a FIFO full is refused (-ENOBUFS): sent again until taken */
	assert_true(H_UNTIL(resend_refused(s) == NBUF, 10000, h_rma_step(&P)));
	for (i = 0; i < NBUF; i++) {
		assert_int_equal(s[i].status, 0);
		for (b = 0; b < L.allocs && L.tag[b] != 200 + i; b++)
			;
		assert_true(b < L.allocs);
		assert_int_equal(h_fill_diff(L.buf[b], 64 << 10, 11, i * 4096), -1);
	}
}

/* The engine destroyed with a send under way: its callback reports -ECANCELED. */
static void
test_stripe_destroy(void **state)
{
	struct sent s = { 0 };

	RTE_SET_USED(state);
	assert_int_equal(ssend(0, 0, 0, MAX_LEN, 1, &s), 0);
	h_rma_step(&P);
	amrma_reflect_destroy(R[0]);
	R[0] = NULL;
	assert_int_equal(s.calls, 1);
	assert_int_equal(s.status, -ECANCELED);
	assert_int_equal(regions_live(0), 0);
	h_rma_run_for(&P, 50);
	assert_int_equal(s.calls, 1);
}

/*
 * The key of the first RTS that reaches node 1 (0: none yet). Moves the frames on the
 * wire and reads node 1's queues, leaving every frame where it was.
 */
static uint64_t
rts_key_seen(void)
{
	const struct amrma_wire_rx_params rxp = {
		.mac = P.h.n[1].dev.mac, .node_id = 1, .udp_base = P.h.conf.udp_base,
		.nb_ctx = NQ, .skip_csum = true,
	};
	struct rte_mbuf *m[64];
	uint64_t key = 0;
	unsigned int q, n, i;

	h_switch(&P.h);
	for (q = 0; q < NQ; q++) {
		struct rte_ring *r = P.h.n[1].rx[q];

		n = rte_ring_sc_dequeue_burst(r, (void **)m, RTE_DIM(m), NULL);
		for (i = 0; i < n; i++) {
			struct amrma_wire_view v;

			if (key != 0 || amrma_wire_parse(rte_pktmbuf_mtod(m[i], void *),
							 rte_pktmbuf_data_len(m[i]), &rxp,
							 &v) != AMRMA_WIRE_OK)
				continue;
			for (;;) {
				if (v.hdr.type == AMRMA_WIRE_REQUEST &&
				    v.hdr.handler == AMRMA_REFLECT_H_STRIPE_RTS) {
					key = amrma_wire_arg(&v, 0);
					break;
				}
				if (v.more_len == 0)
					break;
				amrma_wire_next(&v);
			}
		}
		assert_int_equal(rte_ring_sp_enqueue_bulk(r, (void **)m, n, NULL), n);
	}
	return key;
}

/* Node 1 takes the RTS of a send and goes; the send's region, as a get that another lcore
 * of node 0 is serving holds it. */
static struct amrma_region *
send_then_target_gone(struct sent *s)
{
	struct amrma_region *ref;
	uint64_t key = 0;
	void *p;

	assert_int_equal(ssend(0, 0, 0, MAX_LEN, 1, s), 0);
	assert_true(H_UNTIL((key = rts_key_seen()) != 0, 5000, h_rma_step(&P)));
	assert_int_equal(amrma_region_check(amrma_rma_regions(P.r[0]), key, 0, MAX_LEN,
					    AMRMA_REGION_READ, &p, &ref), 0);
	assert_ptr_equal(p, src);
	assert_true(H_UNTIL(stats(1, 0).stripe_recvs == 1, 5000, h_rma_step(&P)));
	target_gone(true);
	return ref;
}

/*
 * A send that fails while a get of its buffer is still being served (here: a reference
 * the test holds, as the get handler on another lcore does while it copies): its
 * callback, after which the application may free the buffer, waits until that get lets
 * go of it.
 */
static void
test_stripe_read_outlives(void **state)
{
	struct amrma_region *ref;
	struct sent s = { 0 };

	RTE_SET_USED(state);
	ref = send_then_target_gone(&s);
	assert_true(H_UNTIL(stats(0, 0).stripe_read_wait == 1, 10000, h_rma_step(&P)));
	h_rma_run_for(&P, 50);
	assert_int_equal(s.calls, 0);
	assert_int_equal(regions_live(0), 1);
	amrma_region_put(amrma_rma_regions(P.r[0]), ref);
	assert_int_equal(s.calls, 0);		/* from the poll, not from the put */
	assert_true(H_UNTIL(s.calls != 0, 1000, h_rma_step(&P)));
	assert_true(s.status == -ENOTCONN || s.status == -ETIMEDOUT);
	assert_int_equal(stats(0, 0).stripes_failed, 1);
	assert_int_equal(regions_live(0), 0);
	h_rma_run_for(&P, 50);
	assert_int_equal(s.calls, 1);
	target_gone(false);
}

/* The same when the engine is destroyed first: the callback (-ECANCELED) comes with the
 * get's release, on the thread that releases. */
static void
test_stripe_destroy_read_outlives(void **state)
{
	struct amrma_region *ref;
	struct sent s = { 0 };

	RTE_SET_USED(state);
	ref = send_then_target_gone(&s);
	amrma_reflect_destroy(R[0]);
	R[0] = NULL;
	assert_int_equal(s.calls, 0);
	assert_int_equal(regions_live(0), 1);
	h_rma_run_for(&P, 50);
	assert_int_equal(s.calls, 0);
	amrma_region_put(amrma_rma_regions(P.r[0]), ref);
	assert_int_equal(s.calls, 1);
	assert_int_equal(s.status, -ECANCELED);
	assert_int_equal(regions_live(0), 0);
	target_gone(false);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_stripe_parallel, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stripe_sizes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stripe_faults, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stripe_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stripe_target_gone, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stripe_hostile, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stripe_checks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stripe_full_fifos, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stripe_destroy, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stripe_read_outlives, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stripe_destroy_read_outlives, setup,
						teardown),
	};

	h_eal_init("amrma_test_stripe");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
