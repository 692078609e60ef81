/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Injection FIFOs and completion by reflection (seed 002_…), three nodes over net_ring:
 * node 0 the origin, node 1 the target (the data region and the words), node 2 the
 * reflection node, which runs no application code. Checked: what a completion promises
 * (the data before it done locally, or placed with AMRMA_DESC_F_REMOTE), exactly-once
 * under faults, statuses, words, refusals, hostile messages and the engine's life.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <rte_cycles.h>

#include "amrma_reflect.h"
#include "harness.h"
#include "reflect_nodes.h"
#include "rma_nodes.h"

#define REGION (1u << 20)
#define WORDS 64		/* bytes of node 1's word region */

static struct h_rma P;
static struct amrma_reflect *R[3];
static uint8_t *target, *local;
static uint64_t *words, *ro_words;
static uint64_t wkey, ro_key;
static struct amrma_region *wreg, *ro_reg;

static const struct amrma_ep ORIGIN = { 0, 0 }, TARGET = { 1, 0 }, REFLECTOR = { 2, 0 };

static void
engines_create(const struct amrma_reflect_conf *c2)
{
	assert_int_equal(h_reflect_create(&P, R, 3, 2, c2), 0);
}

static int
setup(void **state)
{
	struct amrma_region_table *t;

	RTE_SET_USED(state);
	assert_int_equal(h_rma_create(&P, 3, 1, NULL, NULL, H_RMA_ALL), 0);
	target = aligned_alloc(4096, REGION);
	local = aligned_alloc(4096, REGION);
	words = aligned_alloc(64, WORDS);
	ro_words = aligned_alloc(64, WORDS);
	assert_non_null(target);
	assert_non_null(local);
	assert_non_null(words);
	assert_non_null(ro_words);
	memset(target, 0, REGION);
	memset(words, 0, WORDS);
	memset(ro_words, 0, WORDS);
	h_fill(local, REGION, 7);
	assert_int_equal(h_rma_register(&P, target, REGION,
					AMRMA_REGION_READ | AMRMA_REGION_WRITE), 0);
	t = amrma_rma_regions(P.r[1]);
	assert_int_equal(amrma_region_register(t, words, WORDS, AMRMA_REGION_WRITE, &wreg,
					       &wkey), 0);
	assert_int_equal(amrma_region_register(t, ro_words, WORDS, AMRMA_REGION_READ, &ro_reg,
					       &ro_key), 0);
	engines_create(NULL);
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
	struct amrma_region_table *t = amrma_rma_regions(P.r[1]);

	RTE_SET_USED(state);
	engines_destroy();
	amrma_region_deregister(t, wreg, NULL, NULL);
	amrma_region_deregister(t, ro_reg, NULL, NULL);
	h_rma_destroy(&P);
	free(target);
	free(local);
	free(words);
	free(ro_words);
	return 0;
}

static void
step(void)
{
	h_rma_step(&P);
}

static struct amrma_desc
data_desc(uint8_t op, uint64_t key, uint64_t off, void *buf, uint64_t len)
{
	struct amrma_desc d;

	memset(&d, 0, sizeof(d));
	d.op = op;
	d.peer = TARGET;
	d.key = key;
	d.offset = off;
	d.local = buf;
	d.len = len;
	return d;
}

static struct amrma_desc
cn_desc(uint8_t op, struct amrma_ep via, struct amrma_ep to, uint8_t kind, uint64_t cookie,
	uint8_t flags)
{
	struct amrma_desc d;

	memset(&d, 0, sizeof(d));
	d.op = op;
	d.flags = flags;
	d.peer = via;
	d.cn.to = to;
	d.cn.kind = kind;
	d.cn.cookie = cookie;
	if (kind == AMRMA_CN_WORD)
		d.cn.key = wkey;
	return d;
}

static void
inject(unsigned int node, struct amrma_desc d)
{
	assert_int_equal(amrma_reflect_inject(R[node], 0, &d), 0);
}

static struct amrma_reflect_stats
stats(unsigned int node)
{
	return h_reflect_stats(R[node], 0);
}

/* Step until node has a completion: 1 and *c, or 0 after ms. */
static int
take(unsigned int node, struct amrma_completion *c, unsigned int ms)
{
	unsigned int n = 0;

	H_UNTIL((n = amrma_reflect_completions(R[node], 0, c, 1)) == 1, ms, step());
	return (int)n;
}

/* Step until node's FIFO and the operations it started are all done. */
static void
drain(unsigned int node)
{
	assert_true(H_UNTIL(amrma_reflect_pending(R[node], 0) == 0 &&
			    amrma_rma_outstanding(h_ctx(&P.h, node, 0)) == 0, 5000, step()));
}

/* The origin hears that its puts left, through node 2; the data then lands. */
static void
test_reflect_to_origin(void **state)
{
	struct amrma_completion c;
	struct amrma_reflect_stats s;

	RTE_SET_USED(state);
	inject(0, data_desc(AMRMA_DESC_PUT, P.key, 0, local, 200 << 10));
	inject(0, data_desc(AMRMA_DESC_PUT, P.key, 300 << 10, local + (300 << 10), 100));
	inject(0, cn_desc(AMRMA_DESC_REFLECT, REFLECTOR, ORIGIN, AMRMA_CN_FIFO, 0xC0FFEE, 0));
	assert_int_equal(take(0, &c, 5000), 1);
	assert_int_equal(c.cookie, 0xC0FFEE);
	assert_int_equal(c.status, 0);
	assert_int_equal(c.from.node, 2);
	assert_int_equal(c.from.ctx, 0);
	s = stats(0);
	assert_int_equal(s.injected, 3);
	assert_int_equal(s.data_started, 2);
	assert_int_equal(s.reflects_sent, 1);
	assert_int_equal(s.completions, 1);
	s = stats(2);
	assert_int_equal(s.cn_injected, 1);
	assert_int_equal(s.notifies_sent, 1);
	drain(0);
	assert_int_equal(h_fill_diff(target, 200 << 10, 7, 0), -1);
	assert_int_equal(h_fill_diff(target + (300 << 10), 100, 7, 300 << 10), -1);
	/* exactly one */
	h_rma_run_for(&P, 20);
	assert_int_equal(amrma_reflect_completions(R[0], 0, &c, 1), 0);
}

/*
 * The notified put: with AMRMA_DESC_F_REMOTE the word at the target moves only once the
 * bytes are in place there, and no message of the target's own says so.
 */
static void
test_remote_word_at_target(void **state)
{
	struct amrma_desc r;

	RTE_SET_USED(state);
	inject(0, data_desc(AMRMA_DESC_PUT, P.key, 4096, local + 4096, 300 << 10));
	r = cn_desc(AMRMA_DESC_REFLECT, REFLECTOR, TARGET, AMRMA_CN_WORD, 1, AMRMA_DESC_F_REMOTE);
	r.cn.offset = 8;
	inject(0, r);
	assert_true(H_UNTIL(__atomic_load_n(&words[1], __ATOMIC_ACQUIRE) != 0, 5000, step()));
	assert_int_equal(h_fill_diff(target + 4096, 300 << 10, 7, 4096), -1);
	h_rma_run_for(&P, 20);
	assert_int_equal(words[1], 1);
	assert_int_equal(words[0], 0);
	assert_int_equal(stats(1).words, 1);
	assert_int_equal(stats(2).cn_injected, 1);
}

/*
 * The reflection node is also who is told (the target reflecting a put to its own word
 * or FIFO), or the origin reflects to itself: no message to oneself, delivered in place.
 */
static void
test_reflect_to_itself(void **state)
{
	struct amrma_completion c;
	struct amrma_desc r;

	RTE_SET_USED(state);
	inject(0, data_desc(AMRMA_DESC_PUT, P.key, 0, local, 50000));
	r = cn_desc(AMRMA_DESC_REFLECT, TARGET, TARGET, AMRMA_CN_WORD, 1, AMRMA_DESC_F_REMOTE);
	r.cn.offset = 16;
	inject(0, r);
	inject(0, cn_desc(AMRMA_DESC_REFLECT, TARGET, TARGET, AMRMA_CN_FIFO, 2, 0));
	inject(0, cn_desc(AMRMA_DESC_REFLECT, ORIGIN, ORIGIN, AMRMA_CN_FIFO, 3, 0));
	assert_true(H_UNTIL(words[2] == 1, 5000, step()));
	assert_int_equal(h_fill_diff(target, 50000, 7, 0), -1);
	assert_int_equal(take(1, &c, 5000), 1);
	assert_int_equal(c.cookie, 2);
	assert_int_equal(c.from.node, 1);
	assert_int_equal(take(0, &c, 5000), 1);
	assert_int_equal(c.cookie, 3);
	assert_int_equal(c.from.node, 0);
	assert_int_equal(c.status, 0);
	assert_int_equal(stats(1).notify_failed + stats(0).notify_failed, 0);
	assert_int_equal(stats(0).reflect_refused, 0);
}

/*
 * With the target stopped, a REFLECT waiting for local completion goes ahead (the bytes
 * left), one with AMRMA_DESC_F_REMOTE does not until the target placed them.
 */
static void
test_remote_waits_for_target(void **state)
{
	struct amrma_completion c;

	RTE_SET_USED(state);
	P.h.n[1].frozen = true;
	inject(0, data_desc(AMRMA_DESC_PUT, P.key, 64, local + 64, 100));
	inject(0, cn_desc(AMRMA_DESC_REFLECT, REFLECTOR, ORIGIN, AMRMA_CN_FIFO, 1, 0));
	assert_int_equal(take(0, &c, 5000), 1);
	assert_int_equal(c.cookie, 1);
	assert_true(h_is_zero(target + 64, 100));
	inject(0, data_desc(AMRMA_DESC_PUT, P.key, 4096, local + 4096, 100));
	inject(0, cn_desc(AMRMA_DESC_REFLECT, REFLECTOR, ORIGIN, AMRMA_CN_FIFO, 2,
			  AMRMA_DESC_F_REMOTE));
	assert_int_equal(take(0, &c, 50), 0);
	assert_true(h_is_zero(target + 4096, 100));
	P.h.n[1].frozen = false;
	assert_int_equal(take(0, &c, 5000), 1);
	assert_int_equal(c.cookie, 2);
	assert_int_equal(c.status, 0);
	assert_int_equal(h_fill_diff(target + 4096, 100, 7, 4096), -1);
	assert_int_equal(h_fill_diff(target + 64, 100, 7, 64), -1);
}

/*
 * Faults on every node: every REFLECT's completion arrives once, after its put's bytes.
 */
static void
test_order_under_faults(void **state)
{
	enum { N = 40 };
	unsigned int seen[N] = { 0 }, got = 0, i;
	uint64_t rtx = 0;
	uint32_t rng = 12345;

	RTE_SET_USED(state);
	for (i = 0; i < 3; i++)
		h_faults(&P.h, i, 5, 3, 5, 1, 100 + i);
	for (i = 0; i < N; i++) {
		uint64_t off = (uint64_t)i * (REGION / N);
		uint64_t len;

		rng = rng * 1103515245 + 12345;
		len = 1 + (rng >> 8) % (REGION / N - 1);
		inject(0, data_desc(AMRMA_DESC_PUT, P.key, off, local + off, len));
		inject(0, cn_desc(AMRMA_DESC_REFLECT, REFLECTOR, ORIGIN, AMRMA_CN_FIFO, i,
				  AMRMA_DESC_F_REMOTE));
	}
	rng = 12345;
	while (got < N) {
		struct amrma_completion c;
		uint64_t off;

		assert_int_equal(take(0, &c, 10000), 1);
		assert_true(c.cookie < N);
		assert_int_equal(c.status, 0);
		seen[c.cookie]++;
		got++;
		/* its put, and every one before it, had landed when it came */
		for (i = 0; i <= c.cookie; i++) {
			off = (uint64_t)i * (REGION / N);
			assert_int_equal(h_fill_diff(target + off, 1, 7, off), -1);
		}
	}
	h_rma_run_for(&P, 50);
	for (i = 0; i < N; i++)
		assert_int_equal(seen[i], 1);
	for (i = 0; i < N; i++) {
		uint64_t off = (uint64_t)i * (REGION / N), len;

		rng = rng * 1103515245 + 12345;
		len = 1 + (rng >> 8) % (REGION / N - 1);
		assert_int_equal(h_fill_diff(target + off, len, 7, off), -1);
	}
	for (i = 0; i < 3; i++) {
		struct amrma_am_stats a;

		amrma_ctx_stats_get(h_ctx(&P.h, i, 0), &a);
		rtx += a.retransmits;
		h_faults(&P.h, i, 0, 0, 0, 0, 0);
	}
	assert_true(rtx > 0);
	assert_int_equal(stats(2).cn_injected, N);
	assert_int_equal(stats(0).completions, N);
}

/* A failed put's error reaches the notification; the next batch starts clean. */
static void
test_error_status(void **state)
{
	struct amrma_completion c;

	RTE_SET_USED(state);
	inject(0, data_desc(AMRMA_DESC_PUT, P.key ^ 1, 0, local, 1000));
	inject(0, data_desc(AMRMA_DESC_PUT, P.key, 0, local, 1000));
	inject(0, cn_desc(AMRMA_DESC_REFLECT, REFLECTOR, ORIGIN, AMRMA_CN_FIFO, 1,
			  AMRMA_DESC_F_REMOTE));
	inject(0, data_desc(AMRMA_DESC_PUT, P.key, 5000, local + 5000, 1000));
	inject(0, cn_desc(AMRMA_DESC_REFLECT, REFLECTOR, ORIGIN, AMRMA_CN_FIFO, 2,
			  AMRMA_DESC_F_REMOTE));
	assert_int_equal(take(0, &c, 5000), 1);
	assert_int_equal(c.cookie, 1);
	assert_int_equal(c.status, -ENOKEY);
	assert_int_equal(take(0, &c, 5000), 1);
	assert_int_equal(c.cookie, 2);
	assert_int_equal(c.status, 0);
	assert_int_equal(stats(0).data_errors, 1);
	/* a reflection node nobody knows: the origin's own FIFO says so */
	inject(0, cn_desc(AMRMA_DESC_REFLECT, (struct amrma_ep){ 3, 0 }, ORIGIN, AMRMA_CN_FIFO,
			  3, 0));
	assert_int_equal(take(0, &c, 5000), 1);
	assert_int_equal(c.cookie, 3);
	assert_true(c.status < 0);
	assert_int_equal(stats(0).reflect_refused, 1);
}

/* A word is only ever one the node registered for writing, aligned, inside its region. */
static void
test_word_refused(void **state)
{
	struct {
		uint64_t key, off;
	} bad[] = {
		{ 0, 0 }, { 0, 4 }, { 0, WORDS - 4 }, { 0, WORDS }, { 0, UINT64_MAX - 3 },
		{ 1, 0 },
	};
	struct amrma_desc d;
	unsigned int i;

	RTE_SET_USED(state);
	for (i = 0; i < RTE_DIM(bad); i++) {
		d = cn_desc(AMRMA_DESC_NOTIFY, ORIGIN, TARGET, AMRMA_CN_WORD, i, 0);
		d.cn.key = bad[i].key == 1 ? ro_key : i == 0 ? wkey ^ 1 : wkey;
		d.cn.offset = bad[i].off;
		inject(0, d);
	}
	d = cn_desc(AMRMA_DESC_NOTIFY, ORIGIN, TARGET, AMRMA_CN_WORD, 99, 0);
	d.cn.offset = WORDS - 8;
	inject(0, d);
	assert_true(H_UNTIL(stats(1).words + stats(1).word_refused == RTE_DIM(bad) + 1, 5000,
			    step()));
	assert_int_equal(stats(1).word_refused, RTE_DIM(bad));
	assert_int_equal(stats(1).words, 1);
	assert_int_equal(words[WORDS / 8 - 1], 1);
	for (i = 0; i < WORDS / 8 - 1; i++)
		assert_int_equal(words[i], 0);
	for (i = 0; i < WORDS / 8; i++)
		assert_int_equal(ro_words[i], 0);
	assert_int_equal(stats(0).notifies_sent, RTE_DIM(bad) + 1);
}

/* A reflection node whose FIFO is full refuses, and the origin hears -ENOBUFS. */
static void
test_reflector_full(void **state)
{
	struct amrma_reflect_conf c;
	unsigned int i, ok = 0, full = 0;
	struct amrma_completion cp;

	RTE_SET_USED(state);
	engines_destroy();
	amrma_reflect_conf_defaults(&c);
	c.fifo_size = 2;
	engines_create(&c);
	/* all eight reach node 2 in one burst: its handlers run before its FIFO does */
	P.h.n[2].frozen = true;
	for (i = 0; i < 8; i++)
		inject(0, cn_desc(AMRMA_DESC_REFLECT, REFLECTOR, ORIGIN, AMRMA_CN_FIFO, i, 0));
	for (i = 0; i < 4; i++)
		step();
	P.h.n[2].frozen = false;
	while (ok + full < 8) {
		assert_int_equal(take(0, &cp, 5000), 1);
		assert_true(cp.cookie < 8);
		if (cp.status == 0) {
			assert_int_equal(cp.from.node, 2);
			ok++;
		} else {
			assert_int_equal(cp.status, -ENOBUFS);
			full++;
		}
	}
	assert_true(full > 0);
	assert_int_equal(stats(2).cn_full, full);
	assert_int_equal(stats(2).cn_injected, ok);
	assert_int_equal(stats(0).reflect_refused, full);
	/* the injecting side's own limit */
	P.h.n[2].frozen = true;
	for (i = 0; i < 2; i++)
		inject(2, cn_desc(AMRMA_DESC_NOTIFY, ORIGIN, ORIGIN, AMRMA_CN_FIFO, i, 0));
	{
		struct amrma_desc d = cn_desc(AMRMA_DESC_NOTIFY, ORIGIN, ORIGIN, AMRMA_CN_FIFO,
					      2, 0);

		assert_int_equal(amrma_reflect_inject(R[2], 0, &d), -ENOBUFS);
	}
	assert_int_equal(stats(2).inject_full, 1);
	P.h.n[2].frozen = false;
	for (i = 0; i < 2; i++) {
		assert_int_equal(take(0, &cp, 5000), 1);
		assert_int_equal(cp.cookie, i);
	}
}

/* Hostile REFLECT and NOTIFY messages: refused and counted, nothing injected or written. */
static void
test_malformed(void **state)
{
	struct amrma_ctx *c0 = h_ctx(&P.h, 0, 0);
	const uint64_t good = (uint64_t)ORIGIN.node | (uint64_t)AMRMA_CN_FIFO << 24;
	const uint64_t bad_args[][4] = {
		{ good | (uint64_t)7 << 48, 0, 0, 1 },		/* reserved bits */
		{ (uint64_t)9 << 24, 0, 0, 2 },			/* kind */
		{ good | (uint64_t)5 << 32, 0, 0, 3 },		/* positive status */
		{ good | (uint64_t)(uint16_t)-5000 << 32, 0, 0, 4 }, /* not an errno */
	};
	/* one reason each: the rest of these messages is well formed */
	const uint64_t good_args[4] = { good, 0, 0, 9 };
	const uint64_t nf = AMRMA_CN_FIFO;
	const struct {
		uint64_t args[4];
		unsigned int nargs;
		uint16_t len;
	} notify_bad[] = {
		{ { nf | (uint64_t)1 << 16, 0, 0, 5 }, 4, 0 },		/* reserved bits */
		{ { 0, 0, 0, 5 }, 4, 0 },				/* kind 0 */
		{ { 4, 0, 0, 5 }, 4, 0 },				/* kind 4 */
		{ { nf | (uint64_t)5 << 32, 0, 0, 5 }, 4, 0 },		/* positive status */
		{ { nf | (uint64_t)(uint16_t)-4096 << 32, 0, 0, 5 }, 4, 0 }, /* not an errno */
		{ { nf, 0, 0, 5 }, 3, 0 },				/* three arguments */
		{ { nf, 0, 0, 5 }, 4, 1 },				/* a payload */
	};
	const uint64_t notify_good[4] = { nf, 0, 0, 7 };
	int st[RTE_DIM(bad_args) + 2] = { 0 };
	int sent = 0;
	unsigned int i;
	struct amrma_completion c;

	RTE_SET_USED(state);
	for (i = 0; i < RTE_DIM(bad_args); i++)
		assert_int_equal(amrma_am_request(c0, REFLECTOR, AMRMA_REFLECT_H_REFLECT,
						  bad_args[i], 4, NULL, 0, h_status_cb, &st[i]),
				 0);
	assert_int_equal(amrma_am_request(c0, REFLECTOR, AMRMA_REFLECT_H_REFLECT, good_args,
					  3, NULL, 0, h_status_cb, &st[i]), 0);
	assert_int_equal(amrma_am_request(c0, REFLECTOR, AMRMA_REFLECT_H_REFLECT, good_args,
					  4, "x", 1, h_status_cb, &st[i + 1]), 0);
	for (i = 0; i < RTE_DIM(notify_bad); i++)
		assert_int_equal(amrma_am_send(c0, TARGET, AMRMA_REFLECT_H_NOTIFY,
					       notify_bad[i].args, notify_bad[i].nargs, "x",
					       notify_bad[i].len, h_count_ok, &sent), 0);
	/* and the same NOTIFY well formed, last: it lands */
	assert_int_equal(amrma_am_send(c0, TARGET, AMRMA_REFLECT_H_NOTIFY, notify_good, 4, NULL,
				       0, h_count_ok, &sent), 0);
	assert_true(H_UNTIL(st[RTE_DIM(st) - 1] != 0 &&
			    sent == (int)RTE_DIM(notify_bad) + 1, 5000, step()));
	for (i = 0; i < RTE_DIM(st); i++)
		assert_int_equal(st[i], -EINVAL);
	assert_int_equal(stats(2).bad_requests, RTE_DIM(st));
	assert_int_equal(stats(2).cn_injected, 0);
	assert_int_equal(stats(2).notifies_sent, 0);
	assert_int_equal(stats(1).bad_requests, RTE_DIM(notify_bad));
	assert_int_equal(stats(1).completions, 1);
	assert_int_equal(take(1, &c, 1000), 1);
	assert_int_equal(c.cookie, 7);
}

/* What amrma_reflect_inject() refuses before anything runs. */
static void
test_inject_checks(void **state)
{
	struct amrma_desc d, bad[8];
	unsigned int i;

	RTE_SET_USED(state);
	bad[0] = data_desc(0, P.key, 0, local, 1);
	bad[1] = data_desc(AMRMA_DESC_NOTIFY + 1, P.key, 0, local, 1);
	bad[2] = data_desc(AMRMA_DESC_PUT, P.key, 0, NULL, 1);
	bad[3] = data_desc(AMRMA_DESC_GET, P.key, 0, local, 1);
	bad[3].rma_flags = AMRMA_RMA_F_PER_PACKET;
	bad[4] = cn_desc(AMRMA_DESC_REFLECT, REFLECTOR, ORIGIN, 0, 1, 0);
	bad[5] = cn_desc(AMRMA_DESC_REFLECT, REFLECTOR, ORIGIN, AMRMA_CN_FIFO, 1, 0x80);
	bad[6] = cn_desc(AMRMA_DESC_NOTIFY, REFLECTOR, ORIGIN, AMRMA_CN_FIFO, 1,
			 AMRMA_DESC_F_REMOTE);
	bad[7] = cn_desc(AMRMA_DESC_NOTIFY, REFLECTOR, ORIGIN, AMRMA_CN_FIFO, 1, 0);
	bad[7].cn.status = 3;
	for (i = 0; i < RTE_DIM(bad); i++)
		assert_int_equal(amrma_reflect_inject(R[0], 0, &bad[i]), -EINVAL);
	d = cn_desc(AMRMA_DESC_NOTIFY, REFLECTOR, ORIGIN, AMRMA_CN_FIFO, 1, 0);
	assert_int_equal(amrma_reflect_inject(R[0], 1, &d), -EINVAL);
	assert_int_equal(amrma_reflect_inject(NULL, 0, &d), -EINVAL);
	assert_int_equal(amrma_reflect_inject(R[0], 0, NULL), -EINVAL);
	assert_int_equal(stats(0).injected, 0);
	assert_int_equal(amrma_reflect_create(P.r[0], NULL, &R[0]), -EEXIST);
}

struct desc_end {
	unsigned int calls;
	int status;
	bool landed;		/* the put's bytes were at the target when it came */
	uint64_t off, len;
};

static void
desc_cb(struct amrma_ctx *ctx, void *arg, int status)
{
	struct desc_end *e = arg;

	RTE_SET_USED(ctx);
	e->calls++;
	e->status = status;
	e->landed = h_fill_diff(target + e->off, e->len, 7, e->off) == -1;
}

/* A data descriptor's own callback: once, with its status, after the bytes landed. */
static void
test_desc_callback(void **state)
{
	struct desc_end ok = { .off = 8192, .len = 300 << 10 }, bad = { 0 };
	struct amrma_desc d;

	RTE_SET_USED(state);
	d = data_desc(AMRMA_DESC_PUT, P.key, ok.off, local + ok.off, ok.len);
	d.cb = desc_cb;
	d.cb_arg = &ok;
	inject(0, d);
	d = data_desc(AMRMA_DESC_PUT, P.key ^ 1, 0, local, 10);
	d.cb = desc_cb;
	d.cb_arg = &bad;
	inject(0, d);
	assert_true(H_UNTIL(ok.calls != 0 && bad.calls != 0, 5000, step()));
	h_rma_run_for(&P, 20);
	assert_int_equal(ok.calls, 1);
	assert_int_equal(ok.status, 0);
	assert_true(ok.landed);
	assert_int_equal(bad.calls, 1);
	assert_int_equal(bad.status, -ENOKEY);
}

/* A get, then a REFLECT through the target itself: the bytes are here when it comes. */
static void
test_get_then_reflect(void **state)
{
	struct amrma_completion c;
	uint8_t *buf = calloc(1, 64 << 10);

	RTE_SET_USED(state);
	assert_non_null(buf);
	h_fill(target + 8192, 64 << 10, 9);
	inject(0, data_desc(AMRMA_DESC_GET, P.key, 8192, buf, 64 << 10));
	inject(0, cn_desc(AMRMA_DESC_REFLECT, TARGET, ORIGIN, AMRMA_CN_FIFO, 5, 0));
	assert_int_equal(take(0, &c, 5000), 1);
	assert_int_equal(c.cookie, 5);
	assert_int_equal(c.status, 0);
	assert_int_equal(c.from.node, 1);
	assert_int_equal(h_fill_diff(buf, 64 << 10, 9, 0), -1);
	free(buf);
}

/*
 * The engine destroyed with puts under way: they finish as RMA operations, their ends
 * reach no freed memory (ASan and valgrind runs), and a new engine works at once.
 */
static void
test_destroy_in_flight(void **state)
{
	struct amrma_completion c;
	unsigned int i;

	RTE_SET_USED(state);
	for (i = 0; i < 4; i++)
		inject(0, data_desc(AMRMA_DESC_PUT, P.key, (uint64_t)i << 18,
				    local + ((uint64_t)i << 18), 200 << 10));
	inject(0, cn_desc(AMRMA_DESC_REFLECT, REFLECTOR, ORIGIN, AMRMA_CN_FIFO, 1, 0));
	step();
	assert_true(amrma_rma_outstanding(h_ctx(&P.h, 0, 0)) > 0);
	amrma_reflect_destroy(R[0]);
	R[0] = NULL;
	assert_true(H_UNTIL(amrma_rma_outstanding(h_ctx(&P.h, 0, 0)) == 0, 5000, step()));
	assert_int_equal(amrma_reflect_create(P.r[0], NULL, &R[0]), 0);
	inject(0, cn_desc(AMRMA_DESC_REFLECT, REFLECTOR, ORIGIN, AMRMA_CN_FIFO, 2, 0));
	assert_int_equal(take(0, &c, 5000), 1);
	assert_int_equal(c.cookie, 2);
	h_rma_run_for(&P, 20);
	assert_int_equal(amrma_reflect_completions(R[0], 0, &c, 1), 0);
}

static void *
late_writer(void *arg)
{
	usleep(2000);
	__atomic_store_n((uint64_t *)arg, 3, __ATOMIC_RELEASE);
	return NULL;
}

/* Waiting on a word: reached, reached later by another thread, not reached in time. */
static void
test_word_wait(void **state)
{
	uint64_t w __rte_aligned(8) = 2;
	uint64_t t0;
	pthread_t th;

	RTE_SET_USED(state);
	assert_int_equal(amrma_reflect_word_wait(NULL, &w, 2, 0), 0);
	t0 = rte_rdtsc();
	assert_int_equal(amrma_reflect_word_wait(NULL, &w, 3, 2000), -ETIMEDOUT);
	assert_true(rte_rdtsc() - t0 >= rte_get_tsc_hz() / 1000);
	assert_int_equal(amrma_reflect_word_wait(h_ctx(&P.h, 0, 0), &w, 3, 2000), -ETIMEDOUT);
	assert_int_equal(amrma_reflect_word_wait(NULL, (uint64_t *)((uintptr_t)&w + 1), 3, 0),
			 -EINVAL);
	assert_int_equal(pthread_create(&th, NULL, late_writer, &w), 0);
	assert_int_equal(amrma_reflect_word_wait(NULL, &w, 3, 5000000), 0);
	pthread_join(th, NULL);
	assert_int_equal(w, 3);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_reflect_to_origin, setup, teardown),
		cmocka_unit_test_setup_teardown(test_remote_word_at_target, setup, teardown),
		cmocka_unit_test_setup_teardown(test_remote_waits_for_target, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reflect_to_itself, setup, teardown),
		cmocka_unit_test_setup_teardown(test_order_under_faults, setup, teardown),
		cmocka_unit_test_setup_teardown(test_error_status, setup, teardown),
		cmocka_unit_test_setup_teardown(test_word_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reflector_full, setup, teardown),
		cmocka_unit_test_setup_teardown(test_malformed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inject_checks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_get_then_reflect, setup, teardown),
		cmocka_unit_test_setup_teardown(test_desc_callback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_destroy_in_flight, setup, teardown),
		cmocka_unit_test_setup_teardown(test_word_wait, setup, teardown),
	};

	h_eal_init("amrma_test_reflect");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
