/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A frame gets the same verdict whether it arrives in one segment or in several.
 *
 * parse_mbuf() (lib/am/am.c) takes other paths for a frame in a chain of segments: a
 * coalesced one is copied and parsed whole, the others have their headers parsed where
 * they are (or from a copy) and their UDP checksum summed segment by segment, segments
 * that start at odd offsets of the datagram included. The codec's fuzz harness
 * (test/wire) only sees linear buffers. Here every frame goes to two receivers that
 * differ in nothing else (seg_diff.h): one gets it in one segment, the other split into
 * 2-4 segments at seeded offsets (in the headers, at odd offsets, at odd addresses).
 * Both must count the same rejection reason (rx_rejected[]), or both take it and then do
 * the same with it: the same handlers run with the same arguments and payload, the same
 * counters move. The verdict in one segment must be the codec's (amrma_wire_parse()).
 *
 * The frames: what a sender node builds (requests, one-way messages and replies of 0-8
 * arguments with payloads up to 9000 bytes, coalesced frames up to an MTU of 9600,
 * chained payloads, acks; checksums on), the wire fuzz corpus (valid and malformed), and
 * seeded mutations of both (bit flips with and without the checksums resealed, bytes of
 * the headers set, truncations, trailing bytes). One pair of receivers verifies
 * checksums, one does not.
 *
 * test_split_everywhere checks the simplest promises in full: a valid frame split at any
 * offset (two segments, or a one-byte segment in the middle) is taken, and one with any
 * single byte changed is refused (but for the unchecked source MAC) for the reason it is
 * refused in one segment. test_coalesced_jumbo: coalesced frames longer than a frame of
 * one message (an MTU over 9132) are taken in segments too. test_leave_by_send: what
 * seg_fuzz, the libFuzzer target over the same comparison (fuzz_seg.c), found.
 */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <rte_cycles.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "amrma_am.h"
#include "corpus.h"
#include "harness.h"
#include "seg_diff.h"

#define MAX_FRAMES	8192u
/* the longest frame of one message */
#define ONE_MSG_MAX	(SEG_HDR_MAX + AMRMA_WIRE_MAX_PAYLOAD)
/* the senders' MTU: above 9132, so coalesced frames outgrow ONE_MSG_MAX */
#define GEN_MTU		9600u
#define LIB_MUTANTS	12u
#define CORPUS_MUTANTS	32u
#define SEED		UINT64_C(0x5e9f00d5)

static const char *corpus_dir;

/* --- the frames --- */

struct frame {
	uint8_t *data;
	uint16_t len;
	char what[96];		/* where it comes from, for the failure messages */
};

static struct frame frames[MAX_FRAMES];
static unsigned int nb_frames, nb_lib;

static void
frame_add(const uint8_t *data, uint16_t len, const char *fmt, ...)
{
	struct frame *f = &frames[nb_frames];
	va_list ap;

	assert_true(nb_frames < MAX_FRAMES);
	f->data = malloc(len ? len : 1);
	assert_non_null(f->data);
	memcpy(f->data, data, len);
	f->len = len;
	va_start(ap, fmt);
	vsnprintf(f->what, sizeof(f->what), fmt, ap);
	va_end(ap);
	nb_frames++;
}

/* --- frames built by the library: a node that asks and a node that answers --- */

enum { H_ASK = 10, H_ANSWER = 11 };

/* a request's args[0]: how the reply is to look */
#define SHAPE(nargs, len, kind)	((uint64_t)(nargs) | (uint64_t)(len) << 4 | \
				 (uint64_t)(kind) << 20)
enum { R_HANDLER, R_STATUS, R_AUTO, R_ECHO, R__KINDS };

static uint8_t pattern[AMRMA_WIRE_MAX_PAYLOAD];
static unsigned int gen_done;

static int
ask_handler(struct amrma_ctx *ctx, amrma_am_token_t tok, const struct amrma_am_msg *msg,
	    void *arg)
{
	uint64_t args[AMRMA_WIRE_MAX_ARGS] = { 1, 2, 3, 4, 5, 6, 7, UINT64_MAX };
	unsigned int nargs, kind;
	uint16_t len;

	RTE_SET_USED(arg);
	if (tok == 0 || msg->nargs == 0)
		return 0;	/* one-way, or no shape given */
	nargs = (unsigned int)(msg->args[0] & 0xf) % (AMRMA_WIRE_MAX_ARGS + 1);
	len = (uint16_t)RTE_MIN((msg->args[0] >> 4) & 0xffff,
				amrma_am_max_payload(ctx, nargs));
	kind = (unsigned int)(msg->args[0] >> 20) % R__KINDS;
	switch (kind) {
	case R_HANDLER:
		return amrma_am_reply(ctx, tok, H_ANSWER, args, nargs, pattern, len, 0);
	case R_STATUS:
		return amrma_am_reply(ctx, tok, AMRMA_WIRE_NO_HANDLER, args, nargs, NULL, 0,
				      -EIO);
	case R_AUTO:
		return -ENOENT;
	default:
		/* the request's own payload: the reply may be built over its frame */
		return amrma_am_reply(ctx, tok, H_ANSWER, args, nargs, msg->payload,
				      RTE_MIN(len, msg->len), 7);
	}
}

static void
gen_cb(struct amrma_ctx *ctx, void *arg, int status)
{
	RTE_SET_USED(ctx);
	RTE_SET_USED(arg);
	RTE_SET_USED(status);	/* the replies' statuses vary on purpose */
	gen_done++;
}

/* Every frame the sender sends joins frames[], as one buffer. */
static void
gen_capture(const struct rte_mbuf *m)
{
	static uint8_t buf[SEG_FRAME_MAX];

	assert_true(rte_pktmbuf_pkt_len(m) <= SEG_FRAME_MAX);
	frame_add(rte_pktmbuf_read(m, 0, rte_pktmbuf_pkt_len(m), buf),
		  (uint16_t)rte_pktmbuf_pkt_len(m), "sent %u (%u segs)", nb_frames, m->nb_segs);
}

struct gen {
	struct seg_dev *da, *ds;
	struct amrma_node *a, *s;	/* a: node 2 (asks), s: node 1 (its frames kept) */
	unsigned int want;
};

/* Poll both until every operation issued completed and neither has more to do. */
static void
gen_pump(struct gen *g)
{
	uint64_t end = rte_get_tsc_cycles() + 10 * rte_get_tsc_hz();
	int work;

	do {
		work = amrma_node_poll(g->a, 32);
		assert_true(work >= 0);
		work += amrma_node_poll(g->s, 32);
		if (rte_get_tsc_cycles() > end)
			fail_msg("%u of %u operations done", gen_done, g->want);
	} while (work != 0 || gen_done < g->want);
}

static void
gen_issue(struct gen *g, bool from_s, bool send, uint16_t dst, uint16_t src,
	  unsigned int nargs, uint16_t len, uint64_t shape)
{
	struct amrma_ctx *ctx = amrma_node_ctx(from_s ? g->s : g->a, src);
	struct amrma_ep ep = { .node = from_s ? SEG_NODE_RX : SEG_NODE_TX, .ctx = (uint8_t)dst };
	uint64_t args[AMRMA_WIRE_MAX_ARGS] = { shape, 0x0102030405060708, UINT64_MAX, 0, 1,
					       0x8000000000000000, 42, 0xfedcba9876543210 };
	int ret;

	len = RTE_MIN(len, amrma_am_max_payload(ctx, nargs));
	if (send)
		ret = amrma_am_send(ctx, ep, H_ASK, args, nargs, pattern, len, gen_cb, NULL);
	else
		ret = amrma_am_request(ctx, ep, H_ASK, args, nargs, pattern, len, gen_cb,
				       NULL);
	assert_int_equal(ret, 0);
	g->want++;
}

/* A request of s whose payload is a chain of odd-length segments (zero-copy TX). */
static void
gen_issue_chain(struct gen *g, uint16_t dst, unsigned int nargs, const uint16_t *lens,
		unsigned int nb)
{
	struct amrma_ctx *ctx = amrma_node_ctx(g->s, dst);
	struct amrma_ep ep = { .node = SEG_NODE_RX, .ctx = (uint8_t)dst };
	uint64_t args[AMRMA_WIRE_MAX_ARGS] = { SHAPE(1, 9, R_HANDLER), 2, 3, 4, 5, 6, 7, 8 };
	struct rte_mbuf *head = NULL;
	unsigned int i, at = 0;

	for (i = 0; i < nb; i++) {
		struct rte_mbuf *m = rte_pktmbuf_alloc(amrma_ctx_pool(ctx));

		assert_non_null(m);
		memcpy(rte_pktmbuf_append(m, lens[i]), pattern + at, lens[i]);
		at += lens[i];
		if (head == NULL)
			head = m;
		else
			assert_int_equal(rte_pktmbuf_chain(head, m), 0);
	}
	assert_int_equal(amrma_am_request_mbuf(ctx, ep, H_ASK, args, nargs, head, gen_cb,
					       NULL), 0);
	g->want++;
}

static const uint16_t lens[] = { 0, 1, 2, 3, 7, 8, 63, 64, 65, 255, 256, 1000, 1001, 1471,
				 1473, 2048, 4099, 8191, UINT16_MAX /* the most */ };

/*
 * Run a workload between node 2 (a) and node 1 (s) and keep every frame s sends (all
 * addressed to node 2): its requests and one-way messages, alone and coalesced, its
 * replies to a's, alone, built over the request and coalesced, its acks.
 */
static void
gen_frames(struct rte_mempool *pool)
{
	struct gen g = { 0 };
	uint64_t rng = SEED, shape;
	unsigned int i, j, k, n;
	uint16_t len;

	g.da = seg_dev_new(&seg_mac_rx, GEN_MTU);
	g.ds = seg_dev_new(&seg_mac_tx, GEN_MTU);
	g.da->peer = g.ds;
	g.ds->peer = g.da;
	g.ds->on_tx = gen_capture;
	g.a = seg_node_new(g.da, SEG_NODE_RX, SEG_IP_RX, AMRMA_CSUM_ON, pool, &seg_mac_tx,
			   SEG_NODE_TX, SEG_IP_TX);
	g.s = seg_node_new(g.ds, SEG_NODE_TX, SEG_IP_TX, AMRMA_CSUM_ON, pool, &seg_mac_rx,
			   SEG_NODE_RX, SEG_IP_RX);
	for (i = 0; i < 2; i++) {
		struct amrma_node *n = i ? g.s : g.a;

		assert_int_equal(amrma_am_register(n, H_ASK, ask_handler, NULL), 0);
		assert_int_equal(amrma_am_register(n, H_ANSWER, h_nothing_handler, NULL), 0);
	}
	gen_done = 0;
	/* one message a frame: every argument count with every payload length, each way
	 * (the draws one by one: the order of a call's arguments is the compiler's) */
	for (i = 0; i <= AMRMA_WIRE_MAX_ARGS; i++)
		for (j = 0; j < RTE_DIM(lens); j++) {
			k = i * RTE_DIM(lens) + j;
			shape = seg_below(&rng, 9);
			shape |= SHAPE(0, lens[seg_below(&rng, RTE_DIM(lens))], 0);
			shape |= SHAPE(0, 0, seg_below(&rng, R__KINDS));
			gen_issue(&g, true, false, k % SEG_NB_Q, k / SEG_NB_Q % SEG_NB_Q, i,
				  lens[j], shape);
			gen_pump(&g);
			/* s replies with i arguments and lens[j] bytes, in one of four ways */
			n = 1 + seg_below(&rng, 8);
			len = lens[seg_below(&rng, RTE_DIM(lens))];
			gen_issue(&g, false, false, k % SEG_NB_Q, k / SEG_NB_Q % SEG_NB_Q, n, len,
				  SHAPE(i, lens[j], k % R__KINDS));
			gen_pump(&g);
			if (j % 3 == 0) {
				gen_issue(&g, true, true, k % SEG_NB_Q, k % SEG_NB_Q, i, lens[j],
					  0);
				gen_pump(&g);
			}
		}
	/* bursts to one endpoint: coalesced frames of requests and one-way messages, and
	 * the coalesced replies s makes to a's */
	for (i = 0; i < 48; i++) {
		bool from_s = i % 2 == 0;
		uint16_t dst = (uint16_t)seg_below(&rng, SEG_NB_Q);
		uint16_t src = (uint16_t)seg_below(&rng, SEG_NB_Q);

		for (j = 2 + seg_below(&rng, 14), k = 0; k < j; k++) {
			bool send = from_s && seg_below(&rng, 4) == 0;

			n = seg_below(&rng, 9);
			len = (uint16_t)seg_below(&rng, i < 40 ? 300 : 1500);
			shape = seg_below(&rng, 9);
			shape |= SHAPE(0, seg_below(&rng, 200), 0);
			shape |= SHAPE(0, 0, seg_below(&rng, R__KINDS));
			gen_issue(&g, from_s, send, dst, src, n, len, shape);
		}
		gen_pump(&g);
	}
	/* coalesced frames longer than a frame of one message: two 4600-byte messages
	 * (9294 bytes), then one of 4400 bytes. Requests of s, then replies of s to a
	 * coalesced frame of a's requests */
	for (i = 0; i < 2; i++) {
		static const uint16_t big[] = { 1, 4600, 4600, 4400 };

		for (k = 0; k < RTE_DIM(big); k++)
			if (i == 0)
				gen_issue(&g, true, false, 1, 2, 0, big[k], 0);
			else
				gen_issue(&g, false, false, 3, 0, 1, 1,
					  SHAPE(0, big[k], R_HANDLER));
		gen_pump(&g);
	}
	/* payloads in segments of odd lengths: s sums the checksum over them */
	for (i = 0; i < 8; i++) {
		uint16_t seg[3] = { 0, 0, 7 };

		seg[0] = (uint16_t)(1 + 2 * seg_below(&rng, 400));
		seg[1] = (uint16_t)(1 + seg_below(&rng, 900));
		gen_issue_chain(&g, (uint16_t)(i % SEG_NB_Q), i, seg, 2 + i % 2);
		gen_pump(&g);
	}
	g.ds->on_tx = NULL;
	amrma_node_destroy(g.a);
	amrma_node_destroy(g.s);
	seg_dev_free(g.da);
	seg_dev_free(g.ds);
	nb_lib = nb_frames;
}

/*
 * s's frames name node 2's life it knew (a's); the receivers are other lives of node 2.
 * As frames built before that life was known (dst_epoch 0), they are the receivers' too,
 * so their messages reach the handlers. s's own life, a time, becomes a constant: a run
 * delivers the same bytes as the last.
 */
static void
frames_any_life(void)
{
	unsigned int i;

	for (i = 0; i < nb_lib; i++) {
		struct amrma_wire_hdr *h = amrma_wire_hdr_of(frames[i].data);

		h->dst_epoch = 0;
		h->src_epoch = RTE_BE32(1000);
		amrma_wire_udp_csum_set(frames[i].data, frames[i].len);
	}
}

static int
by_name(const void *a, const void *b)
{
	return strcmp(((const struct frame *)a)->what, ((const struct frame *)b)->what);
}

static enum corpus_verdict
corpus_take(const char *name, const uint8_t *data, size_t len)
{
	if (len <= SEG_FRAME_MAX)
		frame_add(data, (uint16_t)len, "corpus %s", name);
	return CORPUS_UNCHECKED;
}

/* --- mutations --- */

/* Checksums right again (where the lengths let them be computed) after an edit. */
static void
reseal(uint8_t *p, uint16_t len)
{
	struct rte_ipv4_hdr *ip = (void *)(p + sizeof(struct rte_ether_hdr));
	struct rte_udp_hdr *udp = (void *)(ip + 1);
	uint32_t dlen;

	if (len < sizeof(struct rte_ether_hdr) + sizeof(*ip))
		return;
	/* over 20 bytes whatever the IHL says: rte_ipv4_cksum() would read past len */
	ip->hdr_checksum = 0;
	ip->hdr_checksum = (uint16_t)~amrma_wire_fold(amrma_wire_sum(ip, sizeof(*ip), 0));
	if (len < AMRMA_WIRE_L2L4_LEN)
		return;
	dlen = rte_be_to_cpu_16(udp->dgram_len);
	if (dlen >= sizeof(*udp) && sizeof(struct rte_ether_hdr) + sizeof(*ip) + dlen <= len)
		amrma_wire_udp_csum_set(p, len);
}

/* Flip 1 to max bits in out[0..n). */
static void
flip_bits(uint64_t *rng, uint8_t *out, uint16_t n, unsigned int max)
{
	unsigned int i, k = 1 + seg_below(rng, max);

	for (i = 0; i < k; i++) {
		uint32_t at = seg_below(rng, n);

		out[at] ^= (uint8_t)(1u << seg_below(rng, 8));
	}
}

static uint16_t
mutate(uint64_t *rng, const uint8_t *in, uint16_t len, uint8_t *out)
{
	static const uint8_t values[] = { 0, 1, 2, 3, 4, 5, 8, 9, 0x40, 0x7f, 0x80, 0xfe, 0xff };
	uint16_t n = len, head = (uint16_t)RTE_MIN(len, SEG_HDR_MAX + 16u);
	unsigned int i, k;
	uint32_t at;

	memcpy(out, in, len);
	if (len == 0)
		return 0;
	switch (seg_below(rng, 8)) {
	case 0:	/* bits flipped anywhere: the checksums are to tell */
		flip_bits(rng, out, n, 3);
		break;
	case 1:	/* bits flipped in the headers, checksums right: the checks behind them */
		flip_bits(rng, out, head, 2);
		reseal(out, n);
		break;
	case 2:	/* a byte of the headers set to a value near a limit */
		at = seg_below(rng, head);
		out[at] = seg_below(rng, 4) ? values[seg_below(rng, RTE_DIM(values))] :
					      (uint8_t)seg_rnd(rng);
		reseal(out, n);
		break;
	case 3:	/* bits flipped anywhere, checksums right: payloads, further messages */
		flip_bits(rng, out, n, 3);
		reseal(out, n);
		break;
	case 4:	/* cut short anywhere */
		n = (uint16_t)seg_below(rng, len);
		break;
	case 5:	/* cut short in the headers */
		n = (uint16_t)seg_below(rng, head);
		break;
	case 6:	/* trailing bytes: padding, or (lengths set) a datagram that ends in them */
		k = 1 + seg_below(rng, 64);
		for (i = 0; i < k; i++)
			out[n + i] = (uint8_t)seg_rnd(rng);
		n = (uint16_t)(n + k);
		if (seg_below(rng, 2) && n >= AMRMA_WIRE_L2L4_LEN) {
			amrma_wire_set_len(out, n);
			reseal(out, n);
		}
		break;
	default:	/* no UDP checksum: refused only where checksums are required */
		if (n >= AMRMA_WIRE_L2L4_LEN)
			out[40] = out[41] = 0;
		break;
	}
	return n;
}

/* --- the comparison --- */

/* What the runs covered, printed at the end. */
static struct {
	uint64_t frames, deliveries, mismatches;
	uint64_t segs[SEG_MAX_CUTS + 2], cuts_in_hdr, cuts_odd, cuts_odd_addr;
	uint64_t verdicts[SEG_NB_PAIRS][AMRMA_WIRE_ERR__MAX];
} cov;

/*
 * seg_diff(), counted; what differed is printed (the first frame in full, to replay:
 * the receivers differ from then on anyway). Returns the verdict in one segment.
 */
static enum amrma_wire_err
diff_one(unsigned int pair, const char *what, const uint8_t *p, uint16_t len, uint16_t q,
	 const uint16_t *cut, unsigned int nb, const uint8_t *shift)
{
	struct seg_result r;
	unsigned int i;

	if (!seg_diff(pair, p, len, q, cut, nb, shift, &r) && ++cov.mismatches <= 8)
		seg_report(stderr, what, pair, p, len, cut, nb, shift, &r,
			   cov.mismatches == 1);
	cov.deliveries += 2;
	cov.segs[nb + 1]++;
	for (i = 0; i < nb; i++) {
		cov.cuts_in_hdr += cut[i] < SEG_HDR_MAX;
		cov.cuts_odd += cut[i] & 1;
		cov.cuts_odd_addr += shift[i + 1] & 1;
	}
	cov.verdicts[pair][r.one.reason]++;
	return (enum amrma_wire_err)r.one.reason;
}

/* The queue a frame arrives on: mostly its context's, sometimes another (steering). */
static uint16_t
pick_queue(uint64_t *rng, const uint8_t *p, uint16_t len)
{
	return seg_below(rng, 4) == 0 ? (uint16_t)seg_below(rng, SEG_NB_Q) :
					seg_dst_queue(p, len);
}

/* A stream per frame: a failure replays from the frame's index alone. */
static uint64_t
frame_seed(unsigned int i, unsigned int what)
{
	return SEED ^ (UINT64_C(0x9e3779b97f4a7c15) * (2 * i + what + 1));
}

/* Both pairs, the same cuts. */
static void
diff_frame(uint64_t *rng, const char *what, const uint8_t *p, uint16_t len)
{
	uint16_t cut[SEG_MAX_CUTS];
	uint8_t shift[SEG_MAX_CUTS + 1];
	unsigned int nb = seg_pick_cuts(rng, len, cut, shift), pair;
	uint16_t q = pick_queue(rng, p, len);

	for (pair = 0; pair < SEG_NB_PAIRS; pair++)
		diff_one(pair, what, p, len, q, cut, nb, shift);
	cov.frames++;
}

static int
group_setup(void **state)
{
	struct rte_mempool *gen_pool;
	struct corpus_counts cc;

	RTE_SET_USED(state);
	h_fill(pattern, sizeof(pattern), 0x5e9);
	gen_pool = rte_pktmbuf_pool_create("seg_gen", 2047, 0, 0, SEG_DATA_ROOM,
					   SOCKET_ID_ANY);
	assert_non_null(gen_pool);
	gen_frames(gen_pool);
	rte_mempool_free(gen_pool);
	frames_any_life();
	assert_int_equal(corpus_replay(corpus_dir, corpus_take, &cc), 0);
	assert_true(cc.files > 0);
	/* in name order, not the directory's: each frame's seed follows from its index */
	qsort(frames + nb_lib, nb_frames - nb_lib, sizeof(frames[0]), by_name);
	assert_int_equal(seg_rcv_init(), 0);
	printf("%u frames built by the library, %u from the corpus\n", nb_lib,
	       nb_frames - nb_lib);
	return 0;
}

static int
group_teardown(void **state)
{
	unsigned int i;

	RTE_SET_USED(state);
	/* every segment of every chain went back: none leaked on a path */
	assert_int_equal(seg_rcv_fini(), 0);
	for (i = 0; i < nb_frames; i++)
		free(frames[i].data);
	return 0;
}

/* --- the tests --- */

/* The first library frame for which pick(view, len) holds. */
static const struct frame *
find_frame(bool (*pick)(const struct amrma_wire_view *v, uint16_t len))
{
	const struct amrma_wire_rx_params rx = {
		.mac = seg_mac_rx, .node_id = SEG_NODE_RX, .udp_base = SEG_UDP_BASE,
		.nb_ctx = SEG_NB_Q, .require_csum = true,
	};
	unsigned int i;

	for (i = 0; i < nb_lib; i++) {
		struct amrma_wire_view v;

		if (amrma_wire_parse(frames[i].data, frames[i].len, &rx, &v) == AMRMA_WIRE_OK &&
		    pick(&v, frames[i].len))
			return &frames[i];
	}
	return NULL;
}

static bool
pick_request(const struct amrma_wire_view *v, uint16_t len)
{
	RTE_SET_USED(len);
	return v->hdr.type == AMRMA_WIRE_REQUEST && !(v->hdr.flags & AMRMA_WIRE_F_MORE) &&
	       v->hdr.nargs == 5 && v->hdr.payload_len == 1001;
}

static bool
pick_reply(const struct amrma_wire_view *v, uint16_t len)
{
	return v->hdr.type == AMRMA_WIRE_REPLY && !(v->hdr.flags & AMRMA_WIRE_F_MORE) &&
	       v->hdr.nargs != 0 && v->hdr.payload_len >= 100 && len < 1300;
}

static bool
pick_coalesced(const struct amrma_wire_view *v, uint16_t len)
{
	return v->hdr.type == AMRMA_WIRE_REQUEST && v->nb_msgs >= 4 && len < 1200;
}

static bool
pick_coalesced_replies(const struct amrma_wire_view *v, uint16_t len)
{
	return v->hdr.type == AMRMA_WIRE_REPLY && v->nb_msgs >= 3 && len < 1500;
}

static bool
pick_send(const struct amrma_wire_view *v, uint16_t len)
{
	RTE_SET_USED(len);
	return v->hdr.type == AMRMA_WIRE_SEND && v->hdr.nargs == 0 && v->hdr.payload_len == 3;
}

static bool
pick_ack(const struct amrma_wire_view *v, uint16_t len)
{
	RTE_SET_USED(len);
	return v->hdr.type == AMRMA_WIRE_ACK;
}

static bool
pick_one_request(const struct amrma_wire_view *v, uint16_t len)
{
	RTE_SET_USED(len);
	return v->hdr.type == AMRMA_WIRE_REQUEST && v->nb_msgs == 1;
}

/*
 * A one-way message naming the AM core's LEAVE handler (255) ran it, and it read the
 * channel of the request being handled (ctx->tok_ch): NULL before the first request (the
 * node crashed: seg_fuzz found it), an earlier request's after it (the node closed its
 * channels to another sender). A one-way message is how a node says it leaves now, and
 * the handler takes the sender from the message: before any request, the context closes
 * its channels to the sender's life, in one segment or in several. The sender's next life
 * is taken again. Run first: the receivers have handled no request yet.
 */
static void
test_leave_by_send(void **state)
{
	const struct amrma_wire_addr addr = {
		.src_mac = seg_mac_tx, .dst_mac = seg_mac_rx, .src_ip = SEG_IP_TX,
		.dst_ip = SEG_IP_RX, .udp_base = SEG_UDP_BASE,
	};
	const struct frame *req = find_frame(pick_one_request);
	const int left = seg_cnt_index("peers_left");
	const int handled = seg_cnt_index("requests_handled");
	const uint16_t cut[1] = { 50 };
	const uint8_t shift[2] = { 0, 1 };
	struct amrma_wire_fields f = {
		.type = AMRMA_WIRE_SEND, .handler = AMRMA_AM_H_LEAVE,
		.src_node = SEG_NODE_TX, .dst_node = SEG_NODE_RX,
	};
	const struct amrma_wire_hdr *rh;
	unsigned int pair;
	uint8_t buf[128];
	int len;

	RTE_SET_USED(state);
	assert_non_null(req);
	assert_true(left >= 0 && handled >= 0);
	/* from the channel the request comes on, by the life before the request's */
	rh = amrma_wire_hdr_of((void *)(uintptr_t)req->data);
	f.src_ctx = rh->src_ctx;
	f.dst_ctx = rh->dst_ctx;
	f.src_epoch = rte_be_to_cpu_32(rh->src_epoch) - 1;
	len = amrma_wire_build(buf, sizeof(buf), &addr, &f, NULL, NULL, true);
	assert_true(len > 50);
	for (pair = 0; pair < SEG_NB_PAIRS; pair++) {
		struct seg_result r;

		assert_true(seg_diff(pair, buf, (uint16_t)len, f.dst_ctx, cut, 1, shift, &r));
		assert_int_equal(r.one.reason, AMRMA_WIRE_OK);
		assert_int_equal(r.one.cnt[left], 1);
		/* the same life again: closed to it, nothing runs */
		assert_true(seg_diff(pair, buf, (uint16_t)len, f.dst_ctx, cut, 1, shift, &r));
		assert_int_equal(r.one.cnt[left], 0);
		assert_int_equal(r.one.calls, 0);
		/* and the sender's next life is taken as before */
		assert_true(seg_diff(pair, req->data, req->len, seg_dst_queue(req->data, req->len),
				     cut, 1, shift, &r));
		assert_int_equal(r.one.cnt[handled], 1);
	}
}

/*
 * Valid checksummed frames split at every offset (two segments, and a one-byte segment
 * at every offset between two others) are taken; with any one byte changed they are
 * refused, for the reason they are refused in one segment. A frame whose first segment
 * ended inside its headers or arguments was refused (truncated), and the UDP checksum
 * of one whose first segment ended before the UDP header was summed from the wrong
 * offset.
 */
static void
test_split_everywhere(void **state)
{
	bool (*const picks[])(const struct amrma_wire_view *, uint16_t) = {
		pick_request, pick_reply, pick_coalesced, pick_coalesced_replies, pick_send,
		pick_ack,
	};
	static uint8_t buf[SEG_FRAME_MAX];
	uint64_t rng = SEED ^ 0xe7e7, offsets = 0;
	unsigned int i, pair;
	uint16_t c, q;

	RTE_SET_USED(state);
	for (i = 0; i < RTE_DIM(picks); i++) {
		const struct frame *f = find_frame(picks[i]);
		const uint8_t shift[SEG_MAX_CUTS + 1] = { 0, 0, 1, 0 };

		if (f == NULL)
			fail_msg("no library frame of kind %u", i);
		q = seg_dst_queue(f->data, f->len);
		offsets += f->len;
		for (c = 1; c < f->len; c++) {
			const uint16_t one[1] = { c }, two[2] = { c, (uint16_t)(c + 1) };

			for (pair = 0; pair < SEG_NB_PAIRS; pair++) {
				assert_int_equal(diff_one(pair, f->what, f->data, f->len, q, one,
							  1, shift), AMRMA_WIRE_OK);
				if (c + 1 < f->len)
					assert_int_equal(diff_one(pair, f->what, f->data, f->len,
								  q, two, 2, shift),
							 AMRMA_WIRE_OK);
			}
		}
		/* every byte changed: alone in its segment, and inside a random split */
		for (c = 0; c < f->len; c++) {
			uint16_t cut[SEG_MAX_CUTS];
			uint8_t sh[SEG_MAX_CUTS + 1];
			unsigned int nb, k;
			char what[128];

			for (k = 0; k < 2; k++) {
				enum amrma_wire_err v;

				memcpy(buf, f->data, f->len);
				buf[c] ^= k == 0 ? (uint8_t)(1u << (c % 8)) : 0xff;
				if (k == 0) {
					nb = 0;
					if (c > 0)
						cut[nb++] = c;
					if (c + 1 < f->len)
						cut[nb++] = (uint16_t)(c + 1);
					memset(sh, 0, sizeof(sh));
				} else {
					nb = seg_pick_cuts(&rng, f->len, cut, sh);
				}
				snprintf(what, sizeof(what), "%s, byte %u ^ %02x", f->what, c,
					 buf[c] ^ f->data[c]);
				v = diff_one(SEG_CSUM_ON, what, buf, f->len, q, cut, nb, sh);
				/* the source MAC is the one thing nothing checks */
				if ((c >= 6 && c < 12) != (v == AMRMA_WIRE_OK))
					fail_msg("%s: %s", what, amrma_wire_err_name(v));
				diff_one(SEG_CSUM_OFF, what, buf, f->len, q, cut, nb, sh);
			}
		}
	}
	printf("%u frames split at each of their %" PRIu64 " offsets, and each byte changed; "
	       "%" PRIu64 " deliveries\n", (unsigned int)RTE_DIM(picks), offsets,
	       cov.deliveries);
	if (cov.mismatches != 0)
		fail_msg("%" PRIu64 " frames got another verdict split", cov.mismatches);
}

/*
 * A node on a port with an MTU over 9132 (9216 is common for jumbo frames) coalesces
 * messages into frames longer than one message makes (9146 bytes). A receiver whose
 * port delivered one in segments copied it into a buffer of 9146 bytes: it refused it
 * (bad_length) where one that got it whole took it, and the sender resent it until it
 * declared the peer dead.
 */
static void
test_coalesced_jumbo(void **state)
{
	const struct amrma_wire_rx_params rx = {
		.mac = seg_mac_rx, .node_id = SEG_NODE_RX, .udp_base = SEG_UDP_BASE,
		.nb_ctx = SEG_NB_Q, .require_csum = true,
	};
	uint64_t rng = SEED ^ 0x1b0;
	unsigned int i, k, pair, nb = 0;

	RTE_SET_USED(state);
	for (i = 0; i < nb_lib; i++) {
		const struct frame *f = &frames[i];
		struct amrma_wire_view v;

		if (f->len <= ONE_MSG_MAX ||
		    amrma_wire_parse(f->data, f->len, &rx, &v) != AMRMA_WIRE_OK)
			continue;
		assert_true(v.nb_msgs >= 2);
		nb++;
		for (k = 0; k < 16; k++) {
			uint16_t cut[SEG_MAX_CUTS];
			uint8_t shift[SEG_MAX_CUTS + 1];
			unsigned int n = seg_pick_cuts(&rng, f->len, cut, shift);

			for (pair = 0; pair < SEG_NB_PAIRS; pair++)
				assert_int_equal(diff_one(pair, f->what, f->data, f->len,
							  seg_dst_queue(f->data, f->len), cut,
							  n, shift), AMRMA_WIRE_OK);
		}
	}
	/* requests of s and its replies, two 4600-byte ones in each */
	assert_true(nb >= 2);
	if (cov.mismatches != 0)
		fail_msg("%" PRIu64 " frames got another verdict split", cov.mismatches);
}

/* Every frame, and mutations of each, one segment against 2-4. */
static void
test_differential(void **state)
{
	static uint8_t buf[SEG_FRAME_MAX];
	unsigned int seen[SEG_NB_PAIRS] = { 0 };
	unsigned int i, k, r, pair;

	RTE_SET_USED(state);
	memset(&cov, 0, sizeof(cov));
	/* the frames as they are first, in the order they were sent: their messages reach
	 * the handlers before a mutant names a later life of their sender */
	for (i = 0; i < nb_frames; i++) {
		uint64_t rng = frame_seed(i, 0);

		diff_frame(&rng, frames[i].what, frames[i].data, frames[i].len);
	}
	for (i = 0; i < nb_frames; i++) {
		const struct frame *f = &frames[i];
		uint64_t rng = frame_seed(i, 1);
		unsigned int nb_mut = i < nb_lib ? LIB_MUTANTS : CORPUS_MUTANTS;
		char what[128];

		for (k = 0; k < nb_mut; k++) {
			uint16_t n = mutate(&rng, f->data, f->len, buf);

			snprintf(what, sizeof(what), "%s, mutant %u", f->what, k);
			diff_frame(&rng, what, buf, n);
		}
	}
	printf("%" PRIu64 " frames, %" PRIu64 " deliveries; split in 2/3/4 segments: %" PRIu64
	       "/%" PRIu64 "/%" PRIu64 "; cuts in the headers %" PRIu64 ", at odd offsets %"
	       PRIu64 ", segments at odd addresses %" PRIu64 "\n", cov.frames, cov.deliveries,
	       cov.segs[2], cov.segs[3], cov.segs[4], cov.cuts_in_hdr, cov.cuts_odd,
	       cov.cuts_odd_addr);
	for (pair = 0; pair < SEG_NB_PAIRS; pair++) {
		printf("checksums %s:", pair == SEG_CSUM_ON ? "on" : "off");
		for (r = 0; r < AMRMA_WIRE_ERR__MAX; r++)
			if (cov.verdicts[pair][r] != 0) {
				printf(" %s %" PRIu64, amrma_wire_err_name(r),
				       cov.verdicts[pair][r]);
				seen[pair]++;
			}
		printf("\n");
	}
	if (cov.mismatches != 0)
		fail_msg("%" PRIu64 " frames got another verdict split", cov.mismatches);
	/* every check was reached (no checksum one where none are verified), and handlers
	 * ran */
	assert_int_equal(seen[SEG_CSUM_ON], AMRMA_WIRE_ERR__MAX);
	assert_int_equal(seen[SEG_CSUM_OFF], AMRMA_WIRE_ERR__MAX - 2);
	assert_true(cov.verdicts[SEG_CSUM_ON][AMRMA_WIRE_OK] > nb_lib);
	assert_true(seg_rcv_runs(SEG_CSUM_ON, 0) > nb_lib / 2);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_leave_by_send),
		cmocka_unit_test(test_split_everywhere),
		cmocka_unit_test(test_coalesced_jumbo),
		cmocka_unit_test(test_differential),
	};

	if (argc != 2) {
		fprintf(stderr, "usage: %s wire-corpus-dir\n", argv[0]);
		return 2;
	}
	corpus_dir = argv[1];
	h_eal_init("amrma_test_seg");
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
