/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A hostile peer of the reflection engine, scripted by the input.
 *
 * Three harness nodes of two contexts each, with RMA engines that live across inputs.
 * Node 1 is under test: it exposes a word region (with guard bytes on both sides) and a
 * read-only region, and listens for striped sends with guarded buffers. Node 2 is the
 * peer: it sends REFLECT, NOTIFY, RTS and other handlers' messages through the real AM
 * API, so that they pass the channel. Node 0 is honest: notified puts through node 1,
 * and striped sends to it. Every input gets fresh reflection engines, configured by its
 * first byte (small FIFOs, few striped receives, small portions reach the paths where
 * they run full).
 *
 * An input is a series of steps: byte 0 picks the step, the bytes after it its fields
 * (fuzz_input.h: reads past the end give 0). Arguments are drawn from values that matter
 * (val()): the real keys, offsets at the word region's bounds and misaligned, lengths
 * at the listener's limit, context counts at theirs, statuses at theirs, raw bytes.
 *
 * Checked, abort() on a violation:
 *  - the guard bytes around the word region and every listener buffer, and the
 *    read-only region, never change;
 *  - the word region holds exactly the notifications node 1 counted;
 *  - every buffer the listener handed out is reported back exactly once;
 *  - node 0's notified puts each complete once, with their bytes in place unless the
 *    notification says why not; its striped sends end once, their bytes in place when
 *    the status is 0;
 *  - the engines' destruction gives back every byte of rte_malloc memory they took.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_log.h>
#include <rte_malloc.h>

#include "amrma_reflect.h"
#include "fuzz_check.h"
#include "fuzz_input.h"
#include "harness.h"
#include "reflect_fuzz.h"
#include "reflect_nodes.h"
#include "rma_nodes.h"

#define WORDS	64u		/* the word region */
#define RO_LEN	256u
#define SBUF	8192u		/* a listener buffer */
#define NSBUF	8u
#define DATA	(64u << 10)	/* node 1's region for node 0's puts and sends */
#define MAX_STEPS 48u
#define MAX_HONEST 8u		/* node 0's operations per input */
#define PEER	2u

#define die(...) fuzz_die("reflect_fuzz", __VA_ARGS__)

static struct {
	struct h_rma p;
	bool up;
	struct amrma_reflect *r[3];
	uint8_t *wmem, *romem, *data, *src;
	struct h_sbufs sb;		/* the listener's buffers */
	uint64_t wkey, rokey, dkey;
	struct amrma_region *wreg, *roreg, *dreg;
	uint8_t rosnap[RO_LEN];
	struct fuzz_heap heap;
	/* this input */
	unsigned int honest;		/* node 0's operations started */
	struct {
		bool stripe;
		bool reflect;		/* its REFLECT was injected */
		unsigned int ends;	/* the put's or the send's end */
		unsigned int completions;	/* the REFLECT's, in node 0's FIFO */
		int status;
		uint64_t off, len;
	} op[MAX_HONEST];
} fz;

static void
ignore_done(struct amrma_ctx *ctx, void *arg, int status)
{
	RTE_SET_USED(ctx);
	RTE_SET_USED(arg);
	RTE_SET_USED(status);
}

static uint8_t *
guarded(size_t len)
{
	uint8_t *p = h_guarded_alloc(len);

	if (p == NULL)
		die("out of memory");
	return p;
}

static void
guards_check(const uint8_t *p, size_t len, const char *what)
{
	if (!h_guards_ok(p, len))
		die("a guard byte of %s changed", what);
}

static void *
l_alloc(struct amrma_ctx *ctx, void *arg, struct amrma_ep from, uint64_t tag, uint64_t len)
{
	RTE_SET_USED(ctx);
	RTE_SET_USED(arg);
	RTE_SET_USED(tag);
	if (from.node != PEER && from.node != 0)
		die("a striped send from node %u", from.node);
	return h_sbufs_take(&fz.sb, len);
}

static void
l_done(struct amrma_ctx *ctx, void *arg, struct amrma_ep from, uint64_t tag, void *buf,
       uint64_t len, int status)
{
	int ret = h_sbufs_back(&fz.sb, buf);

	RTE_SET_USED(ctx);
	RTE_SET_USED(arg);
	RTE_SET_USED(from);
	RTE_SET_USED(tag);
	RTE_SET_USED(len);
	RTE_SET_USED(status);
	if (ret == -EALREADY)
		die("a listener buffer reported twice");
	if (ret != 0)
		die("done() for a buffer the listener never gave");
}

static void
honest_end(struct amrma_ctx *ctx, void *arg, int status)
{
	unsigned int i = (unsigned int)(uintptr_t)arg;

	RTE_SET_USED(ctx);
	fz.op[i].ends++;
	fz.op[i].status = status;
}

static uint64_t
val(struct fuzz_in *in)
{
	uint8_t k = fuzz_u8(in);

	switch (k % 12) {
	case 0: return 0;
	case 1: return k >> 4;
	case 2: return WORDS - 8 + (k >> 4);	/* the word region's end, misaligned too */
	case 3: return UINT64_MAX - (k >> 4);
	case 4: return fz.wkey;
	case 5: return fz.rokey;
	case 6: return SBUF - 1 + (k >> 7);
	case 7: return (uint64_t)(k >> 4) << 2;	/* context counts 0-60 */
	case 8: return UINT64_C(1) << (fuzz_u8(in) % 64);
	case 9: /* a REFLECT/NOTIFY first word: endpoint, kind, status, maybe a stray bit */
		return (uint64_t)(fuzz_u8(in) % 4) | (uint64_t)(k & 0x30) << 12 |
		       (uint64_t)(fuzz_u8(in) % 5) << ((k & 0x40) ? 0 : 24) |
		       (uint64_t)fuzz_u16(in) << 32;
	default: return fuzz_u64(in);
	}
}

static const uint16_t handlers[] = {
	AMRMA_REFLECT_H_REFLECT, AMRMA_REFLECT_H_NOTIFY, AMRMA_REFLECT_H_STRIPE_RTS,
};

/* The peer's message to node 1. */
static void
peer_msg(struct fuzz_in *in, struct reflect_fuzz_counts *c)
{
	uint8_t how = fuzz_u8(in), pl[64];
	struct amrma_ep to = { 1, (uint8_t)(how & 1) };
	uint16_t h = handlers[(how >> 1) % RTE_DIM(handlers)];
	unsigned int nargs = (how & 0x40) ? fuzz_u8(in) % (AMRMA_WIRE_MAX_ARGS + 1) :
			     h == AMRMA_REFLECT_H_STRIPE_RTS ? 5 : 4;
	uint16_t len = (how & 0x80) ? (uint16_t)(1 + fuzz_u8(in) % sizeof(pl)) : 0;
	uint64_t args[AMRMA_WIRE_MAX_ARGS] = { 0 };
	struct amrma_ctx *ctx = h_ctx(&fz.p.h, PEER, how & 1);
	unsigned int i;
	int ret;

	/* an index nobody registered now and then (not RMA's: a put with the word key
	 * the peer knows would change the words legitimately) */
	if ((how & 0x38) == 0x38)
		h = (uint16_t)(AMRMA_REFLECT_H_LAST + 1 + fuzz_u8(in) % 12);
	for (i = 0; i < nargs; i++)
		args[i] = val(in);
	memset(pl, 0x5a, sizeof(pl));
	if (how & 0x20)
		ret = amrma_am_send(ctx, to, h, args, nargs, pl, len, ignore_done, NULL);
	else
		ret = amrma_am_request(ctx, to, h, args, nargs, pl, len, ignore_done, NULL);
	if (ret == 0)
		c->msgs++;
	else if (ret != -EAGAIN && ret != -ENOBUFS)
		die("the peer's message refused: %d", ret);
}

/* Node 0: a notified put through node 1 (to node 0's FIFO), or a striped send to it. */
static void
honest(struct fuzz_in *in)
{
	uint8_t how = fuzz_u8(in);
	unsigned int i = fz.honest;
	uint64_t len = 1 + fuzz_u16(in) % SBUF, off = (uint64_t)i * SBUF;
	struct amrma_desc d;
	int ret;

	if (i == MAX_HONEST)
		return;
	memset(&fz.op[i], 0, sizeof(fz.op[i]));
	fz.op[i].off = off;
	fz.op[i].len = len;
	fz.op[i].stripe = how & 1;
	if (fz.op[i].stripe) {
		/* tag: where node 1's listener may not put it (its own buffers) */
		ret = amrma_stripe_send(fz.r[0], h_ctx(&fz.p.h, 0, 0),
					(struct amrma_ep){ 1, (uint8_t)((how >> 1) & 1) },
					fz.src + off, len, i, honest_end, (void *)(uintptr_t)i);
		if (ret == -EAGAIN)
			return;
		if (ret != 0)
			die("striped send refused: %d", ret);
		fz.honest++;
		return;
	}
	memset(&d, 0, sizeof(d));
	d.op = AMRMA_DESC_PUT;
	d.peer.node = 1;
	d.key = fz.dkey;
	d.offset = off;
	d.local = fz.src + off;
	d.len = len;
	d.cb = honest_end;
	d.cb_arg = (void *)(uintptr_t)i;
	if (amrma_reflect_inject(fz.r[0], 0, &d) != 0)
		return;	/* FIFO full */
	fz.honest++;
	memset(&d, 0, sizeof(d));
	d.op = AMRMA_DESC_REFLECT;
	d.flags = AMRMA_DESC_F_REMOTE;
	d.peer.node = 1;
	d.cn.to.node = 0;
	d.cn.kind = AMRMA_CN_FIFO;
	d.cn.cookie = UINT64_C(0xC0DE0000) | i;
	fz.op[i].reflect = amrma_reflect_inject(fz.r[0], 0, &d) == 0;
}

/* node 0's completions: its notified puts' (and whatever the peer's REFLECTs sent it) */
static void
drain0(void)
{
	struct amrma_completion cp;
	unsigned int i;

	while (amrma_reflect_completions(fz.r[0], 0, &cp, 1) == 1) {
		i = (unsigned int)(cp.cookie & 0xffff);
		if ((cp.cookie & ~UINT64_C(0xffff)) != UINT64_C(0xC0DE0000) || i >= fz.honest ||
		    fz.op[i].stripe)
			continue;
		if (!fz.op[i].reflect || ++fz.op[i].completions > 1)
			die("notified put %u: a completion too many", i);
		if (cp.status == 0 && h_fill_diff(fz.data + fz.op[i].off, fz.op[i].len, 5,
						  fz.op[i].off) != -1)
			die("notified put %u: completion before its bytes", i);
	}
}

static void
conf_of(uint8_t b, struct amrma_reflect_conf *c)
{
	amrma_reflect_conf_defaults(c);
	c->fifo_size = (b & 3) == 0 ? 2 : (b & 3) == 1 ? 8 : 1024;
	c->rx_size = (b & 4) ? 2 : 1024;
	c->max_inflight = (b & 8) ? 2 : 256;
	c->max_stripes = (b & 16) ? 1 : 64;
	c->stripe_min_part = (b & 32) ? 512 : UINT64_C(64) << 10;
}

static bool
honest_settled(void)
{
	bool lossy = h_reflect_stats(fz.r[0], 0).rx_full != 0;
	unsigned int i;

	drain0();
	if (fz.sb.nb_back != fz.sb.taken)
		return false;
	for (i = 0; i < fz.honest; i++)
		if (fz.op[i].ends == 0 ||
		    (fz.op[i].reflect && !lossy && fz.op[i].completions == 0))
			return false;
	return amrma_reflect_pending(fz.r[0], 0) == 0 && amrma_reflect_pending(fz.r[1], 0) == 0 &&
	       amrma_reflect_pending(fz.r[1], 1) == 0;
}

static void
checks(struct reflect_fuzz_counts *c)
{
	bool lossy = h_reflect_stats(fz.r[0], 0).rx_full != 0;
	uint64_t words = 0, counted = 0;
	unsigned int i, q;

	guards_check(fz.wmem, WORDS, "the word region");
	guards_check(fz.romem, RO_LEN, "the read-only region");
	if (memcmp(fz.romem + H_GUARD, fz.rosnap, RO_LEN) != 0)
		die("the read-only region changed");
	if (!h_sbufs_guards_ok(&fz.sb))
		die("a guard byte of a listener buffer changed");
	for (i = 0; i < WORDS / 8; i++)
		words += ((uint64_t *)(fz.wmem + H_GUARD))[i];
	for (q = 0; q < 2; q++) {
		struct amrma_reflect_stats s = h_reflect_stats(fz.r[1], q);

		counted += s.words;
		c->refused += s.bad_requests + s.word_refused + s.stripe_refused + s.cn_full;
		c->taken += s.cn_injected + s.words + s.stripe_recvs;
	}
	if (words != counted)
		die("the words hold %lu, node 1 counted %lu", (unsigned long)words,
		    (unsigned long)counted);
	if (fz.sb.nb_back != fz.sb.taken) {
		/* where it stuck: what node 1's contexts still hold */
		for (q = 0; q < 2; q++)
			fprintf(stderr, "node 1 context %u: %u descriptors pending, %u RMA "
				"operations\n", q, amrma_reflect_pending(fz.r[1], (uint16_t)q),
				amrma_rma_outstanding(h_ctx(&fz.p.h, 1, q)));
		die("%u listener buffers given, %u reported back", fz.sb.taken, fz.sb.nb_back);
	}
	drain0();
	for (i = 0; i < fz.honest; i++) {
		if (fz.op[i].ends != 1)
			die("node 0's operation %u ended %u times", i, fz.op[i].ends);
		if (fz.op[i].stripe)
			continue;
		if (fz.op[i].reflect && !lossy && fz.op[i].completions != 1)
			die("notified put %u: %u completions", i, fz.op[i].completions);
		if (fz.op[i].status == 0 && h_fill_diff(fz.data + fz.op[i].off, fz.op[i].len, 5,
							fz.op[i].off) != -1)
			die("put %u: bytes not in place", i);
	}
}

void
reflect_fuzz_one(const uint8_t *data, size_t len, struct reflect_fuzz_counts *c)
{
	const struct amrma_stripe_listener l = { l_alloc, l_done, NULL };
	struct fuzz_in in = { data, len };
	struct amrma_reflect_conf rc;
	unsigned int steps = 0, i;
	uint64_t end;
	size_t now;

	memset(c, 0, sizeof(*c));
	memset(fz.data, 0, DATA);
	fz.honest = 0;
	h_sbufs_reset(&fz.sb);
	conf_of(fuzz_u8(&in), &rc);
	if (!fuzz_heap_same(&fz.heap, &now))
		die("heap in use %zu, was %zu", now, fz.heap.base);
	if (h_reflect_create(&fz.p, fz.r, 3, 1, &rc) != 0)
		die("engines not created");
	if (amrma_stripe_listen(fz.r[1], &l) != 0)
		die("no listener");
	while (in.left != 0 && steps++ < MAX_STEPS) {
		uint8_t op = fuzz_u8(&in);

		switch (op % 8) {
		case 0: case 1: case 2: case 3: case 4:
			peer_msg(&in, c);
			break;
		case 5:
			honest(&in);
			break;
		default:
			for (i = 0; i < 1u + op / 16; i++)
				h_rma_step(&fz.p);
		}
	}
	/* settle: everything node 0 started ends, every buffer comes back */
	end = rte_get_tsc_cycles() + rte_get_tsc_hz() * 3;
	while (!honest_settled() && rte_get_tsc_cycles() < end)
		h_rma_step(&fz.p);
	for (i = 0; i < 20; i++)
		h_rma_step(&fz.p);
	checks(c);
	/* in between inputs the words start from 0 again */
	h_reflect_destroy(fz.r, 3);
	memset(fz.wmem + H_GUARD, 0, WORDS);
	for (i = 0; i < 10; i++)
		h_rma_step(&fz.p);
	if (!fuzz_heap_same(&fz.heap, &now))
		die("heap in use %zu after the engines went, was %zu", now, fz.heap.base);
}

static void
nodes_up(void)
{
	struct amrma_region_table *t;

	if (h_rma_create(&fz.p, 3, 2, NULL, NULL, H_RMA_ALL) != 0)
		die("nodes not created");
	t = amrma_rma_regions(fz.p.r[1]);
	if (amrma_region_register(t, fz.wmem + H_GUARD, WORDS, AMRMA_REGION_WRITE, &fz.wreg,
				  &fz.wkey) != 0 ||
	    amrma_region_register(t, fz.romem + H_GUARD, RO_LEN, AMRMA_REGION_READ, &fz.roreg,
				  &fz.rokey) != 0 ||
	    amrma_region_register(t, fz.data, DATA, AMRMA_REGION_WRITE, &fz.dreg,
				  &fz.dkey) != 0)
		die("regions not registered");
	fz.up = true;
	fz.heap.set = false;
}

static void
nodes_down(void)
{
	struct amrma_region_table *t;

	if (!fz.up)
		return;
	t = amrma_rma_regions(fz.p.r[1]);
	amrma_region_deregister(t, fz.wreg, NULL, NULL);
	amrma_region_deregister(t, fz.roreg, NULL, NULL);
	amrma_region_deregister(t, fz.dreg, NULL, NULL);
	h_rma_destroy(&fz.p);
	fz.up = false;
}

void
reflect_fuzz_init(const char *prefix)
{
	unsigned int i;

	h_eal_init(prefix);
	rte_log_set_level_pattern("lib.amrma.*", RTE_LOG_CRIT);
	fz.wmem = guarded(WORDS);
	fz.romem = guarded(RO_LEN);
	for (i = 0; i < RO_LEN; i++)
		fz.romem[H_GUARD + i] = (uint8_t)(i * 7);
	memcpy(fz.rosnap, fz.romem + H_GUARD, RO_LEN);
	if (h_sbufs_init(&fz.sb, NSBUF, SBUF) != 0)
		die("out of memory");
	fz.data = calloc(1, DATA);
	fz.src = rte_malloc(NULL, DATA, 64);
	if (fz.data == NULL || fz.src == NULL)
		die("out of memory");
	h_fill(fz.src, DATA, 5);
	nodes_up();
}

void
reflect_fuzz_renew(void)
{
	nodes_down();
	memset(fz.data, 0, DATA);
	nodes_up();
}

void
reflect_fuzz_fini(void)
{
	nodes_down();
	free(fz.wmem);
	free(fz.romem);
	h_sbufs_free(&fz.sb);
	free(fz.data);
	rte_free(fz.src);
}
