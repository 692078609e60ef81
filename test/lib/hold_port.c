/* SPDX-License-Identifier: BSD-3-Clause */
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "hold_port.h"

#define HOLD_MAX 4096

bool hold_stubborn;
unsigned int hold_cleanups;
static struct rte_mbuf *held[HOLD_MAX];
static unsigned int nb_held;
static const struct amrma_net_ops *real_ops;
static bool real_ethdev;

static uint16_t
hold_rx(struct amrma_net_dev *dev, uint16_t q, struct rte_mbuf **pkts, uint16_t n)
{
	return rte_eth_rx_burst(dev->port_id, q, pkts, n);
}

static void
ref_chain(struct rte_mbuf *m, int16_t v)
{
	for (; m != NULL; m = m->next)
		rte_mbuf_refcnt_update(m, v);
}

static uint16_t
hold_tx(struct amrma_net_dev *dev, uint16_t q, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t i, sent;

	/* our reference first: once sent, the peer frees the port's one at any time */
	for (i = 0; i < n && nb_held + i < HOLD_MAX; i++)
		ref_chain(pkts[i], 1);
	n = i;
	sent = rte_eth_tx_burst(dev->port_id, q, pkts, n);
	for (i = 0; i < n; i++) {
		if (i < sent)
			held[nb_held++] = pkts[i];
		else
			ref_chain(pkts[i], -1);	/* still the caller's */
	}
	return sent;
}

void
hold_port_release(void)
{
	while (nb_held > 0)
		rte_pktmbuf_free(held[--nb_held]);
}

static void
hold_cleanup(struct amrma_net_dev *dev, uint16_t q)
{
	RTE_SET_USED(dev);
	RTE_SET_USED(q);
	hold_cleanups++;
	if (!hold_stubborn)
		hold_port_release();
}

static const struct amrma_net_ops hold_ops = {
	.name = "hold",
	.rx_burst = hold_rx,
	.tx_burst = hold_tx,
	.tx_cleanup = hold_cleanup,
};

void
hold_port_attach(struct amrma_net_dev *dev)
{
	real_ops = dev->ops;
	real_ethdev = dev->ethdev;
	dev->ops = &hold_ops;
	dev->ethdev = false;	/* the library would call the ethdev directly */
	hold_stubborn = false;
	hold_cleanups = 0;
}

void
hold_port_detach(struct amrma_net_dev *dev)
{
	hold_stubborn = false;
	hold_port_release();
	if (real_ops == NULL)
		return;
	dev->ops = real_ops;
	dev->ethdev = real_ethdev;
	real_ops = NULL;
}

unsigned int
hold_nb_held(void)
{
	return nb_held;
}

unsigned int
hold_refs_into(const uint8_t *p, uint64_t len)
{
	unsigned int i, n = 0;

	for (i = 0; i < nb_held; i++) {
		const struct rte_mbuf *m;

		for (m = held[i]; m != NULL; m = m->next)
			n += RTE_MBUF_HAS_EXTBUF(m) && (const uint8_t *)m->buf_addr >= p &&
			     (const uint8_t *)m->buf_addr < p + len;
	}
	return n;
}
