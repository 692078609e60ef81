/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RMA put/get over the net_ring harness: every protocol and size (with odd alignment),
 * under loss/reorder/duplication, concurrently from every context, and every access error
 * with the target memory proven untouched.
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
#include <rte_service.h>
#include <rte_service_component.h>

#include "amrma_rma.h"
#include "harness.h"
#include "hold_port.h"
#include "rma_events.h"
#include "rma_nodes.h"
#include "rma_priv.h"	/* the target's tag engine */

#define NODES 3
#define Q 2
#define REGION ((UINT64_C(64) << 20) + 65536)
#define GUARD 0xa5

static struct h_rma H;		/* node 1's RW region: H.reg, H.key */
static uint8_t *target;		/* node 1's RW region */
static uint8_t *ro, *wo;		/* read-only, write-only regions of node 1 */
static uint64_t key_ro, key_wo;
static struct amrma_region *reg_ro, *reg_wo;
static uint8_t *src, *dst;
static uint16_t mtu;

static int
wait_req(struct amrma_ctx *ctx, amrma_rma_req_t req)
{
	int status = 0, ret;

	ret = h_rma_wait(&H, ctx, req, 60000, &status);
	if (ret == 0)
		fail_msg("operation did not complete in 60 s");
	assert_int_equal(ret, 1);
	return status;
}

static int
setup_group(void **state)
{
	struct amrma_region_table *t;
	struct amrma_rma_conf rc;

	RTE_SET_USED(state);
	amrma_rma_conf_defaults(&rc);
	rc.rndv_threshold = UINT64_MAX;	/* tests pick the protocol explicitly */
	rc.rndv_put_threshold = UINT64_MAX;
	assert_int_equal(h_rma_create(&H, NODES, Q, NULL, &rc, H_RMA_ALL), 0);
	target = aligned_alloc(4096, REGION);
	ro = aligned_alloc(4096, 1 << 20);
	wo = aligned_alloc(4096, 1 << 20);
	src = aligned_alloc(4096, REGION);
	dst = aligned_alloc(4096, REGION);
	assert_non_null(target);
	assert_non_null(src);
	assert_non_null(dst);
	assert_int_equal(h_rma_register(&H, target, REGION,
					AMRMA_REGION_READ | AMRMA_REGION_WRITE), 0);
	t = amrma_rma_regions(H.r[1]);
	assert_int_equal(amrma_region_register(t, ro, 1 << 20, AMRMA_REGION_READ, &reg_ro,
					       &key_ro), 0);
	assert_int_equal(amrma_region_register(t, wo, 1 << 20, AMRMA_REGION_WRITE, &reg_wo,
					       &key_wo), 0);
	mtu = amrma_am_max_payload(h_ctx(&H.h, 0, 0), 4);
	return 0;
}

static int
teardown_group(void **state)
{
	RTE_SET_USED(state);
	h_rma_destroy(&H);
	free(target);
	free(ro);
	free(wo);
	free(src);
	free(dst);
	return 0;
}

static const uint32_t protos[] = { AMRMA_RMA_F_SHORT, AMRMA_RMA_F_PIPELINED,
				   AMRMA_RMA_F_RENDEZVOUS };
static const char *const proto_name[] = { "short", "pipelined", "rendezvous" };

/* len bytes at p + off are want's, and the g bytes on either side still GUARD */
static void
assert_guarded(const uint8_t *p, uint64_t off, const uint8_t *want, uint64_t len, int g,
	       const char *what)
{
	int i;

	if (memcmp(p + off, want, len) != 0)
		fail_msg("%s of %" PRIu64 " bytes: data differ", what, len);
	for (i = 1; i <= g; i++)
		assert_int_equal(p[off - i], GUARD);
	for (i = 0; i < g; i++)
		assert_int_equal(p[off + len + i], GUARD);
}

/* put src+sa -> target+ta, check, get target+ta -> dst+da, check; guards untouched */
static void
round_trip(uint32_t proto, uint64_t len, uint32_t sa, uint32_t ta, uint32_t da,
	   uint32_t seed, unsigned int ctxi)
{
	struct amrma_ctx *ctx = h_ctx(&H.h, 0, ctxi);
	struct amrma_ep ep = { .node = 1, .ctx = (uint8_t)ctxi };
	amrma_rma_req_t req;
	int ret;

	h_fill(src + sa, len, seed);
	memset(target + ta - 16, GUARD, 16);
	memset(target + ta + len, GUARD, 16);
	ret = amrma_rma_put(ctx, ep, H.key, ta, src + sa, len, proto, NULL, NULL, &req);
	assert_int_equal(ret, 0);
	assert_int_equal(wait_req(ctx, req), 0);
	assert_guarded(target, ta, src + sa, len, 16, "put");

	memset(dst + da - 8, GUARD, len + 16);
	ret = amrma_rma_get(ctx, ep, H.key, ta, dst + da, len, proto, NULL, NULL, &req);
	assert_int_equal(ret, 0);
	assert_int_equal(wait_req(ctx, req), 0);
	assert_guarded(dst, da, src + sa, len, 8, "get");
}

static void
test_sizes_all_protocols(void **state)
{
	uint64_t sizes[] = { 0, 1, 7, 0, 0, 0, 64 << 10, 1 << 20, 64 << 20 };
	unsigned int p, s;

	RTE_SET_USED(state);
	sizes[3] = mtu - 1;
	sizes[4] = mtu;
	sizes[5] = mtu + 1;
	for (p = 0; p < RTE_DIM(protos); p++)
		for (s = 0; s < RTE_DIM(sizes); s++) {
			if (protos[p] == AMRMA_RMA_F_SHORT && sizes[s] > mtu) {
				/* too big for one frame: refused up front */
				amrma_rma_req_t req;

				assert_int_equal(amrma_rma_put(h_ctx(&H.h, 0, 0),
					(struct amrma_ep){ .node = 1 }, H.key, 0, src, sizes[s],
					AMRMA_RMA_F_SHORT, NULL, NULL, &req), -EINVAL);
				continue;
			}
			print_message("%s %" PRIu64 "\n", proto_name[p], sizes[s]);
			round_trip(protos[p], sizes[s], 3, 4096 + 5, 16 + 7, p * 100 + s, s % Q);
		}
}

static void
test_faults(void **state)
{
	uint64_t sizes[] = { 0, 1, 7, 0, 0, 0, 64 << 10, 1 << 20, 64 << 20 };
	struct amrma_am_stats st;
	uint64_t retrans = 0;
	unsigned int p, s, i;

	RTE_SET_USED(state);
	sizes[3] = mtu - 1;
	sizes[4] = mtu;
	sizes[5] = mtu + 1;
	for (i = 0; i < NODES; i++)
		h_faults(&H.h, i, 5, 3, 5, 0, 77 + i);
	for (p = 0; p < RTE_DIM(protos); p++)
		for (s = 0; s < RTE_DIM(sizes); s++) {
			if (protos[p] == AMRMA_RMA_F_SHORT && sizes[s] > mtu)
				continue;
			round_trip(protos[p], sizes[s], 1, 8192 + 3, 13, 1000 + p * 10 + s, 1);
		}
	for (i = 0; i < NODES; i++) {
		amrma_node_stats_get(H.h.n[i].node, &st);
		retrans += st.retransmits;
		H.h.n[i].fault.drop_pct = H.h.n[i].fault.dup_pct = H.h.n[i].fault.reorder_pct = 0;
	}
	assert_true(retrans > 0);
	assert_true(H.h.n[0].fault.dropped + H.h.n[1].fault.dropped > 0);
}

struct conc {
	unsigned int done;
	unsigned int errors;
};

static void
conc_cb(struct amrma_ctx *ctx, void *arg, enum amrma_rma_event ev, int status)
{
	struct conc *c = arg;

	RTE_SET_USED(ctx);
	if (ev != AMRMA_RMA_EV_DONE)
		return;
	c->done++;
	if (status != 0)
		c->errors++;
}

/* Nodes 0 and 2, every context, put then get disjoint slices of node 1 at once. */
static void
test_concurrent_all_contexts(void **state)
{
	const uint64_t slice = 300000;
	struct conc c = { 0 };
	unsigned int n, q, k = 0, total = 0;

	RTE_SET_USED(state);
	h_fill(src, 4 * 2 * slice, 4242);
	for (n = 0; n < NODES; n += 2)
		for (q = 0; q < Q; q++, k++) {
			uint32_t proto = protos[k % RTE_DIM(protos)] == AMRMA_RMA_F_SHORT ?
					 AMRMA_RMA_F_PIPELINED : protos[k % RTE_DIM(protos)];

			assert_int_equal(amrma_rma_put(h_ctx(&H.h, n, q),
				(struct amrma_ep){ .node = 1, .ctx = (uint8_t)(k % Q) }, H.key,
				k * slice, src + k * slice, slice, proto, conc_cb, &c, NULL), 0);
			total++;
		}
	H_UNTIL(c.done >= total, 60000, h_rma_step(&H));
	assert_int_equal(c.done, total);
	assert_int_equal(c.errors, 0);
	assert_memory_equal(target, src, k * slice);
	k = 0;
	c.done = 0;
	for (n = 0; n < NODES; n += 2)
		for (q = 0; q < Q; q++, k++)
			assert_int_equal(amrma_rma_get(h_ctx(&H.h, n, q),
				(struct amrma_ep){ .node = 1, .ctx = (uint8_t)q }, H.key,
				k * slice, dst + k * slice, slice,
				k & 1 ? AMRMA_RMA_F_RENDEZVOUS : AMRMA_RMA_F_PIPELINED, conc_cb, &c,
				NULL), 0);
	H_UNTIL(c.done >= total, 60000, h_rma_step(&H));
	assert_int_equal(c.done, total);
	assert_int_equal(c.errors, 0);
	assert_memory_equal(dst, src, k * slice);
}

/* every refusal: the right error at the initiator, not one byte written at the target */
static void
test_access_errors(void **state)
{
	struct { uint64_t key, off, len; bool put; int err; } cases[] = {
		{ 0x1234, 0, 100, true, -ENOKEY },
		{ 0, 0, 100, false, -ENOKEY },
		{ 0, REGION - 10, 100, true, -ERANGE },
		{ 0, REGION + 1, 0, false, -ERANGE },
		{ 0, UINT64_MAX - 10, 100, true, -EOVERFLOW },
		{ 0, 0, 3000000, false, -EACCES },	/* get from write-only */
		{ 0, 0, 3000, true, -EACCES },		/* put to read-only */
	};
	struct amrma_ctx *ctx = h_ctx(&H.h, 0, 0);
	struct amrma_ep ep = { .node = 1, .ctx = 1 };
	struct amrma_rma_stats st;
	amrma_rma_req_t req;
	unsigned int p, i;
	uint8_t *snap = malloc(1 << 20);

	RTE_SET_USED(state);
	cases[1].key = H.key ^ 1;
	cases[2].key = H.key;
	cases[3].key = H.key;
	cases[4].key = H.key;
	cases[5].key = key_wo;
	cases[6].key = key_ro;
	memset(target, GUARD, 1 << 20);
	memset(ro, 0x11, 1 << 20);
	memset(dst, 0x22, 3000000);
	for (p = 0; p < RTE_DIM(protos); p++)
		for (i = 0; i < RTE_DIM(cases); i++) {
			uint32_t proto = protos[p];
			uint64_t len = cases[i].len;

			if (proto == AMRMA_RMA_F_SHORT && len > mtu)
				len = mtu;
			if (cases[i].put)
				assert_int_equal(amrma_rma_put(ctx, ep, cases[i].key, cases[i].off,
					src, len, proto, NULL, NULL, &req), 0);
			else
				assert_int_equal(amrma_rma_get(ctx, ep, cases[i].key, cases[i].off,
					dst, len, proto, NULL, NULL, &req), 0);
			if (wait_req(ctx, req) != cases[i].err)
				fail_msg("%s case %u: expected %d", proto_name[p], i, cases[i].err);
		}
	/* the target memory is provably untouched */
	memset(snap, GUARD, 1 << 20);
	assert_memory_equal(target, snap, 1 << 20);
	memset(snap, 0x11, 1 << 20);
	assert_memory_equal(ro, snap, 1 << 20);
	for (i = 0; i < 3000000; i++)
		if (dst[i] != 0x22)
			fail_msg("refused get wrote local byte %u", i);
	amrma_rma_stats_get(amrma_node_ctx(H.h.n[1].node, 1), &st);
	assert_true(st.access_errors >= 3 * RTE_DIM(cases) - 3);
	free(snap);
}

static unsigned int released;

static void
on_release(void *arg, void *addr, size_t len)
{
	RTE_SET_USED(arg);
	RTE_SET_USED(addr);
	RTE_SET_USED(len);
	released++;
}

/*
 * An 8 MiB put (flags, cb, arg, *req as for amrma_rma_put()) of pattern seed into 8 MiB
 * of guard bytes registered for it at node 1 (*reg), for the test to deregister while the
 * put is in flight. Returns the memory.
 */
static uint8_t *
put_to_doomed_region(uint32_t flags, amrma_rma_cb_t cb, void *arg, amrma_rma_req_t *req,
		     struct amrma_region **reg, uint32_t seed)
{
	uint8_t *mem = aligned_alloc(4096, 8 << 20);
	uint64_t key;

	assert_non_null(mem);
	memset(mem, GUARD, 8 << 20);
	h_fill(src, 8 << 20, seed);
	assert_int_equal(amrma_region_register(amrma_rma_regions(H.r[1]), mem, 8 << 20,
					       AMRMA_REGION_WRITE, reg, &key), 0);
	assert_int_equal(amrma_rma_put(h_ctx(&H.h, 0, 0), (struct amrma_ep){ .node = 1 }, key, 0,
				       src, 8 << 20, flags, cb, arg, req), 0);
	return mem;
}

/* Deregister while a large put targets the region: no crash, later packets refused,
 * the memory is released once, and nothing lands after deregistration. */
static void
test_deregister_in_flight(void **state)
{
	struct amrma_region *reg;
	amrma_rma_req_t req;
	uint8_t *mem;
	int i, status;

	RTE_SET_USED(state);
	mem = put_to_doomed_region(AMRMA_RMA_F_PIPELINED, NULL, NULL, &req, &reg, 99);
	for (i = 0; i < 50; i++)
		h_rma_step(&H);
	released = 0;
	assert_true(amrma_region_deregister(amrma_rma_regions(H.r[1]), reg, on_release,
					    NULL) >= 0);
	status = wait_req(h_ctx(&H.h, 0, 0), req);
	assert_int_equal(status, -ENOKEY);
	assert_int_equal(released, 1);
	/* once deregistered, the region is left alone: the rest is still guard bytes */
	assert_int_equal(mem[(8 << 20) - 1], GUARD);
	free(mem);
}

/*
 * A rendezvous put's chunks after its region's deregistration are all refused with
 * -ENOKEY (docs/rma.md), not only the first: that one ended the receive, and the chunks
 * in flight behind it found none and were refused with -EPROTO, which the put reported
 * when such a refusal came back first (reordered).
 */
static void
test_deregister_rndv_put_every_packet(void **state)
{
	struct h_rma_events e = { 0 };
	struct amrma_region *reg;
	const char *why;
	uint8_t *mem;

	RTE_SET_USED(state);
	mem = put_to_doomed_region(AMRMA_RMA_F_RENDEZVOUS | AMRMA_RMA_F_PER_PACKET,
				   h_rma_events_cb, &e, NULL, &reg, 97);
	why = h_rma_events_dereg_midway(&H, &e, reg);
	if (why != NULL)
		fail_msg("%s", why);
	free(mem);
}

/* The same over rendezvous: the target's receive holds the region for the whole put and
 * checks per chunk that it is still registered. */
static void
test_deregister_rndv_put(void **state)
{
	struct amrma_region *reg;
	amrma_rma_req_t req;
	uint8_t *mem;
	int i;

	RTE_SET_USED(state);
	mem = put_to_doomed_region(AMRMA_RMA_F_RENDEZVOUS, NULL, NULL, &req, &reg, 98);
	for (i = 0; i < 10000 && mem[0] == GUARD; i++)
		h_rma_step(&H);
	assert_int_equal(mem[0], src[0]);	/* data flow */
	released = 0;
	assert_int_equal(amrma_region_deregister(amrma_rma_regions(H.r[1]), reg, on_release,
						 NULL), 1);
	assert_int_equal(wait_req(h_ctx(&H.h, 0, 0), req), -ENOKEY);
	assert_int_equal(released, 1);
	assert_int_equal(mem[(8 << 20) - 1], GUARD);
	free(mem);
}

/* A rendezvous get reads the region with a tagged send that holds it: deregistered, the
 * target stops reading and lets go; the initiator, told nothing, times out. */
static void
test_deregister_rndv_get(void **state)
{
	const uint64_t len = 8 << 20;
	uint8_t *mem = aligned_alloc(4096, len);
	struct amrma_rma_conf rc;
	amrma_rma_req_t req;
	struct h_rma p;
	int i, status = 1;

	RTE_SET_USED(state);
	amrma_rma_conf_defaults(&rc);
	rc.rndv_timeout_ms = 200;
	assert_int_equal(h_rma_create(&p, 2, 1, NULL, &rc, H_RMA_ALL), 0);
	h_fill(mem, len, 97);
	memset(dst, GUARD, len);
	assert_int_equal(h_rma_register(&p, mem, len, AMRMA_REGION_READ), 0);
	assert_int_equal(amrma_rma_get(h_ctx(&p.h, 0, 0), (struct amrma_ep){ .node = 1 }, p.key,
				       0, dst, len, AMRMA_RMA_F_RENDEZVOUS, NULL, NULL, &req), 0);
	for (i = 0; i < 10000 && dst[0] == GUARD; i++)
		h_rma_step(&p);
	assert_int_equal(dst[0], mem[0]);
	released = 0;
	assert_int_equal(h_rma_deregister(&p, on_release, NULL), 1);
	h_rma_wait(&p, h_ctx(&p.h, 0, 0), req, 5000, &status);
	assert_int_equal(status, -ETIMEDOUT);
	assert_int_equal(released, 1);
	assert_int_equal(dst[len - 1], GUARD);
	h_rma_destroy(&p);
	free(mem);
}

/* put len bytes pipelined from src at off; returns its status */
static int
put2(struct h_rma *p, uint64_t key, uint64_t off, uint64_t len, uint32_t flags)
{
	amrma_rma_req_t req;
	int status = 1;

	assert_int_equal(amrma_rma_put(h_ctx(&p->h, 0, 0), (struct amrma_ep){ .node = 1 }, key,
		off, src, len, AMRMA_RMA_F_PIPELINED | flags, NULL, NULL, &req), 0);
	h_rma_wait(p, h_ctx(&p->h, 0, 0), req, 10000, &status);
	assert_true(status != 1);
	return status;
}

/* what ctx's engine counted, for a wait's condition */
static struct amrma_rma_stats
rma_stats(struct amrma_ctx *ctx)
{
	struct amrma_rma_stats st;

	amrma_rma_stats_get(ctx, &st);
	return st;
}

static void
sent_cb(struct amrma_ctx *ctx, void *arg, int status)
{
	RTE_SET_USED(ctx);
	if (status == 0)
		(*(int *)arg)++;
}

static void
c2_cb(struct amrma_ctx *ctx, void *arg, enum amrma_rma_event ev, int status)
{
	int *slot = arg;

	RTE_SET_USED(ctx);
	if (ev == AMRMA_RMA_EV_DONE)
		*slot = status;
}

/*
 * A pipelined put completes with one message from the target (PUT_DONE) and no reply per
 * packet; AMRMA_RMA_F_PER_PACKET keeps a reply per packet. The completion carries the
 * first error. A target with no room to count a put fails it with -ENOSPC without placing
 * a byte of it; an initiator whose completion never comes fails with -ETIMEDOUT.
 */
static void
test_put_completion(void **state)
{
	const uint64_t len = 10 * (uint64_t)mtu + 5;	/* 11 packets */
	struct amrma_am_stats a0, a1;
	struct amrma_rma_stats s0, s1;
	struct amrma_rma_conf rc;
	struct amrma_ctx *t1;
	struct h_rma p;
	int st[2] = { 1, 1 };
	uint64_t key, i;

	RTE_SET_USED(state);
	amrma_rma_conf_defaults(&rc);
	rc.completion_slots = 1;
	rc.rndv_timeout_ms = 50;
	assert_int_equal(h_rma_create(&p, 2, 1, NULL, &rc, H_RMA_ALL), 0);
	memset(target, 0, 4 << 20);
	assert_int_equal(h_rma_register(&p, target, 4 << 20,
					AMRMA_REGION_WRITE | AMRMA_REGION_READ), 0);
	key = p.key;
	t1 = h_ctx(&p.h, 1, 0);

	/* one completion, no replies */
	h_fill(src, len, 11);
	amrma_rma_stats_get(t1, &s0);
	amrma_ctx_stats_get(t1, &a0);
	assert_int_equal(put2(&p, key, 7, len, 0), 0);
	assert_memory_equal(target + 7, src, len);
	amrma_rma_stats_get(t1, &s1);
	amrma_ctx_stats_get(t1, &a1);
	assert_int_equal(s1.completions_sent - s0.completions_sent, 1);
	assert_int_equal(a1.sends_handled - a0.sends_handled, 11);
	assert_int_equal(a1.auto_replies - a0.auto_replies, 0);

	/* per packet on request: a reply each, no completion message */
	h_fill(src, len, 12);
	s0 = s1;
	a0 = a1;
	assert_int_equal(put2(&p, key, 7, len, AMRMA_RMA_F_PER_PACKET), 0);
	assert_memory_equal(target + 7, src, len);
	amrma_rma_stats_get(t1, &s1);
	amrma_ctx_stats_get(t1, &a1);
	assert_int_equal(s1.completions_sent - s0.completions_sent, 0);
	assert_int_equal(a1.auto_replies - a0.auto_replies, 11);

	/* a bad key: the one completion carries the error, nothing is placed */
	memset(target, 0, 4 << 20);
	s0 = s1;
	assert_int_equal(put2(&p, key ^ 1, 0, len, 0), -ENOKEY);
	amrma_rma_stats_get(t1, &s1);
	assert_int_equal(s1.completions_sent - s0.completions_sent, 1);
	assert_int_equal(s1.access_errors - s0.access_errors, 11);
	for (i = 0; i < len; i++)
		if (target[i] != 0)
			fail_msg("byte %" PRIu64 " of the target written by a refused put", i);

	/* room to count one put: a second one meanwhile fails, placing nothing */
	h_fill(src, 3 << 20, 13);
	amrma_rma_stats_get(t1, &s0);
	assert_int_equal(amrma_rma_put(h_ctx(&p.h, 0, 0), (struct amrma_ep){ .node = 1 }, key, 0,
		src, 200 * (uint64_t)mtu, AMRMA_RMA_F_PIPELINED, c2_cb, &st[0], NULL), 0);
	assert_int_equal(amrma_rma_put(h_ctx(&p.h, 0, 0), (struct amrma_ep){ .node = 1 }, key,
		2 << 20, src, 8 * (uint64_t)mtu, AMRMA_RMA_F_PIPELINED, c2_cb, &st[1], NULL), 0);
	H_UNTIL(st[0] != 1 && st[1] != 1, 10000, h_rma_step(&p));
	assert_int_equal(st[0], 0);
	assert_int_equal(st[1], -ENOSPC);
	assert_memory_equal(target, src, 200 * (uint64_t)mtu);
	for (i = 0; i < 8 * (uint64_t)mtu; i++)
		if (target[(2 << 20) + i] != 0)
			fail_msg("byte %" PRIu64 " of an uncounted put was placed", i);
	amrma_rma_stats_get(t1, &s1);
	assert_true(s1.completion_full >= 1);
	/* one completion each: the refused put is told once, not once per packet */
	assert_int_equal(s1.completions_sent - s0.completions_sent, 2);
	/* the entries expire or free up: the next put goes through */
	h_run_for(&p.h, 100);
	h_fill(src, len, 14);
	assert_int_equal(put2(&p, key, 3, len, 0), 0);
	assert_memory_equal(target + 3, src, len);

	/* malformed one-way chunks and completions, sent by hand: each refused and counted,
	 * nothing placed */
	{
		struct amrma_ctx *c0 = h_ctx(&p.h, 0, 0);
		struct amrma_ep to1 = { .node = 1 }, to0 = { .node = 0 };
		struct amrma_rma_stats i0, i1;
		uint64_t a[4] = { key, 0, 16, UINT64_C(1) << 63 | 77 };
		int sent = 0;

		memset(target, 0, 64);
		amrma_rma_stats_get(t1, &s0);
		amrma_rma_stats_get(c0, &i0);
		/* too few arguments to name an operation */
		assert_int_equal(amrma_am_send(c0, to1, AMRMA_RMA_H_PUT1, a, 2, src, 8, sent_cb,
					       &sent), 0);
		/* 32 bytes for an operation of 16: answered -EPROTO at once */
		assert_int_equal(amrma_am_send(c0, to1, AMRMA_RMA_H_PUT1, a, 4, src, 32, sent_cb,
					       &sent), 0);
		/* completions naming no operation of the initiator */
		assert_int_equal(amrma_am_send(t1, to0, AMRMA_RMA_H_PUT_DONE, a, 1, NULL, 0,
					       sent_cb, &sent), 0);
		assert_int_equal(amrma_am_send(t1, to0, AMRMA_RMA_H_PUT_DONE, a, 2, NULL, 0,
					       sent_cb, &sent), 0);
		H_UNTIL(sent >= 4 && rma_stats(c0).bad_replies - i0.bad_replies >= 3, 5000,
			h_rma_step(&p));
		amrma_rma_stats_get(t1, &s1);
		amrma_rma_stats_get(c0, &i1);
		assert_int_equal(sent, 4);
		assert_int_equal(s1.bad_replies - s0.bad_replies, 2);
		assert_int_equal(s1.completions_sent - s0.completions_sent, 1);
		/* the two hand-made completions and the -EPROTO one name no operation */
		assert_int_equal(i1.bad_replies - i0.bad_replies, 3);
		for (i = 0; i < 64; i++)
			if (target[i] != 0)
				fail_msg("byte %" PRIu64 " written by a malformed chunk", i);
	}

	/* the completion never arrives (no handler for it): -ETIMEDOUT after the timeout */
	amrma_am_register(p.h.n[0].node, AMRMA_RMA_H_PUT_DONE, NULL, NULL);
	assert_int_equal(put2(&p, key, 0, len, 0), -ETIMEDOUT);

	/* a completion still unacknowledged when the target's engine goes away: the node
	 * fails it later, into an engine that no longer exists */
	amrma_rma_stats_get(t1, &s0);
	assert_int_equal(amrma_rma_put(h_ctx(&p.h, 0, 0), (struct amrma_ep){ .node = 1 }, key, 0,
		src, len, AMRMA_RMA_F_PIPELINED, NULL, NULL, NULL), 0);
	h_rma_step(&p);
	p.h.n[0].frozen = true;
	H_UNTIL(rma_stats(t1).completions_sent != s0.completions_sent, 5000, h_rma_step(&p));
	amrma_rma_stats_get(t1, &s1);
	assert_int_equal(s1.completions_sent - s0.completions_sent, 1);
	h_rma_destroy(&p);
}

static void
count_done(struct amrma_ctx *ctx, void *arg, int status)
{
	RTE_SET_USED(ctx);
	RTE_SET_USED(status);
	(*(int *)arg)++;
}

/*
 * Node 0 stands in for an initiator's RMA layer, its messages made by hand (an engine
 * created in this process would not repeat an old life's handles): node 1 runs an engine
 * with completion_slots slots (0: the default), 8 KiB of target are zeroed and
 * registered writable, src has pattern seed and node 0's PUT_DONEs go to dones (NULL:
 * nowhere).
 */
static void
by_hand_setup(struct h_rma *p, uint32_t completion_slots, struct h_capture *dones,
	      uint32_t seed)
{
	struct amrma_rma_conf rc;

	amrma_rma_conf_defaults(&rc);
	if (completion_slots != 0)
		rc.completion_slots = completion_slots;
	assert_int_equal(h_rma_create(p, 2, 1, NULL, &rc, H_RMA_NODE(1)), 0);
	memset(target, 0, 8192);
	h_fill(src, 8192, seed);
	assert_int_equal(h_rma_register(p, target, 8192, AMRMA_REGION_WRITE), 0);
	if (dones != NULL)
		amrma_am_register(p->h.n[0].node, AMRMA_RMA_H_PUT_DONE, h_capture_handler,
				  dones);
}

/* the k-th completion node 0 was sent names the put of handle and ends it with status */
static void
assert_done(const struct h_capture *dones, unsigned int k, uint64_t handle, int status)
{
	assert_true(k < dones->n && k < H_CAPTURE_MAX);
	assert_true(dones->args[k][0] == handle);
	assert_true(dones->args[k][1] == (uint64_t)(int64_t)status);
}

/* The end of a test whose operations all ended: nothing holds the region. */
static void
release_and_destroy(struct h_rma *p)
{
	assert_int_equal(h_rma_deregister(p, NULL, NULL), 0);
	h_rma_destroy(p);
}

/* one 16-byte chunk of a one-way put from node 0's context 0, by hand */
static void
put1_chunk(struct h_rma *p, uint64_t off, uint64_t total, uint64_t handle, int *sent)
{
	uint64_t a[4] = { p->key, off, total, handle };

	assert_int_equal(amrma_am_send(h_ctx(&p->h, 0, 0), (struct amrma_ep){ .node = 1 },
				       AMRMA_RMA_H_PUT1, a, 4, src + off, 16, sent_cb, sent), 0);
}

/* node 0's request to node 1's handler, by hand: *sent counts it acknowledged */
static void
request1(struct h_rma *p, uint16_t handler, uint64_t *a, uint8_t nargs, const void *data,
	 uint16_t len, int *sent)
{
	assert_int_equal(amrma_am_request(h_ctx(&p->h, 0, 0), (struct amrma_ep){ .node = 1 },
					  handler, a, nargs, data, len, sent_cb, sent), 0);
}

/*
 * A request from node `from` to a handler node `to` does not have (*done counts it
 * answered): all it does is let `to` hear from the present life of `from`.
 */
static void
hello(struct harness *h, unsigned int from, unsigned int to, int *done)
{
	assert_int_equal(amrma_am_request(h_ctx(h, from, 0), (struct amrma_ep){ .node = to },
		AMRMA_RMA_H_LAST + 1, NULL, 0, NULL, 0, count_done, done), 0);
}

/*
 * A put refused for want of a completion entry (-ENOSPC) stays refused: here put B's
 * first chunk finds the one entry taken by A, A then completes, and B's later chunks find
 * room. Before, they took a fresh entry and were placed after B's initiator had been told
 * it failed, and the entry, never complete, lingered until it expired. The refusal is
 * forgotten once all the put's bytes came: its handle counts again.
 */
static void
test_refused_put_stays_refused(void **state)
{
	const uint64_t ha = UINT64_C(1) << 63 | 1, hb = UINT64_C(1) << 63 | 2;
	struct h_capture dones = { 0 };
	struct amrma_rma_stats s0, s1;
	struct h_rma p;
	uint64_t i;
	int sent = 0;

	RTE_SET_USED(state);
	by_hand_setup(&p, 1, &dones, 51);
	amrma_rma_stats_get(h_ctx(&p.h, 1, 0), &s0);
	/* A: 32 bytes at 0; B: 48 bytes at 4096; in order A0 B0 A1 B1 B2 (B's refusal
	 * sent before A's completion: the queue of completions holds completion_slots) */
	put1_chunk(&p, 0, 32, ha, &sent);
	put1_chunk(&p, 4096, 48, hb, &sent);
	H_UNTIL(dones.n >= 1, 5000, h_step(&p.h));
	put1_chunk(&p, 16, 32, ha, &sent);
	put1_chunk(&p, 4096 + 16, 48, hb, &sent);
	put1_chunk(&p, 4096 + 32, 48, hb, &sent);
	H_UNTIL(sent >= 5 && dones.n >= 2, 5000, h_step(&p.h));
	h_run_for(&p.h, 20);
	assert_int_equal(sent, 5);
	assert_int_equal(dones.n, 2);
	assert_done(&dones, 0, hb, -ENOSPC);
	assert_done(&dones, 1, ha, 0);
	assert_memory_equal(target, src, 32);
	for (i = 4096; i < 8192; i++)
		if (target[i] != 0)
			fail_msg("byte %" PRIu64 " of a refused put was placed", i);
	amrma_rma_stats_get(h_ctx(&p.h, 1, 0), &s1);
	assert_int_equal(s1.completion_full - s0.completion_full, 3);
	assert_int_equal(rc_of(h_ctx(&p.h, 1, 0))->nb_track, 0);
	/* all of B came: its handle is free again (a later generation may repeat it) */
	put1_chunk(&p, 4096, 16, hb, &sent);
	H_UNTIL(sent >= 6 && dones.n >= 3, 5000, h_step(&p.h));
	assert_int_equal(dones.n, 3);
	assert_done(&dones, 2, hb, 0);
	assert_memory_equal(target + 4096, src + 4096, 16);
	release_and_destroy(&p);
}

/*
 * An initiator process that restarts numbers its operations afresh, so its new life's
 * first pipelined put carries the handle of the put its old life left half sent. The
 * target must not count the new put's chunks into the old put's entry: before, a put of
 * another length was answered -EPROTO (its bytes placed nonetheless) and the entry of
 * its later chunks lingered.
 */
static void
test_put_after_initiator_restart(void **state)
{
	const uint64_t h = UINT64_C(1) << 63 | 5;
	struct h_capture dones = { 0 };
	struct h_rma p;
	uint64_t i;
	int sent = 0;

	RTE_SET_USED(state);
	by_hand_setup(&p, 0, NULL, 61);
	/* the old life: the first 16 of 32 bytes reach the target, then the node dies */
	put1_chunk(&p, 0, 32, h, &sent);
	H_UNTIL(sent >= 1, 5000, h_step(&p.h));
	assert_int_equal(rc_of(h_ctx(&p.h, 1, 0))->nb_track, 1);
	assert_int_equal(h_restart_node(&p.h, 0), 0);
	/* the new life: 48 bytes at 4096 under the same handle */
	amrma_am_register(p.h.n[0].node, AMRMA_RMA_H_PUT_DONE, h_capture_handler, &dones);
	for (i = 0; i < 3; i++)
		put1_chunk(&p, 4096 + 16 * i, 48, h, &sent);
	H_UNTIL(sent >= 4 && dones.n >= 1, 5000, h_step(&p.h));
	h_run_for(&p.h, 10);
	assert_int_equal(dones.n, 1);
	assert_done(&dones, 0, h, 0);
	assert_memory_equal(target + 4096, src + 4096, 48);
	/* nothing of the old life is left counting */
	assert_int_equal(rc_of(h_ctx(&p.h, 1, 0))->nb_track, 0);
	release_and_destroy(&p);
}

/*
 * The same half-sent put, but the initiator's new life sends no put under its handle: the
 * target's entry for it (which holds the region) goes once the target hears from that
 * life. Before, it stayed until the rendezvous timeout (10 s by default).
 */
static void
test_put_entry_dropped_on_initiator_restart(void **state)
{
	struct h_rma p;
	int sent = 0;

	RTE_SET_USED(state);
	by_hand_setup(&p, 0, NULL, 62);
	put1_chunk(&p, 0, 32, UINT64_C(1) << 63 | 5, &sent);
	H_UNTIL(sent >= 1, 5000, h_step(&p.h));
	assert_int_equal(rc_of(h_ctx(&p.h, 1, 0))->nb_track, 1);
	assert_int_equal(h_restart_node(&p.h, 0), 0);
	/* the new life asks node 1 something else */
	hello(&p.h, 0, 1, &sent);
	H_UNTIL(sent >= 2 && rc_of(h_ctx(&p.h, 1, 0))->nb_track == 0, 2000, h_step(&p.h));
	assert_int_equal(sent, 2);
	assert_int_equal(rc_of(h_ctx(&p.h, 1, 0))->nb_track, 0);
	release_and_destroy(&p);
}

/*
 * The target counts the last chunk of an initiator's put, and in the same burst hears
 * from the initiator's next life: the completion it owes the old life must not go to the
 * new one, whose put under the same handle (a new process numbers its operations afresh)
 * has only begun. Before, the new life took it for its own put's completion.
 */
static void
test_put_done_not_sent_to_next_life(void **state)
{
	const uint64_t h = UINT64_C(1) << 63 | 5;
	struct h_capture dones = { 0 };
	struct h_rma p;
	int sent = 0;

	RTE_SET_USED(state);
	by_hand_setup(&p, 0, NULL, 65);
	/* node 1 polls once both lives' chunks wait for it */
	p.h.n[1].polled_elsewhere = true;
	put1_chunk(&p, 0, 16, h, &sent);	/* all of the old put */
	h_step(&p.h);
	assert_int_equal(h_restart_node(&p.h, 0), 0);
	amrma_am_register(p.h.n[0].node, AMRMA_RMA_H_PUT_DONE, h_capture_handler, &dones);
	put1_chunk(&p, 4096, 32, h, &sent);	/* half of the new one */
	h_step(&p.h);
	p.h.n[1].polled_elsewhere = false;
	h_run_for(&p.h, 20);
	assert_int_equal(dones.n, 0);
	put1_chunk(&p, 4096 + 16, 32, h, &sent);
	H_UNTIL(dones.n >= 1, 5000, h_step(&p.h));
	h_run_for(&p.h, 10);
	assert_int_equal(dones.n, 1);
	assert_done(&dones, 0, h, 0);
	assert_memory_equal(target + 4096, src + 4096, 32);
	release_and_destroy(&p);
}

/*
 * An initiator restarts while its rendezvous put waits in the target's RMA queue, and its
 * new life asks for a rendezvous put under the same tag (a new process numbers its
 * operations afresh) and length, to another place. The old life's request must not be
 * served to the new life: before, the target posted a receive over the OLD range and
 * sent its CTS to the new life, whose data then went there, where nobody asked for them.
 */
static void
test_rndv_put_after_initiator_restart(void **state)
{
	const uint64_t tag = UINT64_C(1) << 63 | 9;
	struct h_capture cts = { 0 };	/* (tag, receive id) of each CTS */
	struct h_rma p;
	uint64_t a[4];
	unsigned int i;
	int sent = 0;

	RTE_SET_USED(state);
	by_hand_setup(&p, 0, NULL, 81);
	/* the old life: 64 bytes at 0, accepted, queued (node 1's progress does not run) */
	a[0] = p.key;
	a[1] = 0;
	a[2] = 64;
	a[3] = tag;
	request1(&p, AMRMA_RMA_H_RTS, a, 4, NULL, 0, &sent);
	H_UNTIL(sent >= 1, 5000, h_step(&p.h));
	assert_int_equal(sent, 1);
	assert_int_equal(h_restart_node(&p.h, 0), 0);
	/* the new life: 64 bytes at 4096 under the same tag */
	amrma_am_register(p.h.n[0].node, AMRMA_RMA_H_CTS, h_capture_handler, &cts);
	a[1] = 4096;
	request1(&p, AMRMA_RMA_H_RTS, a, 4, NULL, 0, &sent);
	H_UNTIL(sent >= 2, 5000, h_step(&p.h));
	assert_int_equal(sent, 2);
	H_UNTIL(cts.n >= 1, 5000, h_rma_step(&p));
	h_run_for(&p.h, 20);
	amrma_rma_progress(p.r[1]);
	h_run_for(&p.h, 20);
	/* the new life sends its data to every receive it was told of */
	assert_true(cts.n >= 1);
	for (i = 0; i < cts.n && i < H_CAPTURE_MAX; i++) {
		uint64_t d[4] = { tag, 0, 64, cts.args[i][1] };

		assert_int_equal(cts.args[i][0], tag);
		request1(&p, AMRMA_RMA_H_TDATA, d, 4, src, 64, &sent);
	}
	h_run_for(&p.h, 20);
	amrma_rma_progress(p.r[1]);
	h_run_for(&p.h, 20);
	assert_memory_equal(target + 4096, src, 64);
	for (i = 0; i < 64; i++)
		if (target[i] != 0)
			fail_msg("byte %u written for the initiator's earlier life", i);
	assert_int_equal(cts.n, 1);
	assert_int_equal(rc_of(h_ctx(&p.h, 1, 0))->nb_rx_used, 0);
	assert_int_equal(rc_of(h_ctx(&p.h, 1, 0))->st.stale_requests, 1);
	release_and_destroy(&p);
}

/*
 * The target serves an initiator's rendezvous get (its tagged send from the region is
 * set up), and before the first chunk leaves it hears from the initiator's next life:
 * the data were asked for by the old life and must not go to the new one, whose receive
 * may carry the same name (a new process numbers its operations and receives afresh).
 * Before, every chunk went to the new life.
 */
static void
test_rndv_get_data_not_sent_to_next_life(void **state)
{
	struct h_capture tdata = { 0 };	/* tagged data node 0 received */
	struct h_rma p;
	uint64_t a[6];
	int sent = 0;

	RTE_SET_USED(state);
	assert_int_equal(h_rma_create(&p, 2, 1, NULL, NULL, H_RMA_NODE(1)), 0);
	h_fill(target, 1 << 20, 67);
	assert_int_equal(h_rma_register(&p, target, 1 << 20, AMRMA_REGION_READ), 0);
	/* the old life asks for 100000 bytes (key, offset, length, tag, its context, its
	 * receive); node 1 queues it */
	a[0] = p.key;
	a[1] = 0;
	a[2] = 100000;
	a[3] = UINT64_C(1) << 63;
	a[4] = 0;
	a[5] = 0;
	request1(&p, AMRMA_RMA_H_RGET, a, 6, NULL, 0, &sent);
	H_UNTIL(sent >= 1, 5000, h_step(&p.h));
	assert_int_equal(sent, 1);
	assert_int_equal(h_restart_node(&p.h, 0), 0);
	amrma_am_register(p.h.n[0].node, AMRMA_RMA_H_TDATA, h_capture_handler, &tdata);
	/* node 1 sets the send up, then hears from the new life */
	assert_int_equal(amrma_rma_progress(p.r[1]), 1);
	hello(&p.h, 0, 1, &sent);
	H_UNTIL(sent >= 2, 5000, h_step(&p.h));
	assert_int_equal(sent, 2);
	h_run_for(&p.h, 20);
	assert_int_equal(tdata.n, 0);
	/* the send ended, and let go of the region */
	assert_int_equal(amrma_rma_outstanding(h_ctx(&p.h, 1, 0)), 0);
	release_and_destroy(&p);
}

/*
 * The initiator of a rendezvous put restarts after the target posted its receive: its
 * new life will send no data for it. Once the target hears from that life the receive is
 * withdrawn and the region let go; before, both stayed until the rendezvous timeout
 * (10 s by default), and a deregistration's release waited as long.
 */
static void
test_rndv_receive_dropped_on_initiator_restart(void **state)
{
	struct h_rma p;
	int st[2] = { 1, 1 };

	RTE_SET_USED(state);
	assert_int_equal(h_rma_create(&p, 2, 1, NULL, NULL, H_RMA_ALL), 0);
	assert_int_equal(h_rma_register(&p, target, 1 << 20, AMRMA_REGION_WRITE), 0);
	/* the RTS leaves at once; then node 0 hangs */
	assert_int_equal(amrma_rma_put(h_ctx(&p.h, 0, 0), (struct amrma_ep){ .node = 1 }, p.key,
		0, src, 100000, AMRMA_RMA_F_RENDEZVOUS, c2_cb, &st[0], NULL), 0);
	p.h.n[0].frozen = true;
	H_UNTIL(rc_of(h_ctx(&p.h, 1, 0))->nb_rx_used != 0, 5000, h_rma_step(&p));
	assert_int_equal(rc_of(h_ctx(&p.h, 1, 0))->nb_rx_used, 1);
	/* it comes back and speaks to node 1 */
	amrma_rma_destroy(p.r[0]);
	assert_int_equal(st[0], -ECANCELED);
	assert_int_equal(h_restart_node(&p.h, 0), 0);
	p.h.n[0].frozen = false;
	assert_int_equal(amrma_rma_create(p.h.n[0].node, NULL, &p.r[0]), 0);
	assert_int_equal(amrma_rma_put(h_ctx(&p.h, 0, 0), (struct amrma_ep){ .node = 1 }, p.key,
		200000, src, 8, AMRMA_RMA_F_SHORT, c2_cb, &st[1], NULL), 0);
	H_UNTIL(st[1] != 1 && rc_of(h_ctx(&p.h, 1, 0))->nb_rx_used == 0, 2000, h_rma_step(&p));
	assert_int_equal(st[1], 0);
	assert_int_equal(rc_of(h_ctx(&p.h, 1, 0))->nb_rx_used, 0);
	/* nothing holds the region: released at once */
	release_and_destroy(&p);
}

/*
 * The completions a target owes are never dropped for want of queue room: three one-chunk
 * puts taken in one poll by a context with one completion slot each get theirs (the first
 * 0, the others -ENOSPC, or 0 once the slot was free). The queue held completion_slots
 * completions and entries were freed as soon as their last byte came, so the second and
 * third put were counted, placed and their completions dropped: their initiators would
 * have failed them with -ETIMEDOUT after rndv_timeout_ms.
 */
static void
test_completions_not_dropped(void **state)
{
	const uint64_t h[3] = { UINT64_C(1) << 63 | 1, UINT64_C(1) << 63 | 2,
				UINT64_C(1) << 63 | 3 };
	struct h_capture dones = { 0 };
	struct amrma_rma_stats s0, s1;
	struct h_rma p;
	unsigned int k, i;
	int sent = 0;

	RTE_SET_USED(state);
	by_hand_setup(&p, 1, &dones, 52);
	amrma_rma_stats_get(h_ctx(&p.h, 1, 0), &s0);
	for (k = 0; k < 3; k++)
		put1_chunk(&p, 1024 * k, 16, h[k], &sent);
	H_UNTIL(sent >= 3 && dones.n >= 3, 5000, h_step(&p.h));
	amrma_rma_stats_get(h_ctx(&p.h, 1, 0), &s1);
	assert_int_equal(s1.completion_drops - s0.completion_drops, 0);
	assert_int_equal(dones.n, 3);
	for (k = 0; k < 3; k++) {
		int st = (int)(int64_t)dones.args[k][1];

		assert_done(&dones, k, h[k], st);
		assert_true(st == 0 || (k > 0 && st == -ENOSPC));
		for (i = 0; i < 16; i++)
			assert_int_equal(target[1024 * k + i], st == 0 ? src[1024 * k + i] : 0);
	}
	assert_int_equal(rc_of(h_ctx(&p.h, 1, 0))->nb_track, 0);
	release_and_destroy(&p);
}

/*
 * Two nodes with engines of conf rc (NULL: the defaults) and 1 MiB of target registered
 * at node 1, readable and writable.
 */
static void
pair_setup(struct h_rma *p, const struct amrma_rma_conf *rc)
{
	assert_int_equal(h_rma_create(p, 2, 1, NULL, rc, H_RMA_ALL), 0);
	assert_int_equal(h_rma_register(p, target, 1 << 20,
					AMRMA_REGION_WRITE | AMRMA_REGION_READ), 0);
}

/* The RMA queue is bounded: with the progress engine stopped, rendezvous requests beyond
 * its size are refused (-EBUSY), then everything completes once progress resumes. */
static void
test_queue_bound(void **state)
{
	struct amrma_rma_conf rc;
	struct conc c = { 0 };
	struct h_rma p;
	unsigned int i;

	RTE_SET_USED(state);
	amrma_rma_conf_defaults(&rc);
	rc.queue_size = 8;
	pair_setup(&p, &rc);
	for (i = 0; i < 40; i++)
		assert_int_equal(amrma_rma_put(h_ctx(&p.h, 0, 0), (struct amrma_ep){ .node = 1 },
			p.key, i * 1000, src, 1000, AMRMA_RMA_F_RENDEZVOUS, conc_cb, &c, NULL), 0);
	/* node 1's progress engine does not run: its queue fills up */
	p.stalled = H_RMA_NODE(1);
	H_UNTIL(c.done >= 40 - 8, 10000, h_rma_step(&p));
	assert_int_equal(c.errors, 40 - 8);
	/* now let it run: the 8 queued ones complete */
	p.stalled = 0;
	H_UNTIL(c.done >= 40, 10000, h_rma_step(&p));
	assert_int_equal(c.done - c.errors, 8);
	h_rma_destroy(&p);
}

/* A target that accepts a rendezvous and then goes quiet: the initiator fails with
 * -ETIMEDOUT, and when the target wakes up late it reclaims everything it held. */
static void
test_rendezvous_timeout(void **state)
{
	struct amrma_rma_conf rc;
	struct amrma_rma_stats st;
	amrma_rma_req_t put, get;
	struct h_rma p;
	int status = 0;

	RTE_SET_USED(state);
	amrma_rma_conf_defaults(&rc);
	rc.rndv_timeout_ms = 50;
	pair_setup(&p, &rc);
	assert_int_equal(amrma_rma_put(h_ctx(&p.h, 0, 0), (struct amrma_ep){ .node = 1 }, p.key,
		0, src, 100000, AMRMA_RMA_F_RENDEZVOUS, NULL, NULL, &put), 0);
	assert_int_equal(amrma_rma_get(h_ctx(&p.h, 0, 0), (struct amrma_ep){ .node = 1 }, p.key,
		0, dst, 100000, AMRMA_RMA_F_RENDEZVOUS, NULL, NULL, &get), 0);
	/* node 1 answers AM but its progress engine never runs */
	p.stalled = H_RMA_NODE(1);
	h_rma_wait(&p, h_ctx(&p.h, 0, 0), put, 5000, &status);
	assert_int_equal(status, -ETIMEDOUT);
	h_rma_wait(&p, h_ctx(&p.h, 0, 0), get, 5000, &status);
	assert_int_equal(status, -ETIMEDOUT);
	/* the target wakes up: its late CTS and data are refused, its receive expires */
	p.stalled = 0;
	h_rma_run_for(&p, 200);
	amrma_rma_stats_get(h_ctx(&p.h, 1, 0), &st);
	assert_true(st.rndv_timeouts >= 1);
	/* nothing holds the region any more: it is released at once */
	assert_int_equal(h_rma_deregister(&p, NULL, NULL), 0);
	assert_int_equal(amrma_rma_outstanding(h_ctx(&p.h, 1, 0)), 0);
	h_rma_destroy(&p);
}

/*
 * Operations whose target took their requests and is to answer later on its own (the
 * CTS of a rendezvous put, the data of a rendezvous get, the completion of a pipelined
 * put) while the target restarts: its new life will never answer them. They fail with
 * -ECONNRESET once this node hears from that new life, as AM operations do; before, they
 * waited for the rendezvous timeout (10 s by default).
 */
static void
test_target_restart_fails_waiting_ops(void **state)
{
	struct h_rma p;
	int st[3] = { 1, 1, 1 }, heard = 0;
	uint64_t t0;
	unsigned int i;

	RTE_SET_USED(state);
	pair_setup(&p, NULL);
	/* the pipelined put's completion is lost on the way, and so are the rendezvous
	 * cancels that node 1's engine sends when it is destroyed: the restart alone
	 * must end the three */
	amrma_am_register(p.h.n[0].node, AMRMA_RMA_H_PUT_DONE, NULL, NULL);
	amrma_am_register(p.h.n[0].node, AMRMA_RMA_H_RNDV_CANCEL, NULL, NULL);
	assert_int_equal(amrma_rma_put(h_ctx(&p.h, 0, 0), (struct amrma_ep){ .node = 1 }, p.key,
		0, src, 100000, AMRMA_RMA_F_RENDEZVOUS, c2_cb, &st[0], NULL), 0);
	assert_int_equal(amrma_rma_get(h_ctx(&p.h, 0, 0), (struct amrma_ep){ .node = 1 }, p.key,
		0, dst, 100000, AMRMA_RMA_F_RENDEZVOUS, c2_cb, &st[1], NULL), 0);
	assert_int_equal(amrma_rma_put(h_ctx(&p.h, 0, 0), (struct amrma_ep){ .node = 1 }, p.key,
		200000, src, 3 * (uint64_t)mtu, AMRMA_RMA_F_PIPELINED, c2_cb, &st[2], NULL), 0);
	/* node 1 takes the requests; its progress engine does not run */
	p.stalled = H_RMA_NODE(1);
	h_rma_run_for(&p, 100);
	p.stalled = 0;
	assert_int_equal(amrma_ctx_outstanding(h_ctx(&p.h, 0, 0)), 0);
	assert_true(st[0] == 1 && st[1] == 1 && st[2] == 1);
	/* node 1 restarts and speaks to node 0 */
	amrma_rma_destroy(p.r[1]);
	p.reg = NULL;	/* gone with the engine's region table */
	assert_int_equal(h_restart_node(&p.h, 1), 0);
	assert_int_equal(amrma_rma_create(p.h.n[1].node, NULL, &p.r[1]), 0);
	hello(&p.h, 1, 0, &heard);
	t0 = rte_get_tsc_cycles();
	H_UNTIL(st[0] != 1 && st[1] != 1 && st[2] != 1 && heard != 0, 12000, h_rma_step(&p));
	/* well before the rendezvous timeout */
	assert_true((rte_get_tsc_cycles() - t0) * 1000 / rte_get_tsc_hz() < 2000);
	assert_int_equal(heard, 1);
	for (i = 0; i < 3; i++)
		assert_int_equal(st[i], -ECONNRESET);
	assert_int_equal(amrma_rma_outstanding(h_ctx(&p.h, 0, 0)), 0);
	h_rma_destroy(&p);
}

/* a copy engine whose every copy fails (a DMA error) */
static int
fail_copy(struct amrma_copy_engine *e, void *to, const void *from, uint32_t len)
{
	RTE_SET_USED(e);
	RTE_SET_USED(to);
	RTE_SET_USED(from);
	RTE_SET_USED(len);
	return -EIO;
}

static const struct amrma_copy_ops fail_copy_ops = { .name = "fail", .copy = fail_copy };
static struct amrma_copy_engine fail_engine = { .ops = &fail_copy_ops, .dev_id = -1 };

/* steps until ctx has no tagged receive in use; 0 then */
static unsigned int
rx_left_after(struct amrma_ctx *ctx, unsigned int ms)
{
	H_UNTIL(rc_of(ctx)->nb_rx_used == 0, ms, h_rma_step(&H));
	return rc_of(ctx)->nb_rx_used;
}

/*
 * The copy engine fails to place rendezvous data: a get ends with its error at once, not
 * with -ETIMEDOUT after rndv_timeout_ms (10 s here), and so does the target's receive of
 * a put (it held the region until then); the put's initiator has the error from its reply.
 */
static void
test_rndv_place_error(void **state)
{
	struct amrma_ctx *c0 = h_ctx(&H.h, 0, 0), *c1 = h_ctx(&H.h, 1, 0);
	uint64_t len = 8 * (uint64_t)mtu, t0, took;
	amrma_rma_req_t req;
	unsigned int left;
	int status;

	RTE_SET_USED(state);
	h_fill(target, len, 60);
	/* get: the initiator places the data */
	assert_int_equal(amrma_rma_set_copy_engine(c0, &fail_engine), 0);
	t0 = rte_get_tsc_cycles();
	assert_int_equal(amrma_rma_get(c0, (struct amrma_ep){ .node = 1 }, H.key, 0, dst, len,
				       AMRMA_RMA_F_RENDEZVOUS, NULL, NULL, &req), 0);
	status = wait_req(c0, req);
	took = rte_get_tsc_cycles() - t0;
	left = rx_left_after(c0, 0);
	assert_int_equal(amrma_rma_set_copy_engine(c0, NULL), 0);
	assert_int_equal(status, -EIO);
	assert_true(took < rte_get_tsc_hz());
	assert_int_equal(left, 0);
	/* put: the target's progress context places it */
	h_fill(src, len, 61);
	assert_int_equal(amrma_rma_set_copy_engine(c1, &fail_engine), 0);
	assert_int_equal(amrma_rma_put(c0, (struct amrma_ep){ .node = 1 }, H.key, 0, src, len,
				       AMRMA_RMA_F_RENDEZVOUS, NULL, NULL, &req), 0);
	status = wait_req(c0, req);
	left = rx_left_after(c1, 100);
	assert_int_equal(amrma_rma_set_copy_engine(c1, NULL), 0);
	assert_int_equal(status, -EIO);
	assert_int_equal(left, 0);
	/* the target's tagged send and the initiator's op are gone; both work again */
	assert_int_equal(rx_left_after(c0, 100), 0);
	assert_int_equal(amrma_rma_outstanding(c0), 0);
	assert_int_equal(amrma_rma_put(c0, (struct amrma_ep){ .node = 1 }, H.key, 0, src, len,
				       AMRMA_RMA_F_RENDEZVOUS, NULL, NULL, &req), 0);
	assert_int_equal(wait_req(c0, req), 0);
	assert_int_equal(amrma_rma_get(c0, (struct amrma_ep){ .node = 1 }, H.key, 0, dst, len,
				       AMRMA_RMA_F_RENDEZVOUS, NULL, NULL, &req), 0);
	assert_int_equal(wait_req(c0, req), 0);
	assert_memory_equal(dst, src, len);
}

struct twice {
	struct amrma_ctx *ctx;
	uint8_t *buf;
	uint32_t len;
	int status[4];
	unsigned int n;
};

/* the first get's completion starts a second one, as an application would */
static void
twice_cb(struct amrma_ctx *ctx, void *arg, enum amrma_rma_event ev, int status)
{
	struct twice *t = arg;

	RTE_SET_USED(ctx);
	if (ev != AMRMA_RMA_EV_DONE)
		return;
	if (t->n < RTE_DIM(t->status))
		t->status[t->n] = status;
	if (t->n++ == 0)
		t->status[3] = amrma_rma_get(t->ctx, (struct amrma_ep){ .node = 1, .ctx = 1 }, 1,
					     0, t->buf + t->len, t->len, AMRMA_RMA_F_RENDEZVOUS,
					     twice_cb, t, NULL);
}

/* move every frame node from sent on queue q into node to's RX queue 0 */
static void
move_frames(struct harness *h, unsigned int from, unsigned int q, unsigned int to)
{
	struct rte_mbuf *m;

	while (rte_ring_sc_dequeue(h->n[from].tx[q], (void **)&m) == 0)
		if (rte_ring_sp_enqueue(h->n[to].rx[0], m) != 0)
			rte_pktmbuf_free(m);
}

/*
 * A rendezvous get's data come from the target's progress context, its RGET reply from
 * the context that took the request. All data arrive, then in the same burst the reply
 * fails the request. Before, the reply's error withdrew the receive that was already
 * complete and ended the get with -EIO; the get its callback started took the freed
 * receive slot, and the queued completion of the first one then ended that second get
 * with success, with none of its data.
 */
static void
test_rget_reply_after_data(void **state)
{
	const uint32_t len = 1000;
	struct h_capture rget = { .ret = -EIO };	/* node 1 refuses every RGET */
	struct amrma_rma_conf rc;
	struct amrma_tag_stats ts;
	struct twice t = { 0 };
	struct h_rma p;
	uint8_t data[1000];
	uint64_t args[4];
	int sent = 0;

	RTE_SET_USED(state);
	amrma_rma_conf_defaults(&rc);
	rc.rndv_timeout_ms = 100;
	assert_int_equal(h_rma_create(&p, 2, 2, NULL, &rc, H_RMA_NODE(0)), 0);
	amrma_am_register(p.h.n[1].node, AMRMA_RMA_H_RGET, h_capture_handler, &rget);
	t.ctx = h_ctx(&p.h, 0, 0);
	t.buf = dst;
	t.len = len;
	memset(dst, 0, 2 * len);
	h_fill(data, len, 41);
	/* to context 1 of the target: its reply travels apart from the data */
	assert_int_equal(amrma_rma_get(t.ctx, (struct amrma_ep){ .node = 1, .ctx = 1 }, 1, 0,
				       dst, len, AMRMA_RMA_F_RENDEZVOUS, twice_cb, &t, NULL), 0);
	H_UNTIL(rget.n != 0, 5000, h_step(&p.h));
	assert_int_equal(rget.n, 1);
	/* the refusal waits in node 1's queue 1; the data go first, from context 0, to the
	 * RGET's tag, initiator context and receive */
	args[0] = rget.args[0][3];
	args[1] = 0;
	args[2] = len;
	args[3] = rget.args[0][5];
	assert_int_equal(amrma_am_request(h_ctx(&p.h, 1, 0),
		(struct amrma_ep){ .node = 0, .ctx = (uint8_t)rget.args[0][4] }, AMRMA_RMA_H_TDATA,
		args, 4, data, (uint16_t)len, sent_cb, &sent), 0);
	amrma_ctx_poll(h_ctx(&p.h, 1, 0), 32);
	move_frames(&p.h, 1, 0, 0);
	move_frames(&p.h, 1, 1, 0);
	amrma_ctx_poll(t.ctx, 32);	/* data and refusal in one burst */
	/* the second get is refused (-EIO) the usual way */
	H_UNTIL(t.n >= 2, 5000, h_step(&p.h));
	h_run_for(&p.h, 150);
	assert_int_equal(t.status[3], 0);
	assert_int_equal(t.n, 2);
	assert_int_equal(t.status[0], 0);
	assert_memory_equal(dst, data, len);
	assert_int_equal(t.status[1], -EIO);
	assert_int_equal(sent, 1);
	assert_int_equal(rc_of(t.ctx)->nb_rx_used, 0);
	assert_int_equal(amrma_rma_outstanding(t.ctx), 0);
	amrma_tag_stats_get(rc_of(t.ctx)->tags, &ts);
	assert_int_equal(ts.posted + ts.in_progress + ts.unexpected, 0);
	h_rma_destroy(&p);
}

/* poll node 0's contexts by hand (ctx 1 only when poll1), the rest as usual */
static void
step_ctx0(struct h_rma *p, bool poll1)
{
	h_step(&p->h);
	amrma_ctx_poll(h_ctx(&p->h, 0, 0), 32);
	if (poll1)
		amrma_ctx_poll(h_ctx(&p->h, 0, 1), 32);
	amrma_rma_progress(p->r[0]);
	amrma_rma_progress(p->r[1]);
}

/*
 * Rendezvous puts from two contexts of one node to one target: tags are operation handles,
 * unique per context only, and the first op of each fresh context has the same one. The
 * second put's data arrive first. Before, matching on (tag, node) gave them the first
 * put's receive: refused for good, both puts failed and the target's tag engine leaked.
 */
static void
test_same_tag_two_contexts(void **state)
{
	const size_t len = 64 * 1024;
	struct amrma_rma_conf rc;
	struct amrma_tag_stats ts;
	amrma_rma_req_t ra, rb;
	struct h_rma p;
	int sa = 1, sb = 1, ta = 0, tb = 0, i;

	RTE_SET_USED(state);
	amrma_rma_conf_defaults(&rc);
	rc.rndv_timeout_ms = 500;
	assert_int_equal(h_rma_create(&p, 2, 2, NULL, &rc, H_RMA_ALL), 0);
	memset(target, 0, 2 << 20);
	h_fill(src, len, 31);
	h_fill(src + len, len, 32);
	assert_int_equal(h_rma_register(&p, target, 2 << 20, AMRMA_REGION_WRITE), 0);
	p.h.n[0].polled_elsewhere = true;	/* node 0's contexts: step_ctx0 */
	assert_int_equal(amrma_rma_put(h_ctx(&p.h, 0, 1), (struct amrma_ep){ .node = 1 }, p.key,
				       0, src, len, AMRMA_RMA_F_RENDEZVOUS, NULL, NULL, &ra), 0);
	amrma_ctx_poll(h_ctx(&p.h, 0, 1), 32);	/* A's RTS leaves... */
	for (i = 0; i < 50; i++)
		step_ctx0(&p, false);	/* ...its receive is posted, its CTS waits */
	assert_int_equal(amrma_rma_put(h_ctx(&p.h, 0, 0), (struct amrma_ep){ .node = 1 }, p.key,
				       1 << 20, src + len, len, AMRMA_RMA_F_RENDEZVOUS, NULL, NULL,
				       &rb), 0);
	assert_true(ra == rb);
	H_UNTIL(ta && tb, 5000, {
		step_ctx0(&p, tb);	/* B goes first */
		if (!ta)
			ta = amrma_rma_test(h_ctx(&p.h, 0, 1), ra, &sa);
		if (!tb)
			tb = amrma_rma_test(h_ctx(&p.h, 0, 0), rb, &sb);
	});
	assert_int_equal(tb, 1);
	assert_int_equal(sb, 0);
	assert_int_equal(ta, 1);
	assert_int_equal(sa, 0);
	assert_memory_equal(target, src, len);
	assert_memory_equal(target + (1 << 20), src + len, len);
	amrma_tag_stats_get(rc_of(h_ctx(&p.h, 1, 0))->tags, &ts);
	assert_int_equal(ts.posted + ts.in_progress + ts.unexpected, 0);
	assert_int_equal(ts.completed, 2);
	p.h.n[0].polled_elsewhere = false;
	release_and_destroy(&p);
}

/* Without a protocol flag, puts and gets each pick theirs by their own threshold. */
static void
test_auto_protocol_thresholds(void **state)
{
	static const struct {
		bool put;
		uint32_t len;
		bool rndv;
	} ops[] = {
		{ true, 100000, false },	/* under the put threshold: pipelined */
		{ true, 300000, true },
		{ false, 100000, true },	/* over the get threshold */
		{ false, 30000, false },
	};
	struct amrma_rma_stats st0, st1, t0, t1;
	struct amrma_rma_conf rc;
	struct h_rma p;
	unsigned int k;

	RTE_SET_USED(state);
	amrma_rma_conf_defaults(&rc);
	rc.rndv_threshold = 64 << 10;
	rc.rndv_put_threshold = 256 << 10;
	pair_setup(&p, &rc);
	for (k = 0; k < RTE_DIM(ops); k++) {
		struct amrma_ctx *ctx = h_ctx(&p.h, 0, 0);
		amrma_rma_req_t req;
		int status = 0;

		amrma_rma_stats_get(ctx, &st0);
		amrma_rma_stats_get(h_ctx(&p.h, 1, 0), &t0);
		h_fill(src, ops[k].len, k);
		if (ops[k].put)
			assert_int_equal(amrma_rma_put(ctx, (struct amrma_ep){ .node = 1 }, p.key,
				0, src, ops[k].len, 0, NULL, NULL, &req), 0);
		else
			assert_int_equal(amrma_rma_get(ctx, (struct amrma_ep){ .node = 1 }, p.key,
				0, dst, ops[k].len, 0, NULL, NULL, &req), 0);
		h_rma_wait(&p, ctx, req, 5000, &status);
		assert_int_equal(status, 0);
		if (ops[k].put)
			assert_memory_equal(target, src, ops[k].len);
		else
			assert_memory_equal(dst, target, ops[k].len);
		amrma_rma_stats_get(ctx, &st1);
		amrma_rma_stats_get(h_ctx(&p.h, 1, 0), &t1);
		if (st1.rndv_ops - st0.rndv_ops != (ops[k].rndv ? 1u : 0u))
			fail_msg("%s of %u: rendezvous expected %d", ops[k].put ? "put" : "get",
				 ops[k].len, ops[k].rndv);
		/* a pipelined put is the one with a completion from the target */
		if (ops[k].put)
			assert_int_equal(t1.completions_sent - t0.completions_sent,
					 ops[k].rndv ? 0 : 1);
	}
	release_and_destroy(&p);
}

/* The progress engine as an rte_service: rendezvous served only through the service. */
static void
test_progress_service(void **state)
{
	struct amrma_ctx *ctx = h_ctx(&H.h, 0, 0);
	amrma_rma_req_t req;
	uint32_t sid[NODES];
	int status = 0, ret = 0;
	unsigned int i;

	RTE_SET_USED(state);
	for (i = 0; i < NODES; i++) {
		assert_int_equal(amrma_rma_service_register(H.r[i], &sid[i]), 0);
		assert_int_equal(rte_service_runstate_set(sid[i], 1), 0);
	}
	h_fill(src, 300000, 31);
	assert_int_equal(amrma_rma_put(ctx, (struct amrma_ep){ .node = 1 }, H.key, 77, src,
		300000, AMRMA_RMA_F_RENDEZVOUS, NULL, NULL, &req), 0);
	H_UNTIL((ret = amrma_rma_test(ctx, req, &status)) != 0, 10000, {
		h_step(&H.h);	/* AM only: progress comes from the services */
		for (i = 0; i < NODES; i++)
			assert_int_equal(rte_service_run_iter_on_app_lcore(sid[i], 1), 0);
	});
	assert_int_equal(ret, 1);
	assert_int_equal(status, 0);
	assert_memory_equal(target + 77, src, 300000);
	for (i = 0; i < NODES; i++)	/* amrma_rma_destroy() unregisters them */
		rte_service_runstate_set(sid[i], 0);
}

/* Zero copy: pipelined puts attach the source; LOCAL is reported, then DONE. */
struct evlog {
	int seq[8];
	int n;
	int packets;
};

static void
ev_cb(struct amrma_ctx *ctx, void *arg, enum amrma_rma_event ev, int status)
{
	struct evlog *l = arg;

	RTE_SET_USED(ctx);
	assert_int_equal(status, 0);
	if (ev == AMRMA_RMA_EV_PACKET) {
		l->packets++;
		return;
	}
	if (l->n < 8)
		l->seq[l->n++] = ev;
}

/* a pipelined put from src; returns the zero-copy chunks it used, asserts the events */
static uint64_t
put_with_events(const uint8_t *from, uint64_t len)
{
	struct amrma_ctx *ctx = h_ctx(&H.h, 0, 0);
	struct amrma_rma_stats before, after;
	struct evlog l = { 0 };

	amrma_rma_stats_get(ctx, &before);
	memset(target, 0, len);
	assert_int_equal(amrma_rma_put(ctx, (struct amrma_ep){ .node = 1 }, H.key, 0, from, len,
		AMRMA_RMA_F_PIPELINED | AMRMA_RMA_F_LOCAL_CB | AMRMA_RMA_F_PER_PACKET, ev_cb, &l,
		NULL), 0);
	H_UNTIL(l.n >= 2, 10000, h_rma_step(&H));
	assert_int_equal(l.n, 2);
	assert_int_equal(l.seq[0], AMRMA_RMA_EV_LOCAL);
	assert_int_equal(l.seq[1], AMRMA_RMA_EV_DONE);
	assert_int_equal(l.packets, 101);
	amrma_rma_stats_get(ctx, &after);
	assert_int_equal(after.chunks - before.chunks, 101);
	assert_memory_equal(target, from, len);
	assert_int_equal(amrma_rma_outstanding(ctx), 0);
	return after.zero_copy_chunks - before.zero_copy_chunks;
}

/* len bytes of EAL memory, which a zero-copy put attaches to its frames */
static uint8_t *
eal_alloc(size_t len)
{
	uint8_t *p = rte_malloc(NULL, len, 64);

	assert_non_null(p);
	return p;
}

/*
 * Zero copy reads EAL memory in place (every chunk attached); heap memory, which a NIC
 * or memif zero-copy could not reach, is copied into the frames and lands the same.
 */
static void
test_zero_copy_and_events(void **state)
{
	uint64_t len = 100 * (uint64_t)mtu + 17;
	uint8_t *eal_mem = eal_alloc(len + 1);

	RTE_SET_USED(state);
	h_fill(eal_mem + 1, len, 5);	/* odd source alignment */
	assert_int_equal(put_with_events(eal_mem + 1, len), 101);
	h_fill(src, len, 6);
	assert_int_equal(put_with_events(src, len), 0);
	rte_free(eal_mem);
}

/*
 * A zero-copy put's source is released only with its last frame, so with a port that
 * holds sent frames (test/lib/hold_port.h) the RMA engine must ask it to let go;
 * otherwise the operation waits for as long as the port stays quiet.
 */
static void
test_zero_copy_port_holds_frames(void **state)
{
	struct amrma_ctx *ctx = h_ctx(&H.h, 0, 0);
	uint64_t len = 40 * (uint64_t)mtu + 5;
	uint8_t *eal_mem = eal_alloc(len);
	struct amrma_rma_stats before, after;
	unsigned int k;

	RTE_SET_USED(state);
	hold_port_attach(&H.h.n[0].dev);
	for (k = 0; k < 2; k++) {
		uint32_t proto = k == 0 ? AMRMA_RMA_F_PIPELINED : AMRMA_RMA_F_RENDEZVOUS;
		amrma_rma_req_t req;

		h_fill(eal_mem, len, 40 + k);
		memset(target, 0, len);
		hold_cleanups = 0;
		amrma_rma_stats_get(ctx, &before);
		assert_int_equal(amrma_rma_put(ctx, (struct amrma_ep){ .node = 1 }, H.key, 0,
					       eal_mem, len, proto, NULL, NULL, &req), 0);
		/* wait_req() fails the test after 60 s: without the ask, the put never ends */
		assert_int_equal(wait_req(ctx, req), 0);
		amrma_rma_stats_get(ctx, &after);
		assert_int_equal(after.zero_copy_chunks - before.zero_copy_chunks, 41);
		assert_memory_equal(target, eal_mem, len);
		assert_true(hold_cleanups > 0);
	}
	hold_port_detach(&H.h.n[0].dev);
	rte_free(eal_mem);
}

/*
 * Every reply of a zero-copy put is in, but the port still holds frames attached to its
 * source: amrma_rma_local_done() says 0 until the port let go, as EV_LOCAL waits.
 */
static void
test_local_done_while_port_holds(void **state)
{
	struct amrma_ctx *ctx = h_ctx(&H.h, 0, 0);
	uint64_t len = 20 * (uint64_t)mtu + 3;
	uint8_t *eal_mem = eal_alloc(len);
	struct evlog l = { 0 };
	unsigned int held_refs, nb_ev;
	amrma_rma_req_t req;
	struct rma_op *op;
	int finishing, ld;

	RTE_SET_USED(state);
	h_fill(eal_mem, len, 50);
	hold_port_attach(&H.h.n[0].dev);
	hold_stubborn = true;
	assert_int_equal(amrma_rma_put(ctx, (struct amrma_ep){ .node = 1 }, H.key, 0, eal_mem,
		len, AMRMA_RMA_F_PIPELINED | AMRMA_RMA_F_LOCAL_CB, ev_cb, &l, &req), 0);
	op = &rc_of(ctx)->ops[(uint32_t)req];
	finishing = H_UNTIL(op->state == OP_FINISHING, 10000, h_rma_step(&H));
	held_refs = hold_refs_into(eal_mem, len);
	nb_ev = (unsigned int)l.n;
	ld = amrma_rma_local_done(ctx, req);
	/* the port lets go: the put completes (the port is restored before any assert) */
	hold_stubborn = false;
	assert_int_equal(wait_req(ctx, req), 0);
	hold_port_detach(&H.h.n[0].dev);
	assert_true(finishing);
	assert_true(held_refs > 0);
	assert_int_equal(nb_ev, 0);	/* no EV_LOCAL yet... */
	assert_int_equal(ld, 0);	/* ...and not reusable */
	assert_int_equal(l.n, 2);
	assert_int_equal(l.seq[0], AMRMA_RMA_EV_LOCAL);
	assert_memory_equal(target, eal_mem, len);
	rte_free(eal_mem);
}

static unsigned int start_cb_calls;

static void
start_cb(struct amrma_ctx *ctx, void *arg, enum amrma_rma_event ev, int status)
{
	RTE_SET_USED(ctx);
	RTE_SET_USED(arg);
	RTE_SET_USED(ev);
	RTE_SET_USED(status);
	start_cb_calls++;
}

/*
 * An operation the AM layer refuses at once (here: to a node that is no peer) fails in the
 * call, as documented, in every protocol: the short and pipelined ones returned 0 and ran
 * the callback with the error from inside the call.
 */
static void
test_start_errors_returned(void **state)
{
	struct amrma_ctx *ctx = h_ctx(&H.h, 0, 0);
	const struct amrma_ep nobody = { .node = 7, .ctx = 0 };
	const uint64_t len[] = { 100, 20 * (uint64_t)mtu, 1 << 20 };
	unsigned int k;

	RTE_SET_USED(state);
	start_cb_calls = 0;
	for (k = 0; k < RTE_DIM(protos); k++) {
		amrma_rma_req_t req = 1;

		assert_int_equal(amrma_rma_put(ctx, nobody, H.key, 0, src, len[k], protos[k],
					       start_cb, NULL, &req), -EINVAL);
		assert_int_equal(req, 0);
		assert_int_equal(amrma_rma_get(ctx, nobody, H.key, 0, dst, len[k], protos[k],
					       start_cb, NULL, NULL), -EINVAL);
	}
	assert_int_equal(start_cb_calls, 0);
	assert_int_equal(amrma_rma_outstanding(ctx), 0);
}

struct in_call {
	bool calling;		/* inside amrma_rma_put() */
	unsigned int in_call;	/* events reported there */
	unsigned int n;
	enum amrma_rma_event seq[4];
};

static void
in_call_cb(struct amrma_ctx *ctx, void *arg, enum amrma_rma_event ev, int status)
{
	struct in_call *c = arg;

	RTE_SET_USED(ctx);
	assert_int_equal(status, 0);
	if (c->calling)
		c->in_call++;
	if (c->n < RTE_DIM(c->seq))
		c->seq[c->n] = ev;
	c->n++;
}

/*
 * A put whose source is copied into its frames (short, or AMRMA_RMA_F_COPY) and whose
 * chunks all leave in the call reports EV_LOCAL in a later poll, as every callback runs:
 * it was reported from inside amrma_rma_put(), before the caller had the handle (and a
 * callback that waited there would poll from inside the call).
 */
static void
test_local_cb_in_poll(void **state)
{
	struct amrma_ctx *ctx = h_ctx(&H.h, 0, 0);
	const struct amrma_ep ep = { .node = 1, .ctx = 0 };
	const struct { uint32_t flags; uint64_t len; } cases[] = {
		{ AMRMA_RMA_F_SHORT, 100 },
		{ AMRMA_RMA_F_SHORT, 0 },
		{ AMRMA_RMA_F_PIPELINED | AMRMA_RMA_F_COPY, 5 * (uint64_t)mtu + 7 },
		{ AMRMA_RMA_F_PIPELINED | AMRMA_RMA_F_COPY | AMRMA_RMA_F_PER_PACKET, 3000 },
	};
	unsigned int k;

	RTE_SET_USED(state);
	for (k = 0; k < RTE_DIM(cases); k++) {
		struct in_call c = { .calling = true };
		amrma_rma_req_t req;

		h_fill(src, cases[k].len, 500 + k);
		assert_int_equal(amrma_rma_put(ctx, ep, H.key, 64, src, cases[k].len,
			cases[k].flags | AMRMA_RMA_F_LOCAL_CB, in_call_cb, &c, &req), 0);
		c.calling = false;
		if (c.in_call != 0)
			fail_msg("case %u: %u events reported inside the call", k, c.in_call);
		/* copied: reusable on return, reported at the next poll */
		assert_int_equal(amrma_rma_local_done(ctx, req), 1);
		assert_int_equal(wait_req(ctx, req), 0);
		assert_true(c.n >= 2);
		assert_int_equal(c.seq[0], AMRMA_RMA_EV_LOCAL);
		assert_memory_equal(target + 64, src, cases[k].len);
	}
}

/*
 * A pipelined put or get whose range runs past 2^64 is refused with -EOVERFLOW as the
 * other protocols refuse it, and moves no byte: its later chunks' offsets wrapped around
 * to the start of the region, where the put wrote (and from where the get read) them.
 */
static void
test_pipelined_range_wraps(void **state)
{
	struct amrma_ctx *ctx = h_ctx(&H.h, 0, 0);
	const struct amrma_ep ep = { .node = 1, .ctx = 1 };
	const uint64_t len = 6 * (uint64_t)mtu;
	const uint32_t flags[] = { 0, AMRMA_RMA_F_PER_PACKET, AMRMA_RMA_F_COPY };
	unsigned int k, i;

	RTE_SET_USED(state);
	memset(target, GUARD, len + 4096);
	h_fill(src, len, 77);
	for (k = 0; k < RTE_DIM(flags); k++) {
		amrma_rma_req_t req;

		assert_int_equal(amrma_rma_put(ctx, ep, H.key, UINT64_MAX - mtu / 2 - k, src,
			len, AMRMA_RMA_F_PIPELINED | flags[k], NULL, NULL, &req), 0);
		assert_int_equal(wait_req(ctx, req), -EOVERFLOW);
		for (i = 0; i < len + 4096; i++)
			if (target[i] != GUARD)
				fail_msg("case %u: refused put wrote byte %u of the region", k, i);
	}
	for (k = 0; k < RTE_DIM(flags); k++) {
		amrma_rma_req_t req;

		memset(dst, 0x22, len);
		assert_int_equal(amrma_rma_get(ctx, ep, H.key, UINT64_MAX - mtu / 2 - k, dst,
			len, AMRMA_RMA_F_PIPELINED | flags[k], NULL, NULL, &req), 0);
		assert_int_equal(wait_req(ctx, req), -EOVERFLOW);
		for (i = 0; i < len; i++)
			if (dst[i] != 0x22)
				fail_msg("case %u: refused get wrote local byte %u", k, i);
	}
}

/*
 * An operation refused in the call (-EAGAIN: rendezvous requests issued without polling,
 * one per frame, until the AM channel's queue is full; gets also when the receive table
 * is) never existed: it is not counted. op_new() counted it before its protocol could
 * refuse it, so a caller retrying on -EAGAIN inflated puts, gets, bytes and rndv_ops.
 */
static void
test_refused_start_not_counted(void **state)
{
	struct amrma_rma_stats before, after;
	unsigned int ok[2] = { 0, 0 }, refused[2] = { 0, 0 }, i, get;
	struct amrma_node_conf nc;
	struct conc c = { 0 };
	struct amrma_ctx *ctx;
	struct h_rma p;

	RTE_SET_USED(state);
	h_conf(&nc);
	nc.coalesce_frame = 0;
	assert_int_equal(h_rma_create(&p, 2, 1, &nc, NULL, H_RMA_ALL), 0);
	assert_int_equal(h_rma_register(&p, target, 1 << 20,
					AMRMA_REGION_READ | AMRMA_REGION_WRITE), 0);
	ctx = h_ctx(&p.h, 0, 0);
	amrma_rma_stats_get(ctx, &before);
	for (get = 0; get < 2; get++)
		for (i = 0; i < 1000 && refused[get] < 3; i++) {
			const struct amrma_ep ep = { .node = 1 };
			int ret = get ?
				amrma_rma_get(ctx, ep, p.key, 1000 * i, dst, 1000,
					      AMRMA_RMA_F_RENDEZVOUS, conc_cb, &c, NULL) :
				amrma_rma_put(ctx, ep, p.key, 1000 * i, src, 1000,
					      AMRMA_RMA_F_RENDEZVOUS, conc_cb, &c, NULL);

			if (ret == 0)
				ok[get]++;
			else if (ret == -EAGAIN)
				refused[get]++;
			else
				fail_msg("%s %u: %d", get ? "get" : "put", i, ret);
		}
	assert_int_equal(refused[0], 3);
	assert_int_equal(refused[1], 3);
	amrma_rma_stats_get(ctx, &after);
	assert_int_equal(after.puts - before.puts, ok[0]);
	assert_int_equal(after.put_bytes - before.put_bytes, 1000 * (uint64_t)ok[0]);
	assert_int_equal(after.gets - before.gets, ok[1]);
	assert_int_equal(after.get_bytes - before.get_bytes, 1000 * (uint64_t)ok[1]);
	assert_int_equal(after.rndv_ops - before.rndv_ops, ok[0] + ok[1]);
	H_UNTIL(c.done >= ok[0] + ok[1], 60000, h_rma_step(&p));
	assert_int_equal(c.done, ok[0] + ok[1]);
	assert_int_equal(c.errors, 0);
	release_and_destroy(&p);
}

struct flush_probe {
	struct amrma_ctx *ctx;
	int to_issued;		/* flush to the endpoint the put was issued to */
	int to_progress;	/* flush to the target's progress context */
	bool done;
};

static void
flush_probe_cb(struct amrma_ctx *ctx, void *arg, enum amrma_rma_event ev, int status)
{
	struct flush_probe *f = arg;

	assert_int_equal(status, 0);
	if (ev != AMRMA_RMA_EV_DONE)
		return;
	/* inside a poll: -EPERM when something is pending to the endpoint, else 0 */
	f->to_issued = amrma_rma_flush(ctx, (struct amrma_ep){ .node = 1, .ctx = 1 });
	f->to_progress = amrma_rma_flush(ctx, (struct amrma_ep){ .node = 1, .ctx = 0 });
	f->done = true;
}

/*
 * amrma_rma_flush() waits for the operations issued to an endpoint: a rendezvous put to
 * context 1 of the target, whose data go to the target's progress context (0) once the
 * CTS came, is one of them. flush matched the endpoint the data went to, so it missed
 * that put (and waited for it on a flush to context 0, to which nothing was issued).
 */
static void
test_flush_rndv_put_after_cts(void **state)
{
	struct amrma_ctx *ctx = h_ctx(&H.h, 0, 0);
	const struct amrma_ep ep = { .node = 1, .ctx = 1 };
	struct flush_probe f = { .to_issued = 1, .to_progress = 1 };
	struct amrma_rma_stats st0, st;
	amrma_rma_req_t put;

	RTE_SET_USED(state);
	amrma_rma_stats_get(h_ctx(&H.h, 1, 0), &st0);
	h_fill(src, 32 << 20, 61);
	assert_int_equal(amrma_rma_put(ctx, ep, H.key, 0, src, 32 << 20,
		AMRMA_RMA_F_RENDEZVOUS, NULL, NULL, &put), 0);
	/* until data flow: the CTS is in, the put sends to context 0 */
	H_UNTIL(rma_stats(h_ctx(&H.h, 1, 0)).served_put_bytes != st0.served_put_bytes, 30000,
		h_rma_step(&H));
	amrma_rma_stats_get(h_ctx(&H.h, 1, 0), &st);
	assert_true(st.served_put_bytes > st0.served_put_bytes);
	assert_int_equal(amrma_rma_test(ctx, put, NULL), 0);
	/* (bytes test_sizes_all_protocols wrote, beyond the put's) */
	assert_int_equal(amrma_rma_get(ctx, ep, H.key, 48 << 20, dst, 64, AMRMA_RMA_F_SHORT,
		flush_probe_cb, &f, NULL), 0);
	H_UNTIL(f.done, 30000, h_rma_step(&H));
	assert_true(f.done);
	assert_int_equal(amrma_rma_test(ctx, put, NULL), 0);	/* still in flight */
	assert_int_equal(f.to_issued, -EPERM);
	assert_int_equal(f.to_progress, 0);
	assert_int_equal(wait_req(ctx, put), 0);
	assert_memory_equal(target, src, 32 << 20);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sizes_all_protocols),
		cmocka_unit_test(test_start_errors_returned),
		cmocka_unit_test(test_local_cb_in_poll),
		cmocka_unit_test(test_refused_start_not_counted),
		cmocka_unit_test(test_flush_rndv_put_after_cts),
		cmocka_unit_test(test_zero_copy_and_events),
		cmocka_unit_test(test_zero_copy_port_holds_frames),
		cmocka_unit_test(test_local_done_while_port_holds),
		cmocka_unit_test(test_put_completion),
		cmocka_unit_test(test_refused_put_stays_refused),
		cmocka_unit_test(test_completions_not_dropped),
		cmocka_unit_test(test_put_after_initiator_restart),
		cmocka_unit_test(test_put_entry_dropped_on_initiator_restart),
		cmocka_unit_test(test_put_done_not_sent_to_next_life),
		cmocka_unit_test(test_rndv_put_after_initiator_restart),
		cmocka_unit_test(test_rndv_receive_dropped_on_initiator_restart),
		cmocka_unit_test(test_rndv_get_data_not_sent_to_next_life),
		cmocka_unit_test(test_progress_service),
		cmocka_unit_test(test_access_errors),
		cmocka_unit_test(test_pipelined_range_wraps),
		cmocka_unit_test(test_concurrent_all_contexts),
		cmocka_unit_test(test_deregister_in_flight),
		cmocka_unit_test(test_deregister_rndv_put),
		cmocka_unit_test(test_deregister_rndv_put_every_packet),
		cmocka_unit_test(test_deregister_rndv_get),
		cmocka_unit_test(test_queue_bound),
		cmocka_unit_test(test_rendezvous_timeout),
		cmocka_unit_test(test_target_restart_fails_waiting_ops),
		cmocka_unit_test(test_rget_reply_after_data),
		cmocka_unit_test(test_rndv_place_error),
		cmocka_unit_test(test_same_tag_two_contexts),
		cmocka_unit_test(test_auto_protocol_thresholds),
		cmocka_unit_test(test_faults),
	};

	h_eal_init("amrma_test_rma");
	return cmocka_run_group_tests(tests, setup_group, teardown_group);
}
