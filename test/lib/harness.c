/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_service.h>

#include "eal_rundir.h"
#include "harness.h"

static bool eal_done;
static unsigned int h_seq;
static void
eal_cleanup(void)
{
	rte_eal_cleanup();
}

void
h_eal_init(const char *prefix)
{
	h_eal_init_vdev(prefix, NULL);
}

void
h_eal_init_vdev(const char *prefix, const char *vdev)
{
	h_eal_init_lcores(prefix, vdev, "0", NULL);
}

void
h_eal_init_lcores(const char *prefix, const char *vdev, const char *lcores,
		  const char *service_lcores)
{
	char pfx[64], vd[64], lc[64], sl[64];
	char *argv[] = { "test", "--no-huge", "--no-pci", "--no-shconf", "-m", "1024",
			 "--file-prefix", pfx, "--log-level", "lib.eal:error",
			 "--log-level", "lib.amrma.*:error", "-l", lc, "-S", sl, "--vdev", vd,
			 NULL };
	int argc = 0;
	char *args[RTE_DIM(argv)];
	unsigned int i;

	if (eal_done)
		return;
	snprintf(pfx, sizeof(pfx), "%s_%d", prefix, (int)getpid());
	snprintf(vd, sizeof(vd), "%s", vdev ? vdev : "");
	snprintf(lc, sizeof(lc), "%s", lcores);
	snprintf(sl, sizeof(sl), "%s", service_lcores ? service_lcores : "");
	/* the options whose value is not given are left out */
	for (i = 0; argv[i] != NULL; i++) {
		if ((argv[i + 1] == sl && service_lcores == NULL) ||
		    (argv[i + 1] == vd && vdev == NULL)) {
			i++;
			continue;
		}
		args[argc++] = argv[i];
	}
	args[argc] = NULL;
	if (rte_eal_init(argc, args) < 0) {
		fprintf(stderr, "rte_eal_init failed\n");
		exit(1);
	}
	eal_done = true;
	atexit(eal_cleanup);
	eal_rundir_cleanup_at_exit();	/* registered last: runs first, then EAL cleanup */
}

static inline uint8_t
fill_byte(size_t i, uint32_t seed)
{
	return (uint8_t)((i * 2654435761u + seed) >> 13);
}

void
h_fill(uint8_t *p, size_t len, uint32_t seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = fill_byte(i, seed);
}

bool
h_is_zero(const uint8_t *p, size_t len)
{
	return len == 0 || (p[0] == 0 && memcmp(p, p + 1, len - 1) == 0);
}

void
h_count_ok(struct amrma_ctx *ctx, void *arg, int status)
{
	RTE_SET_USED(ctx);
	if (status == 0)
		(*(int *)arg)++;
}

int
h_nothing_handler(struct amrma_ctx *ctx, amrma_am_token_t tok, const struct amrma_am_msg *msg,
		  void *arg)
{
	RTE_SET_USED(ctx);
	RTE_SET_USED(tok);
	RTE_SET_USED(msg);
	RTE_SET_USED(arg);
	return 0;
}

long
h_fill_diff(const uint8_t *p, size_t len, uint32_t seed, size_t at)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != fill_byte(i + at, seed))
			return (long)i;
	return -1;
}

int
h_eal_init_service(const char *prefix)
{
	char lcores[16], svc[8];
	int ret;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		printf("SKIP: needs two CPUs (a service lcore beside the test's)\n");
		return 77;
	}
	snprintf(lcores, sizeof(lcores), "0-%u", H_SVC_LCORE);
	snprintf(svc, sizeof(svc), "%u", H_SVC_LCORE);
	h_eal_init_lcores(prefix, NULL, lcores, svc);
	ret = rte_service_lcore_start(H_SVC_LCORE);	/* EAL may have started it */
	if (ret != 0 && ret != -EALREADY) {
		printf("cannot start service lcore %u: %d\n", H_SVC_LCORE, ret);
		return 1;
	}
	return 0;
}

int
h_eal_init_busy_service(const char *prefix)
{
	if (getenv("AMRMA_UNDER_VALGRIND") != NULL) {
		printf("SKIP: busy lcores under valgrind\n");
		return 77;
	}
	return h_eal_init_service(prefix);
}

void
h_conf(struct amrma_node_conf *c)
{
	amrma_node_conf_defaults(c);
	/* small first timeout so loss recovers fast, a generous budget so a busy shared
	 * machine stalling this thread never looks like a dead peer */
	c->rto_us = 1000;
	c->rto_max_us = 32000;
	c->max_retries = 12;
	c->nb_mbufs = 4095;
	/* net_ring cannot corrupt frames, so auto would trust it; the fault injection
	 * makes it a wire that can */
	c->csum = AMRMA_CSUM_ON;
}

static uint64_t
rng_next(uint64_t *s)
{
	/* xorshift64*: small, seeded, good enough to pick faults */
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * UINT64_C(2685821657736338717);
}

static bool
chance(struct h_fault *f, uint32_t pct)
{
	return pct != 0 && rng_next(&f->rng) % 100 < pct;
}

/* Copy m into two chained segments cut at a random offset behind the headers, as a port
 * with small RX buffers delivers it; m itself may be the sender's held frame. */
static struct rte_mbuf *
split_frame(struct h_fault *f, struct rte_mbuf *m)
{
	const uint32_t min = AMRMA_WIRE_HDR_LEN + 8 * AMRMA_WIRE_MAX_ARGS;
	uint32_t len = rte_pktmbuf_pkt_len(m), off;
	struct rte_mbuf *a, *b;
	char *pa, *pb;

	if (m->nb_segs != 1 || len <= min + 1)
		return m;
	off = min + (uint32_t)(rng_next(&f->rng) % (len - min - 1)) + 1;
	a = rte_pktmbuf_alloc(m->pool);
	b = rte_pktmbuf_alloc(m->pool);
	pa = a ? rte_pktmbuf_append(a, (uint16_t)off) : NULL;
	pb = b ? rte_pktmbuf_append(b, (uint16_t)(len - off)) : NULL;
	if (pa == NULL || pb == NULL || rte_pktmbuf_chain(a, b) != 0) {
		rte_pktmbuf_free(a);
		rte_pktmbuf_free(b);
		return m;
	}
	memcpy(pa, rte_pktmbuf_mtod(m, char *), off);
	memcpy(pb, rte_pktmbuf_mtod_offset(m, char *, off), len - off);
	a->ol_flags = m->ol_flags;
	rte_pktmbuf_free(m);
	f->split++;
	return a;
}

static uint16_t
fault_rx(uint16_t port, uint16_t queue, struct rte_mbuf **pkts, uint16_t n,
	 uint16_t max, void *arg)
{
	struct h_fault *f = arg;
	struct rte_mbuf *out[64];
	uint16_t i, k = 0;

	RTE_SET_USED(port);
	RTE_SET_USED(queue);
	if (f->held != NULL && k < RTE_DIM(out)) {
		out[k++] = f->held;
		f->held = NULL;
	}
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];

		if (f->blackhole || chance(f, f->drop_pct)) {
			f->dropped++;
			rte_pktmbuf_free(m);
			continue;
		}
		if (chance(f, f->corrupt_pct)) {
			/* the frame may be shared with the sender's retransmit copy: copy it */
			struct rte_mbuf *c = rte_pktmbuf_copy(m, m->pool, 0, UINT32_MAX);

			rte_pktmbuf_free(m);
			if (c == NULL)
				continue;
			uint32_t off = (uint32_t)(rng_next(&f->rng) % rte_pktmbuf_data_len(c));
			rte_pktmbuf_mtod(c, uint8_t *)[off] ^=
				(uint8_t)(1u << (rng_next(&f->rng) % 8));
			m = c;
			f->corrupted++;
		}
		if (chance(f, f->split_pct))
			m = split_frame(f, m);
		if (f->held == NULL && chance(f, f->reorder_pct)) {
			f->held = m;
			f->reordered++;
			continue;
		}
		if (k < RTE_DIM(out))
			out[k++] = m;
		else
			rte_pktmbuf_free(m);
		if (chance(f, f->dup_pct) && k < RTE_DIM(out)) {
			struct rte_mbuf *seg;

			for (seg = m; seg != NULL; seg = seg->next)
				rte_mbuf_refcnt_update(seg, 1);
			out[k++] = m;
			f->duplicated++;
		}
	}
	if (k > max) {
		rte_pktmbuf_free_bulk(out + max, k - max);
		k = max;
	}
	memcpy(pkts, out, k * sizeof(*pkts));
	return k;
}

static int
node_make(struct harness *h, unsigned int i)
{
	struct amrma_node_conf c = h->conf;

	c.node_id = (uint16_t)i;
	c.nb_ctx = (uint16_t)h->nb_q;
	c.ip = h->n[i].ip;
	c.dev = &h->n[i].dev;
	c.pool = h->pool;
	return amrma_node_create(&c, &h->n[i].node);
}

int
h_create(struct harness *h, unsigned int nb_nodes, unsigned int nb_q,
	 const struct amrma_node_conf *conf)
{
	unsigned int i, j, q;
	int ret;

	memset(h, 0, sizeof(*h));
	h->nb_nodes = nb_nodes;
	h->nb_q = nb_q;
	h_seq++;
	{
		char name[64];

		snprintf(name, sizeof(name), "h%u_pool", h_seq);
		h->pool = rte_pktmbuf_pool_create(name, 16383, 0, 0,
						  RTE_MBUF_DEFAULT_BUF_SIZE, 0);
		if (h->pool == NULL)
			return -ENOMEM;
	}
	for (i = 0; i < nb_nodes; i++) {
		struct h_node *hn = &h->n[i];
		struct amrma_node_conf c;
		char name[64];

		for (q = 0; q < nb_q; q++) {
			snprintf(name, sizeof(name), "h%u_rx%u_%u", h_seq, i, q);
			hn->rx[q] = rte_ring_create(name, 2048, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
			snprintf(name, sizeof(name), "h%u_tx%u_%u", h_seq, i, q);
			hn->tx[q] = rte_ring_create(name, 2048, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
			if (hn->rx[q] == NULL || hn->tx[q] == NULL)
				return -ENOMEM;
		}
		snprintf(name, sizeof(name), "net_ring_h%u_%u", h_seq, i);
		ret = rte_eth_from_rings(name, hn->rx, nb_q, hn->tx, nb_q, 0);
		if (ret < 0)
			return ret;
		hn->port = (uint16_t)ret;
		{
			struct rte_ether_addr mac = {
				.addr_bytes = { 0x02, 0, 0, 0, (uint8_t)h_seq, (uint8_t)(i + 1) } };

			/* net_ring may not implement it: then we use the MAC it has */
			rte_eth_dev_default_mac_addr_set(hn->port, &mac);
		}
		ret = amrma_net_port_setup(hn->port, (uint16_t)nb_q, 1024, 0, h->pool);
		if (ret != 0)
			return ret;
		ret = amrma_net_ethdev_open(&hn->dev, hn->port, (uint16_t)nb_q);
		if (ret != 0)
			return ret;
		/* 198.18.0.0/15: the benchmarking range, never routed anywhere */
		hn->ip = rte_cpu_to_be_32((198u << 24) | (18u << 16) | (i + 1));
		if (conf != NULL)
			c = *conf;
		else
			h_conf(&c);
		h->conf = c;
		ret = node_make(h, i);
		if (ret != 0)
			return ret;
	}
	for (i = 0; i < nb_nodes; i++)
		for (j = 0; j < nb_nodes; j++)
			if (i != j) {
				ret = amrma_node_add_peer(h->n[i].node, (uint16_t)j,
							  &h->n[j].dev.mac,
							  h->n[j].ip, (uint16_t)nb_q);
				if (ret != 0)
					return ret;
			}
	return 0;
}

int
h_restart_node(struct harness *h, unsigned int i)
{
	unsigned int j;
	int ret;

	amrma_node_destroy(h->n[i].node);
	ret = node_make(h, i);
	for (j = 0; ret == 0 && j < h->nb_nodes; j++)
		if (j != i)
			ret = amrma_node_add_peer(h->n[i].node, (uint16_t)j, &h->n[j].dev.mac,
						  h->n[j].ip, (uint16_t)h->nb_q);
	return ret;
}

void
h_faults(struct harness *h, unsigned int i, uint32_t drop, uint32_t dup,
	 uint32_t reorder, uint32_t corrupt, uint64_t seed)
{
	struct h_node *hn = &h->n[i];
	unsigned int q;

	hn->fault.drop_pct = drop;
	hn->fault.dup_pct = dup;
	hn->fault.reorder_pct = reorder;
	hn->fault.corrupt_pct = corrupt;
	hn->fault.rng = seed | 1;
	for (q = 0; q < h->nb_q; q++)
		if (hn->cb[q] == NULL)
			hn->cb[q] = rte_eth_add_rx_callback(hn->port, (uint16_t)q, fault_rx,
							    &hn->fault);
}

int
h_switch(struct harness *h)
{
	struct rte_mbuf *pkts[64];
	unsigned int i, q, k, work = 0;

	for (i = 0; i < h->nb_nodes; i++)
		for (q = 0; q < h->nb_q; q++) {
			unsigned int n = rte_ring_sc_dequeue_burst(h->n[i].tx[q], (void **)pkts,
								   RTE_DIM(pkts), NULL);

			work += n;
			for (k = 0; k < n; k++) {
				const struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod_offset(pkts[k],
					const struct rte_ipv4_hdr *, sizeof(struct rte_ether_hdr));
				unsigned int j;

				for (j = 0; j < h->nb_nodes; j++)
					if (rte_pktmbuf_data_len(pkts[k]) >= 34 &&
					    ip->dst_addr == h->n[j].ip)
						break;
				/* net_ring keeps the queue a frame was sent on */
				if (j == h->nb_nodes ||
				    rte_ring_sp_enqueue(h->n[j].rx[q], pkts[k]) != 0)
					rte_pktmbuf_free(pkts[k]);
			}
		}
	return (int)work;
}

int
h_step(struct harness *h)
{
	int work = h_switch(h);
	unsigned int i;

	for (i = 0; i < h->nb_nodes; i++) {
		if (h->n[i].polled_elsewhere)
			continue;
		if (h->n[i].frozen) {
			/* a hung process: frames to it pile up and are lost */
			unsigned int q;
			struct rte_mbuf *m;

			for (q = 0; q < h->nb_q; q++)
				while (rte_ring_sc_dequeue(h->n[i].rx[q], (void **)&m) == 0)
					rte_pktmbuf_free(m);
			continue;
		}
		work += amrma_node_poll(h->n[i].node, 32);
	}
	return work;
}

bool
h_run_until(struct harness *h, bool (*cond)(void *), void *arg, unsigned int timeout_ms)
{
	return H_UNTIL(cond(arg), timeout_ms, h_step(h));
}

void
h_run_for(struct harness *h, unsigned int ms)
{
	H_UNTIL(false, ms, h_step(h));
}

int
h_capture_handler(struct amrma_ctx *ctx, amrma_am_token_t tok, const struct amrma_am_msg *msg,
		  void *arg)
{
	struct h_capture *c = arg;

	RTE_SET_USED(ctx);
	RTE_SET_USED(tok);
	if (c->n < H_CAPTURE_MAX) {
		c->nargs[c->n] = msg->nargs;
		memset(c->args[c->n], 0, sizeof(c->args[0]));
		memcpy(c->args[c->n], msg->args,
		       RTE_MIN(msg->nargs, AMRMA_WIRE_MAX_ARGS) * sizeof(msg->args[0]));
	}
	c->n++;
	return c->ret;
}

static void
drain(struct rte_ring *r)
{
	struct rte_mbuf *m;

	while (r != NULL && rte_ring_dequeue(r, (void **)&m) == 0)
		rte_pktmbuf_free(m);
}

unsigned int
h_mbufs_in_use(const struct harness *h)
{
	unsigned int i, spares = 0;

	/* the mbufs each context keeps for replies are not held frames */
	for (i = 0; i < h->nb_nodes; i++) {
		struct amrma_am_stats st;

		if (h->n[i].node == NULL ||
		    amrma_ctx_pool(amrma_node_ctx(h->n[i].node, 0)) != h->pool)
			continue;
		amrma_node_stats_get(h->n[i].node, &st);
		spares += (unsigned int)st.reply_spares;
	}
	return rte_mempool_in_use_count(h->pool) - spares;
}

void
h_destroy(struct harness *h)
{
	unsigned int i, q;

	for (i = 0; i < h->nb_nodes; i++) {
		struct h_node *hn = &h->n[i];

		if (hn->fault.held != NULL)
			rte_pktmbuf_free(hn->fault.held);
		hn->fault.held = NULL;
		for (q = 0; q < h->nb_q; q++) {
			drain(hn->rx[q]);
			drain(hn->tx[q]);
		}
		amrma_node_destroy(hn->node);
	}
	for (i = 0; i < h->nb_nodes; i++) {
		struct h_node *hn = &h->n[i];

		/* closing a port keeps its callbacks: a later port with this id would run
		 * ours, pointing into a harness that no longer exists */
		for (q = 0; q < h->nb_q; q++)
			if (hn->cb[q] != NULL &&
			    rte_eth_remove_rx_callback(hn->port, (uint16_t)q, hn->cb[q]) == 0)
				rte_free((void *)(uintptr_t)hn->cb[q]);	/* nobody polls now */
		rte_eth_dev_stop(hn->port);
		rte_eth_dev_close(hn->port);
		for (q = 0; q < h->nb_q; q++) {
			drain(hn->rx[q]);
			drain(hn->tx[q]);
			rte_ring_free(hn->rx[q]);
			rte_ring_free(hn->tx[q]);
		}
	}
	rte_mempool_free(h->pool);
	memset(h, 0, sizeof(*h));
}
