/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * amrma_rma_wait() and amrma_rma_flush() poll only the caller's context, so the peer
 * makes progress elsewhere: node 1 runs as two rte_services (its node and its RMA
 * progress engine) on service lcore 1, with a third moving the frames between the nodes,
 * while this thread (lcore 0) drives node 0.
 * Needs two CPUs; skipped (77) with one.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_service.h>
#include <rte_service_component.h>

#include "amrma_rma.h"
#include "harness.h"
#include "rma_nodes.h"

#define REGION (8u << 20)

static struct h_rma H;		/* node 1's region: H.key */
static uint32_t sid[3];
static uint8_t *target, *src;
static const struct amrma_ep ep = { .node = 1, .ctx = 0 };

static int
setup(void **state)
{
	struct amrma_node_conf nc;

	RTE_SET_USED(state);
	/* a budget of tens of seconds: the service lcore may wait for a CPU on a busy
	 * machine, and no frame is ever lost here */
	h_conf(&nc);
	nc.rto_max_us = 1000000;
	nc.max_retries = 40;
	assert_int_equal(h_rma_create(&H, 2, 1, &nc, NULL, H_RMA_ALL), 0);
	target = aligned_alloc(4096, REGION);
	src = rte_malloc(NULL, REGION, 64);
	assert_non_null(target);
	assert_non_null(src);
	memset(target, 0, REGION);
	assert_int_equal(h_rma_register(&H, target, REGION,
					AMRMA_REGION_READ | AMRMA_REGION_WRITE), 0);
	/* node 1 and its progress engine on the service lcore, one after the other */
	assert_int_equal(h_rma_services_start(&H, 1, sid), 0);
	return 0;
}

static int
teardown(void **state)
{
	RTE_SET_USED(state);
	h_rma_services_stop(sid);
	h_rma_destroy(&H);
	free(target);
	rte_free(src);
	return 0;
}

static void
test_wait(void **state)
{
	struct amrma_ctx *ctx = h_ctx(&H.h, 0, 0);
	uint32_t proto[] = { AMRMA_RMA_F_SHORT, AMRMA_RMA_F_PIPELINED, AMRMA_RMA_F_RENDEZVOUS };
	uint64_t len[] = { 100, 256 * 1024 + 3, 1 << 20 };
	amrma_rma_req_t req;
	unsigned int k;

	RTE_SET_USED(state);
	for (k = 0; k < RTE_DIM(proto); k++) {
		h_fill(src, len[k], k);
		assert_int_equal(amrma_rma_put(ctx, ep, H.key, 4096 * k, src, len[k], proto[k],
					       NULL, NULL, &req), 0);
		assert_int_equal(amrma_rma_wait(ctx, req), 0);
		assert_memory_equal(target + 4096 * k, src, len[k]);
		/* the handle is released: asking again is stale */
		assert_int_equal(amrma_rma_wait(ctx, req), -EINVAL);
	}
}

static void
test_flush(void **state)
{
	struct amrma_ctx *ctx = h_ctx(&H.h, 0, 0);
	const uint64_t len = 64 * 1024;
	amrma_rma_req_t req[8];
	int status;
	unsigned int i;

	RTE_SET_USED(state);
	h_fill(src, 8 * len, 99);
	for (i = 0; i < RTE_DIM(req); i++)
		assert_int_equal(amrma_rma_put(ctx, ep, H.key, i * len, src + i * len, len,
					       AMRMA_RMA_F_PIPELINED, NULL, NULL, &req[i]), 0);
	assert_int_equal(amrma_rma_flush(ctx, ep), 0);
	for (i = 0; i < RTE_DIM(req); i++) {
		status = 1;
		assert_int_equal(amrma_rma_test(ctx, req[i], &status), 1);
		assert_int_equal(status, 0);
	}
	assert_memory_equal(target, src, 8 * len);
	/* nothing to wait for: at once */
	assert_int_equal(amrma_rma_flush(ctx, ep), 0);
	/* a context without an RMA engine */
	assert_int_equal(amrma_rma_flush(NULL, ep), -EINVAL);
}

struct nested {
	amrma_rma_req_t big;
	int wait_ret, flush_ret;
	bool called;
};

/* the small put's completion, inside node 0's poll: waiting there could only spin */
static void
small_done(struct amrma_ctx *ctx, void *arg, enum amrma_rma_event ev, int status)
{
	struct nested *n = arg;

	RTE_SET_USED(status);
	if (ev != AMRMA_RMA_EV_DONE)
		return;
	n->called = true;
	n->wait_ret = amrma_rma_wait(ctx, n->big);
	n->flush_ret = amrma_rma_flush(ctx, ep);
}

static void
test_wait_inside_poll(void **state)
{
	struct amrma_ctx *ctx = h_ctx(&H.h, 0, 0);
	struct nested n = { 0 };
	amrma_rma_req_t small;

	RTE_SET_USED(state);
	h_fill(src, 4 << 20, 7);
	assert_int_equal(amrma_rma_put(ctx, ep, H.key, 0, src, 64, AMRMA_RMA_F_SHORT, small_done,
				       &n, &small), 0);
	/* queued behind it on the same channel: not complete when small's reply is handled */
	assert_int_equal(amrma_rma_put(ctx, ep, H.key, 4096, src + 4096, (4 << 20) - 4096,
				       AMRMA_RMA_F_PIPELINED, NULL, NULL, &n.big), 0);
	assert_int_equal(amrma_rma_flush(ctx, ep), 0);
	assert_true(n.called);
	assert_int_equal(n.wait_ret, -EPERM);
	assert_int_equal(n.flush_ret, -EPERM);
	assert_int_equal(amrma_rma_wait(ctx, n.big), 0);
	assert_memory_equal(target, src, 64);
	assert_memory_equal(target + 4096, src + 4096, (4 << 20) - 4096);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wait),
		cmocka_unit_test(test_flush),
		cmocka_unit_test(test_wait_inside_poll),
	};
	int ret;

	/* under valgrind two spinning lcores took over 10 minutes */
	ret = h_eal_init_busy_service("amrma_test_rma_wait");
	if (ret != 0)
		return ret;
	ret = cmocka_run_group_tests(tests, setup, teardown);
	rte_service_lcore_stop(H_SVC_LCORE);
	return ret;
}
