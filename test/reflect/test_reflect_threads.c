/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The reflection engine's "any thread" promises, with real threads: node 1 runs on a
 * service lcore (its node, its RMA engine and the wire between the nodes), node 0 on
 * this lcore. Meanwhile two application threads (not EAL lcores) inject notified puts
 * into node 0's FIFO at once, a third takes node 0's completions as they come, and a
 * fourth sleeps on node 1's word until it has counted every notification.
 * Needs two CPUs; skipped (77) with one.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_service.h>
#include <rte_service_component.h>

#include "amrma_reflect.h"
#include "harness.h"
#include "reflect_nodes.h"
#include "rma_nodes.h"

#define PER_THREAD 1000		/* notified puts each injecting thread adds */
#define NB_INJ 2
#define TOTAL (PER_THREAD * NB_INJ)
#define SLOT 256		/* bytes of the region each put writes */
#define REGION (TOTAL * SLOT)

static struct h_rma H;
static struct amrma_reflect *R[2];
static uint32_t sid[3];
static uint8_t *target, *src;
static uint64_t *word;
static uint64_t wkey;
static volatile bool stop_reader;
static volatile bool give_up;	/* the test failed: threads stop where they are */

/* Node 0 only: node 1 and the wire belong to the service lcore. */
static void
step0(void)
{
	amrma_node_poll(H.h.n[0].node, 32);
	amrma_rma_progress(H.r[0]);
}

struct inj {
	unsigned int id;
	unsigned int full;	/* -ENOBUFS seen (FIFO full): retried */
};

/* Thread `id`: puts to its own slots, each followed by a REFLECT through node 1 that
 * goes to node 1's word (even slots) or to node 0's FIFO (odd ones). */
static void *
injector(void *arg)
{
	struct inj *in = arg;
	unsigned int i;

	for (i = 0; i < PER_THREAD; i++) {
		unsigned int k = in->id * PER_THREAD + i;
		struct amrma_desc d;
		int ret;

		memset(&d, 0, sizeof(d));
		d.op = AMRMA_DESC_PUT;
		d.peer.node = 1;
		d.key = H.key;
		d.offset = (uint64_t)k * SLOT;
		d.local = src + (uint64_t)k * SLOT;
		d.len = SLOT;
		while ((ret = amrma_reflect_inject(R[0], 0, &d)) == -ENOBUFS && !give_up) {
			in->full++;
			sched_yield();
		}
		if (ret != 0)
			return (void *)(intptr_t)ret;
		memset(&d, 0, sizeof(d));
		d.op = AMRMA_DESC_REFLECT;
		d.flags = AMRMA_DESC_F_REMOTE;
		d.peer.node = 1;
		d.cn.cookie = k;
		if (k % 2 == 0) {
			d.cn.to.node = 1;
			d.cn.kind = AMRMA_CN_WORD;
			d.cn.key = wkey;
		} else {
			d.cn.to.node = 0;
			d.cn.kind = AMRMA_CN_FIFO;
		}
		while ((ret = amrma_reflect_inject(R[0], 0, &d)) == -ENOBUFS && !give_up) {
			in->full++;
			sched_yield();
		}
		if (ret != 0)
			return (void *)(intptr_t)ret;
	}
	return NULL;
}

struct reader {
	uint8_t seen[TOTAL];
	unsigned int n, bad;
};

static void *
reader(void *arg)
{
	struct reader *r = arg;
	struct amrma_completion c[32];
	unsigned int i, n;

	while (r->n < TOTAL / 2 && !stop_reader) {
		n = amrma_reflect_completions(R[0], 0, c, RTE_DIM(c));
		if (n == 0) {
			sched_yield();
			continue;
		}
		for (i = 0; i < n; i++) {
			if (c[i].cookie >= TOTAL || c[i].cookie % 2 == 0 || c[i].status != 0)
				r->bad++;
			else
				r->seen[c[i].cookie]++;
		}
		r->n += n;
	}
	return NULL;
}

static void *
waiter(void *arg)
{
	unsigned int slices = 600;
	int ret;

	/* 60 s in slices of 0.1 s, so that a failed test stops it */
	while ((ret = amrma_reflect_word_wait(NULL, arg, TOTAL / 2, 100000)) == -ETIMEDOUT &&
	       !give_up && --slices != 0)
		;
	return (void *)(intptr_t)ret;
}

static void
test_threads(void **state)
{
	struct amrma_ctx *c0 = h_ctx(&H.h, 0, 0);
	pthread_t ti[NB_INJ], tr, tw;
	struct inj in[NB_INJ];
	struct reader *rd = calloc(1, sizeof(*rd));
	intptr_t inj_ret[NB_INJ];
	void *ret = NULL;
	unsigned int i;
	uint64_t end;

	RTE_SET_USED(state);
	assert_non_null(rd);
	assert_int_equal(pthread_create(&tw, NULL, waiter, word), 0);
	assert_int_equal(pthread_create(&tr, NULL, reader, rd), 0);
	for (i = 0; i < NB_INJ; i++) {
		in[i] = (struct inj){ .id = i };
		assert_int_equal(pthread_create(&ti[i], NULL, injector, &in[i]), 0);
	}
	/* node 0 is ours: poll until both injectors ended and everything ran out */
	end = rte_get_tsc_cycles() + rte_get_tsc_hz() * 60;
	for (i = 0; i < NB_INJ; i++) {
		int j;

		while ((j = pthread_tryjoin_np(ti[i], &ret)) == EBUSY &&
		       rte_get_tsc_cycles() < end)
			step0();
		if (j == EBUSY) {
			/* out of time: stop them before their state goes */
			give_up = true;
			pthread_join(ti[i], &ret);
			ret = (void *)(intptr_t)-ETIMEDOUT;
		}
		if (ret != NULL)
			give_up = true;
		inj_ret[i] = (intptr_t)ret;
	}
	while (!give_up && (amrma_reflect_pending(R[0], 0) != 0 || rd->n < TOTAL / 2) &&
	       rte_get_tsc_cycles() < end)
		step0();
	stop_reader = true;
	assert_int_equal(pthread_join(tr, NULL), 0);
	assert_int_equal(pthread_join(tw, &ret), 0);
	for (i = 0; i < NB_INJ; i++)
		assert_int_equal(inj_ret[i], 0);
	assert_int_equal(amrma_reflect_pending(R[0], 0), 0);
	assert_int_equal((intptr_t)ret, 0);
	/* every notification once, after its bytes */
	assert_int_equal(rd->bad, 0);
	assert_int_equal(rd->n, TOTAL / 2);
	for (i = 1; i < TOTAL; i += 2)
		assert_int_equal(rd->seen[i], 1);
	assert_int_equal(__atomic_load_n(word, __ATOMIC_ACQUIRE), TOTAL / 2);
	assert_memory_equal(target, src, REGION);
	assert_int_equal(h_reflect_stats(R[0], 0).injected, 2 * TOTAL);
	assert_int_equal(amrma_rma_outstanding(c0), 0);
	printf("threads: %u notified puts from %u threads, FIFO full %u times\n", TOTAL,
	       NB_INJ, in[0].full + in[1].full);
	free(rd);
}

static int
setup(void **state)
{
	struct amrma_reflect_conf rc;
	struct amrma_node_conf nc;
	struct amrma_region *wreg;

	RTE_SET_USED(state);
	h_conf(&nc);
	nc.rto_max_us = 1000000;
	nc.max_retries = 40;
	assert_int_equal(h_rma_create(&H, 2, 1, &nc, NULL, H_RMA_ALL), 0);
	target = calloc(1, REGION);
	src = rte_malloc(NULL, REGION, 64);
	word = aligned_alloc(64, 64);
	assert_non_null(target);
	assert_non_null(src);
	assert_non_null(word);
	*word = 0;
	h_fill(src, REGION, 3);
	assert_int_equal(h_rma_register(&H, target, REGION, AMRMA_REGION_WRITE), 0);
	assert_int_equal(amrma_region_register(amrma_rma_regions(H.r[1]), word, 8,
					       AMRMA_REGION_WRITE, &wreg, &wkey), 0);
	/* a small FIFO: the injecting threads meet it full */
	amrma_reflect_conf_defaults(&rc);
	rc.fifo_size = 64;
	assert_int_equal(h_reflect_create(&H, R, 2, 0, &rc), 0);
	assert_int_equal(h_rma_services_start(&H, 1, sid), 0);
	return 0;
}

static int
teardown(void **state)
{
	RTE_SET_USED(state);
	h_rma_services_stop(sid);
	h_reflect_destroy(R, 2);
	h_rma_destroy(&H);
	free(target);
	free(word);
	rte_free(src);
	return 0;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_threads, setup, teardown),
	};
	int ret;

	/* five threads, two of them spinning lcores */
	ret = h_eal_init_busy_service("amrma_test_reflect_threads");
	if (ret != 0)
		return ret;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
