/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A node polled by its rte_service on a service lcore (lcore 1) while this thread (lcore 0)
 * stops the service: stopping it does not wait for an iteration under way, so quiescing or
 * destroying the node must. A poll hook that sleeps holds the service inside its poll.
 * Needs two CPUs; skipped (77) with one.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmocka.h>

#include <rte_lcore.h>
#include <rte_service.h>

#include "amrma_am.h"
#include "harness.h"


static volatile int in_hook;	/* 1: the service sleeps in the hook; 2: it came back */
static volatile int node_gone;	/* set once amrma_node_destroy() returned */
static volatile int after_destroy;	/* the service came back into a destroyed node */

static int
slow_hook(struct amrma_ctx *ctx, void *arg)
{
	RTE_SET_USED(ctx);
	RTE_SET_USED(arg);
	if (rte_lcore_id() == H_SVC_LCORE && in_hook == 0) {
		in_hook = 1;
		usleep(200 * 1000);	/* a long poll: a slow handler, a page fault... */
		if (node_gone)
			after_destroy = 1;
		in_hook = 2;
	}
	return 0;
}

/* node 0's service runs on the service lcore and is inside its hook when this returns */
static uint32_t
service_in_poll(struct harness *h)
{
	uint32_t id;

	assert_int_equal(h_create(h, 1, 1, NULL), 0);
	h->n[0].polled_elsewhere = true;
	amrma_ctx_set_hook(h_ctx(h, 0, 0), slow_hook, NULL);
	in_hook = 0;
	node_gone = 0;
	after_destroy = 0;
	assert_int_equal(amrma_node_service_register(h->n[0].node, &id), 0);
	assert_int_equal(rte_service_map_lcore_set(id, H_SVC_LCORE, 1), 0);
	assert_int_equal(rte_service_runstate_set(id, 1), 0);
	while (in_hook != 1)
		rte_pause();
	return id;
}

static void
test_quiesce_waits_for_service(void **state)
{
	struct harness h;
	uint32_t id;

	RTE_SET_USED(state);
	id = service_in_poll(&h);
	/* stopped, as the documentation asks, but still inside its iteration */
	assert_int_equal(rte_service_runstate_set(id, 0), 0);
	assert_int_equal(amrma_node_quiesce(h.n[0].node, 1000), -EBUSY);
	while (in_hook != 2)
		rte_pause();
	while (rte_service_may_be_active(id) == 1)
		rte_pause();
	assert_int_equal(amrma_node_quiesce(h.n[0].node, 100 * 1000), 0);
	assert_int_equal(rte_service_map_lcore_set(id, H_SVC_LCORE, 0), 0);
	h_destroy(&h);
}

static void
test_destroy_waits_for_service(void **state)
{
	struct harness h;
	uint32_t id;

	RTE_SET_USED(state);
	id = service_in_poll(&h);
	/* destroy stops the service itself; it must not free the node under the iteration */
	amrma_node_destroy(h.n[0].node);
	node_gone = 1;
	h.n[0].node = NULL;
	assert_int_equal(in_hook, 2);
	while (rte_service_may_be_active(id) == 1)
		rte_pause();
	assert_int_equal(after_destroy, 0);
	h_destroy(&h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quiesce_waits_for_service),
		cmocka_unit_test(test_destroy_waits_for_service),
	};
	int ret;

	ret = h_eal_init_service("amrma_test_service");
	if (ret != 0)
		return ret;
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	rte_service_lcore_stop(H_SVC_LCORE);
	return ret;
}
