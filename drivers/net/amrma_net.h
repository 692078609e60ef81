/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef AMRMA_NET_H
#define AMRMA_NET_H

/**
 * @file
 * The transport under the AM core: a small ops table over "something with numbered RX and
 * TX queues that moves mbufs". The ethdev backend works on any DPDK port (net_ring,
 * net_memif, net_tap, net_af_packet, real NICs). The AM core only ever calls these ops.
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "amrma_wire.h"

#ifdef __cplusplus
extern "C" {
#endif

struct amrma_net_dev;

/** Transport operations. */
struct amrma_net_ops {
	const char *name;
	uint16_t (*rx_burst)(struct amrma_net_dev *dev, uint16_t queue,
			     struct rte_mbuf **pkts, uint16_t n);
	uint16_t (*tx_burst)(struct amrma_net_dev *dev, uint16_t queue,
			     struct rte_mbuf **pkts, uint16_t n);
	/** Free the sent frames the queue still holds (NULL: it holds none). */
	void (*tx_cleanup)(struct amrma_net_dev *dev, uint16_t queue);
	/** Whether the link is up now, without waiting (NULL: always up). */
	bool (*link_up)(struct amrma_net_dev *dev);
	void (*close)(struct amrma_net_dev *dev);
};

/** One transport instance: a port and what the AM core needs to know about it. */
struct amrma_net_dev {
	const struct amrma_net_ops *ops;
	uint16_t port_id;
	uint16_t nb_queues;		/**< one RX + one TX queue per context */
	uint16_t mtu;			/**< IP MTU: largest IPv4 datagram */
	int socket_id;			/**< NUMA node of the port */
	struct rte_ether_addr mac;
	bool hw_steering;		/**< rte_flow rules steer UDP ports to queues */
	bool rx_csum_offload;		/**< RX reports IPv4/L4 checksum status */
	bool tx_csum_offload;		/**< TX computes IPv4/UDP checksums */
	bool memory_link;		/**< frames only cross shared memory (net_memif,
					 *   net_ring): nothing on the way can corrupt them */
	bool link_per_peer;		/**< the link exists while its one peer is attached,
					 *   and the peer's leaving takes the port's memory
					 *   away under a poll that runs meanwhile (net_memif
					 *   of DPDK 22.11): see amrma_node_leave() */
	unsigned int tx_retries;	/**< extra tries when a TX queue is full */
	bool no_tx_done_cleanup;	/**< rte_eth_tx_done_cleanup() said -ENOTSUP */
	bool ethdev;			/**< the ethdev backend: bursts go straight to the
					 *   port, without the ops table's indirect call */
	uint16_t nb_flows;		/**< rules amrma_net_steer() created */
	struct rte_flow *flows[AMRMA_WIRE_MAX_CTX];	/**< destroyed on close, the
							 *   host's other rules kept */
};

/**
 * Attach the ethdev backend to a port that the host application already configured and
 * started with at least nb_queues RX and TX queues. Queue i belongs to context i.
 *
 * @return 0, or -EINVAL / -ENODEV.
 */
int amrma_net_ethdev_open(struct amrma_net_dev *dev, uint16_t port_id, uint16_t nb_queues);

/**
 * Helper for hosts that let amrma own the port: configure nb_queues RX/TX queues with
 * nb_desc descriptors each on the port's NUMA node, enable the checksum offloads the port
 * has, set the MTU (0 keeps the default), start it and enable promiscuous mode.
 *
 * @return 0 or a negative errno.
 */
int amrma_net_port_setup(uint16_t port_id, uint16_t nb_queues, uint16_t nb_desc,
			 uint16_t mtu, struct rte_mempool *pool);

/**
 * Install rte_flow rules "UDP destination port == udp_base + i -> queue i", in place of
 * those an earlier call installed. Ports without rte_flow keep working: the AM core
 * redistributes in software. Only these rules are ever destroyed (when one cannot be
 * created, and on close): the port's other rules are the host application's.
 *
 * @return 1 if hardware steering is active, 0 if not available.
 */
int amrma_net_steer(struct amrma_net_dev *dev, uint16_t udp_base);

/** Receive up to n frames on a queue. */
static inline uint16_t
amrma_net_rx(struct amrma_net_dev *dev, uint16_t queue, struct rte_mbuf **pkts, uint16_t n)
{
	/* every poll comes here, idle ones too: the common backend costs no call */
	if (likely(dev->ethdev))
		return rte_eth_rx_burst(dev->port_id, queue, pkts, n);
	return dev->ops->rx_burst(dev, queue, pkts, n);
}

/* One TX burst through the backend. */
static inline uint16_t
amrma_net_tx_once(struct amrma_net_dev *dev, uint16_t queue, struct rte_mbuf **pkts,
		  uint16_t n)
{
	if (likely(dev->ethdev))
		return rte_eth_tx_burst(dev->port_id, queue, pkts, n);
	return dev->ops->tx_burst(dev, queue, pkts, n);
}

/**
 * Transmit n frames, retrying up to dev->tx_retries times while the queue is full.
 *
 * @return frames handed to the port; the caller still owns pkts[ret..n-1].
 */
static inline uint16_t
amrma_net_tx(struct amrma_net_dev *dev, uint16_t queue, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t sent = amrma_net_tx_once(dev, queue, pkts, n);
	unsigned int tries = 0;

	while (unlikely(sent < n) && tries++ < dev->tx_retries)
		sent += amrma_net_tx_once(dev, queue, pkts + sent, n - sent);
	return sent;
}

/**
 * Make the TX queue free the frames it has sent but still holds. Some ports keep them
 * until a later TX call (net_memif in zero-copy mode frees what its peer consumed only
 * then); whoever waits for the last reference to a frame's memory calls this.
 */
static inline void
amrma_net_tx_cleanup(struct amrma_net_dev *dev, uint16_t queue)
{
	if (dev->ops->tx_cleanup != NULL)
		dev->ops->tx_cleanup(dev, queue);
}

/** Whether the port's link is up (ports that cannot tell count as up). */
static inline bool
amrma_net_link_up(struct amrma_net_dev *dev)
{
	return dev->ops->link_up == NULL || dev->ops->link_up(dev);
}

/** Release the backend (does not stop a port the host owns). */
static inline void
amrma_net_close(struct amrma_net_dev *dev)
{
	if (dev->ops && dev->ops->close)
		dev->ops->close(dev);
	dev->ops = NULL;
}

#ifdef __cplusplus
}
#endif

#endif /* AMRMA_NET_H */
