/* SPDX-License-Identifier: BSD-3-Clause */
/* ethdev backend of the transport ops table. */

#include <errno.h>

#include <rte_ethdev.h>
#include <rte_flow.h>
#include <rte_log.h>

#include "amrma_net.h"

RTE_LOG_REGISTER(amrma_net_logtype, lib.amrma.net, NOTICE);
#define NET_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, amrma_net_logtype, "amrma_net: " fmt "\n", ##__VA_ARGS__)

static uint16_t
ethdev_rx(struct amrma_net_dev *dev, uint16_t queue, struct rte_mbuf **pkts, uint16_t n)
{
	return rte_eth_rx_burst(dev->port_id, queue, pkts, n);
}

static uint16_t
ethdev_tx(struct amrma_net_dev *dev, uint16_t queue, struct rte_mbuf **pkts, uint16_t n)
{
	return rte_eth_tx_burst(dev->port_id, queue, pkts, n);
}

/*
 * rte_eth_tx_done_cleanup() where the PMD has it; otherwise an empty burst, which runs
 * the PMD's TX path with nothing to send: net_memif's zero-copy TX frees the frames its
 * peer has consumed there.
 */
static void
ethdev_tx_cleanup(struct amrma_net_dev *dev, uint16_t queue)
{
	struct rte_mbuf *none[1];

	if (!dev->no_tx_done_cleanup) {
		if (rte_eth_tx_done_cleanup(dev->port_id, queue, 0) != -ENOTSUP)
			return;
		dev->no_tx_done_cleanup = true;	/* the PMD's answer: it does not change */
	}
	rte_eth_tx_burst(dev->port_id, queue, none, 0);
}

static bool
ethdev_link_up(struct amrma_net_dev *dev)
{
	struct rte_eth_link link;

	return rte_eth_link_get_nowait(dev->port_id, &link) == 0 &&
	       link.link_status == RTE_ETH_LINK_UP;
}

/* Destroy the rules amrma_net_steer() created, and only those: the port is the host's. */
static void
unsteer(struct amrma_net_dev *dev)
{
	struct rte_flow_error err;

	while (dev->nb_flows > 0) {
		dev->nb_flows--;
		if (rte_flow_destroy(dev->port_id, dev->flows[dev->nb_flows], &err) != 0)
			NET_LOG(WARNING, "port %u: rte_flow rule not destroyed (%s)",
				dev->port_id, err.message ? err.message : "?");
	}
	dev->hw_steering = false;
}

static void
ethdev_close(struct amrma_net_dev *dev)
{
	unsteer(dev);
}

static const struct amrma_net_ops ethdev_ops = {
	.name = "ethdev",
	.rx_burst = ethdev_rx,
	.tx_burst = ethdev_tx,
	.tx_cleanup = ethdev_tx_cleanup,
	.link_up = ethdev_link_up,
	.close = ethdev_close,
};

/* Ports whose frames go from one process's memory to another's and nowhere else. */
static bool
is_memory_link(const char *driver)
{
	static const char *const names[] = { "net_memif", "net_ring" };
	unsigned int i;

	for (i = 0; driver != NULL && i < RTE_DIM(names); i++)
		if (strcmp(driver, names[i]) == 0)
			return true;
	return false;
}

int
amrma_net_ethdev_open(struct amrma_net_dev *dev, uint16_t port_id, uint16_t nb_queues)
{
	struct rte_eth_dev_info info;
	struct rte_eth_conf conf;
	uint16_t mtu;
	int ret;

	if (dev == NULL || nb_queues == 0 || nb_queues > AMRMA_WIRE_MAX_CTX)
		return -EINVAL;
	if (!rte_eth_dev_is_valid_port(port_id))
		return -ENODEV;
	ret = rte_eth_dev_info_get(port_id, &info);
	if (ret != 0)
		return ret;
	if (info.nb_rx_queues < nb_queues || info.nb_tx_queues < nb_queues)
		return -EINVAL;
	ret = rte_eth_dev_conf_get(port_id, &conf);
	if (ret != 0)
		return ret;

	memset(dev, 0, sizeof(*dev));
	dev->ops = &ethdev_ops;
	dev->ethdev = true;
	dev->port_id = port_id;
	dev->nb_queues = nb_queues;
	dev->socket_id = rte_eth_dev_socket_id(port_id);
	if (dev->socket_id < 0)
		dev->socket_id = 0;
	if (rte_eth_dev_get_mtu(port_id, &mtu) != 0 || mtu < 576)
		mtu = RTE_ETHER_MTU;
	dev->mtu = mtu;
	rte_eth_macaddr_get(port_id, &dev->mac);
	dev->rx_csum_offload = (conf.rxmode.offloads &
		(RTE_ETH_RX_OFFLOAD_IPV4_CKSUM | RTE_ETH_RX_OFFLOAD_UDP_CKSUM)) ==
		(RTE_ETH_RX_OFFLOAD_IPV4_CKSUM | RTE_ETH_RX_OFFLOAD_UDP_CKSUM);
	dev->tx_csum_offload = (conf.txmode.offloads &
		(RTE_ETH_TX_OFFLOAD_IPV4_CKSUM | RTE_ETH_TX_OFFLOAD_UDP_CKSUM)) ==
		(RTE_ETH_TX_OFFLOAD_IPV4_CKSUM | RTE_ETH_TX_OFFLOAD_UDP_CKSUM);
	dev->memory_link = is_memory_link(info.driver_name);
	/* its control thread unmaps the rings when the peer disconnects, whatever a
	 * poll is doing in them */
	dev->link_per_peer = info.driver_name != NULL &&
			     strcmp(info.driver_name, "net_memif") == 0;
	dev->tx_retries = 8;	/* then back-pressure: unsent frames wait for the next poll */
	return 0;
}

int
amrma_net_port_setup(uint16_t port_id, uint16_t nb_queues, uint16_t nb_desc,
		     uint16_t mtu, struct rte_mempool *pool)
{
	const uint64_t rx_csum = RTE_ETH_RX_OFFLOAD_IPV4_CKSUM | RTE_ETH_RX_OFFLOAD_UDP_CKSUM;
	const uint64_t tx_csum = RTE_ETH_TX_OFFLOAD_IPV4_CKSUM | RTE_ETH_TX_OFFLOAD_UDP_CKSUM;
	struct rte_eth_conf conf = { 0 };
	struct rte_eth_dev_info info;
	int socket, ret;
	uint16_t q;

	if (!rte_eth_dev_is_valid_port(port_id))
		return -ENODEV;
	ret = rte_eth_dev_info_get(port_id, &info);
	if (ret != 0)
		return ret;
	if (nb_queues == 0 || nb_queues > info.max_rx_queues || nb_queues > info.max_tx_queues)
		return -EINVAL;
	if ((info.rx_offload_capa & rx_csum) == rx_csum)
		conf.rxmode.offloads |= rx_csum;
	if ((info.tx_offload_capa & tx_csum) == tx_csum)
		conf.txmode.offloads |= tx_csum;
	if (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS)
		conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
	ret = rte_eth_dev_configure(port_id, nb_queues, nb_queues, &conf);
	if (ret != 0)
		return ret;
	if (mtu != 0) {
		ret = rte_eth_dev_set_mtu(port_id, mtu);
		if (ret != 0 && ret != -ENOTSUP)
			return ret;
	}
	socket = rte_eth_dev_socket_id(port_id);
	if (socket < 0)
		socket = (int)rte_socket_id();
	for (q = 0; q < nb_queues; q++) {
		ret = rte_eth_rx_queue_setup(port_id, q, nb_desc, socket, NULL, pool);
		if (ret != 0)
			return ret;
		ret = rte_eth_tx_queue_setup(port_id, q, nb_desc, socket, NULL);
		if (ret != 0)
			return ret;
	}
	ret = rte_eth_dev_start(port_id);
	if (ret != 0)
		return ret;
	/* allmulticast/promiscuous are best effort: virtual ports may not support them */
	rte_eth_promiscuous_enable(port_id);
	return 0;
}

int
amrma_net_steer(struct amrma_net_dev *dev, uint16_t udp_base)
{
	struct rte_flow_attr attr = { .ingress = 1 };
	struct rte_flow_item_udp spec = { 0 }, mask = { 0 };
	struct rte_flow_item pattern[] = {
		{ .type = RTE_FLOW_ITEM_TYPE_ETH },
		{ .type = RTE_FLOW_ITEM_TYPE_IPV4 },
		{ .type = RTE_FLOW_ITEM_TYPE_UDP, .spec = &spec, .mask = &mask },
		{ .type = RTE_FLOW_ITEM_TYPE_END },
	};
	struct rte_flow_action_queue queue = { 0 };
	struct rte_flow_action actions[] = {
		{ .type = RTE_FLOW_ACTION_TYPE_QUEUE, .conf = &queue },
		{ .type = RTE_FLOW_ACTION_TYPE_END },
	};
	struct rte_flow_error err = { .message = NULL };
	struct rte_flow *flow;
	uint16_t i;

	unsteer(dev);
	if (dev->nb_queues < 2)
		return 0;	/* one queue: nothing to steer */
	mask.hdr.dst_port = RTE_BE16(0xffff);
	for (i = 0; i < dev->nb_queues; i++) {
		spec.hdr.dst_port = rte_cpu_to_be_16(udp_base + i);
		queue.index = i;
		flow = NULL;
		if (rte_flow_validate(dev->port_id, &attr, pattern, actions, &err) == 0)
			flow = rte_flow_create(dev->port_id, &attr, pattern, actions, &err);
		if (flow == NULL) {
			unsteer(dev);
			NET_LOG(INFO, "port %u: no rte_flow UDP steering (%s): contexts "
				"redistribute in software", dev->port_id,
				err.message ? err.message : "unsupported");
			return 0;
		}
		dev->flows[dev->nb_flows++] = flow;
	}
	dev->hw_steering = true;
	NET_LOG(INFO, "port %u: UDP ports %u-%u steered to queues 0-%u by rte_flow",
		dev->port_id, udp_base, udp_base + dev->nb_queues - 1, dev->nb_queues - 1);
	return 1;
}
