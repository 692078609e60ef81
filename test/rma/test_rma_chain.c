/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completion callbacks that start the next operation, the usual way to keep a pipeline
 * of transfers going. Every protocol's DONE must come outside the AM handlers, whatever
 * message ended the operation: a request started from a handler is refused (-EPERM, a
 * handler sends nothing), so a callback run inside one could not go on.
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

#include "amrma_rma.h"
#include "harness.h"
#include "rma_nodes.h"

#define REGION (1u << 20)
#define CHAIN 20	/* operations started from callbacks, after the first */
#define SLOTS 8		/* places in the region (and the local buffer) used in turn */

static struct h_rma P;
static uint8_t *target, *local;

static int
setup(void **state)
{
	RTE_SET_USED(state);
	assert_int_equal(h_rma_create(&P, 2, 1, NULL, NULL, H_RMA_ALL), 0);
	target = aligned_alloc(4096, REGION);
	local = aligned_alloc(4096, REGION);
	assert_non_null(target);
	assert_non_null(local);
	memset(target, 0, REGION);
	h_fill(local, REGION, 5);
	assert_int_equal(h_rma_register(&P, target, REGION,
					AMRMA_REGION_READ | AMRMA_REGION_WRITE), 0);
	return 0;
}

static int
teardown(void **state)
{
	RTE_SET_USED(state);
	h_rma_destroy(&P);
	free(target);
	free(local);
	return 0;
}

struct chain {
	bool get;
	uint64_t key;			/* a wrong one: every operation fails */
	uint32_t flags;
	uint64_t len;
	unsigned int started, done, errors, refused;
	int last_ret, last_status;
};

/* The next operation of c, at its turn's place on both sides. */
static int
chain_start(struct chain *c);

static void
chain_cb(struct amrma_ctx *ctx, void *arg, enum amrma_rma_event ev, int status)
{
	struct chain *c = arg;
	int ret;

	RTE_SET_USED(ctx);
	if (ev != AMRMA_RMA_EV_DONE)
		return;
	c->done++;
	c->errors += status != 0;
	c->last_status = status;
	if (c->started > CHAIN)
		return;
	ret = chain_start(c);
	if (ret != 0) {
		c->refused++;
		c->last_ret = ret;
	}
}

static int
chain_start(struct chain *c)
{
	uint64_t off = (uint64_t)(c->started % SLOTS) * c->len;
	const struct amrma_ep to = { .node = 1 };
	int ret;

	if (c->get)
		ret = amrma_rma_get(h_ctx(&P.h, 0, 0), to, c->key, off, local + off, c->len, c->flags,
				    chain_cb, c, NULL);
	else
		ret = amrma_rma_put(h_ctx(&P.h, 0, 0), to, c->key, off, local + off, c->len,
				    c->flags | AMRMA_RMA_F_COPY, chain_cb, c, NULL);
	if (ret == 0)
		c->started++;
	return ret;
}

/* A chain of CHAIN + 1 operations; refused ones (wrong key) still each start the next. */
static void
run_chain(bool get, uint32_t flags, uint64_t len, bool refused)
{
	struct chain c = { .get = get, .flags = flags, .len = len, .key = refused ? ~P.key : P.key };
	uint64_t end = rte_get_tsc_cycles() + rte_get_tsc_hz() * 10;

	h_fill(get ? target : local, (size_t)len * SLOTS, 11);
	memset(get ? local : target, 0, (size_t)len * SLOTS);
	assert_int_equal(chain_start(&c), 0);
	while (c.done < c.started && rte_get_tsc_cycles() < end)
		h_rma_step(&P);
	if (c.refused != 0)
		fail_msg("%s of %" PRIu64 " B, flags %#x: %u started from a callback refused "
			 "(last %d)", get ? "get" : "put", len, flags, c.refused, c.last_ret);
	assert_int_equal(c.started, CHAIN + 1);
	assert_int_equal(c.done, CHAIN + 1);
	if (refused) {
		assert_int_equal(c.errors, CHAIN + 1);
		assert_true(h_is_zero(get ? local : target, (size_t)len * SLOTS));
	} else {
		assert_int_equal(c.errors, 0);
		assert_memory_equal(target, local, (size_t)len * SLOTS);
	}
}

/* node 1 plays the target of pipelined puts by hand: the chunks' (source, handle) */
struct put1_seen {
	struct amrma_ep src;
	uint64_t handle;
	unsigned int chunks;
};

static int
put1_capture(struct amrma_ctx *ctx, amrma_am_token_t tok, const struct amrma_am_msg *msg,
	     void *arg)
{
	struct put1_seen *p = arg;

	RTE_SET_USED(ctx);
	RTE_SET_USED(tok);
	if (msg->nargs >= 4) {
		p->src = msg->src;
		p->handle = msg->args[3];
		p->chunks++;
	}
	return 0;
}

/*
 * A pipelined put's completion that comes after every chunk was acknowledged (in a frame
 * of its own, as after a loss): the operation ends inside the PUT_DONE handler's poll,
 * and its callback starts the next put. Before, that callback ran inside the handler
 * and its put was refused with -EPERM (the soak saw it a few times per run).
 */
static void
test_chain_put_done_after_acks(void **state)
{
	struct chain c = { .flags = AMRMA_RMA_F_PIPELINED, .len = 5000, .key = P.key };
	struct amrma_ctx *ctx = h_ctx(&P.h, 0, 0);
	struct put1_seen p = { .chunks = 0 };
	unsigned int round;
	uint64_t end;

	RTE_SET_USED(state);
	amrma_am_register(P.h.n[1].node, AMRMA_RMA_H_PUT1, put1_capture, &p);
	assert_int_equal(chain_start(&c), 0);
	for (round = 0; round < 4; round++) {
		const struct amrma_ep to0 = { .node = 0 };
		uint64_t a[2];
		int sent = 0;

		/* every chunk in and acknowledged, the put still waiting for its PUT_DONE */
		end = rte_get_tsc_cycles() + rte_get_tsc_hz() * 5;
		while ((c.started != round + 1 || amrma_ctx_outstanding(ctx) != 0 ||
			p.chunks < 4) && rte_get_tsc_cycles() < end)
			h_rma_step(&P);
		assert_int_equal(amrma_ctx_outstanding(ctx), 0);
		assert_int_equal(c.done, round);
		a[0] = p.handle;
		/* the last one's status is no errno: the put fails all the same, and its
		 * callback starts nothing (c lives on this stack) */
		a[1] = round < 3 ? 0 : 7;
		if (round == 3)
			c.started = CHAIN + 1;
		p.chunks = 0;
		assert_int_equal(amrma_am_send(h_ctx(&P.h, 1, 0), to0, AMRMA_RMA_H_PUT_DONE, a, 2,
					       NULL, 0, h_count_ok, &sent), 0);
		end = rte_get_tsc_cycles() + rte_get_tsc_hz() * 5;
		while (c.done == round && rte_get_tsc_cycles() < end)
			h_rma_step(&P);
		assert_int_equal(c.done, round + 1);
		assert_int_equal(c.last_status, round < 3 ? 0 : -EPROTO);
		if (c.refused != 0)
			fail_msg("round %u: the put started from the callback was refused (%d)",
				 round, c.last_ret);
	}
	assert_int_equal(c.errors, 1);
}

static const struct {
	uint32_t flags;
	uint64_t len;
} kinds[] = {
	{ AMRMA_RMA_F_SHORT, 64 },
	{ AMRMA_RMA_F_PIPELINED, 20000 },
	{ AMRMA_RMA_F_RENDEZVOUS, 20000 },
};

static void
test_chain_puts(void **state)
{
	unsigned int k;

	RTE_SET_USED(state);
	for (k = 0; k < RTE_DIM(kinds); k++) {
		run_chain(false, kinds[k].flags, kinds[k].len, false);
		run_chain(false, kinds[k].flags, kinds[k].len, true);
	}
}

static void
test_chain_gets(void **state)
{
	unsigned int k;

	RTE_SET_USED(state);
	for (k = 0; k < RTE_DIM(kinds); k++) {
		run_chain(true, kinds[k].flags, kinds[k].len, false);
		run_chain(true, kinds[k].flags, kinds[k].len, true);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_chain_puts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_chain_gets, setup, teardown),
		cmocka_unit_test_setup_teardown(test_chain_put_done_after_acks, setup, teardown),
	};

	h_eal_init("amrma_test_rma_chain");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
