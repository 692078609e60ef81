/* SPDX-License-Identifier: BSD-3-Clause */
/* One frame to two receivers, in one segment and in several: see seg_diff.h. */
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mempool.h>

#include "seg_diff.h"

const struct rte_ether_addr seg_mac_rx = { .addr_bytes = { 0x02, 0, 0, 0, 0, 2 } };
const struct rte_ether_addr seg_mac_tx = { .addr_bytes = { 0x02, 0, 0, 0, 0, 1 } };

#define FNV_BASIS	UINT64_C(0xcbf29ce484222325)

void
seg_die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	abort();
}

uint64_t
seg_rnd(uint64_t *s)
{
	uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

uint32_t
seg_below(uint64_t *s, uint32_t n)
{
	return n == 0 ? 0 : (uint32_t)(seg_rnd(s) % n);
}

/* --- the transport --- */

static uint16_t
dev_rx(struct amrma_net_dev *dev, uint16_t q, struct rte_mbuf **pkts, uint16_t n)
{
	struct seg_dev *d = (struct seg_dev *)dev;
	uint16_t k = 0;

	while (k < n && d->rx_tail[q] != d->rx_head[q])
		pkts[k++] = d->rx[q][d->rx_tail[q]++ % SEG_FIFO];
	return k;
}

void
seg_dev_push(struct seg_dev *d, uint16_t q, struct rte_mbuf *m)
{
	if (d->rx_head[q] - d->rx_tail[q] == SEG_FIFO)
		seg_die("RX queue %u full", q);
	d->rx[q][d->rx_head[q]++ % SEG_FIFO] = m;
}

uint16_t
seg_dst_queue(const uint8_t *frame, uint32_t len)
{
	const struct rte_udp_hdr *udp = (const void *)(frame + sizeof(struct rte_ether_hdr) +
						       sizeof(struct rte_ipv4_hdr));
	uint16_t q;

	if (len < AMRMA_WIRE_L2L4_LEN)
		return 0;
	q = (uint16_t)(rte_be_to_cpu_16(udp->dst_port) - SEG_UDP_BASE);
	return q < SEG_NB_Q ? q : 0;
}

static uint16_t
dev_tx(struct amrma_net_dev *dev, uint16_t q, struct rte_mbuf **pkts, uint16_t n)
{
	struct seg_dev *d = (struct seg_dev *)dev;
	uint16_t i;

	RTE_SET_USED(q);
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];

		if (d->on_tx != NULL)
			d->on_tx(m);
		/* to the context it is for, as hardware steering would; the library's
		 * frames have their headers in the first segment */
		if (d->peer != NULL)
			seg_dev_push(d->peer, seg_dst_queue(rte_pktmbuf_mtod(m, const uint8_t *),
							    rte_pktmbuf_data_len(m)), m);
		else
			rte_pktmbuf_free(m);
	}
	return n;
}

static const struct amrma_net_ops dev_ops = {
	.name = "seg_diff",
	.rx_burst = dev_rx,
	.tx_burst = dev_tx,
};

struct seg_dev *
seg_dev_new(const struct rte_ether_addr *mac, uint16_t mtu)
{
	struct seg_dev *d = calloc(1, sizeof(*d));

	if (d == NULL)
		seg_die("no memory");
	d->dev.ops = &dev_ops;
	d->dev.nb_queues = SEG_NB_Q;
	d->dev.mtu = mtu;
	d->dev.socket_id = SOCKET_ID_ANY;
	d->dev.mac = *mac;
	return d;
}

void
seg_dev_free(struct seg_dev *d)
{
	unsigned int q;

	for (q = 0; d != NULL && q < SEG_NB_Q; q++)
		while (d->rx_tail[q] != d->rx_head[q])
			rte_pktmbuf_free(d->rx[q][d->rx_tail[q]++ % SEG_FIFO]);
	free(d);
}

struct amrma_node *
seg_node_new(struct seg_dev *d, uint16_t id, rte_be32_t ip, enum amrma_csum csum,
	     struct rte_mempool *pool, const struct rte_ether_addr *peer_mac, uint16_t peer,
	     rte_be32_t peer_ip)
{
	struct amrma_node_conf c;
	struct amrma_node *node = NULL;
	int ret;

	amrma_node_conf_defaults(&c);
	c.node_id = id;
	c.nb_ctx = SEG_NB_Q;
	c.ip = ip;
	c.udp_base = SEG_UDP_BASE;
	c.dev = &d->dev;
	c.pool = pool;
	c.nb_mbufs = 4095;
	c.csum = csum;
	c.coalesce_frame = (uint16_t)(d->dev.mtu + RTE_ETHER_HDR_LEN);
	/* nothing is lost here: a timer would only make a node act on the clock (between
	 * the deliveries of a frame to the two of a pair). Acks leave at once, not after a
	 * delay: what a node sends does not depend on the clock either */
	c.rto_us = 60 * 1000 * 1000;
	c.rto_max_us = c.rto_us;
	c.ack_every = 1;
	ret = amrma_node_create(&c, &node);
	if (ret == 0)
		ret = amrma_node_add_peer(node, peer, peer_mac, peer_ip, SEG_NB_Q);
	if (ret != 0)
		seg_die("node %u: %d", id, ret);
	return node;
}

/* --- the receivers --- */

struct rcv {
	struct seg_dev *d;
	struct amrma_node *node;
	uint64_t digest;	/* of what the handlers saw, for the frame being delivered */
	uint64_t calls;		/* handlers run for it */
	uint64_t runs;		/* handlers run in all */
};

static struct rcv rcv[SEG_NB_PAIRS][2];
static struct rte_mempool *rx_pool;	/* frames handed to the receivers */

static uint64_t
fnv(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n--)
		h = (h ^ *b++) * UINT64_C(0x100000001b3);
	return h;
}

static int
digest_handler(struct amrma_ctx *ctx, amrma_am_token_t tok, const struct amrma_am_msg *msg,
	       void *arg)
{
	struct rcv *r = arg;
	uint32_t f[8] = { tok != 0, amrma_ctx_index(ctx), msg->src.node, msg->src.ctx,
			  msg->src_epoch, msg->handler, (uint32_t)msg->status, msg->len };
	uint64_t h = fnv(r->digest, f, sizeof(f));

	h = fnv(h, msg->args, 8u * msg->nargs);
	if (msg->len != 0)
		h = fnv(h, msg->payload, msg->len);
	r->digest = h;
	r->calls++;
	r->runs++;
	return 0;
}

static void
pair_new(unsigned int pair)
{
	unsigned int k;

	for (k = 0; k < 2; k++) {
		struct rcv *r = &rcv[pair][k];
		uint16_t h;

		r->d = seg_dev_new(&seg_mac_rx, RTE_ETHER_MTU);
		r->node = seg_node_new(r->d, SEG_NODE_RX, SEG_IP_RX,
				       pair == SEG_CSUM_ON ? AMRMA_CSUM_ON : AMRMA_CSUM_OFF,
				       NULL, &seg_mac_tx, SEG_NODE_TX, SEG_IP_TX);
		for (h = 0; h < AMRMA_WIRE_MAX_HANDLERS; h++)
			if (h != AMRMA_AM_H_LEAVE &&
			    amrma_am_register(r->node, h, digest_handler, r) != 0)
				seg_die("handler %u", h);
	}
}

static void
pair_free(unsigned int pair)
{
	unsigned int k;

	for (k = 0; k < 2; k++) {
		amrma_node_destroy(rcv[pair][k].node);
		seg_dev_free(rcv[pair][k].d);
		rcv[pair][k].node = NULL;
		rcv[pair][k].d = NULL;
	}
}

int
seg_rcv_init(void)
{
	unsigned int pair;

	rx_pool = rte_pktmbuf_pool_create("seg_rx", 4095, 0, 0, SEG_DATA_ROOM, SOCKET_ID_ANY);
	if (rx_pool == NULL)
		return -ENOMEM;
	for (pair = 0; pair < SEG_NB_PAIRS; pair++) {
		rcv[pair][0].runs = rcv[pair][1].runs = 0;
		pair_new(pair);
	}
	return 0;
}

unsigned int
seg_rcv_fini(void)
{
	unsigned int pair, left;

	for (pair = 0; pair < SEG_NB_PAIRS; pair++)
		pair_free(pair);
	left = rte_mempool_in_use_count(rx_pool);
	rte_mempool_free(rx_pool);
	rx_pool = NULL;
	return left;
}

uint64_t
seg_rcv_runs(unsigned int pair, unsigned int k)
{
	return rcv[pair][k].runs;
}

/* --- the comparison --- */

/* Counters that follow from what arrived (not from time, nor from how it was built). */
#define CNT(f) { #f, offsetof(struct amrma_am_stats, f) }
static const struct {
	const char *name;
	size_t off;
} cnts[SEG_NB_CNT] = {
	CNT(rx_frames), CNT(unknown_peer), CNT(unknown_handler), CNT(bad_token),
	CNT(bad_ack), CNT(duplicates), CNT(out_of_window), CNT(no_reply_room),
	CNT(no_reply_mbuf), CNT(redirected), CNT(redirect_drops), CNT(requests_handled),
	CNT(replies_handled), CNT(auto_replies), CNT(rule_violations), CNT(stale_epoch),
	CNT(peer_restarts), CNT(rx_coalesced), CNT(sends_handled), CNT(peers_left),
};
#undef CNT

int
seg_cnt_index(const char *name)
{
	unsigned int i;

	for (i = 0; i < SEG_NB_CNT; i++)
		if (strcmp(cnts[i].name, name) == 0)
			return (int)i;
	return -1;
}

static uint64_t
cnt_of(const struct amrma_am_stats *st, unsigned int i)
{
	uint64_t v;

	memcpy(&v, (const uint8_t *)st + cnts[i].off, sizeof(v));
	return v;
}

struct rte_mbuf *
seg_chain(const uint8_t *p, uint32_t len, const uint16_t *cut, unsigned int nb,
	  const uint8_t *shift)
{
	struct rte_mbuf *head = NULL;
	uint32_t from = 0;
	unsigned int i;

	for (i = 0; i <= nb; i++) {
		uint32_t to = i < nb ? cut[i] : len;
		struct rte_mbuf *m = rte_pktmbuf_alloc(rx_pool);
		char *dst;

		if (m == NULL)
			seg_die("no mbuf for a frame");
		if (i > 0)
			m->data_off = (uint16_t)(m->data_off + shift[i]);
		dst = rte_pktmbuf_append(m, (uint16_t)(to - from));
		if (dst == NULL)
			seg_die("a segment of %u bytes does not fit", to - from);
		memcpy(dst, p + from, to - from);
		if (head == NULL)
			head = m;
		else if (rte_pktmbuf_chain(head, m) != 0)
			seg_die("cannot chain");
		from = to;
	}
	return head;
}

static void
deliver(struct rcv *r, struct rte_mbuf *m, uint16_t q, struct seg_outcome *o)
{
	struct amrma_am_stats a, b;
	uint64_t rej = 0;
	unsigned int i;

	amrma_node_stats_get(r->node, &a);
	r->digest = FNV_BASIS;
	r->calls = 0;
	seg_dev_push(r->d, q, m);
	/* twice: a frame for another context goes through its steering ring */
	for (i = 0; i < 2; i++)
		if (amrma_node_poll(r->node, 32) < 0)
			seg_die("poll refused");
	amrma_node_stats_get(r->node, &b);
	o->reason = AMRMA_WIRE_OK;
	for (i = 0; i < AMRMA_WIRE_ERR__MAX; i++) {
		rej += b.rx_rejected[i] - a.rx_rejected[i];
		if (b.rx_rejected[i] != a.rx_rejected[i])
			o->reason = (int)i;
	}
	for (i = 0; i < SEG_NB_CNT; i++)
		o->cnt[i] = cnt_of(&b, i) - cnt_of(&a, i);
	o->digest = r->digest;
	o->calls = r->calls;
	/* exactly one frame seen, refused for one reason or taken */
	if (o->cnt[0] != 1 || rej > 1)
		seg_die("%" PRIu64 " frames seen, %" PRIu64 " refused", o->cnt[0], rej);
}

static enum amrma_wire_err
codec_verdict(unsigned int pair, const uint8_t *p, uint16_t len)
{
	static uint8_t buf[SEG_FRAME_MAX] __rte_aligned(8);
	const struct amrma_wire_rx_params rx = {
		.mac = seg_mac_rx, .node_id = SEG_NODE_RX, .udp_base = SEG_UDP_BASE,
		.nb_ctx = SEG_NB_Q, .require_csum = pair == SEG_CSUM_ON,
		.skip_csum = pair == SEG_CSUM_OFF,
	};
	struct amrma_wire_view v;

	memcpy(buf, p, len);
	return amrma_wire_parse(buf, len, &rx, &v);
}

/*
 * The two receivers of a pair are two lives of node 2 (their epochs come from the
 * clock): a frame that names one of them is meant for it alone, the other takes it for
 * one meant for an earlier life of its own. libFuzzer finds them (it sees the epochs
 * compared); a mutation would hit one in 2^32.
 */
static bool
names_a_receiver(unsigned int pair, const uint8_t *p, uint16_t len)
{
	uint32_t e;

	if (len < AMRMA_WIRE_HDR_LEN)
		return false;
	e = rte_be_to_cpu_32(amrma_wire_hdr_of((void *)(uintptr_t)p)->dst_epoch);
	return e != 0 && (e == amrma_node_epoch(rcv[pair][0].node) ||
			  e == amrma_node_epoch(rcv[pair][1].node));
}

bool
seg_diff(unsigned int pair, const uint8_t *p, uint16_t len, uint16_t q, const uint16_t *cut,
	 unsigned int nb, const uint8_t *shift, struct seg_result *r)
{
	bool same;

	if (len > SEG_FRAME_MAX)
		seg_die("frame of %u bytes", len);
	r->codec = codec_verdict(pair, p, len);
	deliver(&rcv[pair][0], seg_chain(p, len, NULL, 0, NULL), q, &r->one);
	deliver(&rcv[pair][1], seg_chain(p, len, cut, nb, shift), q, &r->split);
	same = r->one.reason == (int)r->codec && r->split.reason == r->one.reason;
	if (names_a_receiver(pair, p, len)) {
		/* the verdict only: the pair now differs, two new lives replace it */
		pair_free(pair);
		pair_new(pair);
		return same;
	}
	/* what followed the verdict */
	return same && r->one.digest == r->split.digest && r->one.calls == r->split.calls &&
	       memcmp(r->one.cnt, r->split.cnt, sizeof(r->one.cnt)) == 0;
}

void
seg_report(FILE *f, const char *what, unsigned int pair, const uint8_t *p, uint16_t len,
	   const uint16_t *cut, unsigned int nb, const uint8_t *shift,
	   const struct seg_result *r, bool hex)
{
	const struct seg_outcome *l = &r->one, *s = &r->split;
	unsigned int i;

	fprintf(f, "MISMATCH %s, %u bytes, checksums %s: codec %s, one segment %s, split %s "
		"at", what, len, pair == SEG_CSUM_ON ? "on" : "off",
		amrma_wire_err_name(r->codec), amrma_wire_err_name(l->reason),
		amrma_wire_err_name(s->reason));
	for (i = 0; i < nb; i++)
		fprintf(f, " %u(+%u)", cut[i], shift[i + 1]);
	fprintf(f, "\n");
	for (i = 0; i < SEG_NB_CNT; i++)
		if (l->cnt[i] != s->cnt[i])
			fprintf(f, "  %s: %" PRIu64 " vs %" PRIu64 "\n", cnts[i].name, l->cnt[i],
				s->cnt[i]);
	if (l->digest != s->digest || l->calls != s->calls)
		fprintf(f, "  handlers: %" PRIu64 " vs %" PRIu64 " runs, saw %s\n", l->calls,
			s->calls, l->digest == s->digest ? "the same" : "different");
	for (i = 0; hex && i < len; i++)
		fprintf(f, "%02x%s", p[i], i % 32 == 31 || i + 1 == len ? "\n" : "");
}

unsigned int
seg_pick_cuts(uint64_t *rng, uint16_t len, uint16_t *cut, uint8_t *shift)
{
	unsigned int want = 1 + seg_below(rng, SEG_MAX_CUTS), nb = 0, i, j;

	if (len < 2)
		return 0;
	for (i = 0; i < want; i++) {
		uint16_t c;

		switch (seg_below(rng, 4)) {
		case 0:	/* in the headers or arguments */
			c = (uint16_t)(1 + seg_below(rng, RTE_MIN(len - 1u, SEG_HDR_MAX)));
			break;
		case 1:	/* the next segment starts at an odd offset of the datagram */
			c = (uint16_t)(1 + seg_below(rng, len - 1u)) | 1;
			c = RTE_MIN(c, (uint16_t)(len - 1));
			break;
		default:
			c = (uint16_t)(1 + seg_below(rng, len - 1u));
			break;
		}
		for (j = 0; j < nb && cut[j] < c; j++)
			;
		if (j < nb && cut[j] == c)
			continue;
		memmove(cut + j + 1, cut + j, (nb - j) * sizeof(*cut));
		cut[j] = c;
		nb++;
	}
	/* a later segment's data may start at an odd address too */
	shift[0] = 0;
	for (i = 1; i <= nb; i++)
		shift[i] = (uint8_t)seg_below(rng, 4);
	return nb;
}
