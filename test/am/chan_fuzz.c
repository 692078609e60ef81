/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A hostile peer of the reliability layer, scripted by the input.
 *
 * Three harness nodes of two contexts each. Node 1 is the victim: a real node with echo,
 * one-way, mbuf-keeping and reply handlers. Node 0 is the attacker: its amrma node is
 * never polled; instead the script builds its frames with the codec (amrma_wire_build,
 * amrma_wire_sub_put) and puts them straight into node 1's receive rings, and it reads
 * what node 1 sends it off its own rings (capture()), to learn node 1's epoch, the
 * sequence numbers it sends and acks, and the tokens of its requests. Node 2 is an
 * honest peer: it keeps sending requests and one-way messages to node 1 and serves node
 * 1's requests.
 *
 * An input is a series of steps (chan_fuzz_one()): a frame from the attacker whose
 * every channel field is chosen (seq next, ahead, behind, at the window's edge, far or
 * raw; ack and sack right, ahead of what node 1 sent, backwards, raw; source and
 * destination epochs right, newer, older, 0, raw; type; handler, LEAVE and unregistered
 * ones included; reply tokens right, of another generation, of another operation;
 * flags; arguments and payload lengths; up to four messages in one frame; the wrong
 * receive queue), the last frame again, requests and one-way messages node 1 sends the
 * attacker or node 2, node 2's to node 1, polls, one wait past the retransmit timeout.
 *
 * Then the attacker restarts twice (two newer epochs: node 1 resets its channels to it)
 * and everything settles. Checked, abort() on a violation:
 *  - every operation completes exactly once, and none after its input ended; node 2's
 *    and node 1's to node 2 with status 0, their handlers run exactly once each; a reply
 *    handler runs at most once per operation;
 *  - a request or one-way message of the attacker runs its handler at node 1 at most
 *    once per life, channel, sequence number and place in the frame (struct atk_msg);
 *  - every frame node 1 sends the attacker parses and carries node 1's epoch;
 *  - node 1 still serves node 2 afterwards (a last request to each context);
 *  - no mbuf stays in use once the nodes are idle, and rte_malloc memory stays at its
 *    level after the first input.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "amrma_wire.h"
#include "chan_fuzz.h"
#include "fuzz_check.h"
#include "fuzz_input.h"
#include "harness.h"

#define ATK		0u
#define VIC		1u
#define GOOD		2u
#define NQ		2u
#define MAX_STEPS	64u
#define MAX_REC		256u	/* operations per kind and input */
#define NTOK		16u	/* tokens of node 1's requests the attacker remembers */
#define NKEEP		16u	/* mbufs node 1's keeping handler holds for a step */
#define FRAME_CAP	2048u
#define MAX_MSGS	4u
/* the attacker's life when an input starts (node 1 learns it from the attacker only) */
#define ATK_LIFE	UINT32_C(0x40000000)

/* the attacker's requests and one-way messages with an argument carry a tag in it */
#define MAX_ATK		1024u
#define ATK_TAG		UINT64_C(0xa7)	/* bits 56-63; 32-55 the input, 0-31 the index */

/* handler indices; 9 stays unregistered */
enum { H_ECHO = 1, H_SEND, H_KEEP, H_ECHOR, H_UNREG = 9 };

/* kinds of operations */
enum { K_GOOD, K_VIC_ATK, K_VIC_GOOD, K_NB };

#define die(...) fuzz_die("chan_fuzz", __VA_ARGS__)

/* an operation: its completions, and what its handler and reply handler did */
struct rec {
	uint8_t dones;
	uint8_t handled;	/* the target's handler ran (node 1 or node 2) */
	uint8_t replies;	/* our reply handler ran */
	bool send;		/* one-way message */
	bool must_ok;		/* to the attacker's new life, which answers it properly */
	int status;
};

/*
 * A request or one-way message of the attacker's, as node 1 must see it: its handler runs
 * at most once per life, channel, sequence number and place in the frame, however often
 * and in whatever company the frame comes.
 */
struct atk_msg {
	uint32_t epoch;		/* the frame's source life */
	uint32_t seq;
	uint8_t a, v;		/* channel: attacker context, node 1's context */
	uint8_t idx;		/* place in the frame */
	uint8_t runs;
};

/* what the attacker knows of one channel: its context a to node 1's context v */
struct atk_chan {
	uint32_t seq;		/* next seq it sends */
	uint32_t acked;		/* node 1's last cumulative ack of our frames */
	uint32_t rx_next;	/* node 1's frames: every seq below came */
	uint32_t rx_mask;	/* bit i: rx_next + 1 + i came */
	uint32_t nb_req;	/* requests node 1 sent on it */
	uint32_t last_tok;	/* the token of the last one */
};

static struct {
	struct harness h;
	bool up;
	uint32_t input;		/* inputs run since start: tags every operation */
	struct rec rec[K_NB][MAX_REC];
	unsigned int nb_rec[K_NB];
	/* the attacker */
	struct atk_chan ch[NQ][NQ];	/* [attacker ctx][victim ctx] */
	uint32_t epoch[NQ];		/* its life as each victim context knows it */
	uint32_t tok[NTOK];
	unsigned int tok_next;
	uint8_t last[FRAME_CAP] __rte_aligned(8);
	uint16_t last_len;
	uint8_t last_q;
	struct atk_msg atk[MAX_ATK];
	unsigned int nb_atk;
	struct rte_mbuf *kept[NKEEP];
	unsigned int nb_kept;
	uint64_t frames, handled;
	struct fuzz_heap heap;
} fz;

static uint8_t reply_buf[256];

/* ---- operations ---- */

/* never NULL: a reply handler's op_arg is NULL for anything but a reply */
#define OP_TAG		(UINT64_C(1) << 63)

static void *
op_arg(unsigned int kind, unsigned int idx)
{
	return (void *)(uintptr_t)(OP_TAG | (uint64_t)fz.input << 24 | (uint64_t)kind << 20 |
				   idx);
}

/* the record of an operation's arg; dies on one of an earlier input */
static struct rec *
op_rec(const void *arg, const char *what)
{
	uint64_t a = (uintptr_t)arg;
	unsigned int kind = (a >> 20) & 0xf, idx = a & 0xfffff;

	if (!(a & OP_TAG) || (uint32_t)(a >> 24) != fz.input || kind >= K_NB ||
	    idx >= fz.nb_rec[kind])
		die("%s of an operation not of this input (input %u, kind %u, op %u)", what,
		    (unsigned int)(a >> 24), kind, idx);
	return &fz.rec[kind][idx];
}

static void
op_done(struct amrma_ctx *ctx, void *arg, int status)
{
	struct rec *r = op_rec(arg, "completion");

	RTE_SET_USED(ctx);
	if (++r->dones > 1)
		die("operation completed twice (status %d, then %d)", r->status, status);
	r->status = status;
}

/* ---- handlers (nodes 1 and 2) ---- */

static bool
on_node(struct amrma_ctx *ctx, unsigned int i)
{
	return amrma_ctx_node(ctx) == fz.h.n[i].node;
}

/* the record named by an honest message's first argument: node 2's to node 1, node 1's
 * to node 2 */
static void
honest_handled(struct amrma_ctx *ctx, const struct amrma_am_msg *msg)
{
	if (!(msg->src.node == GOOD && on_node(ctx, VIC)) &&
	    !(msg->src.node == VIC && on_node(ctx, GOOD)))
		return;
	if (msg->nargs < 1)
		die("an honest message without its argument");
	if (++op_rec((void *)(uintptr_t)msg->args[0], "handler run")->handled > 1)
		die("handler of node %u's message ran twice at node %u", msg->src.node,
		    on_node(ctx, VIC) ? VIC : GOOD);
}

/* A tagged message of the attacker's ran its handler at node 1: never twice (see
 * struct atk_msg). */
static void
atk_handled(struct amrma_ctx *ctx, const struct amrma_am_msg *msg)
{
	const struct atk_msg *e;
	unsigned int i;

	if (msg->src.node != ATK || !on_node(ctx, VIC) || msg->nargs < 1 ||
	    msg->args[0] >> 56 != ATK_TAG ||
	    (uint32_t)(msg->args[0] >> 32 & 0xffffff) != (fz.input & 0xffffff))
		return;
	i = (uint32_t)msg->args[0];
	if (i >= fz.nb_atk)
		die("a tag the attacker did not give: %u of %u", i, fz.nb_atk);
	e = &fz.atk[i];
	if (msg->src_epoch != e->epoch)
		die("node 1 saw life %#x for a frame of life %#x", msg->src_epoch, e->epoch);
	for (i = 0; i < fz.nb_atk; i++) {
		struct atk_msg *o = &fz.atk[i];

		if (o->runs != 0 && o->epoch == e->epoch && o->seq == e->seq && o->a == e->a &&
		    o->v == e->v && o->idx == e->idx)
			die("the attacker's message (life %#x, channel %u->%u, seq %u, #%u) "
			    "ran twice", e->epoch, e->a, e->v, e->seq, e->idx);
	}
	fz.atk[(uint32_t)msg->args[0]].runs++;
}

/* request: reply as args[1] says (an honest sender's 0 or 4): with the payload echoed
 * (over the request when it fits), empty, not at all, with an error, from elsewhere */
static int
echo_handler(struct amrma_ctx *ctx, amrma_am_token_t tok, const struct amrma_am_msg *msg,
	     void *arg)
{
	unsigned int mode = msg->nargs >= 2 ? (unsigned int)(msg->args[1] % 5) : 0;
	uint16_t len = msg->len;

	RTE_SET_USED(arg);
	if (tok == 0)
		return 0;	/* a reply or one-way message naming it */
	honest_handled(ctx, msg);
	atk_handled(ctx, msg);
	if (msg->src.node != GOOD && msg->src.node != VIC)
		fz.handled++;
	switch (mode) {
	case 0:
		return amrma_am_reply(ctx, tok, H_ECHOR, msg->args, RTE_MIN(msg->nargs, 2u),
				      msg->payload, len, 0);
	case 1:
		return amrma_am_reply(ctx, tok, AMRMA_WIRE_NO_HANDLER, NULL, 0, NULL, 0, -EIO);
	case 2:
		return 0;
	case 3:
		return -EINVAL;
	default:
		len = RTE_MIN(len, (uint16_t)sizeof(reply_buf));
		return amrma_am_reply(ctx, tok, H_ECHOR, msg->args, RTE_MIN(msg->nargs, 2u),
				      reply_buf, len, 0);
	}
}

static int
send_handler(struct amrma_ctx *ctx, amrma_am_token_t tok, const struct amrma_am_msg *msg,
	     void *arg)
{
	RTE_SET_USED(arg);
	if (tok != 0 || msg->op_arg != NULL)
		return 0;	/* not a one-way message */
	honest_handled(ctx, msg);
	atk_handled(ctx, msg);
	if (msg->src.node != GOOD)
		fz.handled++;
	return 0;
}

/* keeps the frame until the step ends; a request's reply points into it */
static int
keep_handler(struct amrma_ctx *ctx, amrma_am_token_t tok, const struct amrma_am_msg *msg,
	     void *arg)
{
	RTE_SET_USED(arg);
	fz.handled++;
	if (msg->op_arg == NULL)
		atk_handled(ctx, msg);
	if (fz.nb_kept == NKEEP)
		return 0;
	if (tok != 0 && amrma_am_reply(ctx, tok, AMRMA_WIRE_NO_HANDLER, NULL, 0, msg->payload,
				       msg->len, 0) != 0)
		return 0;
	fz.kept[fz.nb_kept++] = msg->mbuf;
	return AMRMA_AM_KEEP_MBUF;
}

/* the reply handler of the echoes: at most once per operation */
static int
echor_handler(struct amrma_ctx *ctx, amrma_am_token_t tok, const struct amrma_am_msg *msg,
	      void *arg)
{
	RTE_SET_USED(ctx);
	RTE_SET_USED(tok);
	RTE_SET_USED(arg);
	if (msg->op_arg == NULL)
		return 0;	/* a request or one-way message naming it */
	if (++op_rec(msg->op_arg, "reply handler")->replies > 1)
		die("reply handler ran twice for one operation");
	return 0;
}

static void
kept_free(void)
{
	while (fz.nb_kept != 0)
		rte_pktmbuf_free(fz.kept[--fz.nb_kept]);
}

/* ---- the wire ---- */

static struct amrma_wire_rx_params
atk_rx_params(void)
{
	return (struct amrma_wire_rx_params){
		.mac = fz.h.n[ATK].dev.mac,
		.node_id = ATK,
		.udp_base = fz.h.conf.udp_base,
		.nb_ctx = NQ,
		.skip_csum = true,
	};
}

static inline int32_t
seq_diff(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b);
}

static void
tok_add(uint32_t t)
{
	fz.tok[fz.tok_next++ % NTOK] = t;
}

/* What node 1 sent the attacker: parsed, checked, learnt from, freed. */
static void
capture_one(struct rte_mbuf *m)
{
	static uint8_t buf[UINT16_MAX] __rte_aligned(8);
	struct amrma_wire_rx_params rxp = atk_rx_params();
	uint32_t len = rte_pktmbuf_pkt_len(m);
	struct amrma_wire_view v;
	struct atk_chan *c;
	enum amrma_wire_err err;
	const void *p;

	p = rte_pktmbuf_read(m, 0, len, buf);
	if (p == NULL)
		die("node 1's frame unreadable");
	err = amrma_wire_parse(p, len, &rxp, &v);
	if (err != AMRMA_WIRE_OK)
		die("node 1 sent a frame its peer rejects: %s", amrma_wire_err_name(err));
	if (v.hdr.src_node != VIC || v.hdr.src_epoch != amrma_node_epoch(fz.h.n[VIC].node))
		die("node 1's frame names node %u life %u", v.hdr.src_node, v.hdr.src_epoch);
	c = &fz.ch[v.hdr.dst_ctx][v.hdr.src_ctx];
	if ((v.hdr.flags & AMRMA_WIRE_F_ACK_VALID) && seq_diff(v.hdr.ack, c->acked) > 0) {
		c->acked = v.hdr.ack;
		if (seq_diff(c->acked, c->seq) > 0)
			c->seq = c->acked;
	}
	if (v.hdr.type != AMRMA_WIRE_ACK) {
		int32_t d = seq_diff(v.hdr.seq, c->rx_next);

		if (d == 0) {
			c->rx_next++;
			while (c->rx_mask & 1) {
				c->rx_mask >>= 1;
				c->rx_next++;
			}
			c->rx_mask >>= 1;
		} else if (d > 0 && d <= 32) {
			c->rx_mask |= UINT32_C(1) << (d - 1);
		}
	}
	for (;;) {
		if (v.hdr.type == AMRMA_WIRE_REQUEST) {
			tok_add(v.hdr.token);
			c->nb_req++;
			c->last_tok = v.hdr.token;
		}
		if (v.more_len == 0)
			break;
		amrma_wire_next(&v);
	}
	rte_pktmbuf_free(m);
}

static void
capture(void)
{
	struct rte_mbuf *m;
	unsigned int q;

	for (q = 0; q < NQ; q++)
		while (rte_ring_sc_dequeue(fz.h.n[ATK].rx[q], (void **)&m) == 0)
			capture_one(m);
}

/* The wire, the attacker's capture, then the polls of nodes 1 and 2. */
static int
step(void)
{
	int work = h_switch(&fz.h);

	capture();
	work += amrma_node_poll(fz.h.n[VIC].node, 32);
	work += amrma_node_poll(fz.h.n[GOOD].node, 32);
	kept_free();
	return work;
}

/* a frame into node 1's receive ring q */
static void
inject(const uint8_t *frame, uint16_t len, unsigned int q)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(fz.h.pool);
	char *p;

	if (m == NULL)
		die("no mbuf for the attacker");
	p = rte_pktmbuf_append(m, len);
	if (p == NULL)
		die("attacker frame of %u bytes does not fit an mbuf", len);
	memcpy(p, frame, len);
	if (rte_ring_sp_enqueue(fz.h.n[VIC].rx[q], m) != 0)
		rte_pktmbuf_free(m);
	fz.frames++;
}

/* ---- the attacker's choices ---- */

static uint32_t
vic_epoch(void)
{
	return amrma_node_epoch(fz.h.n[VIC].node);
}

/* the attacker's life starts over as seen by victim context v */
static void
atk_restart(unsigned int v, uint32_t epoch)
{
	unsigned int a;

	fz.epoch[v] = epoch;
	for (a = 0; a < NQ; a++)
		memset(&fz.ch[a][v], 0, sizeof(fz.ch[a][v]));
}

static uint32_t
pick_seq(struct fuzz_in *r, struct atk_chan *c, unsigned int mode, uint8_t k)
{
	switch (mode) {
	case 0: case 1:
		return c->seq++;
	case 2:
		return c->seq + k;		/* ahead: in the window, at its edge, past it */
	case 3:
		return c->seq - 1 - k % 8;	/* a duplicate */
	case 4:
		return fuzz_u32(r);
	case 5:
		return c->acked;		/* what node 1 said it expects */
	case 6:
		return c->seq + UINT32_C(0x80000000);
	default:
		return c->seq;			/* resent */
	}
}

static void
pick_ack(struct fuzz_in *r, const struct atk_chan *c, unsigned int mode, uint8_t k,
	 struct amrma_wire_fields *f)
{
	f->ack = c->rx_next;
	f->sack = c->rx_mask;
	switch (mode) {
	case 1:
		f->sack = fuzz_u32(r);
		break;
	case 2:
		f->ack = c->rx_next + 1 + k;	/* frames node 1 never sent */
		break;
	case 3:
		f->ack = c->rx_next - 1 - k;	/* backwards */
		break;
	case 4:
		f->ack = fuzz_u32(r);
		break;
	case 5:
		f->sack = UINT32_MAX;
		break;
	case 6:
		f->ack = 0;
		break;
	default:
		break;
	}
}

static void
pick_epochs(struct fuzz_in *r, unsigned int v, uint8_t b, struct amrma_wire_fields *f)
{
	uint32_t e = fz.epoch[v];

	switch (b & 7) {
	case 2:
		e++;		/* a restart */
		break;
	case 3:
		e--;		/* an older life */
		break;
	case 4:
		e = 0;
		break;
	case 5:
		e = fuzz_u32(r);
		break;
	case 6:
		e += UINT32_C(0x80000000);
		break;
	default:
		break;
	}
	/* a newer life, as node 1 will take it: the attacker's sequence spaces restart */
	if (fz.epoch[v] != 0 && seq_diff(e, fz.epoch[v]) > 0)
		atk_restart(v, e);
	else if (fz.epoch[v] == 0)
		fz.epoch[v] = e;
	f->src_epoch = e;
	switch ((b >> 3) & 3) {
	case 1:
		f->dst_epoch = 0;
		break;
	case 2:
		f->dst_epoch = vic_epoch() - 1;
		break;
	case 3:
		f->dst_epoch = fuzz_u32(r);
		break;
	default:
		f->dst_epoch = vic_epoch();
		break;
	}
	switch (b >> 5) {
	case 6:
		f->src_node = VIC;	/* itself */
		break;
	case 7:
		f->src_node = fuzz_u8(r) & 1 ? 3 : fz.h.conf.max_nodes - 1;	/* no peer */
		break;
	default:
		f->src_node = ATK;
		break;
	}
}

static uint32_t
pick_token(struct fuzz_in *r, unsigned int mode)
{
	uint32_t t = fz.tok[fuzz_u8(r) % NTOK];

	switch (mode) {
	case 0:
		return t;
	case 1:
		return t + 0x10000;	/* another generation of its operation */
	case 2:
		return t ^ (1u + fuzz_u8(r));	/* another operation */
	default:
		return fuzz_u32(r);
	}
}

static uint16_t
pick_handler(struct fuzz_in *r, uint8_t type, unsigned int mode)
{
	static const uint16_t h[] = { H_ECHO, H_SEND, H_KEEP, H_ECHOR, AMRMA_AM_H_LEAVE,
				      H_UNREG, AMRMA_WIRE_NO_HANDLER };
	uint16_t x = mode < RTE_DIM(h) ? h[mode] : fuzz_u8(r);

	/* only a reply may name no handler: anything else would die at the codec */
	return x == AMRMA_WIRE_NO_HANDLER && type != AMRMA_WIRE_REPLY ? H_ECHO : x;
}

static uint16_t
pick_len(struct fuzz_in *r, unsigned int mode)
{
	static const uint16_t len[] = { 0, 0, 1, 8, 63, 64, 200, 1200 };

	return mode < RTE_DIM(len) ? len[mode] : fuzz_u8(r);
}

/* one message's fields (and arguments, payload) from the input */
struct msg_pick {
	uint8_t type;
	uint8_t nargs;
	uint16_t handler;
	uint16_t len;
	int16_t status;
	uint32_t token;
	uint64_t args[AMRMA_WIRE_MAX_ARGS];
};

static void
pick_msg(struct fuzz_in *r, uint8_t type, struct msg_pick *m)
{
	static const int16_t st[] = { 0, -ECONNRESET, -ETIMEDOUT, 5, INT16_MIN, -1 };
	uint8_t b = fuzz_u8(r), n = fuzz_u8(r);
	unsigned int i;

	memset(m, 0, sizeof(*m));
	m->type = type;
	m->handler = pick_handler(r, type, b & 7);
	m->token = type == AMRMA_WIRE_REPLY ? pick_token(r, (b >> 3) & 3) : fuzz_u8(r);
	m->nargs = (n & 0xf) > AMRMA_WIRE_MAX_ARGS ? 2 : n & 0xf;
	m->len = pick_len(r, (n >> 4) & 0xf);
	m->status = (b >> 5) < RTE_DIM(st) ? st[b >> 5] : (int16_t)fuzz_u16(r);
	for (i = 0; i < m->nargs; i++)
		m->args[i] = i == 0 ? fuzz_u8(r) : fuzz_u8(r) % 5;
}

/* Tag message idx of the frame f (on channel a -> v) when it is a request or a one-way
 * message with an argument (see struct atk_msg). */
static void
atk_tag(const struct amrma_wire_fields *f, unsigned int a, unsigned int v, uint8_t idx,
	struct msg_pick *m)
{
	struct atk_msg *e;

	if ((m->type != AMRMA_WIRE_REQUEST && m->type != AMRMA_WIRE_SEND) || m->nargs == 0 ||
	    fz.nb_atk == MAX_ATK)
		return;
	e = &fz.atk[fz.nb_atk];
	*e = (struct atk_msg){ .epoch = f->src_epoch, .seq = f->seq, .a = (uint8_t)a,
			       .v = (uint8_t)v, .idx = idx };
	m->args[0] = ATK_TAG << 56 | (uint64_t)(fz.input & 0xffffff) << 32 | fz.nb_atk++;
}

static uint8_t
sub_type(uint8_t b)
{
	static const uint8_t t[] = { AMRMA_WIRE_REQUEST, AMRMA_WIRE_REPLY, AMRMA_WIRE_SEND,
				     AMRMA_WIRE_REPLY };

	return t[b & 3];
}

/*
 * A frame of the attacker's, every channel field chosen by the input (see the file's
 * comment). proper: the fields a peer in step would send, the message's own choices
 * still the input's.
 */
static void
atk_frame(struct fuzz_in *r, bool proper)
{
	static const uint8_t types[] = { AMRMA_WIRE_REQUEST, AMRMA_WIRE_REPLY, AMRMA_WIRE_ACK,
					 AMRMA_WIRE_SEND };
	static uint8_t payload[FRAME_CAP];
	uint8_t b0 = fuzz_u8(r), b1 = fuzz_u8(r), b2 = proper ? 0 : fuzz_u8(r);
	uint8_t k = fuzz_u8(r);
	unsigned int a = b1 & 1, v = (b1 >> 1) & 1, nb_more = (b0 >> 3) & 3, i;
	struct amrma_wire_addr addr = {
		.src_mac = fz.h.n[ATK].dev.mac, .dst_mac = fz.h.n[VIC].dev.mac,
		.src_ip = fz.h.n[ATK].ip, .dst_ip = fz.h.n[VIC].ip,
		.udp_base = fz.h.conf.udp_base,
	};
	struct amrma_wire_fields f = { .src_ctx = (uint8_t)a, .dst_ctx = (uint8_t)v,
				       .dst_node = VIC };
	struct atk_chan *c = &fz.ch[a][v];
	struct msg_pick m;
	int len;

	f.type = types[b0 & 3];
	pick_epochs(r, v, b2, &f);
	c = &fz.ch[a][v];	/* after a restart too */
	f.seq = pick_seq(r, c, proper ? 0 : (b1 >> 2) & 7, k);
	if ((b0 & 4) || proper) {
		f.flags |= AMRMA_WIRE_F_ACK_VALID;
		pick_ack(r, c, proper ? 0 : b1 >> 5, k, &f);
	}
	if (f.type == AMRMA_WIRE_ACK) {
		memset(&m, 0, sizeof(m));
		m.handler = AMRMA_WIRE_NO_HANDLER;
		nb_more = 0;
	} else {
		pick_msg(r, f.type, &m);
		if (proper && f.type == AMRMA_WIRE_REPLY)
			m.token = fz.tok[(fz.tok_next - 1) % NTOK];
	}
	if (nb_more != 0)
		f.flags |= AMRMA_WIRE_F_MORE;
	atk_tag(&f, a, v, 0, &m);
	f.handler = m.handler;
	f.nargs = m.nargs;
	f.payload_len = m.len;
	f.status = m.status;
	f.token = m.token;
	h_fill(payload, sizeof(payload), k);
	len = amrma_wire_build(fz.last, sizeof(fz.last), &addr, &f, m.args, payload, false);
	if (len < 0)
		return;
	for (i = 0; i < nb_more; i++) {
		pick_msg(r, sub_type(fuzz_u8(r)), &m);
		if (m.handler == AMRMA_WIRE_NO_HANDLER && m.type != AMRMA_WIRE_REPLY)
			m.handler = H_ECHO;
		if (len + amrma_wire_sub_len(m.nargs, m.len) > sizeof(fz.last))
			break;
		atk_tag(&f, a, v, (uint8_t)(i + 1), &m);
		amrma_wire_sub_put(fz.last + len, m.type, m.handler, m.status, m.token, m.args,
				   m.nargs, payload, m.len);
		len += (int)amrma_wire_sub_len(m.nargs, m.len);
	}
	if (i == 0 && nb_more != 0)
		amrma_wire_hdr_of(fz.last)->flags &= (uint8_t)~AMRMA_WIRE_F_MORE;
	amrma_wire_set_len(fz.last, (size_t)len);
	fz.last_len = (uint16_t)len;
	/* the wrong queue: the context that takes it hands it over */
	fz.last_q = (b0 & 0x40) ? 1 - v : v;
	inject(fz.last, fz.last_len, fz.last_q);
	if (b0 & 0x80)
		inject(fz.last, fz.last_len, fz.last_q);
}

/* ---- the honest traffic ---- */

static struct rec *
rec_new(unsigned int kind, void **arg)
{
	if (fz.nb_rec[kind] == MAX_REC)
		return NULL;
	*arg = op_arg(kind, fz.nb_rec[kind]);
	memset(&fz.rec[kind][fz.nb_rec[kind]], 0, sizeof(struct rec));
	return &fz.rec[kind][fz.nb_rec[kind]++];
}

/* a request or one-way message from ctx to ep; mode: the echo's reply (0 or 4) */
static void
honest_op(unsigned int kind, struct amrma_ctx *ctx, struct amrma_ep ep, bool send,
	  uint16_t len, unsigned int mode)
{
	static uint8_t payload[1024];
	struct rec *rc;
	uint64_t args[2];
	void *arg;
	int ret;

	rc = rec_new(kind, &arg);
	if (rc == NULL)
		return;
	args[0] = (uintptr_t)arg;
	args[1] = mode;
	h_fill(payload, len, (uint32_t)fz.nb_rec[kind]);
	rc->send = send;
	if (send)
		ret = amrma_am_send(ctx, ep, H_SEND, args, 2, payload, len, op_done, arg);
	else
		ret = amrma_am_request(ctx, ep, H_ECHO, args, 2, payload, len, op_done, arg);
	if (ret != 0)
		fz.nb_rec[kind]--;	/* refused at once (-EAGAIN, -ENOTCONN): no record */
}

static void
good_ops(struct fuzz_in *r)
{
	uint8_t b = fuzz_u8(r);
	unsigned int i, n = 1 + (b & 3);

	for (i = 0; i < n; i++) {
		struct amrma_ep ep = { .node = VIC, .ctx = (uint8_t)((b >> 2) + i) & 1 };

		honest_op(K_GOOD, h_ctx(&fz.h, GOOD, (b >> 3) & 1), ep, (b >> (4 + i)) & 1,
			  (uint16_t)(b & 0x20 ? 300 : 16), (b & 0x40) ? 4 : 0);
	}
}

static void
vic_op(struct fuzz_in *r, unsigned int to)
{
	uint8_t b = fuzz_u8(r);
	struct amrma_ep ep = { .node = (uint16_t)to, .ctx = b & 1 };

	honest_op(to == ATK ? K_VIC_ATK : K_VIC_GOOD, h_ctx(&fz.h, VIC, (b >> 1) & 1), ep,
		  to == ATK && (b & 4), (uint16_t)((b >> 3) * 16), 0);
}

/* ---- settling and checks ---- */

static unsigned int
refused(void)
{
	struct amrma_am_stats st;
	uint64_t n;
	unsigned int i;

	amrma_node_stats_get(fz.h.n[VIC].node, &st);
	n = st.unknown_peer + st.unknown_handler + st.bad_token + st.bad_ack + st.duplicates +
	    st.out_of_window + st.stale_epoch + st.redirect_drops;
	for (i = 0; i < AMRMA_WIRE_ERR__MAX; i++)
		n += st.rx_rejected[i];
	return (unsigned int)n;
}

/* A frame of the attacker without arguments or payload, into node 1's ring q. */
static void
atk_plain(struct amrma_wire_fields *f, unsigned int q)
{
	struct amrma_wire_addr addr = {
		.src_mac = fz.h.n[ATK].dev.mac, .dst_mac = fz.h.n[VIC].dev.mac,
		.src_ip = fz.h.n[ATK].ip, .dst_ip = fz.h.n[VIC].ip,
		.udp_base = fz.h.conf.udp_base,
	};
	uint8_t frame[AMRMA_WIRE_HDR_LEN] __rte_aligned(8);
	int len;

	f->src_node = ATK;
	f->dst_node = VIC;
	f->dst_epoch = vic_epoch();
	len = amrma_wire_build(frame, sizeof(frame), &addr, f, NULL, NULL, false);
	if (len < 0)
		die("attacker's plain frame: %d", len);
	inject(frame, (uint16_t)len, q);
	step();
}

/* A frame that only speaks for the attacker's life e (an ACK, no ack in it). */
static void
atk_life(unsigned int a, unsigned int v, uint32_t e)
{
	struct amrma_wire_fields f = {
		.type = AMRMA_WIRE_ACK, .handler = AMRMA_WIRE_NO_HANDLER,
		.src_ctx = (uint8_t)a, .dst_ctx = (uint8_t)v, .src_epoch = e,
	};

	atk_plain(&f, v);
}

/*
 * The attacker's new life answers a request of node 1's context v as a peer in step
 * would (its frame acknowledged, the right token): the reset channel works again.
 */
static void
atk_new_life_serves(unsigned int v)
{
	struct atk_chan *c = &fz.ch[0][v];
	unsigned int n = fz.nb_rec[K_VIC_ATK], i;
	uint32_t nb_req = c->nb_req;
	struct amrma_wire_fields f = {
		.type = AMRMA_WIRE_REPLY, .flags = AMRMA_WIRE_F_ACK_VALID,
		.handler = AMRMA_WIRE_NO_HANDLER, .dst_ctx = (uint8_t)v,
		.src_epoch = fz.epoch[v],
	};

	honest_op(K_VIC_ATK, h_ctx(&fz.h, VIC, v), (struct amrma_ep){ .node = ATK }, false,
		  8, 0);
	if (fz.nb_rec[K_VIC_ATK] == n)
		die("node 1's context %u refused a request to the attacker's new life", v);
	fz.rec[K_VIC_ATK][n].must_ok = true;
	for (i = 0; i < 8 && c->nb_req == nb_req; i++)
		step();
	if (c->nb_req == nb_req)
		die("node 1's request to the attacker's new life did not leave (op done %u "
		    "status %d)", fz.rec[K_VIC_ATK][n].dones, fz.rec[K_VIC_ATK][n].status);
	f.token = c->last_tok;
	f.seq = c->seq++;
	f.ack = c->rx_next;
	f.sack = c->rx_mask;
	atk_plain(&f, v);
}

/*
 * The attacker comes back at each victim context as newer lives until it is ATK_LIFE
 * again, so that every input starts from the same state: node 1 resets its channels to
 * it and fails what it waited for. A step of less than 2^31 is always newer (these are
 * 2^30 at most); the first may be only a first contact to a channel that had none, so
 * there are two at least. Then the last life gets a request served.
 */
static void
atk_come_back(void)
{
	unsigned int v, a, moves;

	for (v = 0; v < NQ; v++) {
		struct amrma_ctx *ctx = h_ctx(&fz.h, VIC, v);
		uint32_t e = 0;

		for (a = NQ; a-- > 0 && e == 0;)
			e = amrma_ctx_peer_epoch(ctx, (struct amrma_ep){ .node = ATK,
						 .ctx = (uint8_t)a }, NULL);
		for (moves = 0; moves < 2 || e != ATK_LIFE; moves++) {
			if (moves == 0)
				e++;
			else if (seq_diff(ATK_LIFE, e) > 0)
				e = ATK_LIFE;
			else
				e += INT32_MAX / 2;
			if (e == 0)
				e = 1;	/* no node's life (node 1 drops it); still newer */
			for (a = NQ; a-- > 0;)
				atk_life(a, v, e);
		}
		atk_restart(v, e);
		atk_new_life_serves(v);
	}
}

static bool
all_done(void)
{
	unsigned int k, i;

	for (k = 0; k < K_NB; k++)
		for (i = 0; i < fz.nb_rec[k]; i++)
			if (fz.rec[k][i].dones == 0)
				return false;
	return true;
}

static void
settle(void)
{
	unsigned int idle = 0;

	H_UNTIL(all_done() && idle >= 4 && h_mbufs_in_use(&fz.h) == 0, 3000,
		idle = step() == 0 ? idle + 1 : 0);
}

static void
check_ops(void)
{
	unsigned int k, i;

	for (k = 0; k < K_NB; k++)
		for (i = 0; i < fz.nb_rec[k]; i++) {
			const struct rec *rc = &fz.rec[k][i];

			if (rc->dones != 1)
				die("operation %u of kind %u completed %u times", i, k, rc->dones);
			if (k == K_VIC_ATK && rc->must_ok && rc->status != 0)
				die("node 1's request to the attacker's new life failed: %d",
				    rc->status);
			if (k == K_VIC_ATK)
				continue;	/* whatever the attacker made of it, once */
			if (rc->status != 0)
				die("honest operation %u of kind %u failed: %d", i, k,
				    rc->status);
			if (rc->handled != 1)
				die("honest operation %u of kind %u: handler ran %u times", i, k,
				    rc->handled);
			if (!rc->send && rc->replies != 1)
				die("honest request %u of kind %u: reply handler ran %u times",
				    i, k, rc->replies);
		}
}

void
chan_fuzz_one(const uint8_t *data, size_t len, struct chan_fuzz_counts *c)
{
	struct fuzz_in r = { .p = data, .left = len };
	unsigned int steps = 0, waits = 0, refused0 = refused(), k, v;
	size_t heap;

	memset(c, 0, sizeof(*c));
	memset(fz.nb_rec, 0, sizeof(fz.nb_rec));
	fz.frames = fz.handled = 0;
	fz.nb_atk = 0;
	/* what the attacker remembers comes from this input only: a find replays alone */
	memset(fz.tok, 0, sizeof(fz.tok));
	fz.tok_next = 0;
	fz.last_len = 0;
	while (r.left != 0 && steps++ < MAX_STEPS) {
		uint8_t op = fuzz_u8(&r);

		switch (op % 16) {
		case 0: case 1: case 2: case 3: case 4: case 5: case 6:
			atk_frame(&r, false);
			break;
		case 7:
			atk_frame(&r, true);
			break;
		case 8:
			if (fz.last_len != 0)
				inject(fz.last, fz.last_len, fz.last_q);
			break;
		case 9: case 10:
			vic_op(&r, ATK);
			break;
		case 11:
			good_ops(&r);
			break;
		case 12:
			vic_op(&r, GOOD);
			break;
		case 13: case 14:
			for (k = 0; k <= (op >> 5); k++)
				step();
			break;
		default:
			/* past the retransmit timeout (1 ms) and the delayed acks */
			if (waits++ == 0)
				H_UNTIL(false, 3, step());
			break;
		}
	}
	/* the attacker's frames still in node 1's rings or handed between its contexts
	 * arrive before its next life speaks */
	for (k = 0; k < 3; k++)
		step();
	atk_come_back();
	/* node 1 still serves node 2, at both contexts */
	for (v = 0; v < NQ; v++)
		honest_op(K_GOOD, h_ctx(&fz.h, GOOD, v), (struct amrma_ep){ .node = VIC,
			  .ctx = (uint8_t)v }, false, 32, 0);
	settle();
	check_ops();
	if (h_mbufs_in_use(&fz.h) != 0)
		die("%u mbufs still in use by idle nodes", h_mbufs_in_use(&fz.h));
	if (!fuzz_heap_same(&fz.heap, &heap))
		die("rte_malloc memory in use went from %zu to %zu bytes", fz.heap.base, heap);
	c->frames = fz.frames;
	c->handled = fz.handled;
	c->refused = refused() - refused0;
	fz.input++;
}

/* ---- set-up ---- */

static void
nodes_up(void)
{
	struct amrma_node_conf nc;
	unsigned int i;

	h_conf(&nc);
	nc.csum = AMRMA_CSUM_OFF;	/* nothing corrupts frames here */
	if (h_create(&fz.h, 3, NQ, &nc) != 0)
		die("nodes");
	for (i = VIC; i <= GOOD; i++)
		if (amrma_am_register(fz.h.n[i].node, H_ECHO, echo_handler, NULL) != 0 ||
		    amrma_am_register(fz.h.n[i].node, H_SEND, send_handler, NULL) != 0 ||
		    amrma_am_register(fz.h.n[i].node, H_KEEP, keep_handler, NULL) != 0 ||
		    amrma_am_register(fz.h.n[i].node, H_ECHOR, echor_handler, NULL) != 0)
			die("register");
	/* node 0 is the attacker: never polled, its frames made by hand */
	fz.h.n[ATK].polled_elsewhere = true;
	memset(fz.ch, 0, sizeof(fz.ch));
	memset(fz.tok, 0, sizeof(fz.tok));
	for (i = 0; i < NQ; i++)
		fz.epoch[i] = ATK_LIFE;
	fz.last_len = 0;
	fz.heap.set = false;	/* the new nodes' memory is the new base */
	fz.up = true;
}

static void
stat_line(const char *name, uint64_t value, void *arg)
{
	RTE_SET_USED(arg);
	if (value != 0)
		fprintf(stderr, "  %s %" PRIu64 "\n", name, value);
}

static void
nodes_down(void)
{
	unsigned int left;

	/* CHAN_FUZZ_STATS=1: node 1's counters, to see what the inputs reached */
	if (getenv("CHAN_FUZZ_STATS") != NULL) {
		struct amrma_am_stats st;

		amrma_node_stats_get(fz.h.n[VIC].node, &st);
		fprintf(stderr, "chan_fuzz: node 1 after %u inputs:\n", fz.input);
		amrma_am_stats_foreach(&st, stat_line, NULL);
	}

	H_UNTIL(h_mbufs_in_use(&fz.h) == 0, 1000, step());
	left = h_mbufs_in_use(&fz.h);
	h_destroy(&fz.h);
	fz.up = false;
	if (left != 0)
		die("%u mbufs still in use by idle nodes", left);
}

void
chan_fuzz_init(const char *prefix)
{
	h_eal_init(prefix);
	/* CHAN_FUZZ_LOG=1: the library's warnings, to see why an input failed */
	if (getenv("CHAN_FUZZ_LOG") != NULL)
		rte_log_set_level_pattern("lib.amrma.*", RTE_LOG_INFO);
	h_fill(reply_buf, sizeof(reply_buf), 77);
	nodes_up();
}

void
chan_fuzz_renew(void)
{
	nodes_down();
	nodes_up();
}

void
chan_fuzz_fini(void)
{
	if (fz.up)
		nodes_down();
}
