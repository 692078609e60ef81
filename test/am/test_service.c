/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A node polled by its rte_service on a service lcore (lcore 1) while this thread (lcore 0)
 * stops the service: stopping it does not wait for an iteration under way, so quiescing or
 * destroying the node must. A poll hook that sleeps holds the service inside its poll.
 * The same for the RMA progress engine's service and amrma_rma_destroy().
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

#include <rte_cycles.h>
#include <rte_lcore.h>
#include <rte_pause.h>
#include <rte_service.h>

#include "amrma_am.h"
#include "amrma_rma.h"
#include "harness.h"
#include "rma_nodes.h"


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

static volatile int in_release;	/* 1: the service sleeps in the release; 2: came back */
static volatile int rma_gone;	/* set once amrma_rma_destroy() returned */

/* a region's release, run by the RMA progress service: it takes its time */
static void
slow_release(void *arg, void *addr, size_t len)
{
	RTE_SET_USED(arg);
	RTE_SET_USED(addr);
	RTE_SET_USED(len);
	in_release = 1;
	usleep(200 * 1000);
	if (rma_gone)
		after_destroy = 1;
	in_release = 2;
}

static void
count_done(struct amrma_ctx *ctx, void *arg, int status)
{
	RTE_SET_USED(ctx);
	RTE_SET_USED(status);
	(*(volatile int *)arg)++;
}

/* Step h until *count reaches want; fails the test after 5 s instead of hanging. */
static void
step_until(struct harness *h, volatile int *count, int want)
{
	H_UNTIL(*count >= want, 5000, h_step(h));
	assert_int_equal(*count, want);
}

/*
 * The RMA progress engine's service is inside an iteration (serving a request that lets
 * go of a deregistered region, whose release takes a while) when the engine is destroyed
 * on this lcore: the destroy stops the service and must wait for that iteration, as
 * amrma_node_destroy() does, before freeing what it uses. Before, it freed the engine
 * under it.
 */
static void
test_rma_destroy_waits_for_progress_service(void **state)
{
	static uint8_t mem[4096];
	struct h_rma p;
	volatile int done = 0;
	uint64_t a[4];
	uint32_t id;

	RTE_SET_USED(state);
	in_release = 0;
	rma_gone = 0;
	after_destroy = 0;
	assert_int_equal(h_rma_create(&p, 2, 1, NULL, NULL, H_RMA_NODE(1)), 0);
	assert_int_equal(h_rma_register(&p, mem, sizeof(mem), AMRMA_REGION_WRITE), 0);
	/* a rendezvous put's request waits in node 1's RMA queue, holding the region */
	a[0] = p.key;
	a[1] = 0;
	a[2] = 64;
	a[3] = UINT64_C(1) << 63;
	assert_int_equal(amrma_am_request(h_ctx(&p.h, 0, 0), (struct amrma_ep){ .node = 1 },
		AMRMA_RMA_H_RTS, a, 4, NULL, 0, count_done, (void *)(uintptr_t)&done), 0);
	step_until(&p.h, &done, 1);
	assert_int_equal(h_rma_deregister(&p, slow_release, NULL), 1);
	/* its initiator restarts and speaks to node 1: the request is stale, to be dropped */
	assert_int_equal(h_restart_node(&p.h, 0), 0);
	assert_int_equal(amrma_am_request(h_ctx(&p.h, 0, 0), (struct amrma_ep){ .node = 1 },
		AMRMA_RMA_H_LAST + 1, NULL, 0, NULL, 0, count_done, (void *)(uintptr_t)&done), 0);
	step_until(&p.h, &done, 2);
	/* node 1's progress engine runs on the service lcore and drops it */
	assert_int_equal(amrma_rma_service_register(p.r[1], &id), 0);
	assert_int_equal(rte_service_map_lcore_set(id, H_SVC_LCORE, 1), 0);
	assert_int_equal(rte_service_runstate_set(id, 1), 0);
	H_UNTIL(in_release == 1, 5000, rte_pause());
	assert_int_equal(in_release, 1);
	/* by hand: this destroy is what the test is about */
	amrma_rma_destroy(p.r[1]);
	p.r[1] = NULL;
	rma_gone = 1;
	assert_int_equal(in_release, 2);
	assert_int_equal(after_destroy, 0);
	h_rma_destroy(&p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quiesce_waits_for_service),
		cmocka_unit_test(test_destroy_waits_for_service),
		cmocka_unit_test(test_rma_destroy_waits_for_progress_service),
	};
	int ret;

	ret = h_eal_init_service("amrma_test_service");
	if (ret != 0)
		return ret;
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	rte_service_lcore_stop(H_SVC_LCORE);
	return ret;
}
