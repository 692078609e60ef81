/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * amrma-stripe-bench: does a striped SEND (seed 003_…) pull its portions in parallel?
 *
 * One process, two nodes of two contexts joined by net_ring ports whose rings cross
 * (node 0's TX queue k is node 1's RX queue k). Lcore A (the main one) polls context 0
 * of both nodes, lcore B context 1 of both, so a portion pulled by node 1's context k
 * from node 0's context k runs on one lcore, beside nothing else. Per size, paired
 * runs in one invocation:
 *   get      node 1's context 0 reads the bytes from node 0 (pipelined): one lcore works;
 *   stripe   node 0 sends them striped to node 1's context 0: two portions, one per lcore;
 *   stripe1  the same with lcore B idle and lcore A polling all four contexts.
 * JSON lines: stripe_us, get_us, stripe1_us, stripe_vs_get (get time over stripe time,
 * the median of the per-pair ratios: above 1, the striped send is faster) and
 * stripe1_vs_get. Every run's bytes are compared with the source outside the timing.
 * Needs two lcores on two CPUs (-l 0,1); the busy-polling lcores must not share one.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "amrma_net.h"
#include "amrma_reflect.h"
#include "amrma_rma.h"
#include "bench_median.h"
#include "eal_rundir.h"

#define NQ 2
#define MAX_REPS 31
#define TIMEOUT_S 20

static struct {
	struct amrma_net_dev dev[2];
	struct amrma_node *node[2];
	struct amrma_rma *rma[2];
	struct amrma_reflect *rf[2];
	struct rte_mempool *pool;
	uint8_t *src, *dst;
	uint64_t key;		/* node 0's source region, for the get */
	/* who polls contexts 1: lcore B while b_polls, else lcore A (handshake below) */
	volatile bool b_polls;
	volatile bool b_polling;
	volatile bool quit;
	/* completions */
	volatile int get_status, send_status, recv_status;
	volatile bool get_done, send_done, recv_done;
} B;

static void
die(const char *what, int err)
{
	fprintf(stderr, "amrma-stripe-bench: %s: %s\n", what, strerror(err < 0 ? -err : err));
	exit(1);
}

static void
poll_ctx(unsigned int q)
{
	amrma_ctx_poll(amrma_node_ctx(B.node[0], (uint16_t)q), 32);
	amrma_ctx_poll(amrma_node_ctx(B.node[1], (uint16_t)q), 32);
}

/* Lcore B: contexts 1 while asked to, otherwise asleep. */
static int
lcore_b(void *arg)
{
	RTE_SET_USED(arg);
	while (!B.quit) {
		if (!B.b_polls) {
			__atomic_store_n(&B.b_polling, false, __ATOMIC_RELEASE);
			usleep(100);
			continue;
		}
		__atomic_store_n(&B.b_polling, true, __ATOMIC_RELEASE);
		poll_ctx(1);
	}
	__atomic_store_n(&B.b_polling, false, __ATOMIC_RELEASE);
	return 0;
}

/* Hand contexts 1 to lcore B (on) or take them back (off), once it has let go. */
static void
b_set(bool on)
{
	B.b_polls = on;
	while (__atomic_load_n(&B.b_polling, __ATOMIC_ACQUIRE) != on)
		rte_pause();
}

/* Lcore A's share of the polling; all four contexts while lcore B sleeps. */
static void
poll_a(void)
{
	poll_ctx(0);
	if (!B.b_polls)
		poll_ctx(1);
}

/* Poll until *flag; the nanoseconds since t0 (TSC). */
static double
wait_ns(volatile bool *flag, const char *what, uint64_t t0)
{
	uint64_t end = t0 + TIMEOUT_S * rte_get_tsc_hz();

	while (!*flag) {
		poll_a();
		if (rte_get_tsc_cycles() > end)
			die(what, ETIMEDOUT);
	}
	return (double)(rte_get_tsc_cycles() - t0) * 1e9 / (double)rte_get_tsc_hz();
}

static void
get_cb(struct amrma_ctx *ctx, void *arg, enum amrma_rma_event ev, int status)
{
	RTE_SET_USED(ctx);
	RTE_SET_USED(arg);
	if (ev != AMRMA_RMA_EV_DONE)
		return;
	B.get_status = status;
	B.get_done = true;
}

static void
sent_cb(struct amrma_ctx *ctx, void *arg, int status)
{
	RTE_SET_USED(ctx);
	RTE_SET_USED(arg);
	B.send_status = status;
	B.send_done = true;
}

static void *
l_alloc(struct amrma_ctx *ctx, void *arg, struct amrma_ep from, uint64_t tag, uint64_t len)
{
	RTE_SET_USED(ctx);
	RTE_SET_USED(arg);
	RTE_SET_USED(from);
	RTE_SET_USED(tag);
	RTE_SET_USED(len);
	return B.dst;
}

static void
l_done(struct amrma_ctx *ctx, void *arg, struct amrma_ep from, uint64_t tag, void *buf,
       uint64_t len, int status)
{
	RTE_SET_USED(ctx);
	RTE_SET_USED(arg);
	RTE_SET_USED(from);
	RTE_SET_USED(tag);
	RTE_SET_USED(buf);
	RTE_SET_USED(len);
	B.recv_status = status;
	B.recv_done = true;
}

static const struct amrma_stripe_listener LISTENER = { l_alloc, l_done, NULL };

/* Two net_ring ports whose rings cross, a node of NQ contexts on each. */
static void
nodes_up(void)
{
	struct rte_ring *ab[NQ], *ba[NQ];
	struct amrma_reflect_conf rfc;
	struct amrma_node_conf c;
	char name[32];
	unsigned int i, q;
	int ret;

	B.pool = rte_pktmbuf_pool_create("sb_pool", 16383, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
					 (int)rte_socket_id());
	if (B.pool == NULL)
		die("mbuf pool", -rte_errno);
	for (q = 0; q < NQ; q++) {
		snprintf(name, sizeof(name), "sb_ab%u", q);
		ab[q] = rte_ring_create(name, 4096, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
		snprintf(name, sizeof(name), "sb_ba%u", q);
		ba[q] = rte_ring_create(name, 4096, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (ab[q] == NULL || ba[q] == NULL)
			die("ring", -rte_errno);
	}
	amrma_reflect_conf_defaults(&rfc);
	for (i = 0; i < 2; i++) {
		struct rte_ether_addr mac = { .addr_bytes = { 0x02, 0, 0, 0x5b, 0, (uint8_t)i } };
		int port;

		snprintf(name, sizeof(name), "net_ring_sb%u", i);
		port = i == 0 ? rte_eth_from_rings(name, ba, NQ, ab, NQ, rte_socket_id()) :
				rte_eth_from_rings(name, ab, NQ, ba, NQ, rte_socket_id());
		if (port < 0)
			die("net_ring port", port);
		rte_eth_dev_default_mac_addr_set((uint16_t)port, &mac);
		ret = amrma_net_port_setup((uint16_t)port, NQ, 1024, 0, B.pool);
		if (ret == 0)
			ret = amrma_net_ethdev_open(&B.dev[i], (uint16_t)port, NQ);
		if (ret != 0)
			die("port setup", ret);
		amrma_node_conf_defaults(&c);
		c.node_id = (uint16_t)i;
		c.max_nodes = 2;
		c.nb_ctx = NQ;
		/* 198.18.0.0/15: the benchmarking range */
		c.ip = rte_cpu_to_be_32((198u << 24) | (18u << 16) | (i + 1));
		c.dev = &B.dev[i];
		c.pool = B.pool;
		ret = amrma_node_create(&c, &B.node[i]);
		if (ret == 0)
			ret = amrma_rma_create(B.node[i], NULL, &B.rma[i]);
		if (ret == 0)
			ret = amrma_reflect_create(B.rma[i], &rfc, &B.rf[i]);
		if (ret != 0)
			die("node", ret);
	}
	for (i = 0; i < 2; i++) {
		ret = amrma_node_add_peer(B.node[i], (uint16_t)(1 - i), &B.dev[1 - i].mac,
					  rte_cpu_to_be_32((198u << 24) | (18u << 16) | (2 - i)),
					  NQ);
		if (ret != 0)
			die("peer", ret);
	}
	ret = amrma_stripe_listen(B.rf[1], &LISTENER);
	if (ret != 0)
		die("listen", ret);
}

static void
nodes_down(void)
{
	unsigned int i;

	for (i = 0; i < 2; i++) {
		amrma_reflect_destroy(B.rf[i]);
		amrma_rma_destroy(B.rma[i]);
		amrma_node_destroy(B.node[i]);
		amrma_net_close(&B.dev[i]);
	}
	rte_mempool_free(B.pool);
}

/* One get of len bytes by node 1 from node 0, timed (ns). */
static double
run_get(uint64_t len)
{
	const struct amrma_ep from = { .node = 0, .ctx = 0 };
	uint64_t t0 = rte_get_tsc_cycles();
	double ns;
	int ret;

	B.get_done = false;
	ret = amrma_rma_get(amrma_node_ctx(B.node[1], 0), from, B.key, 0, B.dst, len,
			    AMRMA_RMA_F_PIPELINED, get_cb, NULL, NULL);
	if (ret != 0)
		die("get", ret);
	ns = wait_ns(&B.get_done, "get", t0);
	if (B.get_status != 0)
		die("get ended", B.get_status);
	return ns;
}

/* One striped send of len bytes from node 0 to node 1's context 0, timed (ns) to the
 * origin's callback. */
static double
run_stripe(uint64_t len)
{
	const struct amrma_ep to = { .node = 1, .ctx = 0 };
	uint64_t t0 = rte_get_tsc_cycles();
	double ns;
	int ret;

	B.send_done = false;
	B.recv_done = false;
	ret = amrma_stripe_send(B.rf[0], amrma_node_ctx(B.node[0], 0), to, B.src, len, 0,
				sent_cb, NULL);
	if (ret != 0)
		die("striped send", ret);
	ns = wait_ns(&B.send_done, "striped send", t0);
	if (B.send_status != 0 || !B.recv_done || B.recv_status != 0)
		die("striped send ended", B.send_status != 0 ? B.send_status : EIO);
	return ns;
}

static void
check(uint64_t len, const char *what)
{
	if (memcmp(B.dst, B.src, len) != 0) {
		fprintf(stderr, "amrma-stripe-bench: %s of %" PRIu64 " bytes: wrong data\n", what,
			len);
		exit(1);
	}
	memset(B.dst, 0, len);
}

static void
emit(const char *name, double value, const char *unit, uint64_t size, int reps)
{
	printf("{\"name\":\"%s\",\"value\":%.4f,\"unit\":\"%s\",\"size\":%" PRIu64
	       ",\"lcores\":2,\"reps\":%d}\n", name, value, unit, size, reps);
	fflush(stdout);
}

static void
bench_size(uint64_t len, int reps)
{
	double tg[MAX_REPS], ts[MAX_REPS], t1[MAX_REPS], rs[MAX_REPS], r1[MAX_REPS];
	int r;

	for (r = -1; r < reps; r++) {
		double g, s, s1;

		/*
		 * r == -1 warms caches, channels and the listener's buffer.
		 * The get on its own lcore, lcore B asleep: polling even idle queue 1 of these
		 * net_ring ports slows queue 0 by 5-10 % (measured with a loop of empty RX
		 * bursts on queue 1 alone), which the get does not need to pay.
		 */
		b_set(false);
		g = run_get(len);
		check(len, "get");
		b_set(true);
		s = run_stripe(len);
		check(len, "striped send");
		b_set(false);
		s1 = run_stripe(len);
		check(len, "striped send on one lcore");
		if (r < 0)
			continue;
		tg[r] = g;
		ts[r] = s;
		t1[r] = s1;
		rs[r] = g / s;
		r1[r] = g / s1;
	}
	emit("get_us", bench_median(tg, reps) / 1e3, "us", len, reps);
	emit("stripe_us", bench_median(ts, reps) / 1e3, "us", len, reps);
	emit("stripe1_us", bench_median(t1, reps) / 1e3, "us", len, reps);
	emit("stripe_vs_get", bench_median(rs, reps), "ratio", len, reps);
	emit("stripe1_vs_get", bench_median(r1, reps), "ratio", len, reps);
}

static void
usage(void)
{
	fprintf(stderr, "usage: amrma-stripe-bench [EAL options, two lcores] -- "
		"[--quick] [--reps N]\n"
		"  --quick   64 KiB and 1 MiB only, 3 repetitions (a smoke run)\n"
		"  --reps N  paired runs per size (default 9, at most %d)\n", MAX_REPS);
	exit(2);
}

int
main(int argc, char **argv)
{
	static const uint64_t sizes[] = { 64u << 10, 256u << 10, 1u << 20, 4u << 20,
					  16u << 20 };
	static const struct option opts[] = {
		{ "quick", no_argument, NULL, 'q' },
		{ "reps", required_argument, NULL, 'r' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t max = sizes[RTE_DIM(sizes) - 1];
	unsigned int nb_sizes = RTE_DIM(sizes), i, b;
	struct amrma_region *reg;
	int ret, reps = 9, c;
	bool quick = false;

	ret = rte_eal_init(argc, argv);
	if (ret < 0)
		die("EAL", -rte_errno);
	eal_rundir_cleanup_at_exit();
	argc -= ret;
	argv += ret;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'q')
			quick = true;
		else if (c == 'r' && atoi(optarg) > 0 && atoi(optarg) <= MAX_REPS)
			reps = atoi(optarg);
		else
			usage();
	}
	if (optind != argc)
		usage();
	if (quick) {
		reps = 3;
		max = 1u << 20;
	}
	b = rte_get_next_lcore(rte_lcore_id(), 1, 0);
	if (b >= RTE_MAX_LCORE)
		die("two lcores needed (-l 0,1)", EINVAL);
	nodes_up();
	B.src = malloc(max);
	B.dst = calloc(1, max);
	if (B.src == NULL || B.dst == NULL)
		die("buffers", ENOMEM);
	for (i = 0; i < max; i++)
		B.src[i] = (uint8_t)(i * 131 + (i >> 12));
	ret = amrma_region_register(amrma_rma_regions(B.rma[0]), B.src, max, AMRMA_REGION_READ,
				    &reg, &B.key);
	if (ret != 0)
		die("region", ret);
	ret = rte_eal_remote_launch(lcore_b, NULL, b);
	if (ret != 0)
		die("launch", ret);
	for (i = 0; i < nb_sizes && sizes[i] <= max; i++)
		bench_size(sizes[i], reps);
	B.quit = true;
	rte_eal_wait_lcore(b);
	amrma_region_deregister(amrma_rma_regions(B.rma[0]), reg, NULL, NULL);
	nodes_down();
	free(B.src);
	free(B.dst);
	rte_eal_cleanup();
	return 0;
}
