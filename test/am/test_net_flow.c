/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ethdev backend's rte_flow steering on a port the host application shares: only the
 * rules amrma created go, on fallback and on close. net_ring has no rte_flow and net_tap's
 * needs the multiq qdisc, so the rte_flow calls are served by a table here: the test
 * executable's definitions come before librte_ethdev's in symbol lookup.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_flow.h>
#include <rte_ring.h>

#include "amrma_net.h"
#include "harness.h"

#define NB_Q 4
#define MAX_FLOWS 64

struct rte_flow {
	uint16_t port;
	bool live;
};

static struct rte_flow table[MAX_FLOWS];
static unsigned int nb_created;
static int fail_create_at = -1;	/* the create call to refuse (counted from 0) */

static unsigned int
live_flows(uint16_t port)
{
	unsigned int i, n = 0;

	for (i = 0; i < MAX_FLOWS; i++)
		n += table[i].live && table[i].port == port;
	return n;
}

int
rte_flow_validate(uint16_t port_id, const struct rte_flow_attr *attr,
		  const struct rte_flow_item pattern[], const struct rte_flow_action actions[],
		  struct rte_flow_error *error)
{
	(void)port_id;
	(void)attr;
	(void)pattern;
	(void)actions;
	(void)error;
	return 0;
}

struct rte_flow *
rte_flow_create(uint16_t port_id, const struct rte_flow_attr *attr,
		const struct rte_flow_item pattern[], const struct rte_flow_action actions[],
		struct rte_flow_error *error)
{
	unsigned int i;

	(void)attr;
	(void)pattern;
	(void)actions;
	if ((int)nb_created++ == fail_create_at) {
		rte_flow_error_set(error, ENOSPC, RTE_FLOW_ERROR_TYPE_HANDLE, NULL,
				   "fake: no room");
		return NULL;
	}
	for (i = 0; i < MAX_FLOWS; i++)
		if (!table[i].live) {
			table[i] = (struct rte_flow){ .port = port_id, .live = true };
			return &table[i];
		}
	rte_flow_error_set(error, ENOSPC, RTE_FLOW_ERROR_TYPE_HANDLE, NULL, "fake: full");
	return NULL;
}

int
rte_flow_destroy(uint16_t port_id, struct rte_flow *flow, struct rte_flow_error *error)
{
	if (flow == NULL || !flow->live || flow->port != port_id)
		return -rte_flow_error_set(error, ENOENT, RTE_FLOW_ERROR_TYPE_HANDLE, flow,
					   "fake: no such flow");
	flow->live = false;
	return 0;
}

int
rte_flow_flush(uint16_t port_id, struct rte_flow_error *error)
{
	unsigned int i;

	(void)error;
	for (i = 0; i < MAX_FLOWS; i++)
		if (table[i].port == port_id)
			table[i].live = false;
	return 0;
}

static uint16_t port = UINT16_MAX;

/* a rule of the host's own, on the port amrma steers */
static struct rte_flow *
host_flow(void)
{
	const struct rte_flow_attr attr = { .ingress = 1 };
	const struct rte_flow_item pattern[] = { { .type = RTE_FLOW_ITEM_TYPE_END } };
	const struct rte_flow_action actions[] = { { .type = RTE_FLOW_ACTION_TYPE_DROP },
						   { .type = RTE_FLOW_ACTION_TYPE_END } };
	struct rte_flow_error err;

	return rte_flow_create(port, &attr, pattern, actions, &err);
}

static void
test_close_keeps_host_flow(void **state)
{
	struct amrma_net_dev dev;
	struct rte_flow_error err;
	struct rte_flow *host;

	(void)state;
	fail_create_at = -1;
	host = host_flow();
	assert_non_null(host);
	assert_int_equal(amrma_net_ethdev_open(&dev, port, NB_Q), 0);
	assert_int_equal(amrma_net_steer(&dev, 7000), 1);
	assert_true(dev.hw_steering);
	assert_int_equal(live_flows(port), 1 + NB_Q);
	amrma_net_close(&dev);
	assert_int_equal(live_flows(port), 1);
	assert_int_equal(rte_flow_destroy(port, host, &err), 0);
}

/* steering a second time replaces amrma's rules (only those are known to close) */
static void
test_steer_again_replaces(void **state)
{
	struct amrma_net_dev dev;

	(void)state;
	fail_create_at = -1;
	assert_int_equal(amrma_net_ethdev_open(&dev, port, NB_Q), 0);
	assert_int_equal(amrma_net_steer(&dev, 7000), 1);
	assert_int_equal(amrma_net_steer(&dev, 7100), 1);
	assert_int_equal(live_flows(port), NB_Q);
	amrma_net_close(&dev);
	assert_int_equal(live_flows(port), 0);
}

static void
test_fallback_keeps_host_flow(void **state)
{
	struct amrma_net_dev dev;
	struct rte_flow_error err;
	struct rte_flow *host;

	(void)state;
	host = host_flow();
	assert_non_null(host);
	assert_int_equal(amrma_net_ethdev_open(&dev, port, NB_Q), 0);
	fail_create_at = (int)nb_created + 2;	/* amrma's third rule */
	assert_int_equal(amrma_net_steer(&dev, 7000), 0);
	assert_false(dev.hw_steering);
	assert_int_equal(live_flows(port), 1);
	amrma_net_close(&dev);
	assert_int_equal(live_flows(port), 1);
	assert_int_equal(rte_flow_destroy(port, host, &err), 0);
	fail_create_at = -1;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_close_keeps_host_flow),
		cmocka_unit_test(test_fallback_keeps_host_flow),
		cmocka_unit_test(test_steer_again_replaces),
	};
	struct rte_ring *rx[NB_Q], *tx[NB_Q];
	char name[RTE_RING_NAMESIZE];
	unsigned int i;
	int ret, p;

	h_eal_init("amrma_test_net_flow");
	for (i = 0; i < NB_Q; i++) {
		snprintf(name, sizeof(name), "flow_q%u", i);
		rx[i] = tx[i] = rte_ring_create(name, 256, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (rx[i] == NULL)
			return 1;
	}
	p = rte_eth_from_rings("flow_port", rx, NB_Q, tx, NB_Q, 0);
	if (p < 0)
		return 1;
	port = (uint16_t)p;
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	rte_eth_dev_stop(port);
	rte_eth_dev_close(port);
	for (i = 0; i < NB_Q; i++)
		rte_ring_free(rx[i]);
	return ret;
}
