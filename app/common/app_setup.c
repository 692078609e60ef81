/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <numa.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_malloc.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include "app.h"

volatile sig_atomic_t app_stop;

static void
on_signal(int sig)
{
	(void)sig;
	app_stop = 1;
}

void
app_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

static int
find_port(const char *name, uint16_t *port)
{
	char *end;
	unsigned long id = strtoul(name, &end, 10);

	if (*end == '\0' && rte_eth_dev_is_valid_port((uint16_t)id)) {
		*port = (uint16_t)id;
		return 0;
	}
	return rte_eth_dev_get_port_by_name(name, port);
}

static int
wait_link(uint16_t port, unsigned int timeout_ms)
{
	uint64_t end = rte_get_timer_cycles() + rte_get_timer_hz() / 1000 * timeout_ms;
	struct rte_eth_link link;

	do {
		if (rte_eth_link_get_nowait(port, &link) == 0 &&
		    link.link_status == RTE_ETH_LINK_UP)
			return 0;
		usleep(1000);
	} while (rte_get_timer_cycles() < end && !app_stop);
	return -ETIMEDOUT;
}

int
app_setup(struct app *a)
{
	struct app_config *c = &a->cfg;
	char name[RTE_MEMPOOL_NAMESIZE];
	unsigned int i;
	int socket, ret;

	if (find_port(c->port, &a->port_id) != 0) {
		fprintf(stderr, "port '%s' not found (give --vdev or a PCI device to EAL)\n",
			c->port);
		return -ENODEV;
	}
	socket = rte_eth_dev_socket_id(a->port_id);
	if (socket < 0)
		socket = (int)rte_socket_id();
	/* DPDK memory goes on the port's node explicitly; malloc'd buffers (workloads,
	 * telemetry) follow through libnuma's preferred node */
	if (numa_available() >= 0 && socket <= numa_max_node())
		numa_set_preferred(socket);
	snprintf(name, sizeof(name), "amrma_app_%u", c->node.node_id);
	a->pool = rte_pktmbuf_pool_create(name, c->node.nb_mbufs, 256, 0,
					  (uint16_t)RTE_MAX(RTE_MBUF_DEFAULT_BUF_SIZE,
						RTE_PKTMBUF_HEADROOM + RTE_ETHER_HDR_LEN + c->mtu),
					  socket);
	if (a->pool == NULL) {
		fprintf(stderr, "mbuf pool: %s\n", rte_strerror(rte_errno));
		return -rte_errno;
	}
	ret = amrma_net_port_setup(a->port_id, c->node.nb_ctx, 1024,
				   c->mtu == 1500 ? 0 : c->mtu, a->pool);
	if (ret != 0) {
		fprintf(stderr, "port %u setup: %s\n", a->port_id, strerror(-ret));
		return ret;
	}
	/* an initiator needs its peer now; a server polls and lets peers come and go */
	if (c->role == ROLE_INITIATOR) {
		ret = wait_link(a->port_id, 10000);
		if (ret != 0) {
			fprintf(stderr, "port %u: link did not come up within 10 s\n", a->port_id);
			return ret;
		}
	}
	ret = amrma_net_ethdev_open(&a->dev, a->port_id, c->node.nb_ctx);
	if (ret != 0)
		return ret;
	/* some ports keep their MTU (net_memif has no MTU setting): frames follow the port */
	if (a->dev.mtu != c->mtu)
		fprintf(stderr, "port %u: MTU %u configured, the port keeps %u: frames use %u\n",
			a->port_id, c->mtu, a->dev.mtu, a->dev.mtu);
	amrma_net_steer(&a->dev, c->node.udp_base);
	c->node.dev = &a->dev;
	c->node.pool = a->pool;
	ret = amrma_node_create(&c->node, &a->node);
	if (ret != 0) {
		fprintf(stderr, "node create: %s\n", strerror(-ret));
		return ret;
	}
	for (i = 0; i < c->nb_peer; i++) {
		ret = amrma_node_add_peer(a->node, c->peer[i].id, &c->peer[i].mac,
					  c->peer[i].ip, c->peer[i].nb_ctx);
		if (ret != 0) {
			fprintf(stderr, "peer %u: %s\n", c->peer[i].id, strerror(-ret));
			return ret;
		}
	}
	app_register_workloads(a->node);
	return app_rma_setup(a);
}

void
app_teardown(struct app *a)
{
	app_telemetry_detach();	/* telemetry threads read the node and the engine */
	app_rma_teardown(a);
	amrma_node_destroy(a->node);	/* fails what is still in flight */
	a->node = NULL;
	while (a->nb_abandoned != 0)
		rte_free(a->abandoned[--a->nb_abandoned]);
	amrma_net_close(&a->dev);
	rte_eth_dev_stop(a->port_id);
	rte_eth_dev_close(a->port_id);
	rte_mempool_free(a->pool);
}

static void
print_one(const char *name, uint64_t v, void *arg)
{
	if (v != 0)
		printf("%s%-28s %" PRIu64 "\n", (const char *)arg, name, v);
}

void
app_print_stats(const struct amrma_node *node, const char *prefix)
{
	struct amrma_am_stats st;

	amrma_node_stats_get(node, &st);
	amrma_am_stats_foreach(&st, print_one, (void *)(uintptr_t)prefix);
}
