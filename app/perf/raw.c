/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The raw capability of the link, measured the same way as the AM round trip but without
 * amrma: the client sends one UDP frame as long as the AM request would be and waits for
 * it to come back; raw-serve swaps MAC, IP and UDP ports and sends each frame straight back.
 * Plain ethdev bursts on queue 0: no reliability, no checksums (UDP checksum 0), no parsing
 * beyond the swap.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_udp.h>

#include "perf.h"

#define RAW_UDP_PORT 9000
#define RAW_TIMEOUT_MS 50	/* resend after this long: memif may drop while connecting */

static void
swap_frame(struct rte_mbuf *m)
{
	struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	struct rte_ether_addr mac;
	struct rte_ipv4_hdr *ip;
	struct rte_udp_hdr *udp;
	rte_be32_t a;
	rte_be16_t port;

	mac = eth->dst_addr;
	eth->dst_addr = eth->src_addr;
	eth->src_addr = mac;
	if (eth->ether_type != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) ||
	    m->data_len < AMRMA_WIRE_L2L4_LEN)
		return;
	ip = (struct rte_ipv4_hdr *)(eth + 1);
	/* swapping fields leaves the IP and UDP checksums valid */
	a = ip->src_addr;
	ip->src_addr = ip->dst_addr;
	ip->dst_addr = a;
	if (ip->next_proto_id != IPPROTO_UDP ||
	    m->data_len < sizeof(*eth) + rte_ipv4_hdr_len(ip) + sizeof(*udp))
		return;
	udp = (struct rte_udp_hdr *)((uint8_t *)ip + rte_ipv4_hdr_len(ip));
	port = udp->src_port;
	udp->src_port = udp->dst_port;
	udp->dst_port = port;
}

unsigned int
perf_raw_poll(struct app *a, bool *to_am)
{
	struct rte_mbuf *pkts[32];
	uint16_t n = rte_eth_rx_burst(a->port_id, 0, pkts, RTE_DIM(pkts));
	uint16_t i, sent;

	for (i = 0; i < n; i++) {
		swap_frame(pkts[i]);
		/* after the swap the switch frame's port is the source port */
		if (pkts[i]->data_len >= AMRMA_WIRE_L2L4_LEN &&
		    rte_pktmbuf_mtod_offset(pkts[i], struct rte_udp_hdr *,
			sizeof(struct rte_ether_hdr) + sizeof(struct rte_ipv4_hdr))->src_port ==
		    rte_cpu_to_be_16(PERF_RAW_SWITCH_PORT))
			*to_am = true;
	}
	sent = n ? rte_eth_tx_burst(a->port_id, 0, pkts, n) : 0;
	for (i = sent; i < n; i++)
		rte_pktmbuf_free(pkts[i]);
	return n;
}

int
perf_raw_serve(struct app *a, const struct perf_opts *o)
{
	struct amrma_idle idle = { .spin = a->cfg.idle_spin, .sleep_us = a->cfg.idle_sleep_us };
	uint64_t end = o->duration_s > 0 ?
		rte_rdtsc() + (uint64_t)(o->duration_s * rte_get_tsc_hz()) : UINT64_MAX;
	uint64_t echoed = 0;
	bool to_am = false;

	while (!app_stop && rte_rdtsc() < end) {
		unsigned int n = perf_raw_poll(a, &to_am);

		echoed += n;
		amrma_idle_step(&idle, (int)n);
	}
	fprintf(stderr, "raw-serve: %" PRIu64 " frames echoed\n", echoed);
	return 0;
}

struct perf_raw {
	struct app *a;
	uint8_t tmpl[RTE_ETHER_MAX_JUMBO_FRAME_LEN];
	uint32_t len;		/* frame bytes */
	uint64_t seq;
	uint64_t lost;
};

/* an UDP frame of len bytes to the peer; the sequence number starts the UDP payload */
static void
build_template(struct perf_raw *e, uint32_t len, uint16_t dport)
{
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)e->tmpl;
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(ip + 1);
	const struct app_config *c = &e->a->cfg;

	memset(e->tmpl, 0x3c, len);
	e->len = len;
	eth->dst_addr = c->peer[0].mac;
	eth->src_addr = e->a->dev.mac;
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	memset(ip, 0, sizeof(*ip));
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->total_length = rte_cpu_to_be_16((uint16_t)(len - sizeof(*eth)));
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_UDP;
	ip->src_addr = c->node.ip;
	ip->dst_addr = c->peer[0].ip;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	udp->src_port = rte_cpu_to_be_16(RAW_UDP_PORT);
	udp->dst_port = rte_cpu_to_be_16(dport);
	udp->dgram_len = rte_cpu_to_be_16((uint16_t)(len - sizeof(*eth) - sizeof(*ip)));
	udp->dgram_cksum = 0;
}

/* the sequence number sits right after the UDP header, unaligned: go through memcpy */
static inline void
seq_set(uint8_t *frame, uint64_t seq)
{
	memcpy(frame + AMRMA_WIRE_L2L4_LEN, &seq, sizeof(seq));
}

static inline uint64_t
seq_get(const uint8_t *frame)
{
	uint64_t seq;

	memcpy(&seq, frame + AMRMA_WIRE_L2L4_LEN, sizeof(seq));
	return seq;
}

/* one frame out and back; returns cycles, 0 when the peer did not answer in time */
static uint64_t
raw_round_trip(struct perf_raw *e)
{
	uint16_t port = e->a->port_id;
	uint64_t t0, deadline, seq = ++e->seq;
	struct rte_mbuf *m, *pkts[32];
	unsigned int spins = 0;
	uint16_t n, i;

	t0 = rte_rdtsc();
	m = rte_pktmbuf_alloc(e->a->pool);
	if (m == NULL)
		return 0;
	/* build the frame in the mbuf as a sender of fresh data would */
	rte_memcpy(rte_pktmbuf_mtod(m, uint8_t *), e->tmpl, e->len);
	m->data_len = (uint16_t)e->len;
	m->pkt_len = e->len;
	seq_set(rte_pktmbuf_mtod(m, uint8_t *), seq);
	while (rte_eth_tx_burst(port, 0, &m, 1) == 0)
		if (app_stop) {
			rte_pktmbuf_free(m);
			return 0;
		}
	deadline = t0 + rte_get_tsc_hz() / 1000 * RAW_TIMEOUT_MS;
	for (;;) {
		bool found = false;

		n = rte_eth_rx_burst(port, 0, pkts, RTE_DIM(pkts));
		for (i = 0; i < n; i++) {
			if (pkts[i]->pkt_len == e->len &&
			    seq_get(rte_pktmbuf_mtod(pkts[i], uint8_t *)) == seq)
				found = true;
			rte_pktmbuf_free(pkts[i]);
		}
		if (found)
			return rte_rdtsc() - t0;
		/* the clock only now and then: a read per poll would lengthen the loop that
		 * notices the frame (the AM loop reads none) */
		if ((++spins & 63) == 0 && (rte_rdtsc() > deadline || app_stop)) {
			e->lost++;
			return 0;
		}
	}
}

struct perf_raw *
perf_raw_new(struct app *a)
{
	struct perf_raw *e = calloc(1, sizeof(*e));

	if (e != NULL)
		e->a = a;
	return e;
}

void
perf_raw_free(struct perf_raw *e)
{
	free(e);
}

uint64_t
perf_raw_lost(const struct perf_raw *e)
{
	return e->lost;
}

int
perf_raw_run(struct perf_raw *e, uint32_t size, uint64_t warmup, uint64_t iters, double *rtt,
	     double *median, double *p99, double *iqm)
{
	double us = 1e6 / (double)rte_get_tsc_hz();
	uint32_t len = perf_am_frame_len(size);
	uint64_t i, n = 0;

	if (len > (uint32_t)e->a->cfg.mtu + RTE_ETHER_HDR_LEN) {
		fprintf(stderr, "raw-echo: size %u: frame %u above the MTU\n", size, len);
		return -EMSGSIZE;
	}
	build_template(e, len, RAW_UDP_PORT);
	for (i = 0; i < warmup && !app_stop; i++)
		raw_round_trip(e);
	for (i = 0; i < iters && !app_stop; i++) {
		uint64_t c = raw_round_trip(e);

		if (c != 0)
			rtt[n++] = (double)c * us;
	}
	perf_summary(rtt, n, median, p99);
	if (iqm != NULL)
		*iqm = perf_iqm(rtt, n);
	return app_stop ? -EINTR : 0;
}

int
perf_raw_switch_to_am(struct perf_raw *e)
{
	unsigned int tries;

	build_template(e, perf_am_frame_len(0), PERF_RAW_SWITCH_PORT);
	for (tries = 0; tries < 20 && !app_stop; tries++)
		if (raw_round_trip(e) != 0)
			return 0;
	return -ETIMEDOUT;
}

int
perf_raw_echo(struct app *a, const struct perf_opts *o)
{
	double *rtt = calloc(o->iters, sizeof(*rtt));
	struct perf_raw *e = perf_raw_new(a);
	double med[64], p99[64];
	unsigned int s, r = 0;
	char extra[160];
	int ret = 0;

	if (rtt == NULL || e == NULL) {
		ret = -ENOMEM;
		goto out;
	}
	for (s = 0; s < o->nb_sizes && !app_stop; s++) {
		uint32_t size = o->sizes[s];

		for (r = 0; r < o->repeat && !app_stop; r++) {
			uint64_t lost0 = e->lost;

			ret = perf_raw_run(e, size, o->warmup, o->iters, rtt, &med[r], &p99[r],
					   NULL);
			if (ret != 0)
				goto out;
			fprintf(stderr, "raw-echo size %u run %u: median %.3f us, p99 %.3f us, "
				"%" PRIu64 " lost\n", size, r, med[r], p99[r], e->lost - lost0);
		}
		snprintf(extra, sizeof(extra), "\"iters\":%" PRIu64 ",\"frame\":%u,"
			 "\"lost\":%" PRIu64, o->iters, perf_am_frame_len(size), e->lost);
		perf_emit(o, "raw_echo_rtt_median", "us", (int)size, med, r, extra);
		perf_emit(o, "raw_echo_rtt_p99", "us", (int)size, p99, r, extra);
	}
out:
	free(rtt);
	perf_raw_free(e);
	return ret;
}
