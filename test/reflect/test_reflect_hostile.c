/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A hostile peer of the reflection engine. Node 2 sends node 1 thousands of seeded
 * random REFLECT, NOTIFY and RTS messages through the real AM API, so that they pass
 * the channel and reach the handlers: argument counts, kinds, statuses, reserved bits,
 * endpoints, keys, offsets near a word region's bounds, lengths and context counts at
 * and past their limits, payloads. Node 1 exposes a word region (guarded on both sides)
 * and a read-only region, and listens for striped sends with guarded buffers.
 *
 * Checked: the guards, the read-only region and the listener's guards never change;
 * the words hold exactly what node 1 counted; every buffer the listener handed out is
 * reported back exactly once; then node 0 still gets a REFLECT and a striped send
 * through node 1.
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
#include "harness.h"
#include "reflect_nodes.h"
#include "rma_nodes.h"

#define WORDS 64
#define RO 4096
#define SBUF (64u << 10)
#define NSBUF 64
#define MSGS 4000

static struct h_rma P;
static struct amrma_reflect *R[3];
static uint8_t *wmem, *romem;
static struct h_sbufs sb;	/* the listener's buffers */
static uint64_t wkey, rokey;
static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void *
l_alloc(struct amrma_ctx *ctx, void *arg, struct amrma_ep from, uint64_t tag, uint64_t len)
{
	RTE_SET_USED(ctx);
	RTE_SET_USED(arg);
	RTE_SET_USED(from);
	RTE_SET_USED(tag);
	return h_sbufs_take(&sb, len);
}

static void
l_done(struct amrma_ctx *ctx, void *arg, struct amrma_ep from, uint64_t tag, void *buf,
       uint64_t len, int status)
{
	RTE_SET_USED(ctx);
	RTE_SET_USED(arg);
	RTE_SET_USED(from);
	RTE_SET_USED(tag);
	RTE_SET_USED(len);
	RTE_SET_USED(status);
	/* each buffer handed out comes back once */
	assert_int_equal(h_sbufs_back(&sb, buf), 0);
}

static uint8_t *
guarded(size_t len)
{
	uint8_t *p = h_guarded_alloc(len);

	assert_non_null(p);
	return p;
}

/* Values that matter for an argument. */
static uint64_t
val(void)
{
	switch (rnd() % 12) {
	case 0: return 0;
	case 1: return 1 + rnd() % 8;
	case 2: return WORDS - 8 + rnd() % 16;
	case 3: return UINT64_MAX - rnd() % 8;
	case 4: return wkey;
	case 5: return rokey;
	case 6: return SBUF + rnd() % 2 - 1;
	case 7: return rnd() % 70;		/* context counts */
	case 8: return (uint64_t)1 << (rnd() % 64);
	default: return rnd();
	}
}

/* Arg 0 of REFLECT/NOTIFY, mostly near the valid ones. */
static uint64_t
word0(bool notify)
{
	static const int16_t st[] = { 0, 0, -1, -4095, -4096, 1, INT16_MAX, INT16_MIN };
	uint64_t w = (uint64_t)(uint16_t)st[rnd() % RTE_DIM(st)] << 32;
	uint64_t kind = rnd() % 5;

	if (notify)
		w |= kind;
	else
		w |= (rnd() % 4) | (rnd() % 3) << 16 | kind << 24;
	if (rnd() % 8 == 0)
		w |= (uint64_t)1 << (rnd() % 64);	/* a stray bit */
	return w;
}

static void
count_done(struct amrma_ctx *ctx, void *arg, int status)
{
	RTE_SET_USED(ctx);
	RTE_SET_USED(status);
	(*(unsigned int *)arg)++;
}

static void
test_hostile_peer(void **state)
{
	static const uint16_t hs[] = { AMRMA_REFLECT_H_REFLECT, AMRMA_REFLECT_H_NOTIFY,
				       AMRMA_REFLECT_H_STRIPE_RTS };
	struct amrma_ctx *c2 = h_ctx(&P.h, 2, 0);
	struct amrma_reflect_stats xs, sum = { 0 };
	unsigned int i, q, completed = 0, sent = 0;
	uint8_t payload[64] = { 0 };
	uint64_t words = 0;
	uint8_t *rosnap = malloc(RO);
	struct amrma_desc d;
	struct amrma_completion cp;
	int st = 0;

	RTE_SET_USED(state);
	memcpy(rosnap, romem + H_GUARD, RO);
	for (i = 0; i < MSGS; i++) {
		uint16_t h = hs[rnd() % RTE_DIM(hs)];
		struct amrma_ep to = { 1, (uint8_t)(rnd() % 2) };
		uint64_t args[AMRMA_WIRE_MAX_ARGS];
		unsigned int nargs = rnd() % 4 == 0 ? rnd() % (AMRMA_WIRE_MAX_ARGS + 1) :
				     h == AMRMA_REFLECT_H_STRIPE_RTS ? 5 : 4;
		uint16_t len = rnd() % 8 == 0 ? (uint16_t)(1 + rnd() % sizeof(payload)) : 0;
		unsigned int k;
		int ret;

		for (k = 0; k < AMRMA_WIRE_MAX_ARGS; k++)
			args[k] = val();
		if (h != AMRMA_REFLECT_H_STRIPE_RTS)
			args[0] = word0(h == AMRMA_REFLECT_H_NOTIFY);
		if (h == AMRMA_REFLECT_H_NOTIFY && (rnd() & 1)) {
			/* at the word region: inside, across its end, misaligned */
			args[0] = (args[0] & ~UINT64_C(0xff)) | AMRMA_CN_WORD;
			args[1] = wkey;
			args[2] = rnd() % (WORDS + 16);
		}
		if (rnd() & 1)
			ret = amrma_am_request(c2, to, h, args, nargs, payload, len, count_done,
					       &completed);
		else
			ret = amrma_am_send(c2, to, h, args, nargs, payload, len, count_done,
					    &completed);
		if (ret == 0)
			sent++;
		else
			assert_int_equal(ret, -EAGAIN);
		if (ret != 0 || i % 16 == 0)
			h_rma_step(&P);
	}
	assert_true(H_UNTIL(completed == sent, 20000, h_rma_step(&P)));
	/* receives started by hostile RTSs end (their pulls fail at node 2) */
	assert_true(H_UNTIL(sb.nb_back == sb.taken, 20000, h_rma_step(&P)));
	h_rma_run_for(&P, 50);
	for (q = 0; q < 2; q++) {
		amrma_reflect_stats_get(R[1], (uint16_t)q, &xs);
		sum.bad_requests += xs.bad_requests;
		sum.words += xs.words;
		sum.word_refused += xs.word_refused;
		sum.cn_injected += xs.cn_injected;
		sum.stripe_recvs += xs.stripe_recvs;
		while (amrma_reflect_completions(R[1], (uint16_t)q, &cp, 1) == 1)
			;
	}
	fprintf(stderr, "hostile: %u messages, %" PRIu64 " refused as malformed, %" PRIu64
		" notifications taken, %" PRIu64 " words counted, %" PRIu64 " refused, %"
		PRIu64 " striped receives, %u buffers\n", sent, sum.bad_requests,
		sum.cn_injected, sum.words, sum.word_refused, sum.stripe_recvs, sb.taken);
	assert_true(sum.bad_requests > MSGS / 10);
	assert_true(sum.cn_injected > 0);
	assert_true(sum.words > 0);
	assert_true(sum.word_refused > 0);
	assert_true(sb.taken > 0);
	/* what the words hold is what was counted, and nothing around them moved */
	for (i = 0; i < WORDS / 8; i++)
		words += ((uint64_t *)(wmem + H_GUARD))[i];
	assert_int_equal(words, sum.words);
	assert_true(h_guards_ok(wmem, WORDS));
	assert_true(h_guards_ok(romem, RO));
	assert_memory_equal(romem + H_GUARD, rosnap, RO);
	assert_true(h_sbufs_guards_ok(&sb));
	assert_int_equal(sb.nb_back, sb.taken);
	/* node 0 still gets its REFLECT and its striped send through node 1 (a hostile
	 * REFLECT may name node 0 as who is told: those completions go first) */
	for (q = 0; q < 2; q++)
		while (amrma_reflect_completions(R[0], (uint16_t)q, &cp, 1) == 1)
			;
	memset(&d, 0, sizeof(d));
	d.op = AMRMA_DESC_REFLECT;
	d.peer.node = 1;
	d.cn.to.node = 0;
	d.cn.kind = AMRMA_CN_FIFO;
	d.cn.cookie = 42;
	assert_int_equal(amrma_reflect_inject(R[0], 0, &d), 0);
	assert_true(H_UNTIL(amrma_reflect_completions(R[0], 0, &cp, 1) == 1, 5000,
			    h_rma_step(&P)));
	assert_int_equal(cp.cookie, 42);
	assert_int_equal(cp.status, 0);
	h_sbufs_reset(&sb);
	assert_int_equal(amrma_stripe_send(R[0], h_ctx(&P.h, 0, 0), (struct amrma_ep){ 1, 1 },
					   payload, sizeof(payload), 9, h_status_cb, &st), 0);
	assert_true(H_UNTIL(st != 0, 5000, h_rma_step(&P)));
	assert_int_equal(st, 1);
	assert_memory_equal(sb.buf[0] + H_GUARD, payload, sizeof(payload));
	free(rosnap);
}

static int
setup(void **state)
{
	struct amrma_region_table *t;
	struct amrma_region *reg;
	const struct amrma_stripe_listener l = { l_alloc, l_done, NULL };

	RTE_SET_USED(state);
	assert_int_equal(h_rma_create(&P, 3, 2, NULL, NULL, H_RMA_ALL), 0);
	wmem = guarded(WORDS);
	romem = guarded(RO);
	assert_int_equal(h_sbufs_init(&sb, NSBUF, SBUF), 0);
	t = amrma_rma_regions(P.r[1]);
	assert_int_equal(amrma_region_register(t, wmem + H_GUARD, WORDS, AMRMA_REGION_WRITE, &reg,
					       &wkey), 0);
	assert_int_equal(amrma_region_register(t, romem + H_GUARD, RO, AMRMA_REGION_READ, &reg,
					       &rokey), 0);
	assert_int_equal(h_reflect_create(&P, R, 3, 0, NULL), 0);
	assert_int_equal(amrma_stripe_listen(R[1], &l), 0);
	return 0;
}

static int
teardown(void **state)
{
	RTE_SET_USED(state);
	h_reflect_destroy(R, 3);
	h_rma_destroy(&P);
	free(wmem);
	free(romem);
	h_sbufs_free(&sb);
	return 0;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_hostile_peer, setup, teardown),
	};

	h_eal_init("amrma_test_reflect_hostile");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
