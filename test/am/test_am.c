/* SPDX-License-Identifier: BSD-3-Clause */
/* AM core over net_ring in one process: request/reply, rules, faults, dead peers. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <rte_cycles.h>
#include <rte_hash_crc.h>
#include <rte_malloc.h>
#include <rte_service.h>

#include "am_priv.h"	/* TX_INLINE_SLOTS */
#include "harness.h"

enum { H_ECHO = 1, H_ECHO_REPLY, H_RULES, H_RULES_REPLY, H_FAIL, H_COUNT, H_NOTHING, H_SINK,
       H_SHIFT, H_KEEP, H_OUTSIDE, H_OVER_REPLY, H_NESTED };

/* --- a request/reply workload that checks exactly-once delivery and payload integrity --- */

#define MAX_IDS (1u << 16)

struct load {
	uint16_t handled[MAX_IDS];	/* times the request handler ran per request id */
	uint16_t replied[MAX_IDS];	/* times the reply handler ran */
	uint32_t done_ok;
	uint32_t done_err;
	uint32_t done_total;
	int last_err;
	uint32_t bad_data;
	uint32_t order[64];	/* request ids in the order their handler first ran */
	uint32_t nb_order;
};

static struct load L;

static uint32_t
fill(uint8_t *buf, uint32_t id, uint16_t len)
{
	uint16_t i;

	for (i = 0; i < len; i++)
		buf[i] = (uint8_t)(id * 7 + i);
	return rte_hash_crc(buf, len, id);
}

/* request: args = {id, crc}; reply echoes id and returns the crc of what arrived */
static int
echo_handler(struct amrma_ctx *ctx, amrma_am_token_t tok, const struct amrma_am_msg *msg,
	     void *arg)
{
	uint32_t id = (uint32_t)msg->args[0];
	uint64_t out[2];

	RTE_SET_USED(arg);
	if (id < MAX_IDS)
		L.handled[id]++;
	if (L.nb_order < RTE_DIM(L.order))
		L.order[L.nb_order++] = id;
	out[0] = id;
	out[1] = rte_hash_crc(msg->payload, msg->len, id);
	/* medium reply: send the payload back as well */
	return amrma_am_reply(ctx, tok, H_ECHO_REPLY, out, 2, msg->payload, msg->len, 0);
}

static int
echo_reply_handler(struct amrma_ctx *ctx, amrma_am_token_t tok,
		   const struct amrma_am_msg *msg, void *arg)
{
	uint32_t id = (uint32_t)msg->args[0];

	RTE_SET_USED(ctx);
	RTE_SET_USED(tok);
	RTE_SET_USED(arg);
	if (id < MAX_IDS)
		L.replied[id]++;
	if ((uintptr_t)msg->op_arg != id || msg->args[1] != rte_hash_crc(msg->payload,
								  msg->len, id))
		L.bad_data++;
	return 0;
}

static void
load_done(struct amrma_ctx *ctx, void *arg, int status)
{
	RTE_SET_USED(ctx);
	RTE_SET_USED(arg);
	L.done_total++;
	if (status == 0) {
		L.done_ok++;
	} else {
		L.done_err++;
		L.last_err = status;
	}
}

static void
register_all(struct harness *h)
{
	unsigned int i;

	for (i = 0; i < h->nb_nodes; i++) {
		amrma_am_register(h->n[i].node, H_ECHO, echo_handler, NULL);
		amrma_am_register(h->n[i].node, H_ECHO_REPLY, echo_reply_handler, NULL);
	}
}

struct target {
	uint32_t n;
};

/* nb_nodes nodes of nb_q contexts each (conf c, NULL: h_conf()), echo handlers, a fresh load */
static void
echo_nodes(struct harness *h, unsigned int nb_nodes, unsigned int nb_q,
	   const struct amrma_node_conf *c)
{
	assert_int_equal(h_create(h, nb_nodes, nb_q, c), 0);
	register_all(h);
	memset(&L, 0, sizeof(L));
}

/* h_conf() with timers that declare a silent peer dead within milliseconds */
static void
fast_death_conf(struct amrma_node_conf *c, uint32_t rto_max_us, uint32_t max_retries)
{
	h_conf(c);
	c->rto_us = 500;
	c->rto_max_us = rto_max_us;
	c->max_retries = max_retries;
}

static bool
all_done(void *arg)
{
	return L.done_total >= ((struct target *)arg)->n;
}

static void
print_stat(const char *name, uint64_t v, void *arg)
{
	if (v != 0)
		printf("node %u %s %" PRIu64 "\n", *(unsigned int *)arg, name, v);
}

/*
 * Every context of every node sends `per_pair` requests to every remote context,
 * keeping as many outstanding as the library takes. Returns requests issued.
 */
static uint32_t
run_load(struct harness *h, uint32_t per_pair, unsigned int timeout_ms)
{
	unsigned int nodes = h->nb_nodes, q = h->nb_q;
	uint32_t total = 0, issued = 0, id = 0;
	uint32_t *sent;
	uint8_t buf[1500];
	struct target t;
	uint64_t end = rte_get_tsc_cycles() + rte_get_tsc_hz() / 1000 * timeout_ms;
	unsigned int a, b, qa, qb, pair;

	memset(&L, 0, sizeof(L));
	sent = calloc(nodes * q * nodes * q, sizeof(*sent));
	for (a = 0; a < nodes; a++)
		for (b = 0; b < nodes; b++)
			if (a != b)
				total += per_pair * q * q;
	assert_true(total < MAX_IDS);
	while (issued < total && rte_get_tsc_cycles() < end) {
		for (a = 0; a < nodes; a++)
			for (qa = 0; qa < q; qa++)
				for (b = 0; b < nodes; b++)
					for (qb = 0; qb < q && b != a; qb++) {
						struct amrma_ep ep = { .node = (uint16_t)b,
								       .ctx = (uint8_t)qb };
						uint16_t len;
						uint64_t args[2];
						int ret;

						pair = ((a * q + qa) * nodes + b) * q + qb;
						if (sent[pair] >= per_pair)
							continue;
						len = (uint16_t)((id * 37) % 1400);
						args[0] = id;
						args[1] = fill(buf, id, len);
						ret = amrma_am_request(h_ctx(h, a, qa), ep,
								       H_ECHO, args, 2,
								       buf, len, load_done,
								       (void *)(uintptr_t)id);
						if (ret == -EAGAIN)
							continue;
						if (ret != 0) {
							struct amrma_am_stats st;

							amrma_node_stats_get(h->n[a].node, &st);
							amrma_am_stats_foreach(&st, print_stat, &a);
						}
						assert_int_equal(ret, 0);
						sent[pair]++;
						issued++;
						id++;
					}
		h_step(h);
	}
	free(sent);
	t.n = issued;
	h_run_until(h, all_done, &t, timeout_ms);
	return issued;
}

static void
check_exactly_once(uint32_t n)
{
	uint32_t i;

	if (L.done_total != n || L.done_ok != n)
		fail_msg("%u requests: %u done, %u ok, %u failed (last error %d)", n,
			 L.done_total, L.done_ok, L.done_err, L.last_err);
	assert_int_equal(L.bad_data, 0);
	for (i = 0; i < n; i++) {
		if (L.handled[i] != 1 || L.replied[i] != 1)
			fail_msg("request %u handled %u times, replied %u times", i,
				 L.handled[i], L.replied[i]);
	}
}

/* run_load(), and every request it issued ran exactly once; returns how many */
static uint32_t
load_exactly_once(struct harness *h, uint32_t per_pair, unsigned int timeout_ms)
{
	uint32_t n = run_load(h, per_pair, timeout_ms);

	check_exactly_once(n);
	return n;
}

static bool
no_mbufs_held(void *arg)
{
	return h_mbufs_in_use(arg) == 0;
}

static void
quiesce_and_destroy(struct harness *h)
{
	/* the last acks (or a backed-off retransmission) release every held frame */
	if (!h_run_until(h, no_mbufs_held, h, 5000))
		fail_msg("%u mbufs still held after quiescing", h_mbufs_in_use(h));
	h_destroy(h);
}

static void
test_two_nodes(void **state)
{
	struct harness h;
	struct amrma_am_stats st;
	uint32_t n;

	RTE_SET_USED(state);
	echo_nodes(&h, 2, 1, NULL);
	n = load_exactly_once(&h, 2000, 20000);
	assert_int_equal(n, 4000);
	for (unsigned int i = 0; getenv("AMRMA_TEST_VERBOSE") && i < 2; i++) {
		amrma_node_stats_get(h.n[i].node, &st);
		amrma_am_stats_foreach(&st, print_stat, &i);
	}
	{
		struct amrma_am_stats s0;

		amrma_node_stats_get(h.n[0].node, &s0);
		amrma_node_stats_get(h.n[1].node, &st);
		assert_int_equal(st.requests_handled, 2000);
		assert_int_equal(st.replies_handled, 2000);
		/* a lossless link: whatever a (slow, e.g. valgrind) run resent arrived twice */
		assert_int_equal(s0.retransmits + st.retransmits, s0.duplicates + st.duplicates);
		assert_int_equal(st.rx_rejected[AMRMA_WIRE_ERR_BAD_UDP_CSUM], 0);
		assert_int_equal(s0.tx_drops + st.tx_drops, 0);
	}
	assert_true(amrma_ctx_outstanding(h_ctx(&h, 0, 0)) == 0);
	quiesce_and_destroy(&h);
}

static uint64_t
csum_rejects(struct harness *h)
{
	struct amrma_am_stats st;
	uint64_t n = 0;
	unsigned int i;

	for (i = 0; i < h->nb_nodes; i++) {
		amrma_node_stats_get(h->n[i].node, &st);
		n += st.rx_rejected[AMRMA_WIRE_ERR_BAD_UDP_CSUM];
	}
	return n;
}

/*
 * Frames that arrive in two segments (as from a port with small RX buffers), split at any
 * offset behind the headers: each valid one is accepted, each with a flipped bit refused.
 * The UDP checksum over segments was DPDK 22.11's rte_raw_cksum_mbuf(), which loses the
 * carries of a segment starting at an odd offset of the datagram: about half the valid
 * frames were refused (and resent), and about one corrupted frame in a thousand taken.
 */
static void
test_split_frames_checksum(void **state)
{
	struct harness h;
	unsigned int i;
	uint32_t n;

	RTE_SET_USED(state);
	echo_nodes(&h, 2, 1, NULL);
	for (i = 0; i < 2; i++) {
		h_faults(&h, i, 0, 0, 0, 0, 1000 + i);
		h.n[i].fault.split_pct = 100;
	}
	n = load_exactly_once(&h, 500, 20000);
	assert_true(h.n[0].fault.split + h.n[1].fault.split >= n);
	if (csum_rejects(&h) != 0)
		fail_msg("%" PRIu64 " valid split frames refused", csum_rejects(&h));
	/* now a bit flipped in every third frame: all of those refused, none taken */
	for (i = 0; i < 2; i++)
		h.n[i].fault.corrupt_pct = 33;
	load_exactly_once(&h, 2000, 60000);
	for (i = 0; i < 2; i++)
		h.n[i].fault.corrupt_pct = h.n[i].fault.split_pct = 0;
	quiesce_and_destroy(&h);
}

/*
 * A request whose payload is a chain of odd-length segments: its checksum, computed over
 * the segments, is right (the receiver takes it at once). With DPDK 22.11's
 * rte_ipv4_udptcp_cksum_mbuf() it was wrong whenever a segment started at an odd offset,
 * and the receiver refused every retransmission of the frame until the peer was dead.
 */
static void
test_request_mbuf_odd_segments(void **state)
{
	const uint16_t lens[3] = { 333, 400, 7 };
	struct rte_mbuf *head = NULL, *m;
	uint8_t buf[740];
	struct harness h;
	struct target t = { .n = 1 };
	uint64_t args[2];
	unsigned int k, at = 0;

	RTE_SET_USED(state);
	echo_nodes(&h, 2, 1, NULL);
	args[0] = 0;
	args[1] = fill(buf, 0, 740);
	for (k = 0; k < RTE_DIM(lens); k++) {
		m = rte_pktmbuf_alloc(h.pool);
		assert_non_null(m);
		memcpy(rte_pktmbuf_append(m, lens[k]), buf + at, lens[k]);
		at += lens[k];
		if (head == NULL)
			head = m;
		else
			assert_int_equal(rte_pktmbuf_chain(head, m), 0);
	}
	args[1] = rte_hash_crc(buf, at, 0);
	assert_int_equal(amrma_am_request_mbuf(h_ctx(&h, 0, 0), (struct amrma_ep){ .node = 1 },
					       H_ECHO, args, 2, head, load_done, NULL), 0);
	assert_true(h_run_until(&h, all_done, &t, 5000));
	check_exactly_once(1);
	assert_int_equal(csum_rejects(&h), 0);
	quiesce_and_destroy(&h);
}

/* auto trusts net_ring (no checksums sent, none verified); on makes a node require them */
static void
test_csum_modes(void **state)
{
	struct amrma_node_conf c;
	struct amrma_am_stats s0, s1;
	struct harness h;
	uint64_t arg = 1;
	uint32_t n;

	RTE_SET_USED(state);
	h_conf(&c);
	c.csum = AMRMA_CSUM_AUTO;
	assert_int_equal(h_create(&h, 2, 1, &c), 0);
	assert_false(amrma_node_csum(h.n[0].node));
	assert_false(amrma_node_csum(h.n[1].node));
	register_all(&h);
	n = load_exactly_once(&h, 500, 20000);
	assert_int_equal(n, 1000);
	amrma_node_stats_get(h.n[1].node, &s1);
	assert_int_equal(s1.requests_handled, 500);

	/* node 1 comes back requiring checksums: node 0's frames (checksum 0) are refused */
	h.conf.csum = AMRMA_CSUM_ON;
	assert_int_equal(h_restart_node(&h, 1), 0);
	assert_true(amrma_node_csum(h.n[1].node));
	assert_int_equal(amrma_am_request(h_ctx(&h, 0, 0), (struct amrma_ep){ .node = 1 },
					  H_ECHO, &arg, 1, NULL, 0, load_done, NULL), 0);
	h_run_for(&h, 20);
	amrma_node_stats_get(h.n[0].node, &s0);
	amrma_node_stats_get(h.n[1].node, &s1);
	assert_true(s1.rx_rejected[AMRMA_WIRE_ERR_BAD_UDP_CSUM] > 0);
	assert_int_equal(s1.requests_handled, 0);
	assert_int_equal(s0.replies_handled, 500);	/* from the first part only */
	{
		struct amrma_node *bad = NULL;

		c.dev = &h.n[0].dev;
		c.pool = h.pool;
		c.csum = (enum amrma_csum)3;
		assert_int_equal(amrma_node_create(&c, &bad), -EINVAL);
		assert_null(bad);
		c.csum = AMRMA_CSUM_AUTO;
		c.tx_inline_max = TX_INLINE_MAX + 1;	/* beyond the store's entries */
		assert_int_equal(amrma_node_create(&c, &bad), -EINVAL);
		assert_null(bad);
		c.tx_inline_max = 0;
		/* more contexts than the wire can name, however many queues the port has */
		{
			struct amrma_net_dev many = h.n[0].dev;

			many.nb_queues = AMRMA_WIRE_MAX_CTX + 1;
			c.dev = &many;
			c.nb_ctx = AMRMA_WIRE_MAX_CTX + 1;
			assert_int_equal(amrma_node_create(&c, &bad), -EINVAL);
			assert_null(bad);
		}
	}
	h_destroy(&h);
}

static void
test_three_nodes_many_contexts(void **state)
{
	struct harness h;
	struct amrma_am_stats st;
	uint64_t redirected = 0;
	unsigned int i;
	uint32_t n;

	RTE_SET_USED(state);
	echo_nodes(&h, 3, 3, NULL);
	n = load_exactly_once(&h, 300, 30000);
	assert_int_equal(n, 3 * 2 * 3 * 3 * 300);
	for (i = 0; i < 3; i++) {
		amrma_node_stats_get(h.n[i].node, &st);
		redirected += st.redirected;
		assert_int_equal(st.requests_handled, 2 * 3 * 3 * 300);
	}
	/* net_ring delivers on the sender's queue: frames for other contexts were steered */
	assert_true(redirected > 0);
	quiesce_and_destroy(&h);
}

static void
test_faults(void **state)
{
	struct harness h;
	struct amrma_am_stats st, sum;
	unsigned int i;
	uint64_t seed = 0x5eed;
	uint32_t n;

	RTE_SET_USED(state);
	echo_nodes(&h, 3, 2, NULL);
	for (i = 0; i < 3; i++)
		h_faults(&h, i, 5, 3, 5, 2, seed + i);
	n = load_exactly_once(&h, 200, 60000);
	assert_int_equal(n, 3 * 2 * 2 * 2 * 200);
	memset(&sum, 0, sizeof(sum));
	for (i = 0; i < 3; i++) {
		amrma_node_stats_get(h.n[i].node, &st);
		sum.retransmits += st.retransmits;
		sum.duplicates += st.duplicates;
		sum.rx_rejected[AMRMA_WIRE_ERR_BAD_UDP_CSUM] +=
			st.rx_rejected[AMRMA_WIRE_ERR_BAD_UDP_CSUM];
		sum.rx_rejected[AMRMA_WIRE_ERR_BAD_IP_CSUM] +=
			st.rx_rejected[AMRMA_WIRE_ERR_BAD_IP_CSUM];
		assert_true(h.n[i].fault.dropped > 0);
		assert_true(h.n[i].fault.duplicated > 0);
		assert_true(h.n[i].fault.reordered > 0);
		assert_true(h.n[i].fault.corrupted > 0);
	}
	assert_true(sum.retransmits > 0);
	assert_true(sum.duplicates > 0);
	/* the faults hit coalesced frames too */
	for (i = 0; i < 3; i++) {
		amrma_node_stats_get(h.n[i].node, &st);
		sum.rx_coalesced += st.rx_coalesced;
	}
	assert_true(sum.rx_coalesced > 0);
	assert_true(sum.rx_rejected[AMRMA_WIRE_ERR_BAD_UDP_CSUM] +
		    sum.rx_rejected[AMRMA_WIRE_ERR_BAD_IP_CSUM] > 0);
	/* stop injecting so the final acks get through, then nothing may be left held */
	for (i = 0; i < 3; i++)
		h.n[i].fault.drop_pct = h.n[i].fault.dup_pct = h.n[i].fault.reorder_pct =
			h.n[i].fault.corrupt_pct = 0;
	quiesce_and_destroy(&h);
}

/* n requests of 64 bytes from node 0 to node 1 issued before one poll; all verified. */
static void
coalesce_run(unsigned int coalesce_frame, unsigned int split_pct, struct amrma_am_stats *s0,
	     struct amrma_am_stats *s1)
{
	const uint32_t n = 300;
	struct amrma_node_conf c;
	struct harness h;
	struct amrma_ep ep = { .node = 1, .ctx = 0 };
	struct target t = { .n = n };
	uint8_t buf[64];
	uint64_t args[2];
	uint32_t i;
	int ret;

	h_conf(&c);
	c.coalesce_frame = (uint16_t)coalesce_frame;
	echo_nodes(&h, 2, 1, &c);
	if (split_pct) {
		h_faults(&h, 0, 0, 0, 0, 0, 0x5917);
		h_faults(&h, 1, 0, 0, 0, 0, 0x5918);
		h.n[0].fault.split_pct = h.n[1].fault.split_pct = split_pct;
	}
	for (i = 0; i < n; i++) {
		args[0] = i;
		args[1] = fill(buf, i, sizeof(buf));
		/* without coalescing the channel's request slots run out: poll and retry */
		while ((ret = amrma_am_request(h_ctx(&h, 0, 0), ep, H_ECHO, args, 2, buf,
					       sizeof(buf), load_done,
					       (void *)(uintptr_t)i)) == -EAGAIN)
			h_step(&h);
		assert_int_equal(ret, 0);
	}
	assert_true(h_run_until(&h, all_done, &t, 10000));
	check_exactly_once(n);
	amrma_node_stats_get(h.n[0].node, s0);
	amrma_node_stats_get(h.n[1].node, s1);
	assert_int_equal(s1->requests_handled, n);
	assert_int_equal(s0->replies_handled, n);
	if (split_pct)
		assert_true(h.n[0].fault.split > 0 && h.n[1].fault.split > 0);
	quiesce_and_destroy(&h);
}

static void
test_coalesce(void **state)
{
	struct amrma_am_stats s0, s1;
	/* a 64-byte request with 2 arguments takes 12 + 16 + 64 bytes in a shared frame */
	const uint64_t per_frame = 1 + (1514 - (AMRMA_WIRE_HDR_LEN + 16 + 64)) / 92;

	RTE_SET_USED(state);
	coalesce_run(1514, 0, &s0, &s1);
	/* 300 requests left in frames of per_frame, the replies likewise */
	assert_true(s0.tx_coalesced > 0);
	assert_int_equal(s1.rx_coalesced, s0.tx_coalesced);
	assert_int_equal(s0.rx_coalesced, s1.tx_coalesced);
	assert_true(s1.tx_coalesced > 0);
	assert_true(s1.rx_frames - s1.duplicates <= (300 + per_frame - 1) / per_frame +
		    s0.acks_sent);
	printf("coalesced: %" PRIu64 " request frames for 300 requests (%" PRIu64
	       " per frame at most), %" PRIu64 " reply frames\n",
	       s1.rx_frames - s0.acks_sent, per_frame, s0.rx_frames - s1.acks_sent);

	/* off: one frame per message */
	coalesce_run(0, 0, &s0, &s1);
	assert_int_equal(s0.tx_coalesced + s1.tx_coalesced + s0.rx_coalesced + s1.rx_coalesced, 0);
	assert_true(s1.rx_frames >= 300);

	/* frames that arrive in two segments (small RX buffers): the coalesced ones are
	 * parsed from a copy, the others as chains */
	coalesce_run(1514, 50, &s0, &s1);
	assert_true(s1.rx_coalesced > 0);
	assert_int_equal(s0.rx_rejected[AMRMA_WIRE_ERR_TRUNCATED] +
			 s1.rx_rejected[AMRMA_WIRE_ERR_TRUNCATED], 0);
}

/*
 * A request to an idle channel is handed to the port by the call itself, outside any
 * poll; requests behind it (the channel is busy now) wait for the poll and share a frame.
 * Everything is still answered exactly once.
 */
static void
test_idle_channel_at_once(void **state)
{
	struct amrma_ep ep = { .node = 1, .ctx = 0 };
	struct amrma_am_stats before, after;
	struct target t = { .n = 4 };
	struct harness h;
	uint64_t args[2] = { 0, 0 };
	unsigned int i;

	RTE_SET_USED(state);
	echo_nodes(&h, 2, 1, NULL);
	amrma_ctx_stats_get(h_ctx(&h, 0, 0), &before);
	assert_int_equal(amrma_am_request(h_ctx(&h, 0, 0), ep, H_ECHO, args, 2, NULL, 0,
					  load_done, (void *)(uintptr_t)0), 0);
	amrma_ctx_stats_get(h_ctx(&h, 0, 0), &after);
	assert_int_equal(after.tx_frames, before.tx_frames + 1);
	for (i = 1; i < 4; i++) {
		args[0] = i;
		assert_int_equal(amrma_am_request(h_ctx(&h, 0, 0), ep, H_ECHO, args, 2, NULL,
						  0, load_done, (void *)(uintptr_t)i), 0);
	}
	amrma_ctx_stats_get(h_ctx(&h, 0, 0), &after);
	assert_int_equal(after.tx_frames, before.tx_frames + 1);	/* still queued */
	assert_true(h_run_until(&h, all_done, &t, 2000));
	amrma_ctx_stats_get(h_ctx(&h, 0, 0), &after);
	assert_int_equal(after.tx_coalesced - before.tx_coalesced, 2);
	assert_int_equal(L.done_ok, 4);
	for (i = 0; i < 4; i++) {
		assert_int_equal(L.handled[i], 1);
		assert_int_equal(L.replied[i], 1);
	}
	assert_int_equal(L.bad_data, 0);
	quiesce_and_destroy(&h);
}

/*
 * Replies built over their request's frame. Requests: args {id, crc}, payload of len
 * bytes. H_SHIFT replies with four arguments and the request's payload, which must move
 * 16 bytes down the frame; H_KEEP replies the same way but keeps the request's mbuf, which
 * must come back untouched; H_OUTSIDE replies with a payload of its own. The reply
 * handler checks {id, crc, id + 1, ~id} and the payload's crc.
 */
#define OVER_KEEP_MAX 64
static struct rte_mbuf *over_kept[OVER_KEEP_MAX];
static unsigned int over_nb_kept;
static uint8_t over_outside[512];

static int
over_handler(struct amrma_ctx *ctx, amrma_am_token_t tok, const struct amrma_am_msg *msg,
	     void *arg)
{
	uint64_t id = msg->args[0];
	uint64_t out[4] = { id, msg->args[1], id + 1, ~id };
	const void *payload = msg->payload;
	int ret;

	RTE_SET_USED(arg);
	if (id < MAX_IDS)
		L.handled[id]++;
	if (msg->handler == H_OUTSIDE) {
		if (msg->len != 0)
			memcpy(over_outside, msg->payload, msg->len);
		payload = over_outside;
	}
	ret = amrma_am_reply(ctx, tok, H_OVER_REPLY, out, 4, payload, msg->len, 0);
	if (ret != 0 || msg->handler != H_KEEP || over_nb_kept == OVER_KEEP_MAX)
		return ret;
	over_kept[over_nb_kept++] = msg->mbuf;
	return AMRMA_AM_KEEP_MBUF;
}

static int
over_reply_handler(struct amrma_ctx *ctx, amrma_am_token_t tok,
		   const struct amrma_am_msg *msg, void *arg)
{
	uint64_t id = msg->args[0];

	RTE_SET_USED(ctx);
	RTE_SET_USED(tok);
	RTE_SET_USED(arg);
	if (id < MAX_IDS)
		L.replied[id]++;
	if (msg->nargs != 4 || msg->args[2] != id + 1 || msg->args[3] != ~id ||
	    msg->args[1] != rte_hash_crc(msg->payload, msg->len, (uint32_t)id))
		L.bad_data++;
	return 0;
}

static void
test_reply_over_request(void **state)
{
	static const uint16_t handlers[] = { H_SHIFT, H_KEEP, H_OUTSIDE };
	struct amrma_ep ep = { .node = 1, .ctx = 0 };
	struct amrma_am_stats before, after;
	struct amrma_node_conf c;
	struct target t;
	struct harness h;
	uint8_t buf[128];
	uint64_t args[2];
	unsigned int k, i, id;

	RTE_SET_USED(state);
	h_conf(&c);
	assert_int_equal(h_create(&h, 2, 1, &c), 0);
	for (i = 0; i < 2; i++) {
		for (k = 0; k < RTE_DIM(handlers); k++)
			amrma_am_register(h.n[i].node, handlers[k], over_handler, NULL);
		amrma_am_register(h.n[i].node, H_OVER_REPLY, over_reply_handler, NULL);
	}
	memset(&L, 0, sizeof(L));
	over_nb_kept = 0;
	for (k = 0; k < RTE_DIM(handlers); k++) {
		amrma_ctx_stats_get(h_ctx(&h, 1, 0), &before);
		for (i = 0; i < 20; i++) {
			/* one at a time: each request in a frame of its own */
			id = k * 100 + i;
			args[0] = id;
			args[1] = fill(buf, id, (uint16_t)(i * 4));
			assert_int_equal(amrma_am_request(h_ctx(&h, 0, 0), ep, handlers[k], args,
							  2, buf, (uint16_t)(i * 4), load_done,
							  NULL), 0);
			t.n = k * 20 + i + 1;
			assert_true(h_run_until(&h, all_done, &t, 2000));
			assert_int_equal(L.handled[id], 1);
			assert_int_equal(L.replied[id], 1);
		}
		amrma_ctx_stats_get(h_ctx(&h, 1, 0), &after);
		/* H_SHIFT's replies go over their requests, H_OUTSIDE's only when empty
		 * (i == 0), H_KEEP's never (small frames: over net_ring the request's mbuf
		 * is then the target's alone, the sender keeps a copy) */
		assert_int_equal(after.replies_in_place - before.replies_in_place,
				 handlers[k] == H_SHIFT ? 20 : handlers[k] == H_OUTSIDE ? 1 : 0);
	}
	assert_int_equal(L.done_ok, 60);
	assert_int_equal(L.bad_data, 0);
	/* the kept requests are as they came */
	assert_int_equal(over_nb_kept, 20);
	for (i = 0; i < over_nb_kept; i++) {
		struct rte_mbuf *m = over_kept[i];
		struct amrma_wire_view v;
		struct amrma_wire_rx_params rxp = { .skip_csum = true };

		rxp.mac = rte_pktmbuf_mtod(m, struct rte_ether_hdr *)->dst_addr;
		rxp.node_id = 1;
		rxp.udp_base = c.udp_base;
		rxp.nb_ctx = 1;
		assert_int_equal(amrma_wire_parse(rte_pktmbuf_mtod(m, void *),
						  rte_pktmbuf_data_len(m), &rxp, &v),
				 AMRMA_WIRE_OK);
		assert_int_equal(v.hdr.type, AMRMA_WIRE_REQUEST);
		assert_int_equal(v.hdr.handler, H_KEEP);
		assert_int_equal(v.hdr.nargs, 2);
		assert_int_equal(amrma_wire_arg(&v, 0), 100 + i);
		assert_int_equal(amrma_wire_arg(&v, 1),
				 rte_hash_crc(v.payload, v.hdr.payload_len, 100 + i));
		rte_pktmbuf_free(m);
	}
	quiesce_and_destroy(&h);
}

/* one-way sink: args = {id, crc}; counts runs per id, and tries the forbidden reply */
static int sink_reply_ret;

static int
sink_handler(struct amrma_ctx *ctx, amrma_am_token_t tok, const struct amrma_am_msg *msg,
	     void *arg)
{
	uint32_t id = (uint32_t)msg->args[0];

	RTE_SET_USED(arg);
	if (id < MAX_IDS)
		L.handled[id]++;
	if (msg->args[1] != rte_hash_crc(msg->payload, msg->len, id))
		L.bad_data++;
	sink_reply_ret = amrma_am_reply(ctx, tok, H_ECHO_REPLY, NULL, 0, NULL, 0, 0);
	return 0;
}

/*
 * One-way messages (amrma_am_send): under drops, duplicates, reordering and corruption
 * each handler runs exactly once, each done callback once with 0 (the frame was acked),
 * nothing is replied (a reply from the handler is refused), mbuf payloads included; to a
 * peer that stops answering they fail with -ETIMEDOUT.
 */
static void
test_send(void **state)
{
	struct amrma_am_stats s0, s1;
	struct amrma_ep ep = { .node = 1, .ctx = 0 };
	struct target t = { .n = 400 };
	struct amrma_node_conf c;
	struct harness h;
	uint64_t args[2];
	uint8_t buf[300];
	uint32_t i;
	int ret;

	RTE_SET_USED(state);
	echo_nodes(&h, 2, 1, NULL);
	amrma_am_register(h.n[1].node, H_SINK, sink_handler, NULL);
	h_faults(&h, 0, 5, 3, 5, 2, 0x5e4d);
	h_faults(&h, 1, 5, 3, 5, 2, 0x5e4e);
	sink_reply_ret = 0;
	for (i = 0; i < t.n; i++) {
		uint16_t len = (uint16_t)(i % 3 == 0 ? 0 : 1 + i % sizeof(buf));

		args[0] = i;
		args[1] = fill(buf, i, len);
		do {
			if (i % 2 == 0) {
				ret = amrma_am_send(h_ctx(&h, 0, 0), ep, H_SINK, args, 2, buf, len,
						    load_done, NULL);
			} else {
				struct rte_mbuf *m = rte_pktmbuf_alloc(h.pool);

				assert_non_null(m);
				memcpy(rte_pktmbuf_append(m, len), buf, len);
				ret = amrma_am_send_mbuf(h_ctx(&h, 0, 0), ep, H_SINK, args, 2, m,
							 load_done, NULL);
			}
			if (ret == -EAGAIN)
				h_step(&h);
		} while (ret == -EAGAIN);
		assert_int_equal(ret, 0);
	}
	assert_true(h_run_until(&h, all_done, &t, 30000));
	if (L.done_ok != t.n)
		fail_msg("%u sends: %u ok, %u failed (last %d)", t.n, L.done_ok, L.done_err,
			 L.last_err);
	assert_int_equal(L.bad_data, 0);
	for (i = 0; i < t.n; i++)
		if (L.handled[i] != 1)
			fail_msg("send %u handled %u times", i, L.handled[i]);
	assert_int_equal(sink_reply_ret, -EPERM);
	amrma_node_stats_get(h.n[0].node, &s0);
	amrma_node_stats_get(h.n[1].node, &s1);
	assert_int_equal(s1.sends_handled, t.n);
	assert_int_equal(s1.requests_handled + s1.auto_replies + s0.replies_handled, 0);
	assert_int_equal(s1.rule_violations, t.n);
	assert_true(s0.retransmits + s1.retransmits > 0);
	for (i = 0; i < 2; i++)
		h.n[i].fault.drop_pct = h.n[i].fault.dup_pct = h.n[i].fault.reorder_pct =
			h.n[i].fault.corrupt_pct = 0;
	quiesce_and_destroy(&h);

	/* a peer that stops answering: the sends fail, nothing stays held */
	fast_death_conf(&c, 2000, 5);
	assert_int_equal(h_create(&h, 2, 1, &c), 0);
	amrma_am_register(h.n[1].node, H_SINK, sink_handler, NULL);
	memset(&L, 0, sizeof(L));
	h.n[1].frozen = true;
	t.n = 5;
	for (i = 0; i < t.n; i++) {
		args[0] = i;
		args[1] = fill(buf, i, 0);
		assert_int_equal(amrma_am_send(h_ctx(&h, 0, 0), ep, H_SINK, args, 2, NULL, 0,
					       load_done, NULL), 0);
	}
	assert_true(h_run_until(&h, all_done, &t, 2000));
	assert_int_equal(L.done_err, t.n);
	assert_int_equal(L.last_err, -ETIMEDOUT);
	h.n[1].frozen = false;
	quiesce_and_destroy(&h);
}

static void
test_dead_peer(void **state)
{
	struct amrma_node_conf c;
	struct harness h;
	struct amrma_am_stats st;
	struct amrma_ep ep = { .node = 1, .ctx = 0 };
	struct target t = { .n = 10 };
	uint64_t args[2] = { 0, 0 };
	uint64_t t0, elapsed_ms;
	unsigned int i;

	RTE_SET_USED(state);
	fast_death_conf(&c, 2000, 5);
	echo_nodes(&h, 2, 1, &c);
	h.n[1].frozen = true;
	t0 = rte_get_tsc_cycles();
	for (i = 0; i < 10; i++) {
		args[0] = i;
		assert_int_equal(amrma_am_request(h_ctx(&h, 0, 0), ep, H_ECHO, args, 2, NULL, 0,
						  load_done, (void *)(uintptr_t)i), 0);
	}
	/* budget: 0.5 + 1 + 2 + 2 + 2 + 2 ms, checked on timer ticks */
	assert_true(h_run_until(&h, all_done, &t, 2000));
	elapsed_ms = (rte_get_tsc_cycles() - t0) * 1000 / rte_get_tsc_hz();
	assert_true(elapsed_ms < 200);
	assert_int_equal(L.done_err, 10);
	assert_int_equal(L.last_err, -ETIMEDOUT);
	assert_int_equal(amrma_am_request(h_ctx(&h, 0, 0), ep, H_ECHO, args, 2, NULL, 0,
					  load_done, NULL), -ENOTCONN);
	amrma_node_stats_get(h.n[0].node, &st);
	assert_int_equal(st.peers_dead, 1);
	assert_int_equal(st.ops_failed, 10);
	/* the first request left at once (idle channel), the nine behind it together in
	 * one frame. Five timer expiries, then the peer was dead: each resent the older
	 * frame, and the younger one once it had waited a whole timeout (from the first
	 * expiry on, or the second when it left a moment after the first frame) */
	assert_int_equal(st.tx_coalesced, 8);
	assert_int_equal(st.timeouts, 5);
	assert_in_range(st.retransmits, 9, 10);
	h.n[1].frozen = false;
	quiesce_and_destroy(&h);
}

/*
 * Small frames wait for their ack as a copy in the channel's inline store, not as mbufs:
 * while the peer drops everything, small requests hold no mbuf as long as the store has
 * room (TX_INLINE_SLOTS), the rest and long ones one each. When the peer comes back, the
 * frames are resent and every request runs exactly once.
 */
static void
inline_retransmit(uint16_t tx_inline_max)
{
	const uint32_t n_small = TX_INLINE_SLOTS + 8, n_long = 8;
	/* small frames kept as copies while the store has room; none with 0 */
	const uint32_t held_small = tx_inline_max ? n_small - TX_INLINE_SLOTS : n_small;
	struct amrma_ep ep = { .node = 1, .ctx = 0 };
	struct amrma_node_conf c;
	struct amrma_am_stats st;
	struct harness h;
	struct target t = { .n = n_small + n_long };
	uint8_t buf[1000];
	uint64_t args[2];
	uint32_t id;
	unsigned int i;

	h_conf(&c);
	c.tx_inline_max = tx_inline_max;
	c.coalesce_frame = 0;	/* one request per frame: each small one stays small */
	c.max_retries = 1000;	/* the peer is away on purpose, not dead */
	/* no retransmission while the mbufs are counted (they would be in flight) */
	c.rto_us = 100000;
	c.rto_max_us = 200000;
	echo_nodes(&h, 2, 1, &c);
	h_faults(&h, 1, 0, 0, 0, 0, 1);
	h.n[1].fault.blackhole = true;
	for (id = 0; id < n_small; id++) {
		args[0] = id;
		args[1] = fill(buf, id, 8);
		assert_int_equal(amrma_am_request(h_ctx(&h, 0, 0), ep, H_ECHO, args, 2, buf, 8,
						  load_done, (void *)(uintptr_t)id), 0);
	}
	for (i = 0; i < 20; i++)
		h_step(&h);
	/* sent, dropped by the peer, and kept without an mbuf while the store had room */
	assert_int_equal(h_mbufs_in_use(&h), held_small);
	for (; id < n_small + n_long; id++) {
		args[0] = id;
		args[1] = fill(buf, id, sizeof(buf));
		assert_int_equal(amrma_am_request(h_ctx(&h, 0, 0), ep, H_ECHO, args, 2, buf,
						  sizeof(buf), load_done,
						  (void *)(uintptr_t)id), 0);
	}
	for (i = 0; i < 20; i++)
		h_step(&h);
	/* long frames are held by reference until acked */
	assert_int_equal(h_mbufs_in_use(&h), held_small + n_long);
	assert_int_equal(L.handled[0], 0);
	h.n[1].fault.blackhole = false;
	assert_true(h_run_until(&h, all_done, &t, 5000));
	check_exactly_once(n_small + n_long);
	amrma_node_stats_get(h.n[0].node, &st);
	assert_true(st.retransmits >= n_small + n_long);
	assert_int_equal(st.tx_drops, 0);
	quiesce_and_destroy(&h);
}

static void
test_inline_retransmit(void **state)
{
	RTE_SET_USED(state);
	inline_retransmit(TX_INLINE_MAX);
	/* 0: every frame is held by reference (retransmission from held mbufs only) */
	inline_retransmit(0);
}

/* A target that takes the requests then dies before its replies get through. */
static void
test_peer_dies_after_ack(void **state)
{
	struct amrma_node_conf c;
	struct harness h;
	struct amrma_ep ep = { .node = 1, .ctx = 0 };
	struct target t = { .n = 1 };
	uint64_t args[2] = { 7, 0 };

	RTE_SET_USED(state);
	fast_death_conf(&c, 1000, 3);
	echo_nodes(&h, 2, 1, &c);
	/* the request reaches node 1, then node 0 hears nothing more from it */
	assert_int_equal(amrma_am_request(h_ctx(&h, 0, 0), ep, H_ECHO, args, 2, NULL, 0,
					  load_done, (void *)(uintptr_t)7), 0);
	amrma_node_poll(h.n[0].node, 32);	/* request leaves */
	h.n[0].fault.blackhole = true;
	h_faults(&h, 0, 0, 0, 0, 0, 1);
	assert_true(h_run_until(&h, all_done, &t, 2000));
	assert_int_equal(L.done_err, 1);
	assert_int_equal(L.last_err, -ETIMEDOUT);
	assert_int_equal(L.handled[7], 1);
	h.n[0].fault.blackhole = false;
	/* node 1 gives up on its reply too and frees it */
	quiesce_and_destroy(&h);
}

/* --- request/reply rules --- */

struct rules {
	int reply1, reply2, req_in_handler, stale_reply;
	int reply_in_reply, req_in_reply;
	amrma_am_token_t saved;
	struct amrma_ctx *saved_ctx;
	int done_status;
	int done_calls;
	int done_req;
};

static struct rules R;

static int
rules_handler(struct amrma_ctx *ctx, amrma_am_token_t tok, const struct amrma_am_msg *msg,
	      void *arg)
{
	struct amrma_ep back = msg->src;
	uint64_t a = 1;

	RTE_SET_USED(arg);
	R.reply1 = amrma_am_reply(ctx, tok, H_RULES_REPLY, &a, 1, NULL, 0, 0);
	R.reply2 = amrma_am_reply(ctx, tok, H_RULES_REPLY, &a, 1, NULL, 0, 0);
	R.req_in_handler = amrma_am_request(ctx, back, H_ECHO, &a, 1, NULL, 0, load_done,
					    NULL);
	R.saved = tok;
	R.saved_ctx = ctx;
	return 0;
}

static int
rules_reply_handler(struct amrma_ctx *ctx, amrma_am_token_t tok,
		    const struct amrma_am_msg *msg, void *arg)
{
	uint64_t a = 2;

	RTE_SET_USED(arg);
	R.reply_in_reply = amrma_am_reply(ctx, tok, H_RULES_REPLY, &a, 1, NULL, 0, 0);
	R.req_in_reply = amrma_am_request(ctx, msg->src, H_ECHO, &a, 1, NULL, 0, load_done,
					  NULL);
	return 0;
}

static int
fail_handler(struct amrma_ctx *ctx, amrma_am_token_t tok, const struct amrma_am_msg *msg,
	     void *arg)
{
	RTE_SET_USED(ctx);
	RTE_SET_USED(tok);
	RTE_SET_USED(msg);
	RTE_SET_USED(arg);
	return -EIO;
}

static void
rules_done(struct amrma_ctx *ctx, void *arg, int status)
{
	uint64_t a = 3;
	struct amrma_ep ep = { .node = 1, .ctx = 0 };

	RTE_SET_USED(arg);
	R.done_status = status;
	R.done_calls++;
	/* completion callbacks are not handlers: they may issue requests */
	R.done_req = amrma_am_request(ctx, ep, H_NOTHING, &a, 1, NULL, 0, load_done, NULL);
}

static bool
rules_done_cond(void *arg)
{
	return R.done_calls >= *(int *)arg;
}

static void
test_rules(void **state)
{
	struct harness h;
	struct amrma_ep ep = { .node = 1, .ctx = 0 };
	struct amrma_am_stats st;
	uint64_t a = 9;
	uint8_t big[9100];
	int want;

	RTE_SET_USED(state);
	echo_nodes(&h, 2, 1, NULL);
	for (unsigned int i = 0; i < 2; i++) {
		amrma_am_register(h.n[i].node, H_RULES, rules_handler, NULL);
		amrma_am_register(h.n[i].node, H_RULES_REPLY, rules_reply_handler, NULL);
		amrma_am_register(h.n[i].node, H_FAIL, fail_handler, NULL);
		amrma_am_register(h.n[i].node, H_NOTHING, h_nothing_handler, NULL);
	}
	memset(&R, 0, sizeof(R));

	/* reply outside any handler */
	assert_int_equal(amrma_am_reply(h_ctx(&h, 0, 0), 1, H_RULES_REPLY, &a, 1, NULL, 0, 0),
			 -EPERM);
	/* argument and size checks */
	assert_int_equal(amrma_am_request(h_ctx(&h, 0, 0), ep, H_RULES, &a, 9, NULL, 0,
					  rules_done, NULL), -EINVAL);
	assert_int_equal(amrma_am_request(h_ctx(&h, 0, 0), ep, H_RULES, &a, 1, big,
					  sizeof(big), rules_done, NULL), -EMSGSIZE);
	assert_int_equal(amrma_am_request(h_ctx(&h, 0, 0), ep, 300, &a, 1, NULL, 0,
					  rules_done, NULL), -EINVAL);
	ep.node = 5;
	assert_int_equal(amrma_am_request(h_ctx(&h, 0, 0), ep, H_RULES, &a, 1, NULL, 0,
					  rules_done, NULL), -EINVAL);
	ep.node = 1;

	assert_int_equal(amrma_am_request(h_ctx(&h, 0, 0), ep, H_RULES, &a, 1, NULL, 0,
					  rules_done, NULL), 0);
	want = 1;
	assert_true(h_run_until(&h, rules_done_cond, &want, 2000));
	assert_int_equal(R.reply1, 0);
	assert_int_equal(R.reply2, -EALREADY);
	assert_int_equal(R.req_in_handler, -EPERM);
	assert_int_equal(R.reply_in_reply, -EPERM);
	assert_int_equal(R.req_in_reply, -EPERM);
	assert_int_equal(R.done_status, 0);
	assert_int_equal(R.done_req, 0);
	/* the saved token is dead once its handler returned */
	assert_int_equal(amrma_am_reply(R.saved_ctx, R.saved, H_RULES_REPLY, &a, 1, NULL, 0, 0),
			 -EPERM);

	/* a handler returning an error without replying: the initiator sees it */
	assert_int_equal(amrma_am_request(h_ctx(&h, 0, 0), ep, H_FAIL, &a, 1, NULL, 0,
					  rules_done, NULL), 0);
	want = 2;
	assert_true(h_run_until(&h, rules_done_cond, &want, 2000));
	assert_int_equal(R.done_status, -EIO);

	/* an index nobody registered: -ENOENT, counted at the target */
	assert_int_equal(amrma_am_request(h_ctx(&h, 0, 0), ep, 200, &a, 1, NULL, 0,
					  rules_done, NULL), 0);
	want = 3;
	assert_true(h_run_until(&h, rules_done_cond, &want, 2000));
	assert_int_equal(R.done_status, -ENOENT);
	amrma_node_stats_get(h.n[1].node, &st);
	assert_int_equal(st.unknown_handler, 1);
	assert_true(st.rule_violations >= 2);
	amrma_node_stats_get(h.n[0].node, &st);
	assert_true(st.rule_violations >= 3);
	quiesce_and_destroy(&h);
}

/* A port that takes at most tx_cap frames a burst; 0: none (a full queue, a link that
 * is down). The caller keeps what is not sent. */
static uint16_t tx_cap = UINT16_MAX;
static unsigned int tx_blocked_calls;	/* bursts refused whole */

static uint16_t
cap_tx(uint16_t port, uint16_t queue, struct rte_mbuf **pkts, uint16_t n, void *arg)
{
	RTE_SET_USED(port);
	RTE_SET_USED(queue);
	RTE_SET_USED(pkts);
	RTE_SET_USED(arg);
	if (tx_cap == 0 && n != 0)
		tx_blocked_calls++;
	return RTE_MIN(n, tx_cap);
}

/*
 * While the port takes nothing, a request waits in the context and polls report no work
 * (so an idle back-off may sleep), and each poll tries the port at most twice (at its
 * start and end), not 1 + tx_retries times each; once the port takes frames again the
 * request leaves and completes.
 */
static void
test_blocked_port_is_idle(void **state)
{
	struct amrma_ep ep = { .node = 1, .ctx = 0 };
	const struct rte_eth_rxtx_callback *cb;
	struct target t = { .n = 1 };
	struct amrma_am_stats st;
	uint64_t a[2] = { 7, 0 };
	struct harness h;
	unsigned int i;

	RTE_SET_USED(state);
	echo_nodes(&h, 2, 1, NULL);
	cb = rte_eth_add_tx_callback(h.n[0].port, 0, cap_tx, NULL);
	assert_non_null(cb);
	tx_cap = 0;
	tx_blocked_calls = 0;
	assert_int_equal(amrma_am_request(h_ctx(&h, 0, 0), ep, H_ECHO, a, 2, NULL, 0, load_done,
					  (void *)(uintptr_t)7), 0);
	/* the request's own burst found the port full, retries and all */
	assert_int_equal(tx_blocked_calls, 1 + h.n[0].dev.tx_retries);
	for (i = 0; i < 100; i++)
		assert_int_equal(amrma_ctx_poll(h_ctx(&h, 0, 0), 32), 0);
	assert_true(tx_blocked_calls <= 1 + h.n[0].dev.tx_retries + 2 * 100);
	assert_true(tx_blocked_calls >= 1 + h.n[0].dev.tx_retries + 100);
	amrma_ctx_stats_get(h_ctx(&h, 0, 0), &st);
	assert_int_equal(st.tx_frames, 0);
	tx_cap = UINT16_MAX;
	assert_true(amrma_ctx_poll(h_ctx(&h, 0, 0), 32) >= 1);	/* it left */
	assert_true(h_run_until(&h, all_done, &t, 2000));
	assert_int_equal(L.done_ok, 1);
	assert_int_equal(L.handled[7], 1);
	assert_int_equal(L.replied[7], 1);
	assert_int_equal(rte_eth_remove_tx_callback(h.n[0].port, 0, cb), 0);
	rte_free((void *)(uintptr_t)cb);	/* nobody sends now */
	quiesce_and_destroy(&h);
}

/*
 * Frames a port refuses wait in the context's TX queue, in order. Through bursts that
 * take none of many queued frames and bursts that take a few, each request is handled
 * once, in the order it was issued, and completes with its payload intact.
 */
static void
test_tx_queue_keeps_order(void **state)
{
	enum { N = 48 };	/* under the window and the TX queue: all wait in the queue */
	struct amrma_ep ep = { .node = 1, .ctx = 0 };
	const struct rte_eth_rxtx_callback *cb;
	struct target t = { .n = N };
	struct amrma_node_conf c;
	struct amrma_am_stats st;
	struct amrma_ctx *ctx;
	struct harness h;
	uint8_t buf[64];
	uint64_t a[2];
	unsigned int i;

	RTE_SET_USED(state);
	h_conf(&c);
	c.coalesce_frame = 0;	/* a frame per request */
	/* no timer fires in this test: a frame the queue lost or sent twice shows up as a
	 * retransmit or a duplicate, not as a slow success */
	c.rto_us = 1000000;
	c.rto_max_us = 2000000;
	echo_nodes(&h, 2, 1, &c);
	ctx = h_ctx(&h, 0, 0);
	cb = rte_eth_add_tx_callback(h.n[0].port, 0, cap_tx, NULL);
	assert_non_null(cb);
	tx_cap = 0;
	for (i = 0; i < N; i++) {
		a[0] = i;
		a[1] = fill(buf, i, sizeof(buf));
		assert_int_equal(amrma_am_request(ctx, ep, H_ECHO, a, 2, buf, sizeof(buf),
						  load_done, (void *)(uintptr_t)i), 0);
	}
	for (i = 0; i < 20; i++)
		assert_int_equal(amrma_ctx_poll(ctx, 32), 0);
	amrma_ctx_stats_get(ctx, &st);
	assert_int_equal(st.tx_frames, 0);
	assert_int_equal(st.tx_drops, 0);
	tx_cap = 3;
	assert_true(h_run_until(&h, all_done, &t, 5000));
	assert_int_equal(L.done_ok, N);
	assert_int_equal(L.bad_data, 0);
	assert_int_equal(L.nb_order, N);
	for (i = 0; i < N; i++) {
		assert_int_equal(L.handled[i], 1);
		assert_int_equal(L.replied[i], 1);
		assert_int_equal(L.order[i], i);
	}
	amrma_ctx_stats_get(ctx, &st);
	assert_true(st.tx_frames >= N);
	assert_int_equal(st.retransmits, 0);
	amrma_ctx_stats_get(h_ctx(&h, 1, 0), &st);
	assert_int_equal(st.duplicates, 0);
	tx_cap = UINT16_MAX;
	assert_int_equal(rte_eth_remove_tx_callback(h.n[0].port, 0, cb), 0);
	rte_free((void *)(uintptr_t)cb);	/* nobody sends now */
	quiesce_and_destroy(&h);
}

/* Backpressure: the op table and the channel queue are bounded, and say so. */
static void
test_backpressure(void **state)
{
	struct amrma_node_conf c;
	struct harness h;
	struct amrma_ep ep = { .node = 1, .ctx = 0 };
	uint64_t a[2] = { 0, 0 };
	unsigned int ok = 0;
	struct target t;
	int ret;

	RTE_SET_USED(state);
	h_conf(&c);
	c.max_ops = 100;
	echo_nodes(&h, 2, 1, &c);
	while ((ret = amrma_am_request(h_ctx(&h, 0, 0), ep, H_ECHO, a, 2, NULL, 0, load_done,
				       (void *)(uintptr_t)ok)) == 0) {
		ok++;
		a[0] = ok;
	}
	assert_int_equal(ret, -EAGAIN);
	assert_int_equal(ok, 100);
	assert_int_equal(amrma_ctx_outstanding(h_ctx(&h, 0, 0)), 100);
	t.n = 100;
	assert_true(h_run_until(&h, all_done, &t, 5000));
	assert_int_equal(L.done_ok, 100);
	quiesce_and_destroy(&h);
}

/* A peer process restarts: the survivor resets the channel and both work again. */
static void
test_peer_restart(void **state)
{
	struct harness h;
	struct amrma_am_stats st;

	RTE_SET_USED(state);
	echo_nodes(&h, 2, 2, NULL);
	load_exactly_once(&h, 100, 20000);
	/* node 1 dies with requests of its own in flight, then comes back */
	{
		struct amrma_ep ep = { .node = 0, .ctx = 1 };
		uint64_t a[2] = { 0, 0 };

		assert_int_equal(amrma_am_request(h_ctx(&h, 1, 0), ep, H_ECHO, a, 2, NULL, 0,
						  load_done, NULL), 0);
		amrma_node_poll(h.n[1].node, 32);
	}
	assert_int_equal(h_restart_node(&h, 1), 0);
	register_all(&h);
	/* node 0 only knows the old life: its requests are answered by a reset, not lost */
	{
		struct amrma_ep ep = { .node = 1, .ctx = 0 };
		struct target t = { .n = 10 };
		uint64_t a[2] = { 0, 0 }, t0 = rte_get_tsc_cycles();
		unsigned int i;

		memset(&L, 0, sizeof(L));
		for (i = 0; i < 10; i++) {
			/* from both contexts: each learns the new life on its own */
			ep.ctx = (uint8_t)(i % 2);
			assert_int_equal(amrma_am_request(h_ctx(&h, 0, i / 5), ep, H_ECHO, a, 2,
							  NULL, 0, load_done, NULL), 0);
		}
		assert_true(h_run_until(&h, all_done, &t, 2000));
		assert_int_equal(L.done_err, 10);
		assert_int_equal(L.last_err, -ECONNRESET);
		/* well before the retransmit budget would have run out */
		assert_true((rte_get_tsc_cycles() - t0) * 1000 / rte_get_tsc_hz() < 50);
	}
	load_exactly_once(&h, 100, 20000);
	amrma_node_stats_get(h.n[0].node, &st);
	assert_int_equal(st.peer_restarts, 2);	/* once per context of node 0 */
	assert_int_equal(st.peers_dead, 0);
	quiesce_and_destroy(&h);
}

/* done callback that issues its request again once, when it failed (the usual retry) */
static int retry_status[2];
static unsigned int nb_retry_done;

static void
retry_done(struct amrma_ctx *ctx, void *arg, int status)
{
	uintptr_t round = (uintptr_t)arg;
	uint64_t a[2] = { 7, 0 };

	if (round < 2)
		retry_status[round] = status;
	nb_retry_done++;
	if (round == 0 && status != 0)
		retry_status[1] = amrma_am_request(ctx, (struct amrma_ep){ .node = 1 }, H_ECHO,
						   a, 2, NULL, 0, retry_done, (void *)1);
}

/* Node `from` asks every context of node `to` once and waits for the replies. */
static void
speak_to(struct harness *h, unsigned int from, unsigned int to)
{
	uint64_t args[2] = { 0, 0 };
	unsigned int q;

	memset(&L, 0, sizeof(L));
	for (q = 0; q < h->nb_q; q++)
		assert_int_equal(amrma_am_request(h_ctx(h, from, 0),
						  (struct amrma_ep){ .node = (uint16_t)to,
								     .ctx = (uint8_t)q },
						  H_ECHO, args, 2, NULL, 0, load_done, NULL), 0);
	assert_true(h_run_until(h, all_done, &(struct target){ .n = h->nb_q }, 2000));
	assert_int_equal(L.done_ok, h->nb_q);
}

/*
 * Two echo nodes that met, then node 1 hangs (hang) or hears nothing more, and node 0
 * sends it a request that its callback (retry_done) issues again once when it fails.
 */
static void
retry_request(struct harness *h, bool hang)
{
	uint64_t a[2] = { 7, 0 };

	echo_nodes(h, 2, 1, NULL);
	speak_to(h, 0, 1);	/* node 0 knows node 1's first life */
	retry_status[0] = retry_status[1] = 1;
	nb_retry_done = 0;
	if (hang)
		h->n[1].frozen = true;
	else
		h_faults(h, 1, 100, 0, 0, 0, 1);
	assert_int_equal(amrma_am_request(h_ctx(h, 0, 0), (struct amrma_ep){ .node = 1 }, H_ECHO,
					  a, 2, NULL, 0, retry_done, (void *)0), 0);
	h_run_for(h, 2);
}

/*
 * A peer restarts with a request of ours in flight: the request fails with -ECONNRESET,
 * and its callback issues it again, to the peer's new life. Callbacks may issue requests;
 * this one ran while the channel was being reset. Before, its frame was queued in the old
 * numbering, which the reset then discarded: the request never left (it waited until the
 * peer fell silent) and its mbuf leaked.
 */
static void
test_retry_from_reset_callback(void **state)
{
	struct harness h;

	RTE_SET_USED(state);
	retry_request(&h, true);
	assert_int_equal(h_restart_node(&h, 1), 0);
	register_all(&h);
	h.n[1].frozen = false;
	H_UNTIL(nb_retry_done >= 2, 1000, h_step(&h));
	assert_int_equal(retry_status[0], -ECONNRESET);
	assert_int_equal(nb_retry_done, 2);
	assert_int_equal(retry_status[1], 0);
	quiesce_and_destroy(&h);
}

/*
 * The same when the peer leaves (amrma_node_leave() there, its request sent by hand
 * here): the callback's retry is refused at once (-ENOTCONN), as the channel is closed to
 * the life that left. Before, it was queued into the channel, which was then closed over
 * it: the request waited for ever (a dead channel runs no timer).
 */
static void
test_retry_from_leave_callback(void **state)
{
	struct harness h;

	RTE_SET_USED(state);
	/* node 0's request stays unanswered */
	retry_request(&h, false);
	assert_int_equal(amrma_am_request(h_ctx(&h, 1, 0), (struct amrma_ep){ .node = 0 },
					  AMRMA_AM_H_LEAVE, NULL, 0, NULL, 0, load_done, NULL), 0);
	H_UNTIL(nb_retry_done >= 1, 1000, h_step(&h));
	h_run_for(&h, 20);
	assert_int_equal(nb_retry_done, 1);
	assert_int_equal(retry_status[0], -ECONNRESET);
	assert_int_equal(retry_status[1], -ENOTCONN);
	assert_int_equal(amrma_ctx_outstanding(h_ctx(&h, 0, 0)), 0);
	h_faults(&h, 1, 0, 0, 0, 0, 1);
	quiesce_and_destroy(&h);
}

/*
 * Node 1 asks node 0 once, then leaves (is no longer polled). Returns node 0's
 * retransmits after that, with or without amrma_node_quiesce() on node 1 first.
 */
static uint64_t
leave_after_reply(bool quiesce)
{
	struct harness h;
	struct amrma_am_stats st;
	struct amrma_ep ep = { .node = 0, .ctx = 0 };
	struct target t = { .n = 1 };
	uint64_t args[2] = { 1, 0 };

	echo_nodes(&h, 2, 1, NULL);
	assert_int_equal(amrma_am_request(h_ctx(&h, 1, 0), ep, H_ECHO, args, 2, NULL, 0,
					  load_done, (void *)(uintptr_t)1), 0);
	assert_true(h_run_until(&h, all_done, &t, 2000));
	assert_int_equal(L.done_ok, 1);
	/* the reply's ack is still owed (delayed): what a process exiting now leaves */
	assert_int_not_equal(h_ctx(&h, 1, 0)->nb_ack, 0);
	if (quiesce)
		assert_int_equal(amrma_node_quiesce(h.n[1].node, 100000), 0);
	h.n[1].frozen = true;
	h_run_for(&h, 30);	/* 30 times the first retransmit timeout */
	amrma_node_stats_get(h.n[0].node, &st);
	if (quiesce)	/* node 0 is settled: nothing of its own unacknowledged */
		assert_int_equal(amrma_node_quiesce(h.n[0].node, 0), 0);
	h.n[1].frozen = false;
	quiesce_and_destroy(&h);
	return st.retransmits;
}

static void
test_quiesce(void **state)
{
	struct harness h;
	struct amrma_ep ep = { .node = 1, .ctx = 0 };
	uint64_t args[2] = { 2, 0 }, t0, ms;
	uint32_t sid;

	RTE_SET_USED(state);
	/* leaving with the ack owed makes the peer resend its reply; quiescing first not */
	assert_true(leave_after_reply(false) > 0);
	assert_int_equal(leave_after_reply(true), 0);

	/* a peer that never answers: the wait ends at the timeout */
	echo_nodes(&h, 2, 1, NULL);
	assert_int_equal(amrma_node_quiesce(h.n[0].node, 0), 0);	/* nothing sent yet */
	h.n[1].frozen = true;
	assert_int_equal(amrma_am_request(h_ctx(&h, 0, 0), ep, H_ECHO, args, 2, NULL, 0,
					  load_done, (void *)(uintptr_t)2), 0);
	t0 = rte_get_tsc_cycles();
	assert_int_equal(amrma_node_quiesce(h.n[0].node, 20000), -ETIMEDOUT);
	ms = (rte_get_tsc_cycles() - t0) * 1000 / rte_get_tsc_hz();
	assert_true(ms >= 20 && ms < 1000);
	assert_int_equal(L.done_total, 0);	/* the request is still in flight */

	/* while the node's service may run on another lcore, polling here would race it */
	assert_int_equal(amrma_node_service_register(h.n[0].node, &sid), 0);
	assert_int_equal(rte_service_runstate_set(sid, 1), 0);
	/* unmapped, it is not running yet; "mapped" unchecked, it counts as running */
	assert_int_equal(amrma_node_quiesce(h.n[0].node, 0), -ETIMEDOUT);
	assert_int_equal(rte_service_set_runstate_mapped_check(sid, 0), 0);
	assert_int_equal(amrma_node_quiesce(h.n[0].node, 0), -EBUSY);
	assert_int_equal(rte_service_runstate_set(sid, 0), 0);
	assert_int_equal(amrma_node_quiesce(NULL, 0), -EINVAL);

	h.n[1].frozen = false;
	assert_true(h_run_until(&h, all_done, &(struct target){ .n = 1 }, 2000));
	assert_int_equal(L.done_ok, 1);
	quiesce_and_destroy(&h);
}

/* --- amrma_node_leave() --- */

struct leaver {
	struct amrma_node *node;
	uint64_t timeout_us;
	int ret;
	bool done;
};

static void *
leave_thread(void *arg)
{
	struct leaver *l = arg;

	l->ret = amrma_node_leave(l->node, l->timeout_us);
	__atomic_store_n(&l->done, true, __ATOMIC_RELEASE);
	return NULL;
}

static bool
leaver_done(void *arg)
{
	return __atomic_load_n(&((struct leaver *)arg)->done, __ATOMIC_ACQUIRE);
}

/* Node i leaves on a thread of its own while this one runs the switch and the others. */
static int
leave_concurrently(struct harness *h, unsigned int i)
{
	struct leaver l = { .node = h->n[i].node, .timeout_us = 5000000 };
	pthread_t t;

	h->n[i].polled_elsewhere = true;
	assert_int_equal(pthread_create(&t, NULL, leave_thread, &l), 0);
	assert_true(h_run_until(h, leaver_done, &l, 20000));
	assert_int_equal(pthread_join(t, NULL), 0);
	h->n[i].polled_elsewhere = false;
	return l.ret;
}

/* A frame of zeros on node's RX queue q: whoever polls the queue takes (and rejects) it. */
static void
put_junk(struct harness *h, unsigned int node, unsigned int q)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(h->pool);

	assert_non_null(m);
	memset(rte_pktmbuf_append(m, 64), 0, 64);
	assert_int_equal(rte_ring_sp_enqueue(h->n[node].rx[q], m), 0);
}

static void
assert_parked(struct harness *h, unsigned int node, bool parked)
{
	unsigned int q;

	for (q = 0; q < h->nb_q; q++)
		assert_int_equal(h_ctx(h, node, q)->parked, parked);
}

/* An echo load both ways, then node 1 leaves; node 0's counters and state after it. */
static void
load_then_leave(struct harness *h, uint32_t per_pair, uint64_t left, uint64_t parks,
		bool parked)
{
	struct amrma_am_stats st;

	load_exactly_once(h, per_pair, 5000);
	assert_int_equal(leave_concurrently(h, 1), 0);
	amrma_node_stats_get(h->n[0].node, &st);
	assert_int_equal(st.peers_left, left);
	assert_int_equal(st.parks, parks);
	assert_parked(h, 0, parked);
}

static void
test_leave(void **state)
{
	struct amrma_am_stats st;
	struct harness h;
	unsigned int q, waiting;
	uint64_t t0, ms;

	RTE_SET_USED(state);
	echo_nodes(&h, 2, 2, NULL);
	/* node 0's port behaves like net_memif: its link goes with its one peer */
	h.n[0].dev.link_per_peer = true;
	assert_int_equal(amrma_am_register(h.n[0].node, AMRMA_AM_H_LEAVE, echo_handler, NULL),
			 -EINVAL);
	/* node 1 leaves: every context of node 0 answers, closes its channels to node 1
	 * and parks */
	load_then_leave(&h, 20, 2, 2, true);
	for (q = 0; q < 2; q++)
		assert_int_equal(amrma_ctx_outstanding(h_ctx(&h, 0, q)), 0);
	/* nothing held for node 1 any more: the frames not in the pool are node 1's last
	 * acks, which wait on node 0's RX queues (over memif they vanish with the rings) */
	h_step(&h);
	assert_int_equal(h_mbufs_in_use(&h),
			 rte_ring_count(h.n[0].rx[0]) + rte_ring_count(h.n[0].rx[1]));

	/* parked, node 0 does not touch its port; the link going down is not enough */
	h.n[1].frozen = true;	/* node 1's process exits */
	put_junk(&h, 0, 0);
	put_junk(&h, 0, 1);
	waiting = rte_ring_count(h.n[0].rx[0]) + rte_ring_count(h.n[0].rx[1]);
	h_run_for(&h, 20);
	assert_int_equal(rte_ring_count(h.n[0].rx[0]) + rte_ring_count(h.n[0].rx[1]), waiting);
	assert_int_equal(rte_eth_dev_set_link_down(h.n[0].port), 0);
	h_run_for(&h, 20);
	assert_parked(&h, 0, true);
	assert_int_equal(rte_ring_count(h.n[0].rx[0]) + rte_ring_count(h.n[0].rx[1]), waiting);
	/* up again (the next peer attached): node 0 polls its port again */
	assert_int_equal(rte_eth_dev_set_link_up(h.n[0].port), 0);
	h_step(&h);
	assert_parked(&h, 0, false);
	h_step(&h);
	assert_int_equal(rte_ring_count(h.n[0].rx[0]) + rte_ring_count(h.n[0].rx[1]), 0);

	/* node 0's channels to node 1 stay closed to the life that left: its last acks
	 * were dropped, requests to it fail */
	assert_int_equal(amrma_am_request(h_ctx(&h, 0, 0), (struct amrma_ep){ .node = 1 },
					  H_ECHO, NULL, 0, NULL, 0, load_done, NULL), -ENOTCONN);
	/* ...until node 1's next life speaks (a restart for each of node 0's contexts) */
	assert_int_equal(h_restart_node(&h, 1), 0);
	register_all(&h);
	h.n[1].frozen = false;
	speak_to(&h, 1, 0);
	/* then a link that never goes down: parked contexts resume after half a second */
	load_then_leave(&h, 20, 4, 4, true);
	amrma_node_stats_get(h.n[0].node, &st);
	assert_int_equal(st.peer_restarts, 2);
	t0 = rte_get_tsc_cycles();
	while (h_ctx(&h, 0, 0)->parked || h_ctx(&h, 0, 1)->parked)
		h_step(&h);
	ms = (rte_get_tsc_cycles() - t0) * 1000 / rte_get_tsc_hz();
	assert_true(ms >= 450 && ms < 3000);

	/* on other ports the peers close their channels but do not park */
	h.n[0].dev.link_per_peer = false;
	assert_int_equal(h_restart_node(&h, 1), 0);
	register_all(&h);
	speak_to(&h, 1, 0);
	load_then_leave(&h, 5, 6, 4, false);
	assert_int_equal(amrma_am_request(h_ctx(&h, 0, 1), (struct amrma_ep){ .node = 1 },
					  H_ECHO, NULL, 0, NULL, 0, load_done, NULL), -ENOTCONN);
	quiesce_and_destroy(&h);
}

static int leave_inside_ret, quiesce_inside_ret;

/* a completion callback (it runs inside a poll, where requests are allowed) that tries
 * to leave */
static void
leave_inside_done(struct amrma_ctx *ctx, void *arg, int status)
{
	load_done(ctx, arg, status);
	leave_inside_ret = amrma_node_leave(amrma_ctx_node(ctx), 0);
	quiesce_inside_ret = amrma_node_quiesce(amrma_ctx_node(ctx), 0);
}

/* Leaving toward a peer that does not answer ends at the timeout; rules. */
/*
 * Two peers whose leave requests reach a context in the same poll: it closes its channels
 * to both (one pending leave at a time lost the first), also one that never heard from
 * its peer, which the peer's next life then finds open.
 */
static void
test_two_leave_at_once(void **state)
{
	struct amrma_ep to0 = { .node = 0, .ctx = 0 };
	uint64_t args[2] = { 0, 0 };	/* echo_handler: no payload asked */
	struct amrma_am_stats st;
	struct harness h;
	uint16_t i;

	RTE_SET_USED(state);
	echo_nodes(&h, 3, 2, NULL);
	speak_to(&h, 0, 1);
	/* node 0's context 0 hears from node 2's context 0 only */
	memset(&L, 0, sizeof(L));
	assert_int_equal(amrma_am_request(h_ctx(&h, 0, 0), (struct amrma_ep){ .node = 2 },
					  H_ECHO, args, 2, NULL, 0, load_done, NULL), 0);
	assert_true(h_run_until(&h, all_done, &(struct target){ .n = 1 }, 2000));
	/* both requests wait on node 0's queue while it is not polled */
	memset(&L, 0, sizeof(L));
	h.n[0].polled_elsewhere = true;
	for (i = 1; i <= 2; i++)
		assert_int_equal(amrma_am_request(h_ctx(&h, i, 0), to0, AMRMA_AM_H_LEAVE, NULL, 0,
						  NULL, 0, load_done, NULL), 0);
	h_step(&h);	/* nodes 1 and 2 send */
	h_step(&h);	/* the switch moves them */
	/* theirs, and perhaps acks that were due: one burst takes them all */
	assert_true(rte_ring_count(h.n[0].rx[0]) >= 2 && rte_ring_count(h.n[0].rx[0]) < 32);
	h.n[0].polled_elsewhere = false;
	amrma_ctx_poll(h_ctx(&h, 0, 0), 32);
	amrma_node_stats_get(h.n[0].node, &st);
	assert_int_equal(st.peers_left, 2);
	for (i = 1; i <= 2; i++)
		assert_int_equal(amrma_am_request(h_ctx(&h, 0, 0), (struct amrma_ep){ .node = i },
						  H_ECHO, args, 2, NULL, 0, load_done, NULL),
				 -ENOTCONN);
	/* both got their answer */
	assert_true(h_run_until(&h, all_done, &(struct target){ .n = 2 }, 2000));
	assert_int_equal(L.done_ok, 2);
	/* node 2's next life, from the context node 0 never heard from, is served */
	assert_int_equal(h_restart_node(&h, 2), 0);
	register_all(&h);
	memset(&L, 0, sizeof(L));
	assert_int_equal(amrma_am_request(h_ctx(&h, 2, 1), to0, H_ECHO, args, 2, NULL, 0,
					  load_done, NULL), 0);
	assert_true(h_run_until(&h, all_done, &(struct target){ .n = 1 }, 2000));
	assert_int_equal(L.done_ok, 1);
	h_destroy(&h);
}

/*
 * The ack of a LEAVE is lost: node 0 closed its channels to node 1 on the first copy and
 * drops what node 1's life sends, but acks the copy node 1 sends again, so node 1 leaves
 * with 0. It waited out its retries (-ETIMEDOUT) when the answer was a reply, which a
 * closed channel could not send again. Node 0 ran the LEAVE once.
 */
static void
test_leave_ack_lost(void **state)
{
	struct leaver l = { .timeout_us = 5000000 };
	struct amrma_am_stats st0, st;
	struct harness h;
	pthread_t t;

	RTE_SET_USED(state);
	echo_nodes(&h, 2, 1, NULL);
	load_exactly_once(&h, 20, 5000);
	amrma_node_stats_get(h.n[0].node, &st0);
	h_faults(&h, 1, 0, 0, 0, 0, 1);
	l.node = h.n[1].node;
	h.n[1].polled_elsewhere = true;
	assert_int_equal(pthread_create(&t, NULL, leave_thread, &l), 0);
	/* node 0 ran the LEAVE in the last step: its ack waits on node 0's TX ring, and the
	 * next step's switch hands it to a node 1 that hears nothing for now */
	assert_true(H_UNTIL((amrma_node_stats_get(h.n[0].node, &st), st.peers_left == 1),
			    10000, h_step(&h)));
	h.n[1].fault.blackhole = true;
	/* node 0 closed, and got the LEAVE again */
	assert_true(H_UNTIL((amrma_node_stats_get(h.n[0].node, &st),
			     st.duplicates > st0.duplicates), 10000, h_step(&h)));
	assert_false(leaver_done(&l));
	h.n[1].fault.blackhole = false;
	assert_true(h_run_until(&h, leaver_done, &l, 20000));
	assert_int_equal(pthread_join(t, NULL), 0);
	h.n[1].polled_elsewhere = false;
	assert_int_equal(l.ret, 0);
	amrma_node_stats_get(h.n[0].node, &st);
	assert_int_equal(st.peers_left, 1);
	assert_int_equal(st.sends_handled - st0.sends_handled, 1);
	/* closed: what node 1's life sends runs nothing */
	assert_int_equal(st.requests_handled, st0.requests_handled);
	h_destroy(&h);
}

/*
 * A context that only asks: its channel closed with the life of the peer that left, and
 * the peer's next life spoke only to another context of this node. That context's
 * requests must reach the new life (they failed with -ENOTCONN for good before: a
 * target's context pulling a striped send's portion from a restarted initiator).
 */
static void
test_back_through_another_ctx(void **state)
{
	const struct amrma_ep n0c0 = { .node = 0, .ctx = 0 }, n1c1 = { .node = 1, .ctx = 1 };
	uint64_t args[2] = { 7, 0 };
	struct harness h;
	int ok = 0;

	RTE_SET_USED(state);
	echo_nodes(&h, 2, 2, NULL);
	load_exactly_once(&h, 20, 5000);
	assert_int_equal(leave_concurrently(&h, 1), 0);
	assert_int_equal(h_restart_node(&h, 1), 0);
	register_all(&h);
	/* nobody here heard the new life yet */
	assert_int_equal(amrma_am_request(h_ctx(&h, 0, 1), n1c1, H_ECHO, args, 2, NULL, 0,
					  h_count_ok, &ok), -ENOTCONN);
	/* it speaks to context 0 only */
	assert_int_equal(amrma_am_request(h_ctx(&h, 1, 0), n0c0, H_ECHO, args, 2, NULL, 0,
					  h_count_ok, &ok), 0);
	assert_true(H_UNTIL(ok == 1, 2000, h_step(&h)));
	/* context 1 now reaches it too, and it answers */
	assert_int_equal(amrma_am_request(h_ctx(&h, 0, 1), n1c1, H_ECHO, args, 2, NULL, 0,
					  h_count_ok, &ok), 0);
	assert_true(H_UNTIL(ok == 2, 2000, h_step(&h)));
	quiesce_and_destroy(&h);
}

static void
test_leave_errors(void **state)
{
	struct amrma_ep ep = { .node = 0, .ctx = 0 };
	uint64_t args[2] = { 1, 0 }, t0, ms;
	struct harness h;
	uint32_t sid;

	RTE_SET_USED(state);
	echo_nodes(&h, 2, 1, NULL);
	/* nobody heard from: nothing to ask */
	assert_int_equal(amrma_node_leave(h.n[1].node, 0), 0);
	/* not from inside a poll */
	assert_int_equal(amrma_am_request(h_ctx(&h, 1, 0), ep, H_ECHO, args, 2, NULL, 0,
					  leave_inside_done, NULL), 0);
	assert_true(h_run_until(&h, all_done, &(struct target){ .n = 1 }, 2000));
	assert_int_equal(leave_inside_ret, -EPERM);
	assert_int_equal(quiesce_inside_ret, -EPERM);
	memset(&L, 0, sizeof(L));
	assert_int_equal(amrma_am_request(h_ctx(&h, 1, 0), ep, H_ECHO, args, 2, NULL, 0,
					  load_done, (void *)(uintptr_t)1), 0);
	assert_true(h_run_until(&h, all_done, &(struct target){ .n = 1 }, 2000));
	h.n[0].frozen = true;
	t0 = rte_get_tsc_cycles();
	assert_int_equal(amrma_node_leave(h.n[1].node, 20000), -ETIMEDOUT);
	ms = (rte_get_tsc_cycles() - t0) * 1000 / rte_get_tsc_hz();
	assert_true(ms >= 20 && ms < 1000);

	assert_int_equal(amrma_node_leave(NULL, 0), -EINVAL);
	assert_int_equal(amrma_node_service_register(h.n[1].node, &sid), 0);
	assert_int_equal(rte_service_runstate_set(sid, 1), 0);
	assert_int_equal(rte_service_set_runstate_mapped_check(sid, 0), 0);
	assert_int_equal(amrma_node_leave(h.n[1].node, 0), -EBUSY);
	assert_int_equal(rte_service_runstate_set(sid, 0), 0);
	assert_int_equal(rte_service_set_runstate_mapped_check(sid, 1), 0);
	h.n[0].frozen = false;
	quiesce_and_destroy(&h);
}

/*
 * A leave that timed out, then another once the peer is back: the peer answers the first
 * call's requests late, and the second call must neither wait for answers it cannot get
 * (the peer closed its channels to this life) nor count the first call's answers as its
 * own.
 */
static void
test_leave_again_after_timeout(void **state)
{
	struct amrma_am_stats st;
	struct harness h;

	RTE_SET_USED(state);
	echo_nodes(&h, 2, 2, NULL);
	speak_to(&h, 1, 0);
	h.n[0].frozen = true;
	assert_int_equal(amrma_node_leave(h.n[1].node, 20000), -ETIMEDOUT);
	h.n[0].frozen = false;
	assert_int_equal(leave_concurrently(&h, 1), 0);
	amrma_node_stats_get(h.n[0].node, &st);
	/* each of node 0's contexts heard the leave once */
	assert_int_equal(st.peers_left, 2);
	/* and a third call has nobody left to ask */
	assert_int_equal(amrma_node_leave(h.n[1].node, 0), 0);
	quiesce_and_destroy(&h);
}

/* ---- found in review (session 17) ---- */
static int rv_status[4];
static unsigned int rv_called[4];

static void
rv_done(struct amrma_ctx *ctx, void *arg, int status)
{
	RTE_SET_USED(ctx);
	rv_status[(uintptr_t)arg] = status;
	rv_called[(uintptr_t)arg]++;
}

static bool
rv_called_cond(void *arg)
{
	return rv_called[(uintptr_t)arg] != 0;
}

static void
drain_ring(struct rte_ring *r)
{
	struct rte_mbuf *m;

	while (rte_ring_dequeue(r, (void **)&m) == 0)
		rte_pktmbuf_free(m);
}

/*
 * Node 0 sends R1 before it knows node 1's life (dst_epoch 0) and learns that life from
 * node 1's request Q. Node 1 handles R1, then restarts before anything it sent leaves.
 * The retransmission of R1 must now name the old life, so that the new one refuses it and
 * node 0 resets its channel; taken by the new life, it left the two sides' sequence spaces
 * out of step: R3 was acknowledged as a duplicate, never ran, and the channel died.
 */
static void
test_restart_retransmit_names_life(void **state)
{
	struct amrma_am_stats st0, st1;
	struct harness h;
	uint64_t a[2] = { 1, 0 };

	RTE_SET_USED(state);
	echo_nodes(&h, 2, 1, NULL);
	memset(rv_called, 0, sizeof(rv_called));
	assert_int_equal(amrma_am_request(h_ctx(&h, 0, 0), (struct amrma_ep){ .node = 1 },
					  H_ECHO, a, 2, NULL, 0, rv_done, (void *)1), 0);
	a[0] = 2;
	assert_int_equal(amrma_am_request(h_ctx(&h, 1, 0), (struct amrma_ep){ .node = 0 },
					  H_ECHO, a, 2, NULL, 0, rv_done, (void *)2), 0);
	h_step(&h);	/* node 1 handles R1, node 0 handles Q */
	assert_int_equal(L.handled[1], 1);
	assert_int_equal(h_restart_node(&h, 1), 0);
	register_all(&h);
	drain_ring(h.n[1].tx[0]);	/* nothing of node 1's old life leaves */
	drain_ring(h.n[0].tx[0]);	/* nor node 0's answer to Q */
	drain_ring(h.n[1].rx[0]);
	assert_true(h_run_until(&h, rv_called_cond, (void *)1, 3000));
	/* R1 ran once, in the life that took it; the reset fails it */
	assert_int_equal(rv_status[1], -ECONNRESET);
	assert_int_equal(L.handled[1], 1);
	h_run_for(&h, 20);
	a[0] = 3;
	assert_int_equal(amrma_am_request(h_ctx(&h, 0, 0), (struct amrma_ep){ .node = 1 },
					  H_ECHO, a, 2, NULL, 0, rv_done, (void *)3), 0);
	assert_true(h_run_until(&h, rv_called_cond, (void *)3, 3000));
	amrma_node_stats_get(h.n[0].node, &st0);
	amrma_node_stats_get(h.n[1].node, &st1);
	assert_int_equal(rv_status[3], 0);
	assert_int_equal(L.handled[3], 1);
	assert_int_equal(st0.peer_restarts, 1);
	assert_int_equal(st0.bad_ack, 0);
	assert_int_equal(st0.peers_dead, 0);
	assert_int_equal(st1.duplicates, 0);
	assert_true(st1.stale_epoch >= 1);	/* the named retransmission, refused */
	quiesce_and_destroy(&h);
}

/* A frame of node 0's made by hand into node 1's receive ring, then a step. */
static void
inject_from_0(struct harness *h, uint8_t type, uint16_t handler, const uint64_t *args,
	      unsigned int nargs, uint32_t seq, uint32_t src_epoch, uint32_t dst_epoch)
{
	struct amrma_wire_addr a = {
		.src_mac = h->n[0].dev.mac, .dst_mac = h->n[1].dev.mac,
		.src_ip = h->n[0].ip, .dst_ip = h->n[1].ip, .udp_base = h->conf.udp_base,
	};
	struct amrma_wire_fields f = {
		.type = type, .handler = handler, .nargs = (uint8_t)nargs, .dst_node = 1,
		.seq = seq, .token = 1, .src_epoch = src_epoch, .dst_epoch = dst_epoch,
	};
	struct rte_mbuf *m = rte_pktmbuf_alloc(h->pool);
	char *p;

	assert_non_null(m);
	p = rte_pktmbuf_append(m, (uint16_t)amrma_wire_hdr_len(nargs));
	assert_non_null(p);
	assert_true(amrma_wire_build(p, amrma_wire_hdr_len(nargs), &a, &f, args, NULL,
				     true) > 0);
	assert_int_equal(rte_ring_sp_enqueue(h->n[1].rx[0], m), 0);
	h_step(h);
}

/*
 * Epoch 0 is no node's life: in a channel it means "not known yet". A frame naming it as
 * its sender's, from a peer whose life is 2^31 or more past 0 (real epochs are, half of
 * the time), counted as a restart: the channel was reset to "life not known", and the
 * old life's retransmission of a request that had run was taken for a first contact and
 * ran again. chan_fuzz drove node 1's channels there.
 */
static void
test_src_epoch_zero(void **state)
{
	const uint32_t life = UINT32_C(0x80000001);
	uint64_t a[2] = { 9, 0 };
	struct amrma_am_stats st;
	struct harness h;

	RTE_SET_USED(state);
	echo_nodes(&h, 2, 1, NULL);
	h.n[0].frozen = true;	/* node 0's frames are made here */
	inject_from_0(&h, AMRMA_WIRE_REQUEST, H_ECHO, a, 2, 0, life, 0);
	assert_int_equal(L.handled[9], 1);
	inject_from_0(&h, AMRMA_WIRE_ACK, AMRMA_WIRE_NO_HANDLER, NULL, 0, 0, 0,
		      amrma_node_epoch(h.n[1].node));
	/* the request again, as if node 1's ack of it was lost */
	inject_from_0(&h, AMRMA_WIRE_REQUEST, H_ECHO, a, 2, 0, life, 0);
	amrma_node_stats_get(h.n[1].node, &st);
	assert_int_equal(L.handled[9], 1);
	assert_int_equal(st.peer_restarts, 0);
	assert_int_equal(st.stale_epoch, 1);
	assert_int_equal(st.duplicates, 1);
	assert_int_equal(amrma_ctx_peer_epoch(h_ctx(&h, 1, 0), (struct amrma_ep){ .node = 0 },
					      NULL), life);
	/* node 1's reply to that life is never acknowledged: the node's end frees it */
	h_destroy(&h);
}

static uint8_t big_reply[1200];

static int
big_reply_handler(struct amrma_ctx *ctx, amrma_am_token_t tok, const struct amrma_am_msg *msg,
		  void *arg)
{
	RTE_SET_USED(msg);
	RTE_SET_USED(arg);
	return amrma_am_reply(ctx, tok, AMRMA_WIRE_NO_HANDLER, NULL, 0, big_reply,
			      sizeof(big_reply), 0);
}

/*
 * A reply built over its request stays open for the replies to the frames after it. Node
 * 1's frames come from a pool of 320-byte mbufs (as a NIC's RX pool may be smaller than the
 * node's): the big reply to its second request must not be appended to the first reply's
 * frame, which wrote 974 bytes past that mbuf.
 */
static void
test_open_reply_in_small_mbuf(void **state)
{
	struct rte_mempool *small;
	struct amrma_node_conf c;
	struct harness h;
	struct rte_mbuf *m;
	unsigned int frames = 0;
	uint64_t a[1] = { 0 };

	RTE_SET_USED(state);
	echo_nodes(&h, 2, 1, NULL);
	small = rte_pktmbuf_pool_create("am_small", 1023, 0, 0, RTE_PKTMBUF_HEADROOM + 320,
					SOCKET_ID_ANY);
	assert_non_null(small);
	amrma_node_destroy(h.n[1].node);
	c = h.conf;
	c.node_id = 1;
	c.ip = h.n[1].ip;
	c.dev = &h.n[1].dev;
	c.pool = small;
	assert_int_equal(amrma_node_create(&c, &h.n[1].node), 0);
	assert_int_equal(amrma_node_add_peer(h.n[1].node, 0, &h.n[0].dev.mac, h.n[0].ip, 1), 0);
	amrma_am_register(h.n[0].node, H_NOTHING, h_nothing_handler, NULL);
	amrma_am_register(h.n[0].node, H_SINK, big_reply_handler, NULL);
	memset(rv_called, 0, sizeof(rv_called));
	/* a first exchange: both know each other */
	assert_int_equal(amrma_am_request(h_ctx(&h, 1, 0), (struct amrma_ep){ .node = 0 },
					  H_NOTHING, a, 1, NULL, 0, rv_done, (void *)1), 0);
	assert_true(h_run_until(&h, rv_called_cond, (void *)1, 2000));
	h_run_for(&h, 5);
	assert_int_equal(amrma_am_request(h_ctx(&h, 1, 0), (struct amrma_ep){ .node = 0 },
					  H_NOTHING, a, 1, NULL, 0, rv_done, (void *)2), 0);
	assert_int_equal(amrma_am_request(h_ctx(&h, 1, 0), (struct amrma_ep){ .node = 0 },
					  H_SINK, a, 1, NULL, 0, rv_done, (void *)3), 0);
	h.n[1].polled_elsewhere = true;	/* node 1's replies wait in its ring */
	amrma_node_poll(h.n[1].node, 32);	/* both requests leave */
	h_step(&h);	/* node 0 takes both in one burst and replies */
	while (rte_ring_dequeue(h.n[0].tx[0], (void **)&m) == 0) {
		assert_true(m->data_off + m->data_len <= m->buf_len);
		frames++;
		rte_pktmbuf_free(m);
	}
	assert_int_equal(frames, 2);	/* the big reply went in a frame of its own */
	h_destroy(&h);
	rte_mempool_free(small);
}

static struct rte_mbuf *hoard[20000];
static unsigned int nb_hoard;
static struct rte_mbuf *hoard_kept;

/* the pool runs dry while the handler runs, and the handler keeps the request's mbuf */
static int
hoard_handler(struct amrma_ctx *ctx, amrma_am_token_t tok, const struct amrma_am_msg *msg,
	      void *arg)
{
	struct rte_mempool *mp = amrma_ctx_pool(ctx);
	struct rte_mbuf *m;

	RTE_SET_USED(tok);
	RTE_SET_USED(arg);
	while (nb_hoard < RTE_DIM(hoard) && (m = rte_pktmbuf_alloc(mp)) != NULL)
		hoard[nb_hoard++] = m;
	hoard_kept = msg->mbuf;
	return AMRMA_AM_KEEP_MBUF;
}

/*
 * The reply of a request whose handler ran with the pool empty must still go out: the
 * request is acknowledged already, so a lost reply left its operation waiting for as
 * long as the initiator kept the channel busy. Each request frame is taken only with an
 * mbuf set aside for its reply.
 */
static void
test_reply_with_pool_empty(void **state)
{
	struct amrma_am_stats st;
	struct harness h;
	uint64_t a[2] = { 7, 0 };
	unsigned int i;

	RTE_SET_USED(state);
	echo_nodes(&h, 2, 1, NULL);
	amrma_am_register(h.n[1].node, H_KEEP, hoard_handler, NULL);
	memset(rv_called, 0, sizeof(rv_called));
	nb_hoard = 0;
	assert_int_equal(amrma_am_request(h_ctx(&h, 0, 0), (struct amrma_ep){ .node = 1 },
					  H_KEEP, a, 2, NULL, 0, rv_done, (void *)1), 0);
	for (i = 0; i < 5 && nb_hoard == 0; i++)
		h_step(&h);
	assert_true(nb_hoard > 0);
	amrma_node_stats_get(h.n[1].node, &st);
	assert_int_equal(st.reply_spares, 0);	/* the reply took the one set aside */
	rte_pktmbuf_free_bulk(hoard, nb_hoard);
	rte_pktmbuf_free(hoard_kept);
	assert_true(h_run_until(&h, rv_called_cond, (void *)1, 2000));
	assert_int_equal(rv_status[1], 0);
	quiesce_and_destroy(&h);
}

static int nested_ret[2];

/* a handler that polls its own context: the nested poll would dispatch another request */
static int
nested_poll_handler(struct amrma_ctx *ctx, amrma_am_token_t tok,
		    const struct amrma_am_msg *msg, void *arg)
{
	RTE_SET_USED(msg);
	RTE_SET_USED(arg);
	nested_ret[0] = amrma_ctx_poll(ctx, 32);
	nested_ret[1] = amrma_node_poll(amrma_ctx_node(ctx), 32);
	return amrma_am_reply(ctx, tok, AMRMA_WIRE_NO_HANDLER, NULL, 0, NULL, 0, 0);
}

/*
 * Polling a context from inside its own poll is refused: a nested poll that ran another
 * request's handler overwrote the running handler's token, whose reply then failed with
 * -EPERM and whose request never completed.
 */
static void
test_nested_poll_refused(void **state)
{
	struct harness h;
	uint64_t a[1] = { 0 };
	unsigned int i;

	RTE_SET_USED(state);
	echo_nodes(&h, 2, 1, NULL);
	amrma_am_register(h.n[1].node, H_NESTED, nested_poll_handler, NULL);
	memset(rv_called, 0, sizeof(rv_called));
	nested_ret[0] = nested_ret[1] = 1;
	/* two requests in one burst: the first handler's nested poll would take the second */
	for (i = 1; i <= 2; i++)
		assert_int_equal(amrma_am_request(h_ctx(&h, 0, 0), (struct amrma_ep){ .node = 1 },
						  H_NESTED, a, 1, NULL, 0, rv_done,
						  (void *)(uintptr_t)i), 0);
	assert_true(h_run_until(&h, rv_called_cond, (void *)2, 2000));
	assert_true(h_run_until(&h, rv_called_cond, (void *)1, 2000));
	assert_int_equal(nested_ret[0], -EPERM);
	assert_int_equal(nested_ret[1], -EPERM);
	assert_int_equal(rv_status[1], 0);
	assert_int_equal(rv_status[2], 0);
	quiesce_and_destroy(&h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_nodes),
		cmocka_unit_test(test_send),
		cmocka_unit_test(test_csum_modes),
		cmocka_unit_test(test_split_frames_checksum),
		cmocka_unit_test(test_request_mbuf_odd_segments),
		cmocka_unit_test(test_rules),
		cmocka_unit_test(test_backpressure),
		cmocka_unit_test(test_three_nodes_many_contexts),
		cmocka_unit_test(test_faults),
		cmocka_unit_test(test_dead_peer),
		cmocka_unit_test(test_inline_retransmit),
		cmocka_unit_test(test_coalesce),
		cmocka_unit_test(test_idle_channel_at_once),
		cmocka_unit_test(test_reply_over_request),
		cmocka_unit_test(test_blocked_port_is_idle),
		cmocka_unit_test(test_tx_queue_keeps_order),
		cmocka_unit_test(test_peer_dies_after_ack),
		cmocka_unit_test(test_peer_restart),
		cmocka_unit_test(test_retry_from_reset_callback),
		cmocka_unit_test(test_retry_from_leave_callback),
		cmocka_unit_test(test_quiesce),
		cmocka_unit_test(test_leave),
		cmocka_unit_test(test_back_through_another_ctx),
		cmocka_unit_test(test_two_leave_at_once),
		cmocka_unit_test(test_leave_ack_lost),
		cmocka_unit_test(test_leave_errors),
		cmocka_unit_test(test_leave_again_after_timeout),
		cmocka_unit_test(test_restart_retransmit_names_life),
		cmocka_unit_test(test_src_epoch_zero),
		cmocka_unit_test(test_open_reply_in_small_mbuf),
		cmocka_unit_test(test_reply_with_pool_empty),
		cmocka_unit_test(test_nested_poll_refused),
	};

	h_eal_init("amrma_test_am");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
