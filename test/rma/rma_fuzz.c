/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A hostile peer of the RMA engine, scripted by the input.
 *
 * Three harness nodes of two contexts each. Node 1 is the engine under test, made anew
 * for every input (the input's first byte picks its configuration: small tables,
 * queues and timeouts reach the paths where they run full or expire). Node 0 runs no
 * engine: it is the peer. It sends RMA messages through the real AM API, so that they
 * pass the channel and arrive at node 1's handlers, and it answers node 1's requests
 * with its own handlers at the RMA indices. Node 2 is a well-behaved peer: after every
 * script it must still get a put and a get served.
 *
 * An input is a series of steps (step()): a message from the peer, built from a
 * template (a protocol message, with arguments taken from what node 1 sent it: tags,
 * receive ids, slots, handles) or from nothing; an answer to queue for node 1's next
 * request; an operation node 1 starts towards the peer; polls; a stalled progress
 * engine; a deregistration of the writable region. Arguments are drawn from values
 * that matter (val()): the real keys, offsets near a region's bounds, lengths near the
 * frame's payload, values node 1 sent, UINT64_MAX and its neighbours, raw bytes.
 *
 * Checked, abort() on a violation:
 *  - guard bytes on both sides of every region and local buffer (one allocation each);
 *  - the read-only region never changes, nor a region once its deregistration was
 *    released, nor a local buffer that no operation owns;
 *  - whatever node 1 sends as data (put chunks, tagged data, get replies) is bytes of
 *    a readable region or a put's source: all below 0x80, as everybody writes; guards,
 *    the write-only region's bytes and a source reused after EV_LOCAL are 0x80 and up;
 *  - every operation node 1 started reports DONE exactly once, nothing after it;
 *  - node 2's put and get are served, with the right bytes;
 *  - the engine's destruction gives back every byte of rte_malloc memory it took.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_log.h>
#include <rte_malloc.h>

#include "amrma_dgsp.h"
#include "amrma_rma.h"
#include "fuzz_check.h"
#include "fuzz_input.h"
#include "rma_fuzz.h"
#include "rma_nodes.h"

#define RW_LEN		8192u	/* node 1's regions: readable and writable */
#define RO_LEN		4096u	/* read only */
#define WO_LEN		4096u	/* write only */
#define HL_LEN		256u	/* node 2's, never named to the peer */
#define GUARD		64u
#define NBUF		4u	/* node 1's local buffers (puts' sources, gets' targets) */
#define BUF_LEN		8192u
#define NPOOL		32u	/* values node 1 sent the peer */
#define NSPEC		8u	/* answers queued for node 1's requests */
#define MAX_REC		64u	/* operations node 1 starts per input */
#define MAX_STEPS	96u
#define NPROG		4u
#define NKEPT		4u	/* frames the peer's handlers keep for a step */
#define PEER		0u
#define TARGET		1u
#define GOOD		2u

#define die(...) fuzz_die("rma_fuzz", __VA_ARGS__)

/* guards and the bytes nobody writes are 0x80 and up; data everybody writes are below */
static inline uint8_t
guard_byte(size_t i)
{
	return (uint8_t)(0x80u | ((i * 37u) & 0x7fu));
}

static inline uint8_t
data_byte(size_t i, unsigned int seed)
{
	return (uint8_t)((i * 13u + seed * 7u + 1u) & 0x7fu);
}

/* a local buffer of node 1 */
struct lbuf {
	uint8_t *mem;		/* GUARD + BUF_LEN + GUARD */
	bool eal;		/* rte_malloc'd: a put from it may go zero-copy */
	bool busy;		/* an operation owns it */
};

/* an operation node 1 started */
struct rec {
	uint8_t buf;
	bool put;
	bool local;		/* EV_LOCAL seen */
	uint8_t dones;
};

/* an answer for node 1's next request to the peer */
struct spec {
	uint8_t how;		/* 0: return status, 1: reply as below */
	bool expected;		/* the handler the request expects, not handler */
	uint16_t handler;
	uint8_t nargs;
	uint64_t args[AMRMA_WIRE_MAX_ARGS];
	int len;		/* < 0: what the request asks for, minus len + 1 */
	int16_t status;
};

/* the last message of each RMA handler node 1 sent the peer */
struct seen {
	bool have;
	uint8_t nargs;
	uint8_t ctx;		/* node 1's context that sent it */
	uint8_t at;		/* the peer's context that took it */
	uint64_t args[AMRMA_WIRE_MAX_ARGS];
};

#define NB_H (AMRMA_RMA_H_LAST - AMRMA_RMA_H_PUT + 1)

static struct {
	struct h_rma p;
	bool up;
	struct amrma_rma_conf conf;
	uint8_t *rw, *ro, *wo, *hl;	/* allocations: data at + GUARD */
	struct amrma_region *rw_reg;
	uint64_t rw_key, ro_key, wo_key, hl_key;
	bool rw_dead, rw_released;
	uint8_t rw_snap[RW_LEN];
	struct lbuf buf[NBUF];
	struct rec rec[MAX_REC];
	unsigned int nb_rec;
	uint64_t pool[NPOOL];
	unsigned int pool_next;
	struct seen seen[NB_H];
	uint64_t rts_len;		/* of the peer's last RTS */
	uint64_t dt_total;		/* of the peer's last DT_SETUP */
	struct spec spec[NSPEC];
	unsigned int spec_head, nb_spec;
	bool proper;			/* unanswered requests get what they ask for */
	uint64_t slot_next;		/* the peer's made-up program slots */
	uint64_t rng;
	uint64_t msgs;
	uint8_t prog[NPROG][512];
	uint16_t prog_len[NPROG];
	uint64_t prog_size[NPROG];
	struct amrma_dgsp_type *types[NPROG];
	struct fuzz_heap heap;
	unsigned int inputs;
	struct rte_mbuf *kept[NKEPT];	/* frames the peer's handlers keep */
	unsigned int nb_kept;
} fz;

/* ---- input ---- */

static uint64_t
rnd(void)
{
	fz.rng ^= fz.rng << 13;
	fz.rng ^= fz.rng >> 7;
	fz.rng ^= fz.rng << 17;
	return fz.rng;
}

static uint16_t
max_payload(unsigned int nargs)
{
	return amrma_am_max_payload(h_ctx(&fz.p.h, PEER, 0), nargs);
}

/* a value that matters to some handler */
static uint64_t
val(struct fuzz_in *r)
{
	uint8_t s = fuzz_u8(r), b = fuzz_u8(r);

	switch (s % 20) {
	case 0: return fz.rw_key;
	case 1: return fz.ro_key;
	case 2: return fz.wo_key;
	case 3: return fz.rw_key ^ (1u + b);		/* no region's */
	case 4: return b;
	case 5: return RW_LEN - b % 32;
	case 6: return RW_LEN + b % 32;
	case 7: return (s & 0x80 ? RO_LEN : WO_LEN) - 16 + b % 32;
	case 8: return fz.pool[b % NPOOL];
	case 9: return fz.pool[b % NPOOL] + (int8_t)fuzz_u8(r);
	case 10: return UINT64_MAX - b % 16;
	case 11: return (UINT64_C(1) << 63) | ((uint64_t)fuzz_u8(r) << 32) | b;	/* a handle */
	case 12: return fuzz_u64(r);
	case 13: return (uint64_t)max_payload(s >> 5) - 8 + b % 16;
	case 14: return (uint64_t)(int64_t)-(int)(b % 140);	/* a status */
	case 15: return (uint64_t)b << 8 | fuzz_u8(r);
	case 16: /* a real generation, another index (receives, slots, ops) */
		return (fz.pool[b % NPOOL] & ~UINT64_C(0xffffffff)) | fuzz_u8(r);
	case 17: return (uint64_t)b * max_payload(4);	/* chunk offsets */
	case 18: return UINT64_C(1) << (b % 64);
	default: return (uint64_t)INT64_MAX + (b % 4) - 1;
	}
}

/* a payload length: small, near the largest, or the length an argument names */
static uint16_t
plen(struct fuzz_in *r, unsigned int nargs, uint64_t named)
{
	uint8_t b = fuzz_u8(r);
	uint16_t max = max_payload(nargs), len;

	switch (b >> 6) {
	case 0: len = b & 63; break;
	case 1: len = (uint16_t)RTE_MIN(named, (uint64_t)max); break;
	case 2: len = (uint16_t)(max - (b & 63)); break;
	default: len = (uint16_t)RTE_MIN(named + (uint64_t)(b & 31) - 16, (uint64_t)max);
	}
	return RTE_MIN(len, max);
}

/* peer data: below 0x80, like every byte written into node 1 */
static void
fill_data(uint8_t *p, size_t len)
{
	uint64_t x = rnd();
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)((x >> (8 * (i % 8))) + i) & 0x7f;
}

static void
pool_add(uint64_t v)
{
	fz.pool[fz.pool_next++ % NPOOL] = v;
}

/* ---- memory and its checks ---- */

static uint8_t *
guarded_alloc(size_t len, bool eal)
{
	uint8_t *m = eal ? rte_malloc(NULL, len + 2 * GUARD, 0) : malloc(len + 2 * GUARD);
	size_t i;

	if (m == NULL)
		die("no memory");
	for (i = 0; i < GUARD; i++) {
		m[i] = guard_byte(i);
		m[GUARD + len + i] = guard_byte(i + 1);
	}
	return m;
}

static void
guard_check(const uint8_t *m, size_t len, const char *what)
{
	size_t i;

	for (i = 0; i < GUARD; i++) {
		if (m[i] != guard_byte(i))
			die("%s: guard byte %zu before it written", what, GUARD - i);
		if (m[GUARD + len + i] != guard_byte(i + 1))
			die("%s: guard byte %zu after it written", what, i);
	}
}

static void
fill_pattern(uint8_t *p, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = data_byte(i, seed);
}

static void
pattern_check(const uint8_t *p, size_t len, unsigned int seed, const char *what)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != data_byte(i, seed))
			die("%s: byte %zu written (%#x)", what, i, p[i]);
}

static void
check_memory(const char *when)
{
	unsigned int b;
	char what[64];

	guard_check(fz.rw, RW_LEN, "read-write region");
	guard_check(fz.ro, RO_LEN, "read-only region");
	guard_check(fz.wo, WO_LEN, "write-only region");
	guard_check(fz.hl, HL_LEN, "node 2's region");
	pattern_check(fz.ro + GUARD, RO_LEN, 1, "read-only region");
	if (fz.rw_released && memcmp(fz.rw + GUARD, fz.rw_snap, RW_LEN) != 0)
		die("read-write region written after its deregistration was released (%s)",
		    when);
	for (b = 0; b < NBUF; b++) {
		snprintf(what, sizeof(what), "local buffer %u (%s)", b, when);
		guard_check(fz.buf[b].mem, BUF_LEN, what);
		if (!fz.buf[b].busy)
			pattern_check(fz.buf[b].mem + GUARD, BUF_LEN, 10 + b, what);
	}
}

/* what node 1 sends as data comes from a readable region or a live put's source */
static void
data_check(const struct amrma_am_msg *msg)
{
	const uint8_t *p = msg->payload;
	uint16_t i;

	for (i = 0; i < msg->len; i++)
		if (p[i] & 0x80)
			die("node 1 sent byte %u of %u to handler %u from outside what it may "
			    "read (%#x)", i, msg->len, msg->handler, p[i]);
}

/* ---- the peer (node 0) ---- */

static void
peer_done(struct amrma_ctx *ctx, void *arg, int status)
{
	RTE_SET_USED(ctx);
	RTE_SET_USED(arg);
	RTE_SET_USED(status);
}

static bool
carries_data(uint16_t h)
{
	return h == AMRMA_RMA_H_PUT || h == AMRMA_RMA_H_PUT1 || h == AMRMA_RMA_H_TDATA ||
	       h == AMRMA_RMA_H_DT_PUT || h == AMRMA_RMA_H_GET_REPLY ||
	       h == AMRMA_RMA_H_DT_REPLY;
}

/* the answer a request of node 1 expects: its handler and payload length */
static uint16_t
expected_answer(const struct amrma_am_msg *msg, uint64_t *len)
{
	*len = 0;
	switch (msg->handler) {
	case AMRMA_RMA_H_GET:
		*len = msg->nargs > 2 ? msg->args[2] : 0;
		return AMRMA_RMA_H_GET_REPLY;
	case AMRMA_RMA_H_DT_GET:
		*len = msg->nargs > 2 ? msg->args[2] : 0;
		return AMRMA_RMA_H_DT_REPLY;
	case AMRMA_RMA_H_DT_SETUP:
		return AMRMA_RMA_H_DT_SETUP_REPLY;
	default:
		return AMRMA_WIRE_NO_HANDLER;
	}
}

static int
peer_handler(struct amrma_ctx *ctx, amrma_am_token_t tok, const struct amrma_am_msg *msg,
	     void *arg)
{
	uint8_t payload[AMRMA_WIRE_MAX_PAYLOAD];
	uint64_t args[AMRMA_WIRE_MAX_ARGS] = { 0 }, want;
	unsigned int i, nargs = 0;
	struct spec *s = NULL;
	uint16_t h;
	int len;

	RTE_SET_USED(arg);
	if (msg->src.node != TARGET)
		return 0;
	if (carries_data(msg->handler))
		data_check(msg);
	if (msg->handler >= AMRMA_RMA_H_PUT && msg->handler <= AMRMA_RMA_H_LAST) {
		struct seen *sn = &fz.seen[msg->handler - AMRMA_RMA_H_PUT];

		sn->have = true;
		sn->nargs = msg->nargs;
		sn->ctx = msg->src.ctx;
		sn->at = (uint8_t)amrma_ctx_index(ctx);
		memcpy(sn->args, msg->args, sizeof(sn->args));
	}
	for (i = 0; i < msg->nargs; i++)
		pool_add(msg->args[i]);
	if (tok == 0)
		return 0;	/* a reply or a one-way message */
	h = expected_answer(msg, &want);
	if (fz.nb_spec != 0) {
		s = &fz.spec[fz.spec_head];
		fz.spec_head = (fz.spec_head + 1) % NSPEC;
		fz.nb_spec--;
		if (s->how == 0) {
			/* a status of 1 is AMRMA_AM_KEEP_MBUF: the peer then keeps the
			 * frame for the rest of the step (peer_let_go()) */
			if (s->status != AMRMA_AM_KEEP_MBUF)
				return s->status;
			if (fz.nb_kept == NKEPT)
				return 0;
			fz.kept[fz.nb_kept++] = msg->mbuf;
			return AMRMA_AM_KEEP_MBUF;
		}
		if (!s->expected)
			h = s->handler;
		nargs = s->nargs;
		memcpy(args, s->args, sizeof(args));
		len = s->len >= 0 ? s->len : (int)RTE_MIN(want, (uint64_t)UINT16_MAX) + s->len + 1;
	} else if (fz.proper) {
		len = (int)RTE_MIN(want, (uint64_t)UINT16_MAX);
		if (h == AMRMA_RMA_H_DT_SETUP_REPLY) {
			args[0] = fz.slot_next++;
			nargs = 1;
		}
	} else {
		return 0;
	}
	if (h == AMRMA_WIRE_NO_HANDLER && s == NULL)
		return 0;
	len = RTE_MAX(len, 0);
	len = RTE_MIN(len, (int)max_payload(nargs));
	fill_data(payload, (size_t)len);
	return amrma_am_reply(ctx, tok, h, args, nargs, payload, (uint16_t)len,
			      s != NULL ? s->status : 0);
}

static void
peer_register(void)
{
	uint16_t i;

	for (i = AMRMA_RMA_H_PUT; i <= AMRMA_RMA_H_LAST; i++)
		if (amrma_am_register(fz.p.h.n[PEER].node, i, peer_handler, NULL) != 0)
			die("register");
}

/* The frames the peer's handlers kept go back. */
static void
peer_let_go(void)
{
	while (fz.nb_kept != 0)
		rte_pktmbuf_free(fz.kept[--fz.nb_kept]);
}

/* templates of the peer's messages: handler and arguments a protocol step would send */
enum {
	T_RAW, T_PUT, T_GET, T_RTS, T_RGET, T_TDATA_PUT, T_TDATA_GET, T_CTS, T_DT_SETUP,
	T_DT_PUT, T_DT_GET, T_PUT1, T_PUT_DONE, T_CANCEL, T_REPLY_AS_SEND, T_LEAVE, T_NB
};

static const struct seen *
seen(uint16_t h)
{
	return &fz.seen[h - AMRMA_RMA_H_PUT];
}

static uint64_t
seen_arg(uint16_t h, unsigned int i)
{
	return seen(h)->have ? seen(h)->args[i] : 0;
}

/* one message (or a burst of one put's chunks) from the peer to node 1 */
static void
peer_message(struct fuzz_in *r)
{
	uint8_t flags = fuzz_u8(r), t = fuzz_u8(r) % T_NB, over, prog = 0;
	uint64_t args[AMRMA_WIRE_MAX_ARGS] = { 0 };
	uint8_t payload[AMRMA_WIRE_MAX_PAYLOAD];
	struct amrma_ctx *ctx = h_ctx(&fz.p.h, PEER, flags & 1);
	struct amrma_ep to = { .node = TARGET, .ctx = (flags >> 1) & 1 };
	bool send = (flags >> 2) & 1;
	unsigned int nargs = 0, i, chunks = 1;
	uint16_t h = 0, len = 0;
	uint64_t named = 0, start;
	int ret;

	switch (t) {
	case T_RAW:
		h = fuzz_u8(r);
		h = h < 240 ? (uint16_t)(AMRMA_RMA_H_PUT + h % NB_H) : fuzz_u8(r);
		nargs = fuzz_u8(r) % (AMRMA_WIRE_MAX_ARGS + 1);
		for (i = 0; i < nargs; i++)
			args[i] = val(r);
		named = nargs > 2 ? args[2] : 0;
		break;
	case T_PUT:
	case T_GET:
		h = t == T_PUT ? AMRMA_RMA_H_PUT : AMRMA_RMA_H_GET;
		args[0] = fz.rw_key;
		args[1] = fuzz_u16(r) % (RW_LEN + 64);
		args[2] = fuzz_u8(r) * 8u;
		nargs = 3;
		named = args[2];
		break;
	case T_RTS:
	case T_RGET:
		h = t == T_RTS ? AMRMA_RMA_H_RTS : AMRMA_RMA_H_RGET;
		args[0] = fz.rw_key;
		args[1] = fuzz_u16(r) % (RW_LEN + 64);
		args[2] = fuzz_u16(r) % (RW_LEN + 64);
		args[3] = (UINT64_C(1) << 63) | fuzz_u8(r);
		args[4] = fuzz_u8(r) % 3;	/* the receiving context (2: none) */
		args[5] = fuzz_u8(r);	/* the peer's receive: made up */
		nargs = t == T_RTS ? 4 : 6;
		break;
	case T_TDATA_PUT:
		/* data of the peer's own rendezvous put, to the receive node 1's CTS named,
		 * from the context that asked to the one that answered */
		h = AMRMA_RMA_H_TDATA;
		args[0] = seen_arg(AMRMA_RMA_H_CTS, 0);
		args[1] = (uint64_t)(fuzz_u8(r) % 8) * max_payload(4);
		args[2] = fz.rts_len;
		args[3] = seen_arg(AMRMA_RMA_H_CTS, 1);
		nargs = 4;
		chunks = 1 + fuzz_u8(r) % 8;
		if ((flags & 0x18) == 0) {
			ctx = h_ctx(&fz.p.h, PEER, seen(AMRMA_RMA_H_CTS)->at);
			to.ctx = seen(AMRMA_RMA_H_CTS)->ctx;
		}
		break;
	case T_TDATA_GET:
		/* data for node 1's rendezvous get, to the receive its RGET named */
		h = AMRMA_RMA_H_TDATA;
		args[0] = seen_arg(AMRMA_RMA_H_RGET, 3);
		args[1] = (uint64_t)(fuzz_u8(r) % 8) * max_payload(4);
		args[2] = seen_arg(AMRMA_RMA_H_RGET, 2);
		args[3] = seen_arg(AMRMA_RMA_H_RGET, 5);
		nargs = 4;
		chunks = 1 + fuzz_u8(r) % 8;
		if ((flags & 0x18) == 0)	/* to the context that asked */
			to.ctx = seen(AMRMA_RMA_H_RGET)->ctx;
		break;
	case T_CTS:
		h = AMRMA_RMA_H_CTS;
		args[0] = seen_arg(AMRMA_RMA_H_RTS, 3);
		args[1] = fuzz_u8(r);
		nargs = 2;
		to.ctx = seen(AMRMA_RMA_H_RTS)->ctx;
		if ((flags & 0x18) == 0)
			ctx = h_ctx(&fz.p.h, PEER, seen(AMRMA_RMA_H_RTS)->at);
		break;
	case T_DT_SETUP:
		h = AMRMA_RMA_H_DT_SETUP;
		prog = fuzz_u8(r) % NPROG;
		args[0] = fz.rw_key;
		args[1] = fuzz_u16(r) % (RW_LEN + 64);
		args[2] = 1 + fuzz_u8(r) % 64;
		args[3] = 1 + (fuzz_u8(r) & 1);
		args[4] = fz.prog_size[prog] * args[2];
		nargs = 5;
		fz.dt_total = args[4];
		break;
	case T_DT_PUT:
	case T_DT_GET:
		h = t == T_DT_PUT ? AMRMA_RMA_H_DT_PUT : AMRMA_RMA_H_DT_GET;
		/* the slot node 1 answered the last setup with, or a value */
		args[0] = (flags & 0x20) ? fz.pool[fuzz_u8(r) % NPOOL] :
			  seen_arg(AMRMA_RMA_H_DT_SETUP_REPLY, 0);
		args[1] = (flags & 0x18) ? fuzz_u16(r) % 4096 : (uint64_t)(fuzz_u8(r) % 4) * 64;
		args[2] = fz.dt_total - RTE_MIN(args[1], fz.dt_total);
		nargs = 3;
		named = args[2];
		if (!(flags & 0x18))
			ctx = h_ctx(&fz.p.h, PEER, seen(AMRMA_RMA_H_DT_SETUP_REPLY)->at);
		break;
	case T_PUT1:
		h = AMRMA_RMA_H_PUT1;
		args[0] = fz.rw_key;
		args[1] = fuzz_u16(r) % (RW_LEN + 64);
		args[2] = fuzz_u16(r) % (RW_LEN + 64);
		args[3] = (UINT64_C(1) << 63) | fuzz_u8(r);
		nargs = 4;
		chunks = 1 + fuzz_u8(r) % 8;
		send = !((flags >> 2) & 1);	/* one-way, as the protocol sends them */
		break;
	case T_PUT_DONE:
		h = AMRMA_RMA_H_PUT_DONE;
		args[0] = seen_arg(AMRMA_RMA_H_PUT1, 3);
		args[1] = (uint64_t)(int64_t)-(int)(fuzz_u8(r) % 8);
		nargs = 2;
		send = !((flags >> 2) & 1);
		break;
	case T_CANCEL:
		h = AMRMA_RMA_H_RNDV_CANCEL;
		if (flags & 0x20) {
			args[0] = seen_arg(AMRMA_RMA_H_RGET, 3);
			args[1] = seen_arg(AMRMA_RMA_H_RGET, 5);
		} else {
			args[0] = seen_arg(AMRMA_RMA_H_RTS, 3);
			args[1] = UINT64_MAX;
		}
		args[2] = (uint64_t)(int64_t)-ECANCELED;
		nargs = 3;
		send = !((flags >> 2) & 1);
		break;
	case T_REPLY_AS_SEND: {
		static const uint16_t hs[] = { AMRMA_RMA_H_GET_REPLY, AMRMA_RMA_H_DT_REPLY,
					       AMRMA_RMA_H_DT_SETUP_REPLY, AMRMA_RMA_H_CTS };

		h = hs[fuzz_u8(r) % RTE_DIM(hs)];
		nargs = fuzz_u8(r) % 3;
		for (i = 0; i < nargs; i++)
			args[i] = val(r);
		named = fuzz_u16(r) % 4096;
		break;
	}
	default:
		h = AMRMA_AM_H_LEAVE;
		send = false;
		break;
	}
	/* then any argument, and their number, may be something else */
	over = fuzz_u8(r);
	for (i = 0; i < AMRMA_WIRE_MAX_ARGS && over != 0 && t != T_RAW; i++)
		if (over & (1u << i) && (flags & 0x40))
			args[i] = val(r);
	if ((flags & 0x80) && t != T_RAW)
		nargs = fuzz_u8(r) % (AMRMA_WIRE_MAX_ARGS + 1);
	if (h == AMRMA_RMA_H_RTS)
		fz.rts_len = args[2];
	/* a put's chunks count from its first; tagged data from the message's start */
	start = h == AMRMA_RMA_H_TDATA ? 0 : args[1];
	for (i = 0; i < chunks; i++) {
		if (h == AMRMA_RMA_H_DT_SETUP && !(over & 0x80)) {
			/* a program: verified ones, with a byte changed now and then */
			len = fz.prog_len[prog];
			memcpy(payload, fz.prog[prog], len);
			if (over & 0x40)
				payload[fuzz_u8(r) % len] ^= (uint8_t)(1u << (fuzz_u8(r) % 8));
		} else {
			/* a put's or tagged message's chunks: what is left from here */
			if (chunks > 1 || h == AMRMA_RMA_H_TDATA || h == AMRMA_RMA_H_PUT1)
				named = args[2] > args[1] - start ? args[2] - (args[1] - start) : 0;
			len = plen(r, nargs, named);
			fill_data(payload, len);
		}
		ret = send ? amrma_am_send(ctx, to, h, args, nargs, payload, len, peer_done, NULL) :
		      amrma_am_request(ctx, to, h, args, nargs, payload, len, peer_done, NULL);
		if (ret == -EAGAIN || ret == -ENOBUFS) {
			h_rma_step(&fz.p);
			continue;
		}
		if (ret == 0)
			fz.msgs++;
		/* the next chunk of a put, a tagged message */
		if (h == AMRMA_RMA_H_TDATA || h == AMRMA_RMA_H_PUT1)
			args[1] += len;
	}
}

/* an answer for node 1's next request to the peer */
static void
peer_spec(struct fuzz_in *r)
{
	struct spec *s;
	uint8_t b = fuzz_u8(r), hb;
	unsigned int i;

	if (fz.nb_spec == NSPEC)
		return;
	s = &fz.spec[(fz.spec_head + fz.nb_spec++) % NSPEC];
	memset(s, 0, sizeof(*s));
	s->how = b & 1;
	hb = fuzz_u8(r);
	s->status = (b & 2) ? 0 : (hb & 0x80) ? (int16_t)(fuzz_u16(r)) : (int16_t)-(int)(hb % 140);
	hb = fuzz_u8(r);
	s->expected = hb < 128;
	s->handler = hb < 132 ? AMRMA_WIRE_NO_HANDLER :
		     hb == 132 ? AMRMA_AM_H_LEAVE : (uint16_t)(AMRMA_RMA_H_PUT + hb % NB_H);
	s->nargs = (uint8_t)((b >> 2) % (AMRMA_WIRE_MAX_ARGS + 1));
	for (i = 0; i < s->nargs; i++)
		s->args[i] = val(r);
	s->len = (b & 0x80) ? -(int)(fuzz_u8(r) % 8) - 1 + 4 : (int)fuzz_u16(r) % 2048;
}

/* ---- node 1's own operations towards the peer ---- */

static void
op_event(struct amrma_ctx *ctx, void *arg, enum amrma_rma_event ev, int status)
{
	struct rec *rc = arg;
	struct lbuf *b = &fz.buf[rc->buf];

	RTE_SET_USED(ctx);
	if (rc->dones != 0)
		die("an operation reported event %d after DONE", ev);
	/* what the peer says is mapped to an errno: a caller tests status < 0 */
	if (status > 0 || status < -4095)
		die("an operation reported event %d with status %d, not 0 or a negative errno",
		    ev, status);
	if (ev == AMRMA_RMA_EV_LOCAL) {
		if (!rc->put || rc->local)
			die("EV_LOCAL twice, or for a get");
		rc->local = true;
		/* reused: a frame that still read it would carry these bytes */
		memset(b->mem + GUARD, 0xee, BUF_LEN);
	} else if (ev == AMRMA_RMA_EV_DONE) {
		rc->dones++;
		fill_pattern(b->mem + GUARD, BUF_LEN, 10 + rc->buf);
		b->busy = false;
	}
}

static void
target_op(struct fuzz_in *r, struct rma_fuzz_counts *c)
{
	static const uint32_t protos[] = { 0, AMRMA_RMA_F_SHORT, AMRMA_RMA_F_PIPELINED,
					   AMRMA_RMA_F_RENDEZVOUS };
	uint8_t a = fuzz_u8(r), f = fuzz_u8(r);
	struct amrma_ctx *ctx = h_ctx(&fz.p.h, TARGET, a & 1);
	struct amrma_ep to = { .node = PEER, .ctx = (a >> 1) & 1 };
	uint32_t flags = protos[(a >> 2) & 3];
	uint64_t key = (f & 1) ? val(r) : fuzz_u64(r), off = (f & 2) ? val(r) : fuzz_u16(r);
	uint64_t len = (f & 4) ? val(r) % (BUF_LEN + 1) : (uint64_t)fuzz_u16(r) % (BUF_LEN + 1);
	unsigned int kind = (a >> 4) & 3, b;
	struct rec *rc;
	uint8_t *mem;
	int ret;

	flags |= (f & 8) ? AMRMA_RMA_F_LOCAL_CB : 0;
	flags |= (f & 16) ? AMRMA_RMA_F_PER_PACKET : 0;
	flags |= (f & 32) ? AMRMA_RMA_F_COPY : 0;
	for (b = 0; b < NBUF && (fz.buf[b].busy || fz.buf[b].eal != !!(a & 0x40)); b++)
		;
	if (b == NBUF || fz.nb_rec == MAX_REC)
		return;
	rc = &fz.rec[fz.nb_rec];
	memset(rc, 0, sizeof(*rc));
	rc->buf = (uint8_t)b;
	rc->put = kind == 0 || kind == 2;
	mem = fz.buf[b].mem + GUARD;
	fz.buf[b].busy = true;
	if (kind < 2) {
		ret = kind == 0 ?
		      amrma_rma_put(ctx, to, key, off, mem, len, flags, op_event, rc, NULL) :
		      amrma_rma_get(ctx, to, key, off, mem, len, flags, op_event, rc, NULL);
	} else {
		/* noncontiguous: the peer's layout is one of the programs, ours bytes */
		unsigned int k = fuzz_u8(r) % NPROG;
		uint64_t count = fuzz_u8(r) % 32, total = fz.prog_size[k] * count;
		const struct amrma_dgsp *remote = amrma_dgsp_type_program(fz.types[k]);
		const struct amrma_dgsp *local = amrma_dgsp_type_program(fz.types[0]);

		if (total > BUF_LEN) {
			fz.buf[b].busy = false;
			return;
		}
		ret = kind == 2 ?
		      amrma_rma_put_dt(ctx, to, key, off, mem, local, total, remote, count,
				       flags, op_event, rc, NULL) :
		      amrma_rma_get_dt(ctx, to, key, off, remote, count, mem, local, total,
				       flags, op_event, rc, NULL);
	}
	if (ret != 0) {
		if (rc->dones != 0)
			die("an operation refused at its start called back");
		fz.buf[b].busy = false;
		return;
	}
	fz.nb_rec++;
	c->ops++;
}

/* ---- the engine under test ---- */

static void
released(void *arg, void *addr, size_t len)
{
	RTE_SET_USED(arg);
	RTE_SET_USED(addr);
	RTE_SET_USED(len);
	if (!fz.rw_dead)
		die("region released while registered");
	fz.rw_released = true;
	memcpy(fz.rw_snap, fz.rw + GUARD, RW_LEN);
}

static void
rw_register(void)
{
	struct amrma_region_table *t = amrma_rma_regions(fz.p.r[TARGET]);

	if (amrma_region_register(t, fz.rw + GUARD, RW_LEN,
				  AMRMA_REGION_READ | AMRMA_REGION_WRITE, &fz.rw_reg,
				  &fz.rw_key) != 0)
		die("register rw");
	fz.rw_dead = false;
	fz.rw_released = false;
}

static void
rw_toggle(void)
{
	if (!fz.rw_dead) {
		fz.rw_dead = true;
		if (amrma_region_deregister(amrma_rma_regions(fz.p.r[TARGET]), fz.rw_reg,
					    released, NULL) < 0)
			die("deregister");
	} else if (fz.rw_released) {
		rw_register();
	}
}

static void
engine_create(uint8_t cf)
{
	struct amrma_region_table *t;
	struct amrma_region *reg;
	struct amrma_rma_conf *c = &fz.conf;

	amrma_rma_conf_defaults(c);
	c->max_regions = 8;
	c->max_ops = (cf & 1) ? 6 : 256;
	c->completion_slots = (cf & 2) ? 2 : 64;
	c->queue_size = (cf & 4) ? 2 : 64;
	c->rndv_timeout_ms = (cf & 8) ? 1 : 10000;
	c->pipeline_depth = 1u << (2 * ((cf >> 4) & 3));
	c->short_max = (cf & 0x40) ? 64 : 0;
	if (cf & 0x80) {
		c->rndv_threshold = 2048;
		c->rndv_put_threshold = 2048;
	}
	if (amrma_rma_create(fz.p.h.n[TARGET].node, c, &fz.p.r[TARGET]) != 0)
		die("engine");
	t = amrma_rma_regions(fz.p.r[TARGET]);
	rw_register();
	if (amrma_region_register(t, fz.ro + GUARD, RO_LEN, AMRMA_REGION_READ, &reg,
				  &fz.ro_key) != 0 ||
	    amrma_region_register(t, fz.wo + GUARD, WO_LEN, AMRMA_REGION_WRITE, &reg,
				  &fz.wo_key) != 0 ||
	    amrma_region_register(t, fz.hl + GUARD, HL_LEN,
				  AMRMA_REGION_READ | AMRMA_REGION_WRITE, &reg, &fz.hl_key) != 0)
		die("register");
}

static int
step_all(void)
{
	return h_rma_step(&fz.p);
}

/*
 * Poll until nothing moves and every frame was acknowledged (bounded: a timer may keep
 * something going). Delayed acks come after a few idle polls; an engine destroyed with
 * zero-copy chunks unacknowledged keeps their memory for good (by design), which the
 * heap check would take for a leak.
 */
static void
drain(void)
{
	unsigned int idle = 0;

	H_UNTIL(idle >= 4 && h_mbufs_in_use(&fz.p.h) == 0, 50,
		idle = step_all() == 0 ? idle + 1 : 0);
}

/* node 2, a well-behaved peer, is served: a put, then a get of what it put */
static void
health(uint32_t round)
{
	struct amrma_ctx *ctx = h_ctx(&fz.p.h, GOOD, round & 1);
	struct amrma_ep to = { .node = TARGET, .ctx = (round >> 1) & 1 };
	uint8_t out[HL_LEN], in[HL_LEN];
	amrma_rma_req_t req;
	int status = 1, ret;

	fill_pattern(out, sizeof(out), round & 0xff);
	memset(in, 0, sizeof(in));
	ret = amrma_rma_put(ctx, to, fz.hl_key, 0, out, sizeof(out), 0, NULL, NULL, &req);
	if (ret != 0 || h_rma_wait(&fz.p, ctx, req, 5000, &status) != 1 || status != 0)
		die("node 2's put not served (%d, status %d)", ret, status);
	status = 1;
	ret = amrma_rma_get(ctx, to, fz.hl_key, 0, in, sizeof(in), 0, NULL, NULL, &req);
	if (ret != 0 || h_rma_wait(&fz.p, ctx, req, 5000, &status) != 1 || status != 0)
		die("node 2's get not served (%d, status %d)", ret, status);
	if (memcmp(in, out, sizeof(in)) != 0)
		die("node 2's get returned other bytes than its put wrote");
}

static void
count_target(struct rma_fuzz_counts *c)
{
	uint16_t q;

	for (q = 0; q < fz.p.h.nb_q; q++) {
		struct amrma_rma_stats st;

		amrma_rma_stats_get(h_ctx(&fz.p.h, TARGET, q), &st);
		c->refused += st.access_errors + st.bad_replies + st.dt_rejected +
			      st.queue_full + st.completion_full;
		c->served += st.served_put_bytes + st.served_get_bytes;
	}
}

/* node 1 heard node 0 leave: a real peer comes back as a new life */
static void
peer_revive(void)
{
	bool closed = false;
	uint16_t q, k;

	for (q = 0; q < fz.p.h.nb_q; q++)
		for (k = 0; k < fz.p.h.nb_q; k++) {
			bool cl;

			amrma_ctx_peer_epoch(h_ctx(&fz.p.h, TARGET, q),
					     (struct amrma_ep){ .node = PEER, .ctx = (uint8_t)k },
					     &cl);
			closed |= cl;
		}
	if (!closed)
		return;
	if (h_restart_node(&fz.p.h, PEER) != 0)
		die("restart node 0");
	peer_register();
}

void
rma_fuzz_one(const uint8_t *data, size_t len, struct rma_fuzz_counts *c)
{
	struct fuzz_in r = { .p = data, .left = len };
	uint64_t h = UINT64_C(0xcbf29ce484222325);
	unsigned int steps = 0, waits = 0, k;
	size_t i, heap;

	memset(c, 0, sizeof(*c));
	for (i = 0; i < len; i++)
		h = (h ^ data[i]) * UINT64_C(0x100000001b3);
	fz.rng = h | 1;
	memset(fz.pool, 0, sizeof(fz.pool));
	memset(fz.seen, 0, sizeof(fz.seen));
	fz.pool_next = 0;
	fz.nb_spec = 0;
	fz.nb_rec = 0;
	fz.rts_len = 0;
	fz.msgs = 0;
	fz.p.stalled = 0;
	engine_create(fuzz_u8(&r));
	fz.proper = fuzz_u8(&r) & 1;
	while (r.left != 0 && steps++ < MAX_STEPS) {
		uint8_t op = fuzz_u8(&r);

		switch (op % 16) {
		case 0: case 1: case 2: case 3: case 4: case 5:
			peer_message(&r);
			break;
		case 6: case 7:
			peer_spec(&r);
			break;
		case 8: case 9:
			target_op(&r, c);
			break;
		case 10: case 11: case 12:
			for (k = 0; k <= (op >> 4); k++)
				step_all();
			break;
		case 13:
			fz.p.stalled ^= H_RMA_NODE(TARGET);
			break;
		case 14:
			rw_toggle();
			break;
		default:
			/* past a timeout of the small configuration (and the 10 ms scan) */
			if (waits++ == 0)
				h_rma_run_for(&fz.p, 12);
			break;
		}
		peer_let_go();
	}
	fz.p.stalled = 0;
	drain();
	check_memory("after the script");
	health(fz.inputs);
	count_target(c);
	c->msgs = fz.msgs;
	amrma_rma_destroy(fz.p.r[TARGET]);
	fz.p.r[TARGET] = NULL;
	drain();
	/* the engine's end released what it held and ended what it started */
	fz.rw_dead = true;
	check_memory("after the engine's end");
	for (k = 0; k < fz.nb_rec; k++)
		if (fz.rec[k].dones != 1)
			die("operation %u reported DONE %u times", k, fz.rec[k].dones);
	for (k = 0; k < NBUF; k++)
		if (fz.buf[k].busy)
			die("local buffer %u still owned", k);
	peer_revive();
	if (!fuzz_heap_same(&fz.heap, &heap))
		die("rte_malloc memory in use went from %zu to %zu bytes", fz.heap.base, heap);
	fz.inputs++;
}

/* ---- set-up ---- */

static void
types_init(void)
{
	struct amrma_dgsp_type *b1, *b8;
	struct amrma_dgsp_info info;
	unsigned int k;
	ssize_t n;

	if (amrma_dgsp_type_basic(1, &b1) != 0 || amrma_dgsp_type_basic(8, &b8) != 0 ||
	    amrma_dgsp_type_dup(b1, &fz.types[0]) != 0 ||
	    amrma_dgsp_type_vector(4, 8, 16, b1, &fz.types[1]) != 0 ||
	    amrma_dgsp_type_hvector(3, 2, -24, b8, &fz.types[2]) != 0 ||
	    amrma_dgsp_type_resized(b8, 0, 100, &fz.types[3]) != 0)
		die("types");
	amrma_dgsp_type_free(b1);
	amrma_dgsp_type_free(b8);
	for (k = 0; k < NPROG; k++) {
		const struct amrma_dgsp *p;

		if (amrma_dgsp_type_commit(fz.types[k]) != 0)
			die("commit");
		p = amrma_dgsp_type_program(fz.types[k]);
		n = amrma_dgsp_serialize(p, fz.prog[k], sizeof(fz.prog[k]));
		if (n <= 0)
			die("serialize");
		fz.prog_len[k] = (uint16_t)n;
		amrma_dgsp_get_info(p, &info);
		fz.prog_size[k] = info.size;
	}
}

static void
nodes_up(void)
{
	struct amrma_node_conf nc;

	h_conf(&nc);
	nc.csum = AMRMA_CSUM_OFF;	/* nothing corrupts frames here */
	if (h_rma_create(&fz.p, 3, 2, &nc, NULL, H_RMA_NODE(GOOD)) != 0)
		die("nodes");
	peer_register();
	fz.up = true;
}

/* the nodes go; every frame was acknowledged or freed by then */
static void
nodes_down(void)
{
	unsigned int left;

	H_UNTIL(h_mbufs_in_use(&fz.p.h) == 0, 1000, step_all());
	left = h_mbufs_in_use(&fz.p.h);
	h_rma_destroy(&fz.p);
	fz.up = false;
	if (left != 0)
		die("%u mbufs still in use by idle nodes", left);
}

void
rma_fuzz_init(const char *prefix)
{
	unsigned int b;

	h_eal_init(prefix);
	/* RMA_FUZZ_LOG=1: the library's warnings, to see why an input failed */
	if (getenv("RMA_FUZZ_LOG") != NULL)
		rte_log_set_level_pattern("lib.amrma.*", RTE_LOG_INFO);
	fz.rw = guarded_alloc(RW_LEN, false);
	fz.ro = guarded_alloc(RO_LEN, false);
	fz.wo = guarded_alloc(WO_LEN, false);
	fz.hl = guarded_alloc(HL_LEN, false);
	fill_pattern(fz.rw + GUARD, RW_LEN, 0);
	fill_pattern(fz.ro + GUARD, RO_LEN, 1);
	memset(fz.wo + GUARD, 0xc3, WO_LEN);	/* never to be read */
	fill_pattern(fz.hl + GUARD, HL_LEN, 3);
	for (b = 0; b < NBUF; b++) {
		fz.buf[b].eal = b == 0;
		fz.buf[b].mem = guarded_alloc(BUF_LEN, fz.buf[b].eal);
		fill_pattern(fz.buf[b].mem + GUARD, BUF_LEN, 10 + b);
	}
	types_init();
	nodes_up();
}

void
rma_fuzz_renew(void)
{
	nodes_down();
	nodes_up();
	fz.heap.set = false;	/* the new nodes' memory is the new base */
}

void
rma_fuzz_fini(void)
{
	unsigned int b, k;

	if (fz.up)
		nodes_down();
	for (k = 0; k < NPROG; k++)
		amrma_dgsp_type_free(fz.types[k]);
	for (b = 0; b < NBUF; b++) {
		if (fz.buf[b].eal)
			rte_free(fz.buf[b].mem);
		else
			free(fz.buf[b].mem);
	}
	free(fz.rw);
	free(fz.ro);
	free(fz.wo);
	free(fz.hl);
}
