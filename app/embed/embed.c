/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * amrma-embed: how a host application embeds libamrma.
 *
 * The host owns EAL and its ports; amrma only gets opened ports and lcore time. Here two
 * nodes live in one process, joined by a pair of rte_rings turned into net_ring ports:
 *
 *   node 1 (main lcore, amrma_ctx_poll)  --ring a2b-->  node 2 (service lcore)
 *                                        <--ring b2a--
 *
 * Node 2 is polled by an rte_service (amrma_node_service_register) mapped to a service
 * lcore; node 1 is polled by the main lcore, which issues COUNT requests with WINDOW in
 * flight. Each request carries its number and a payload of varying length; node 2's
 * handler replies with the number, a checksum of what it received and the same bytes;
 * node 1 checks all three. Exit 0 when every request came back verified.
 *
 * Only the public API is used: amrma_am.h (and amrma_net.h, which it includes).
 *
 * Usage: amrma-embed [EAL options: two lcores] [-- COUNT [WINDOW]]
 *   e.g. amrma-embed -l 0,1 --no-huge --no-pci --no-shconf -m 256 -- 20000 16
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_ring.h>
#include <rte_service.h>

#include <amrma_am.h>

#define H_REQ 10	/* request handler: checksum and echo */
#define H_REP 11	/* reply handler: verify */
#define NB_DESC 1024

struct req {
	uint64_t seq;
	uint16_t len;
	bool busy;
};

static uint64_t completed, verified, errors;

/* payload of request seq: len bytes that depend on both */
static void
fill(uint8_t *buf, uint64_t seq, uint16_t len)
{
	uint16_t i;

	for (i = 0; i < len; i++)
		buf[i] = (uint8_t)(seq * 31 + i * 7);
}

static uint64_t
fnv1a(const uint8_t *p, uint16_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	uint16_t i;

	for (i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return h;
}

/* node 2, on the service lcore */
static int
on_request(struct amrma_ctx *ctx, amrma_am_token_t tok, const struct amrma_am_msg *msg,
	   void *arg)
{
	uint64_t out[2] = { msg->nargs > 0 ? msg->args[0] : 0, fnv1a(msg->payload, msg->len) };

	(void)arg;
	return amrma_am_reply(ctx, tok, H_REP, out, 2, msg->payload, msg->len, 0);
}

/* node 1, on the main lcore */
static int
on_reply(struct amrma_ctx *ctx, amrma_am_token_t tok, const struct amrma_am_msg *msg,
	 void *arg)
{
	struct req *r = msg->op_arg;
	uint8_t expect[AMRMA_WIRE_MAX_PAYLOAD];

	(void)ctx;
	(void)tok;
	(void)arg;
	if (r == NULL || msg->nargs != 2 || msg->args[0] != r->seq || msg->len != r->len)
		return -EBADMSG;
	fill(expect, r->seq, r->len);
	if (msg->args[1] != fnv1a(expect, r->len) ||
	    (r->len != 0 && memcmp(msg->payload, expect, r->len) != 0))
		return -EBADMSG;
	verified++;
	return 0;
}

static void
on_done(struct amrma_ctx *ctx, void *arg, int status)
{
	struct req *r = arg;

	(void)ctx;
	r->busy = false;
	completed++;
	if (status != 0)
		errors++;
}

/* A net_ring port that receives from rx and sends into tx, set up like any ethdev. */
static int
ring_port(const char *name, struct rte_ring *rx, struct rte_ring *tx, struct rte_mempool *mp)
{
	struct rte_eth_conf conf = { 0 };
	int port = rte_eth_from_rings(name, &rx, 1, &tx, 1, (unsigned int)rte_socket_id());

	if (port < 0)
		return -rte_errno;
	if (rte_eth_dev_configure(port, 1, 1, &conf) != 0 ||
	    rte_eth_rx_queue_setup(port, 0, NB_DESC, rte_socket_id(), NULL, mp) != 0 ||
	    rte_eth_tx_queue_setup(port, 0, NB_DESC, rte_socket_id(), NULL) != 0 ||
	    rte_eth_dev_start(port) != 0)
		return -EIO;
	return port;
}

static int
make_node(uint16_t id, uint16_t port, struct amrma_net_dev *dev, struct rte_mempool *mp,
	  struct amrma_node **node)
{
	struct amrma_node_conf conf;
	int ret = amrma_net_ethdev_open(dev, port, 1);

	if (ret != 0)
		return ret;
	amrma_node_conf_defaults(&conf);
	conf.node_id = id;
	conf.ip = rte_cpu_to_be_32((198u << 24) | (18u << 16) | id);	/* 198.18.0.id */
	conf.dev = dev;
	conf.pool = mp;
	ret = amrma_node_create(&conf, node);
	if (ret != 0)
		return ret;
	ret = amrma_am_register(*node, H_REQ, on_request, NULL);
	return ret != 0 ? ret : amrma_am_register(*node, H_REP, on_reply, NULL);
}

int
main(int argc, char **argv)
{
	static struct req reqs[1024];
	struct rte_ring *a2b, *b2a;
	struct rte_mempool *mp;
	struct amrma_net_dev dev_a, dev_b;
	struct amrma_node *a = NULL, *b = NULL;
	struct amrma_am_stats st;
	struct amrma_ctx *ctx;
	uint8_t payload[AMRMA_WIRE_MAX_PAYLOAD];
	uint64_t count = 20000, issued = 0, deadline;
	unsigned int window = 16, slot = 0, lcore;
	uint32_t sid;
	int ret, pa, pb;
	uint16_t max;

	ret = rte_eal_init(argc, argv);
	if (ret < 0) {
		fprintf(stderr, "amrma-embed: EAL init failed\n");
		return 1;
	}
	if (argc - ret > 1)
		count = strtoull(argv[ret + 1], NULL, 0);
	if (argc - ret > 2)
		window = (unsigned int)strtoul(argv[ret + 2], NULL, 0);
	if (count == 0 || window == 0 || window > RTE_DIM(reqs)) {
		fprintf(stderr, "amrma-embed: COUNT > 0, 0 < WINDOW <= %zu\n", RTE_DIM(reqs));
		return 2;
	}
	lcore = rte_get_next_lcore(-1, 1, 0);
	if (lcore >= RTE_MAX_LCORE) {
		fprintf(stderr, "amrma-embed: give EAL two lcores (e.g. -l 0,1)\n");
		return 2;
	}

	/* the host's own resources: one mbuf pool, two rings, two ports */
	mp = rte_pktmbuf_pool_create("embed_pool", 16383, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				     rte_socket_id());
	a2b = rte_ring_create("embed_a2b", 4096, rte_socket_id(), RING_F_SP_ENQ | RING_F_SC_DEQ);
	b2a = rte_ring_create("embed_b2a", 4096, rte_socket_id(), RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (mp == NULL || a2b == NULL || b2a == NULL) {
		fprintf(stderr, "amrma-embed: out of memory\n");
		return 1;
	}
	pa = ring_port("net_ring_embed_a", b2a, a2b, mp);
	pb = ring_port("net_ring_embed_b", a2b, b2a, mp);
	if (pa < 0 || pb < 0) {
		fprintf(stderr, "amrma-embed: ring ports: %d %d\n", pa, pb);
		return 1;
	}

	/* amrma: two nodes that know each other */
	ret = make_node(1, (uint16_t)pa, &dev_a, mp, &a);
	if (ret == 0)
		ret = make_node(2, (uint16_t)pb, &dev_b, mp, &b);
	if (ret == 0)
		ret = amrma_node_add_peer(a, 2, &dev_b.mac,
					  rte_cpu_to_be_32((198u << 24) | (18u << 16) | 2), 1);
	if (ret == 0)
		ret = amrma_node_add_peer(b, 1, &dev_a.mac,
					  rte_cpu_to_be_32((198u << 24) | (18u << 16) | 1), 1);
	if (ret != 0) {
		fprintf(stderr, "amrma-embed: node setup: %s\n", strerror(-ret));
		return 1;
	}

	/* node 2 runs as an rte_service on a service lcore */
	ret = amrma_node_service_register(b, &sid);
	if (ret == 0)
		ret = rte_service_lcore_add(lcore);
	if (ret == 0)
		ret = rte_service_map_lcore_set(sid, lcore, 1);
	if (ret == 0)
		ret = rte_service_runstate_set(sid, 1);
	if (ret == 0)
		ret = rte_service_lcore_start(lcore);
	if (ret != 0) {
		fprintf(stderr, "amrma-embed: service: %s\n", strerror(-ret));
		return 1;
	}
	printf("amrma-embed: node 1 on lcore %u (amrma_ctx_poll), node 2 on service lcore %u, "
	       "%" PRIu64 " requests, %u in flight\n", rte_lcore_id(), lcore, count, window);

	/* node 1: requests with 0..max payload bytes, polled here */
	ctx = amrma_node_ctx(a, 0);
	max = amrma_am_max_payload(ctx, 2);	/* the echo adds an argument */
	deadline = rte_get_timer_cycles() + 30 * rte_get_timer_hz();
	while (completed < count && rte_get_timer_cycles() < deadline) {
		while (issued < count && issued - completed < window) {
			struct req *r = &reqs[slot];
			struct amrma_ep dst = { .node = 2, .ctx = 0 };
			uint64_t arg;

			if (r->busy)
				break;		/* completions came back out of order */
			r->seq = issued;
			r->len = (uint16_t)((issued * 97) % (max + 1u));
			arg = r->seq;
			fill(payload, r->seq, r->len);
			ret = amrma_am_request(ctx, dst, H_REQ, &arg, 1, payload, r->len,
					       on_done, r);
			if (ret == -EAGAIN || ret == -ENOBUFS)
				break;		/* poll, then try again */
			if (ret != 0) {
				fprintf(stderr, "amrma-embed: request: %s\n", strerror(-ret));
				errors++;
				deadline = 0;
				break;
			}
			r->busy = true;
			issued++;
			slot = (slot + 1) % window;
		}
		amrma_ctx_poll(ctx, 32);
	}

	/* stop the service before anything it polls goes away */
	rte_service_runstate_set(sid, 0);
	while (rte_service_may_be_active(sid) == 1)
		rte_delay_us(100);
	rte_service_lcore_stop(lcore);
	/* leave cleanly: the acks each node owes go out, everything sent is acknowledged */
	if (amrma_node_quiesce(a, 100000) != 0 || amrma_node_quiesce(b, 100000) != 0) {
		fprintf(stderr, "amrma-embed: frames still unacknowledged at the end\n");
		errors++;
	}
	amrma_node_stats_get(b, &st);
	printf("amrma-embed: %" PRIu64 "/%" PRIu64 " verified, %" PRIu64 " errors; node 2 ran "
	       "%" PRIu64 " handlers, %" PRIu64 " retransmits\n", verified, count, errors,
	       st.requests_handled, st.retransmits);
	ret = verified == count && errors == 0 && st.requests_handled == count ? 0 : 1;

	amrma_node_destroy(a);
	amrma_node_destroy(b);
	amrma_net_close(&dev_a);
	amrma_net_close(&dev_b);
	rte_eth_dev_stop((uint16_t)pa);
	rte_eth_dev_stop((uint16_t)pb);
	rte_eth_dev_close((uint16_t)pa);
	rte_eth_dev_close((uint16_t)pb);
	rte_ring_free(a2b);
	rte_ring_free(b2a);
	rte_mempool_free(mp);
	rte_eal_cleanup();
	printf("amrma-embed: %s\n", ret == 0 ? "OK" : "FAILED");
	return ret;
}
