/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Seeded randomized soak: 3 nodes x 2 contexts on the net_ring harness, many operations in
 * flight at once, every outcome verified.
 *
 * From a seed: node and RMA configurations, faults (drop, duplicate, reorder, corrupt,
 * split), and a stream of operations started from every context and from completion
 * callbacks: put and get in every protocol (short, pipelined, rendezvous, auto) with the
 * event flags (LOCAL_CB, PER_PACKET, COPY), noncontiguous put/get with random datatypes on
 * both sides, sizes from 0 to a few MiB at random offsets, bad keys, ranges past the
 * region's end or past 2^64, wrong permissions, calls refused in the call, and a region
 * per node deregistered and registered again while operations target it. Beside them,
 * tagged messages over AM requests, matched by an amrma_tag engine per context and checked
 * against a model of the MPI matching rules.
 *
 * Operations in flight own disjoint ranges of the target regions (with guard bytes); a
 * shadow copy of every region says what each byte must be. Checked: bytes landed exactly,
 * guards and everything else untouched (the whole region, at the end of each seed),
 * statuses as documented, each callback exactly once and in order, handles, a put's source
 * reusable once reported (it is overwritten then), get buffers not written after
 * completion, counters, no operation, receive, slot or mbuf left behind, quiesce and
 * destroy clean. Some seeds destroy the engines with operations in flight.
 *
 * Default: six fixed seeds (two under valgrind). AMRMA_SOAK_SEEDS=N runs N seeds from
 * AMRMA_SOAK_SEED0 (default 1) and prints the seed of a failure; AMRMA_SOAK_OPS sets
 * operations per seed, AMRMA_SOAK_MAX the largest size, AMRMA_SOAK_FAULTS the faults
 * (drop,dup,reorder,corrupt,split percentages), AMRMA_SOAK_VERBOSE prints each seed.
 */
#include <errno.h>
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
#include <rte_malloc.h>

#include "amrma_dgsp.h"
#include "amrma_rma.h"
#include "amrma_tag.h"
#include "harness.h"
#include "rma_priv.h"	/* end-of-seed checks: nothing left in the engines */

#define NODES 3
#define Q 2
#define H_TMSG 17		/* the test's tagged-message handler */
#define GUARD 64		/* bytes checked on each side of every range and buffer */
#define PAD 4096		/* around each region's memory, never registered */
#define MAX_SOPS 4096
#define MAX_TM 512
#define MAX_TR 1024
#define TAG_MAX_POSTED 48
#define TAG_MAX_UNEXP 6
#define TAG_MAX_UNEXP_BYTES 6000

/* RG_VOL: read-write, deregistered and registered again at random times */
enum { RG_RW, RG_RO, RG_WO, RG_VOL, RG_NB };
enum kind { K_PUT, K_GET, K_PUT_DT, K_GET_DT };
enum bad { B_NONE, B_KEY, B_RANGE, B_OVERFLOW, B_PERM, B_INCALL };
static const char *const kind_name[] = { "put", "get", "put_dt", "get_dt" };
static const char *const bad_name[] = { "ok", "badkey", "range", "overflow", "perm",
					"incall" };

struct region {
	uint8_t *base;		/* PAD, the registered bytes, PAD */
	uint8_t *mem;
	uint8_t *shadow;	/* what every registered byte must be */
	uint64_t len;
	uint64_t key;
	struct amrma_region *reg;
	bool eal;
	/* RG_VOL */
	bool dead;		/* deregistered */
	bool released;		/* ... and its release callback ran */
	uint32_t gen;		/* registrations so far */
	uint8_t *snap;		/* its bytes at deregistration: nothing may change them */
	unsigned int idle;	/* steps since released */
	unsigned int releases;
};

struct sop {
	int id;
	uint8_t kind, bad;
	bool started;		/* the call returned 0 */
	bool finished;		/* outcome verified */
	bool has_cb, has_req, from_cb;
	bool scribbled;		/* put source overwritten once reported reusable */
	bool marked;		/* get buffer refilled after completion: must stay so */
	uint16_t node, ctx;
	struct amrma_ep dst;
	int rg;			/* region at dst, -1: none */
	uint64_t key, off, len;
	uint32_t flags, proto, nchunks;
	int expect, alt, alt2;	/* acceptable statuses */
	uint32_t vol_gen;	/* RG_VOL: the registration it named */
	uint64_t chg_lo, chg_hi; /* region bytes that may change on error */
	bool resv;
	uint64_t rlo, rhi;	/* reserved range of the target region */
	uint8_t *alloc;		/* local buffer with guards */
	size_t alloc_len;
	bool eal;
	uint8_t *buf;		/* contiguous: alloc + GUARD; dt: the layout's base */
	uint32_t fill;
	amrma_rma_req_t req;
	unsigned int n_done, n_local, n_packet;
	int status, test_status;
	bool tested, done_seen, done_before;
	/* noncontiguous */
	struct amrma_dgsp_type *lt, *rt;
	uint64_t lcount, rcount, total;
	uint8_t *packed;	/* put: the packed stream */
	uint8_t *expect_buf;	/* get: the local buffer as it must end */
};

struct tmsg {
	uint16_t src_node, src_ctx, dst_node, dst_ctx;
	uint64_t tag;
	uint32_t len, fill;
	int state;		/* TM_* */
	int recv;		/* receive that took it */
	unsigned int refusals;
	int planned;		/* its planned receive, -1 none */
	bool acked;		/* its request completed */
};
enum { TM_TO_SEND, TM_IN_FLIGHT, TM_ARRIVED, TM_DELIVERED };

struct trecv {
	uint16_t node, ctx;
	uint64_t tag, ignore;
	uint32_t src;
	uint8_t *alloc;		/* buf with guards */
	uint64_t buflen;
	uint64_t id;
	int state;		/* TR_* */
	unsigned int n_cb;
	int msg;
	int post_after;		/* steps until it is posted */
};
enum { TR_PLANNED, TR_POSTED, TR_DONE, TR_CANCELLED, TR_REFUSED };

struct unexp_copy {
	int msg;
	uint32_t len;
	uint8_t data[];
};

struct tq {
	struct amrma_tag_engine *e;
	int posted[MAX_TR];	/* model: posted receives in post order */
	int nb_posted;
	int unexp[MAX_TM];	/* model: unexpected messages in arrival order */
	struct unexp_copy *cookie[MAX_TM];
	int nb_unexp;
	uint64_t unexp_bytes;
};

struct counts {
	uint64_t puts, gets, put_bytes, get_bytes, dt_ops, rndv_ops, errors;
};

/* what the seeds covered (AMRMA_SOAK_VERBOSE, and the long mode) */
static struct {
	uint64_t ops[4][4][6];	/* kind, protocol (0 dt, short, pipelined, rndv), case */
	uint64_t ok, failed, enospc, local, packets, from_cb, eperm, incall, destroyed;
	uint64_t tags, tag_refusals, zero_copy_chunks, chunks, seeds, max_len;
} cov;

static struct soak {
	uint64_t seed, rng;
	bool valgrind, destroy_mid;
	unsigned int nops;
	uint64_t max_size;
	struct harness h;
	struct amrma_rma *R[NODES];
	struct amrma_rma_conf rc;
	struct region rg[NODES][RG_NB];
	struct sop op[MAX_SOPS];
	int nb_op;
	int live[MAX_SOPS];	/* started, not finished */
	int nb_live;
	unsigned int issued;
	unsigned int inflight_max;
	unsigned int eperm;	/* calls from callbacks refused with -EPERM: none expected */
	unsigned int cb_issued, cb_waits, cb_flushes;
	struct counts cnt[NODES][Q];
	struct tmsg tm[MAX_TM];
	int nb_tm, tm_target;
	struct trecv tr[MAX_TR];
	int nb_tr;
	struct tq tq[NODES][Q];
	bool destroyed;
	bool in_poll;
	uint16_t max4;
} S;

/* ---- helpers ---- */

static void
dump_state(void)
{
	unsigned int i, q;

	fprintf(stderr, "  rma conf: max_ops %u short_max %u rndv %" PRIu64 "/%" PRIu64
		" depth %u zero_copy %d progress %u slots %u; node window %u max_ops %u "
		"coalesce %u inline %u\n", S.rc.max_ops, S.rc.short_max, S.rc.rndv_threshold,
		S.rc.rndv_put_threshold, S.rc.pipeline_depth, S.rc.zero_copy, S.rc.progress_ctx,
		S.rc.completion_slots, S.h.conf.window, S.h.conf.max_ops, S.h.conf.coalesce_frame,
		S.h.conf.tx_inline_max);
	for (i = 0; i < NODES && S.R[i] != NULL && !S.destroyed; i++)
		for (q = 0; q < Q; q++) {
			struct amrma_rma_stats st;

			amrma_rma_stats_get(h_ctx(&S.h, i, q), &st);
			fprintf(stderr, "  %u.%u: puts %" PRIu64 " gets %" PRIu64 " errors %" PRIu64
				" access_errors %" PRIu64 " bad_replies %" PRIu64 " queue_full %"
				PRIu64 " tag_retries %" PRIu64 " rndv_timeouts %" PRIu64
				" completions_sent %" PRIu64 " completion_full %" PRIu64
				" completion_drops %" PRIu64 "\n", i, q, st.puts, st.gets,
				st.op_errors, st.access_errors, st.bad_replies, st.queue_full,
				st.tag_retries, st.rndv_timeouts, st.completions_sent,
				st.completion_full, st.completion_drops);
		}
	for (i = 0; i < NODES && S.h.n[i].node != NULL; i++) {
		struct amrma_am_stats as;

		amrma_node_stats_get(S.h.n[i].node, &as);
		fprintf(stderr, "  node %u: faults d%u/u%u/r%u/c%u/s%u retrans %" PRIu64
			" timeouts %" PRIu64 " dead %" PRIu64 " dup %" PRIu64 " ooo %" PRIu64
			" tx_drops %" PRIu64 " no_reply_room %" PRIu64 " violations %" PRIu64 "\n",
			i, S.h.n[i].fault.drop_pct, S.h.n[i].fault.dup_pct,
			S.h.n[i].fault.reorder_pct, S.h.n[i].fault.corrupt_pct,
			S.h.n[i].fault.split_pct, as.retransmits, as.timeouts, as.peers_dead,
			as.duplicates, as.out_of_window, as.tx_drops, as.no_reply_room,
			as.rule_violations);
	}
}

static void __attribute__((format(printf, 1, 2), noreturn))
soak_fail(const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "soak: FAILED seed %" PRIu64 ": %s\n", S.seed, msg);
	dump_state();
	fflush(stderr);
	fail_msg("seed %" PRIu64 ": %s", S.seed, msg);
	abort();	/* not reached */
}

#define CHECK(cond, ...) do { if (!(cond)) soak_fail(__VA_ARGS__); } while (0)

static uint64_t
rnd(void)
{
	/* splitmix64 */
	uint64_t z = (S.rng += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

static uint64_t
rnd_n(uint64_t n)
{
	return n == 0 ? 0 : rnd() % n;
}

static bool
chance(unsigned int pct)
{
	return rnd_n(100) < pct;
}

static long
mem_diff(const uint8_t *a, const uint8_t *b, size_t n)
{
	size_t i;

	if (memcmp(a, b, n) == 0)
		return -1;
	for (i = 0; i < n; i++)
		if (a[i] != b[i])
			return (long)i;
	return -1;
}

static uint64_t
now_ms(void)
{
	return rte_get_tsc_cycles() / (rte_get_tsc_hz() / 1000);
}

static void *
buf_alloc(size_t n, bool eal)
{
	void *p = eal ? rte_malloc(NULL, n ? n : 1, 64) : malloc(n ? n : 1);

	CHECK(p != NULL, "out of memory (%zu bytes)", n);
	return p;
}

static void
buf_free(void *p, bool eal)
{
	if (eal)
		rte_free(p);
	else
		free(p);
}

static const char *
op_str(const struct sop *o)
{
	static char s[256];

	snprintf(s, sizeof(s), "op %d %s/%s %u.%u->%u.%u rg %d off %" PRIu64 " len %" PRIu64
		 " flags %#x proto %#x cb %d req %d%s", o->id, kind_name[o->kind],
		 bad_name[o->bad], o->node, o->ctx, o->dst.node, o->dst.ctx, o->rg, o->off,
		 o->len, o->flags, o->proto, o->has_cb, o->has_req, o->from_cb ? " (from cb)" : "");
	return s;
}

/* ---- target reservations: operations in flight own disjoint ranges ---- */

static bool
resv_free(uint16_t node, int rg, uint64_t lo, uint64_t hi)
{
	int k;

	for (k = 0; k < S.nb_live; k++) {
		const struct sop *o = &S.op[S.live[k]];

		if (o->resv && o->dst.node == node && o->rg == rg && lo < o->rhi && o->rlo < hi)
			return false;
	}
	return true;
}

/* reserve [lo - GUARD, hi + GUARD) clamped to the region */
static bool
reserve(struct sop *o, uint64_t lo, uint64_t hi)
{
	uint64_t len = S.rg[o->dst.node][o->rg].len;

	o->rlo = lo > GUARD ? lo - GUARD : 0;
	o->rhi = RTE_MIN(hi + GUARD, len);
	if (!resv_free(o->dst.node, o->rg, o->rlo, o->rhi))
		return false;
	o->resv = true;
	return true;
}

/* a random offset at which [off, off + len) plus guards is free, or UINT64_MAX */
static uint64_t
pick_off(uint16_t node, int rg, uint64_t lo, uint64_t hi)
{
	uint64_t rlen = S.rg[node][rg].len, off, min, max;
	int tries;

	/* GUARD <= off + lo, off + hi + GUARD <= rlen, off >= 0 */
	min = lo >= GUARD ? 0 : GUARD - lo;
	if (hi + GUARD > rlen || min > rlen - hi - GUARD)
		return UINT64_MAX;
	max = rlen - hi - GUARD;
	for (tries = 0; tries < 8; tries++) {
		off = min + rnd_n(max - min + 1);
		if (rg == RG_RO || resv_free(node, rg, off + lo - GUARD, off + hi + GUARD))
			return off;
	}
	return UINT64_MAX;
}

/* ---- datatypes ---- */

static struct amrma_dgsp_type *
committed(struct amrma_dgsp_type *t)
{
	CHECK(t != NULL && amrma_dgsp_type_commit(t) == 0, "type commit");
	return t;
}

static uint64_t
divisor(uint64_t n)
{
	uint64_t d;
	int i;

	for (i = 0; i < 6; i++) {
		d = 1 + rnd_n(RTE_MIN(n, UINT64_C(64)));
		if (n % d == 0)
			return d;
	}
	return 1;
}

/* n elements of b bytes, blocks in increasing order, none overlapping, lb 0 or above */
static struct amrma_dgsp_type *
gen_type(uint64_t b, uint64_t n, int depth)
{
	struct amrma_dgsp_type *basic, *t = NULL, *sub;
	int ret = 0;

	CHECK(amrma_dgsp_type_basic(b, &basic) == 0, "basic type");
	/* inside a struct no subarray: its explicit bounds would set the struct's (MPI's
	 * sticky markers), and the blocks behind it would overlap the next element */
	switch (rnd_n(depth > 0 ? 4 : 6)) {
	case 0:
		ret = amrma_dgsp_type_contiguous(n, basic, &t);
		break;
	case 1: {
		uint64_t bl = divisor(n);

		ret = amrma_dgsp_type_vector(n / bl, bl, (int64_t)(bl + rnd_n(4)), basic, &t);
		break;
	}
	case 2: {
		uint64_t bl = divisor(n);

		ret = amrma_dgsp_type_hvector(n / bl, bl, (int64_t)(bl * b + rnd_n(24)), basic,
					      &t);
		break;
	}
	case 3: {
		uint64_t bls[8], left = n;
		int64_t disps[8], at = (int64_t)rnd_n(4);
		uint32_t k = (uint32_t)(1 + rnd_n(RTE_MIN(n, UINT64_C(8)))), i;

		for (i = 0; i < k; i++) {
			bls[i] = i == k - 1 ? left : 1 + rnd_n(left - (k - 1 - i));
			left -= bls[i];
			disps[i] = at;
			at += (int64_t)bls[i] + (int64_t)rnd_n(5);
		}
		ret = amrma_dgsp_type_indexed(k, bls, disps, basic, &t);
		break;
	}
	case 4: {
		uint64_t r = divisor(n), c = n / r;
		uint64_t sizes[2] = { r + rnd_n(3), c + rnd_n(3) }, subs[2] = { r, c }, starts[2];

		starts[0] = rnd_n(sizes[0] - r + 1);
		starts[1] = rnd_n(sizes[1] - c + 1);
		ret = amrma_dgsp_type_subarray(2, sizes, subs, starts,
			chance(50) ? AMRMA_DGSP_ORDER_C : AMRMA_DGSP_ORDER_FORTRAN, basic, &t);
		break;
	}
	default: {
		/* struct of a layout and a block of basics, the block behind it */
		struct amrma_dgsp_type_info ti;
		struct amrma_dgsp_type *types[2];
		uint64_t n1, bls[2] = { 1, 0 };
		int64_t disps[2] = { 0, 0 };

		if (n < 2) {
			ret = amrma_dgsp_type_contiguous(n, basic, &t);
			break;
		}
		n1 = 1 + rnd_n(n - 1);
		sub = gen_type(b, n1, depth + 1);
		CHECK(amrma_dgsp_type_get_info(sub, &ti) == 0, "type info");
		types[0] = sub;
		types[1] = basic;
		bls[1] = n - n1;
		disps[1] = ti.true_lb + ti.true_extent + (int64_t)rnd_n(16);
		ret = amrma_dgsp_type_struct(2, bls, disps, types, &t);
		amrma_dgsp_type_free(sub);
		break;
	}
	}
	amrma_dgsp_type_free(basic);
	CHECK(ret == 0 && t != NULL, "type constructor %d", ret);
	if (depth == 0 && chance(20)) {
		/* elements spaced wider than their data */
		struct amrma_dgsp_type_info ti;

		CHECK(amrma_dgsp_type_get_info(t, &ti) == 0, "type info");
		if (ti.lb == 0 && ti.true_lb >= 0) {
			sub = t;
			ret = amrma_dgsp_type_resized(sub, 0, ti.true_lb + ti.true_extent +
						      (int64_t)rnd_n(32), &t);
			amrma_dgsp_type_free(sub);
			CHECK(ret == 0, "resized %d", ret);
		}
	}
	return committed(t);
}

/* bytes [*lo, *hi) from the base that count elements of t touch */
static void
footprint(struct amrma_dgsp_type *t, uint64_t count, uint64_t *lo, uint64_t *hi)
{
	struct amrma_dgsp_info pi;

	amrma_dgsp_get_info(amrma_dgsp_type_program(t), &pi);
	CHECK(pi.true_lb >= 0 && pi.extent >= 0 && pi.extent >= pi.true_ub - pi.lb,
	      "generated type with true lb %" PRId64 " ub %" PRId64 " lb %" PRId64 " extent %"
	      PRId64, pi.true_lb, pi.true_ub, pi.lb, pi.extent);
	if (count == 0) {
		*lo = *hi = 0;
		return;
	}
	*lo = (uint64_t)pi.true_lb;
	*hi = (count - 1) * (uint64_t)pi.extent + (uint64_t)pi.true_ub;
}

static uint64_t
dt_gather(struct amrma_dgsp_type *t, uint8_t *base, uint64_t count, uint8_t *out)
{
	struct amrma_dgsm m;

	CHECK(amrma_dgsm_init(&m, amrma_dgsp_type_program(t), base, count) == 0, "dgsm init");
	return amrma_dgsm_gather(&m, out, m.total);
}

static uint64_t
dt_scatter(struct amrma_dgsp_type *t, uint8_t *base, uint64_t count, const uint8_t *in)
{
	struct amrma_dgsm m;

	CHECK(amrma_dgsm_init(&m, amrma_dgsp_type_program(t), base, count) == 0, "dgsm init");
	return amrma_dgsm_scatter(&m, in, m.total);
}

/* ---- operations ---- */

static void live_add(struct sop *o)
{
	S.live[S.nb_live++] = o->id;
}

static void
live_remove(struct sop *o)
{
	int k;

	for (k = 0; k < S.nb_live; k++)
		if (S.live[k] == o->id) {
			S.live[k] = S.live[--S.nb_live];
			return;
		}
}

static void
op_free_bufs(struct sop *o)
{
	if (o->alloc != NULL)
		buf_free(o->alloc, o->eal);
	o->alloc = NULL;
	free(o->packed);
	free(o->expect_buf);
	o->packed = o->expect_buf = NULL;
	amrma_dgsp_type_free(o->lt);
	amrma_dgsp_type_free(o->rt);
	o->lt = o->rt = NULL;
}

/* the put's source may be reused: overwrite it, the target must still get the original */
static void
scribble(struct sop *o)
{
	if (o->scribbled || o->alloc == NULL)
		return;
	o->scribbled = true;
	if (o->kind == K_PUT)
		memset(o->buf, 0x5c, o->len);
	else if (o->kind == K_PUT_DT)
		memset(o->alloc + GUARD, 0x5c, o->alloc_len - 2 * GUARD);
}

static void issue_random(uint16_t node, uint16_t ctx, bool from_cb);

static const struct sop *
pending_to(uint16_t node, uint16_t ctx, struct amrma_ep ep, bool *unknown)
{
	const struct sop *pending = NULL;
	int k;

	*unknown = false;
	for (k = 0; k < S.nb_live; k++) {
		const struct sop *o = &S.op[S.live[k]];

		if (o->node != node || o->ctx != ctx || o->dst.node != ep.node ||
		    o->dst.ctx != ep.ctx)
			continue;
		if (o->has_cb && !o->done_seen)
			pending = o;
		else if (!o->has_cb && !o->tested)
			*unknown = true;	/* complete or not: only test would say */
	}
	return pending;
}

static void
op_cb(struct amrma_ctx *ctx, void *arg, enum amrma_rma_event ev, int status)
{
	struct sop *o = arg;

	CHECK(o >= S.op && o < S.op + S.nb_op, "callback with a foreign argument");
	CHECK(o->started, "%s: callback for an operation refused in the call", op_str(o));
	CHECK(ctx == h_ctx(&S.h, o->node, o->ctx), "%s: callback on another context",
	      op_str(o));
	CHECK(!o->done_seen, "%s: event %d after DONE", op_str(o), ev);
	CHECK(S.in_poll || S.destroyed, "%s: event %d outside a poll", op_str(o), ev);
	switch (ev) {
	case AMRMA_RMA_EV_LOCAL:
		CHECK((o->kind == K_PUT || o->kind == K_PUT_DT) &&
		      (o->flags & AMRMA_RMA_F_LOCAL_CB), "%s: EV_LOCAL not asked for",
		      op_str(o));
		CHECK(++o->n_local == 1, "%s: EV_LOCAL twice", op_str(o));
		CHECK(status == 0, "%s: EV_LOCAL status %d", op_str(o), status);
		scribble(o);
		return;
	case AMRMA_RMA_EV_PACKET:
		CHECK(o->flags & AMRMA_RMA_F_PER_PACKET, "%s: EV_PACKET not asked for",
		      op_str(o));
		o->n_packet++;
		return;
	case AMRMA_RMA_EV_DONE:
		break;
	default:
		soak_fail("%s: unknown event %d", op_str(o), ev);
	}
	o->n_done++;
	o->done_seen = true;
	o->status = status;
	if (S.destroyed) {
		/* the engine is detached before its callbacks run */
		int ret = amrma_rma_put(ctx, o->dst, o->key, 0, NULL, 0, 0, NULL, NULL, NULL);

		CHECK(ret == -EINVAL, "%s: put from a callback in destroy: %d", op_str(o), ret);
		return;
	}
	/* a callback may start operations, may not wait; flush says whether it would */
	if (chance(15)) {
		struct amrma_ep ep = { .node = (uint16_t)rnd_n(NODES), .ctx = (uint8_t)rnd_n(Q) };
		bool unknown;
		const struct sop *p = pending_to(o->node, o->ctx, ep, &unknown);
		int ret = amrma_rma_flush(ctx, ep);

		S.cb_flushes++;
		if (p != NULL)
			CHECK(ret == -EPERM, "flush from a callback to %u.%u: %d, %s pending",
			      ep.node, ep.ctx, ret, op_str(p));
		else if (!unknown)
			CHECK(ret == 0, "flush from a callback to %u.%u: %d, nothing pending",
			      ep.node, ep.ctx, ret);
	}
	if (chance(10)) {
		int k;

		for (k = 0; k < S.nb_live; k++) {
			struct sop *w = &S.op[S.live[k]];

			if (w != o && w->node == o->node && w->ctx == o->ctx && w->has_cb &&
			    w->has_req && !w->done_seen) {
				int ret = amrma_rma_wait(ctx, w->req);

				CHECK(ret == -EPERM, "%s: wait from a callback returned %d",
				      op_str(w), ret);
				S.cb_waits++;
				break;
			}
		}
	}
	if (chance(20) && S.issued < S.nops) {
		S.cb_issued++;
		issue_random(o->node, o->ctx, true);
	}
}

static struct sop *
op_new_rec(uint16_t node, uint16_t ctx)
{
	struct sop *o;

	CHECK(S.nb_op < MAX_SOPS, "too many operations");
	o = &S.op[S.nb_op];
	memset(o, 0, sizeof(*o));
	o->id = S.nb_op++;
	o->node = node;
	o->ctx = ctx;
	o->rg = -1;
	return o;
}

static uint64_t
pick_len(void)
{
	uint64_t m = S.max4;

	switch (rnd_n(20)) {
	case 0:
		return 0;
	case 1: case 2:
		return 1 + rnd_n(16);
	case 3: case 4: case 5:
		return m - 2 + rnd_n(5);
	case 6: case 7:
		return 2 * m - 2 + rnd_n(5);
	case 8: case 9: case 10: case 11:
		return 1 + rnd_n(8192);
	case 12: case 13: case 14: case 15: case 16:
		return 1 + rnd_n(RTE_MIN(S.max_size, UINT64_C(256) << 10));
	case 17: case 18:
		return 1 + rnd_n(RTE_MIN(S.max_size, UINT64_C(1) << 20));
	default:
		return 1 + rnd_n(S.max_size);
	}
}

/* the protocol the library picks (amrma_rma.h: by size unless forced) */
static uint32_t
auto_proto(uint8_t kind, uint64_t len)
{
	uint64_t rndv = kind == K_PUT ? S.rc.rndv_put_threshold : S.rc.rndv_threshold;
	uint64_t short_max = RTE_MIN(S.rc.short_max ? S.rc.short_max : S.max4, S.max4);

	return len >= rndv ? AMRMA_RMA_F_RENDEZVOUS :
	       len <= short_max ? AMRMA_RMA_F_SHORT : AMRMA_RMA_F_PIPELINED;
}

static int
call(struct sop *o)
{
	struct amrma_ctx *ctx = h_ctx(&S.h, o->node, o->ctx);
	amrma_rma_cb_t cb = o->has_cb ? op_cb : NULL;
	amrma_rma_req_t *req = o->has_req ? &o->req : NULL;
	const struct amrma_dgsp *lp = o->lt ? amrma_dgsp_type_program(o->lt) : NULL;
	const struct amrma_dgsp *rp = o->rt ? amrma_dgsp_type_program(o->rt) : NULL;

	switch (o->kind) {
	case K_PUT:
		return amrma_rma_put(ctx, o->dst, o->key, o->off, o->buf, o->len, o->flags, cb, o,
				     req);
	case K_GET:
		return amrma_rma_get(ctx, o->dst, o->key, o->off, o->buf, o->len, o->flags, cb, o,
				     req);
	case K_PUT_DT:
		return amrma_rma_put_dt(ctx, o->dst, o->key, o->off, o->buf, lp, o->lcount, rp,
					o->rcount, o->flags, cb, o, req);
	default:
		return amrma_rma_get_dt(ctx, o->dst, o->key, o->off, rp, o->rcount, o->buf, lp,
					o->lcount, o->flags, cb, o, req);
	}
}

/* the contiguous local buffer: guards, and a pattern (put) or a known fill (get) */
static void
local_buf(struct sop *o, size_t n)
{
	o->eal = chance(50);
	o->alloc_len = n + 2 * GUARD;
	o->alloc = buf_alloc(o->alloc_len, o->eal);
	o->fill = (uint32_t)rnd();
	h_fill(o->alloc, o->alloc_len, o->fill ^ 0x9e37u);
	o->buf = o->alloc + GUARD;
	if (o->kind == K_PUT)
		h_fill(o->buf, o->len, o->fill);
}

/*
 * The target region of o at its destination: for B_PERM one that refuses the access
 * (read-only for a put, write-only for a get), otherwise mostly a read-write one, and
 * now and then the one deregistered and registered again at random.
 */
static struct region *
pick_region(struct sop *o, bool put)
{
	if (o->bad == B_PERM)
		o->rg = put ? RG_RO : RG_WO;
	else if (put)
		o->rg = chance(80) ? RG_RW : RG_WO;
	else
		o->rg = chance(70) ? RG_RW : RG_RO;
	if (o->bad == B_NONE && chance(12))
		o->rg = RG_VOL;
	return &S.rg[o->dst.node][o->rg];
}

/* Set up a contiguous put or get; false when no room (try something else). */
static bool
setup_contig(struct sop *o)
{
	uint16_t dn = o->dst.node;
	struct region *r;
	uint64_t rlen;

	o->len = pick_len();
	if (o->bad == B_PERM)
		o->expect = -EACCES;
	r = pick_region(o, o->kind == K_PUT);
	rlen = r->len;
	o->key = r->key;
	if (o->len > rlen - 2 * GUARD)
		o->len = rnd_n(rlen / 4);
	/* a refusal is not the in-call one for a short op too big */
	if (o->bad != B_NONE && o->proto == AMRMA_RMA_F_SHORT && o->len > S.max4)
		o->len = S.max4;
	switch (o->bad) {
	case B_NONE:
		o->off = pick_off(dn, o->rg, 0, o->len);
		if (o->off == UINT64_MAX)
			return false;
		if (o->rg != RG_RO && !reserve(o, o->off, o->off + o->len))
			return false;
		break;
	case B_KEY:
		o->key = chance(50) ? r->key ^ (UINT64_C(1) << rnd_n(64)) : rnd() | 1;
		o->off = rnd_n(rlen / 2);
		o->expect = -ENOKEY;
		break;
	case B_PERM:
		o->off = rnd_n(rlen - o->len + 1);
		break;
	case B_RANGE:
		/* runs past the end: bytes inside the region may be placed (pipelined
		 * chunks are checked one by one), nothing outside the range */
		if (o->len == 0 || chance(20))
			o->off = rlen + 1 + rnd_n(1000);
		else
			o->off = rlen - rnd_n(RTE_MIN(o->len, rlen)) + rnd_n(3);
		if (o->off + o->len <= rlen)
			o->off = rlen - o->len + 1;
		o->expect = -ERANGE;
		if (o->off < rlen) {
			o->chg_lo = o->off;
			o->chg_hi = rlen;
			if (o->rg != RG_RO && !reserve(o, o->off, rlen))
				return false;
		}
		break;
	case B_OVERFLOW:
		/* offset + len past 2^64: no byte of the region is in the range */
		if (o->len == 0)
			o->len = 1 + rnd_n(3 * S.max4);
		o->off = UINT64_MAX - rnd_n(o->len);
		o->expect = -EOVERFLOW;
		break;
	}
	local_buf(o, o->len);
	return true;
}

/* Set up a noncontiguous put or get; false when no room. */
static bool
setup_dt(struct sop *o)
{
	uint16_t dn = o->dst.node;
	uint64_t b = (uint64_t[]){ 1, 2, 4, 8 }[rnd_n(4)];
	uint64_t maxn = RTE_MAX(UINT64_C(1), RTE_MIN(S.max_size, UINT64_C(512) << 10) / b / 2);
	uint64_t n, nl, nr, llo, lhi, rlo, rhi, rlen;
	struct region *r;

	n = chance(50) ? 1 + rnd_n(RTE_MIN(maxn, UINT64_C(600))) : 1 + rnd_n(maxn);
	o->lcount = divisor(n);
	o->rcount = divisor(n);
	nl = n / o->lcount;
	nr = n / o->rcount;
	o->lt = gen_type(b, nl, 0);
	o->rt = gen_type(b, nr, 0);
	if (chance(5))
		o->lcount = o->rcount = 0;
	o->total = o->lcount * nl * b;
	footprint(o->lt, o->lcount, &llo, &lhi);
	footprint(o->rt, o->rcount, &rlo, &rhi);
	if (lhi - llo > (UINT64_C(8) << 20))
		return false;
	r = pick_region(o, o->kind == K_PUT_DT);
	rlen = r->len;
	o->key = r->key;
	switch (o->bad) {
	case B_NONE:
		o->off = pick_off(dn, o->rg, rlo, rhi);
		if (o->off == UINT64_MAX)
			return false;
		if (o->rg != RG_RO && !reserve(o, o->off + rlo, o->off + rhi))
			return false;
		break;
	case B_KEY:
		o->key = r->key ^ (UINT64_C(1) << rnd_n(64));
		o->off = 0;
		o->expect = -ENOKEY;
		break;
	case B_PERM:
		o->off = 0;
		o->expect = -EACCES;
		if (rhi > rlen)
			return false;
		break;
	default:
		/* the footprint reaches past the region (or the offset itself does) */
		if (rhi == 0)
			return false;
		o->off = chance(20) ? rlen + rnd_n(100) : rlen - rhi + 1 + rnd_n(RTE_MIN(rhi, UINT64_C(64)));
		o->expect = -ERANGE;
		o->bad = B_RANGE;
		break;
	}
	/* the local layout's base sits GUARD bytes into the buffer, less its low bound */
	o->eal = chance(50);
	o->alloc_len = lhi - llo + 2 * GUARD;
	o->alloc = buf_alloc(o->alloc_len, o->eal);
	o->fill = (uint32_t)rnd();
	h_fill(o->alloc, o->alloc_len, o->fill);
	o->buf = o->alloc + GUARD - llo;
	o->len = o->total;
	if (o->kind == K_PUT_DT) {
		o->packed = malloc(o->total + 1);
		CHECK(dt_gather(o->lt, o->buf, o->lcount, o->packed) == o->total, "gather");
	} else if (o->bad == B_NONE) {
		/* the local buffer as it must end: the remote bytes scattered into place */
		uint8_t *p = malloc(o->total + 1);

		CHECK(dt_gather(o->rt, r->shadow + o->off, o->rcount, p) == o->total,
		      "reference gather");
		o->expect_buf = malloc(o->alloc_len);
		memcpy(o->expect_buf, o->alloc, o->alloc_len);
		CHECK(dt_scatter(o->lt, o->expect_buf + GUARD - llo, o->lcount, p) == o->total,
		      "reference scatter");
		free(p);
	}
	return true;
}

static void
count_started(struct sop *o)
{
	struct counts *c = &S.cnt[o->node][o->ctx];

	if (o->kind == K_PUT || o->kind == K_PUT_DT) {
		c->puts++;
		c->put_bytes += o->len;
	} else {
		c->gets++;
		c->get_bytes += o->len;
	}
	if (o->kind == K_PUT_DT || o->kind == K_GET_DT)
		c->dt_ops++;
	else if (o->proto == AMRMA_RMA_F_RENDEZVOUS)
		c->rndv_ops++;
}

/* Calls refused in the call: -EINVAL, no callback, no handle, nothing outstanding. */
static void
issue_incall(struct sop *o)
{
	struct amrma_ctx *ctx = h_ctx(&S.h, o->node, o->ctx);
	unsigned int before = amrma_rma_outstanding(ctx);
	int ret;

	o->bad = B_INCALL;
	o->kind = (uint8_t)rnd_n(2);
	o->rg = RG_RW;
	o->key = S.rg[o->dst.node][RG_RW].key;
	o->len = 1 + rnd_n(4 * S.max4);
	switch (rnd_n(4)) {
	case 0:		/* short, too big */
		o->len = S.max4 + 1 + rnd_n(3 * S.max4);
		o->flags = AMRMA_RMA_F_SHORT;
		break;
	case 1:		/* two protocols */
		o->flags = AMRMA_RMA_F_RENDEZVOUS |
			   (chance(50) ? AMRMA_RMA_F_SHORT : AMRMA_RMA_F_PIPELINED);
		break;
	case 2:		/* no such endpoint: a context the peer lacks, or ourselves */
		if (chance(50))
			o->dst.ctx = Q + (uint8_t)rnd_n(3);
		else
			o->dst.node = o->node;
		o->flags = chance(50) ? AMRMA_RMA_F_RENDEZVOUS : AMRMA_RMA_F_PIPELINED;
		break;
	default:	/* no buffer */
		o->flags = AMRMA_RMA_F_PIPELINED;
		break;
	}
	local_buf(o, o->len);
	if (o->flags == AMRMA_RMA_F_PIPELINED && o->dst.node != o->node && o->dst.ctx < Q)
		o->buf = NULL;
	o->has_req = true;
	o->req = 42;
	ret = call(o);
	if (ret == -EPERM && o->from_cb)
		S.eperm++;	/* counted, and failed at the end of the seed */
	else	/* a full table may answer before the arguments are looked at */
		CHECK(ret == -EINVAL || ret == -EAGAIN, "%s: call returned %d, not -EINVAL",
		      op_str(o), ret);
	/* untouched or 0: not a handle */
	CHECK(o->req == 42 || o->req == 0, "%s: refused call set handle %#" PRIx64, op_str(o),
	      o->req);
	CHECK(amrma_rma_outstanding(ctx) == before, "%s: refused call left an operation",
	      op_str(o));
	op_free_bufs(o);
}

static void
issue_random(uint16_t node, uint16_t ctx, bool from_cb)
{
	struct sop *o = op_new_rec(node, ctx);
	unsigned int w = (unsigned int)rnd_n(100);
	bool ok;
	int ret;

	o->from_cb = from_cb;
	o->dst.node = (uint16_t)((node + 1 + rnd_n(NODES - 1)) % NODES);
	o->dst.ctx = (uint8_t)rnd_n(Q);
	if (w < 3) {
		issue_incall(o);
		return;
	}
	o->kind = w < 40 ? K_PUT : w < 75 ? K_GET : w < 88 ? K_PUT_DT : K_GET_DT;
	w = (unsigned int)rnd_n(100);
	o->bad = w < 86 ? B_NONE : w < 90 ? B_KEY : w < 94 ? B_RANGE : w < 97 ? B_OVERFLOW :
		 B_PERM;
	switch (rnd_n(3)) {
	case 0:
		o->has_cb = true;
		break;
	case 1:
		o->has_req = true;
		break;
	default:
		o->has_cb = o->has_req = true;
	}
	if (chance(25))
		o->flags |= AMRMA_RMA_F_LOCAL_CB;
	if (chance(20))
		o->flags |= AMRMA_RMA_F_PER_PACKET;
	if (chance(15))
		o->flags |= AMRMA_RMA_F_COPY;
	if (o->kind == K_PUT || o->kind == K_GET) {
		w = (unsigned int)rnd_n(4);
		o->proto = w == 0 ? AMRMA_RMA_F_SHORT : w == 1 ? AMRMA_RMA_F_PIPELINED :
			   w == 2 ? AMRMA_RMA_F_RENDEZVOUS : 0;
		ok = setup_contig(o);
		if (ok && o->proto == AMRMA_RMA_F_SHORT && o->len > S.max4) {
			o->proto = 0;	/* short, too big: the in-call case covers it */
		}
		o->flags |= o->proto;
		if (o->proto == 0)
			o->proto = auto_proto(o->kind, o->len);
		o->nchunks = o->len == 0 ? 1 : (uint32_t)((o->len + S.max4 - 1) / S.max4);
	} else {
		ok = setup_dt(o);
		o->nchunks = o->total == 0 ? 0 : (uint32_t)((o->total + S.max4 - 1) / S.max4);
	}
	if (!ok) {
		op_free_bufs(o);
		S.nb_op--;	/* never called: the record is reused */
		return;
	}
	o->alt = o->alt2 = o->expect;
	if (o->rg == RG_VOL) {
		struct region *r = &S.rg[o->dst.node][RG_VOL];

		/* a rendezvous get from a region deregistered meanwhile is not told: it
		 * would fail only at rndv_timeout_ms */
		if (o->kind == K_GET && o->proto == AMRMA_RMA_F_RENDEZVOUS) {
			o->proto = AMRMA_RMA_F_PIPELINED;
			o->flags = (o->flags & ~AMRMA_RMA_F_RENDEZVOUS) | AMRMA_RMA_F_PIPELINED;
		}
		o->vol_gen = r->gen;
		if (r->dead)
			o->expect = o->alt = o->alt2 = -ENOKEY;
		else
			o->alt2 = -ENOKEY;	/* deregistered before it is done */
	}
	/* a pipelined put counted in a table of few slots may be refused, untouched */
	if (o->kind == K_PUT && o->proto == AMRMA_RMA_F_PIPELINED &&
	    !(o->flags & AMRMA_RMA_F_PER_PACKET) && S.rc.completion_slots < 64)
		o->alt = -ENOSPC;	/* before the key or range is looked at */
	/* DT programs: the target's slots are bounded; never full here (64 per context) */
	o->req = 0;
	o->started = true;	/* a callback may run inside the call */
	ret = call(o);
	if (ret != 0) {
		o->started = false;
		CHECK(o->n_done == 0 && o->n_local == 0 && o->n_packet == 0,
		      "%s: refused (%d) but called back", op_str(o), ret);
		CHECK(!o->has_req || o->req == 0 ||
		      amrma_rma_test(h_ctx(&S.h, node, ctx), o->req, NULL) == -EINVAL,
		      "%s: refused (%d) with a live handle", op_str(o), ret);
		if (ret == -EPERM && from_cb)
			S.eperm++;
		else
			CHECK(ret == -EAGAIN, "%s: call returned %d", op_str(o), ret);
		o->resv = false;
		op_free_bufs(o);
		return;
	}
	CHECK(!o->has_req || o->req != 0, "%s: no handle", op_str(o));
	S.issued++;
	count_started(o);
	live_add(o);
}

/* ---- completion checks ---- */

/* every operation of the seed whose range at (node, rg) covers byte at */
static void
who_touched(uint16_t node, int rg, uint64_t at)
{
	int k;

	for (k = 0; k < S.nb_op; k++) {
		const struct sop *o = &S.op[k];
		uint64_t lo = o->rlo, hi = o->rhi;

		if (o->dst.node != node || o->rg != rg || o->bad == B_INCALL)
			continue;
		if (hi <= lo) {	/* not reserved: its nominal range */
			lo = o->off;
			hi = o->off + RTE_MAX(o->len, UINT64_C(1));
		}
		if (at >= lo && at < hi)
			fprintf(stderr, "  covers it: %s [%" PRIu64 ", %" PRIu64 ") started %d "
				"finished %d status %d\n", op_str(o), lo, hi, o->started,
				o->finished, o->status);
	}
}

static void
check_region_range(const struct sop *o, const char *what)
{
	struct region *r = &S.rg[o->dst.node][o->rg];
	long d = mem_diff(r->mem + o->rlo, r->shadow + o->rlo, o->rhi - o->rlo);

	if (d >= 0)
		who_touched(o->dst.node, o->rg, o->rlo + (uint64_t)d);
	if (d >= 0)
		soak_fail("%s status %d: %s: region byte %" PRIu64 " is %#x, must be %#x",
			  op_str(o), o->status, what, o->rlo + (uint64_t)d, r->mem[o->rlo + d],
			  r->shadow[o->rlo + d]);
}

static bool
status_ok(const struct sop *o, int st)
{
	return st == o->expect || st == o->alt || st == o->alt2;
}

static void
finish(struct sop *o)
{
	struct region *r = o->rg >= 0 ? &S.rg[o->dst.node][o->rg] : NULL;
	int st = o->status;
	uint32_t max_pk;
	bool nodata = false;	/* RG_VOL registered again since: its bytes are new */
	long d;

	if (!o->has_cb)
		st = o->status = o->test_status;
	else if (o->has_req)
		CHECK(o->test_status == st, "%s: DONE said %d, test %d", op_str(o), st,
		      o->test_status);
	CHECK(o->n_done == (o->has_cb ? 1u : 0u), "%s: %u DONE callbacks", op_str(o),
	      o->n_done);
	if (!status_ok(o, st))
		soak_fail("%s: status %d, expected %d", op_str(o), st, o->expect);
	if (st != 0)
		S.cnt[o->node][o->ctx].errors++;
	cov.ops[o->kind][o->proto == AMRMA_RMA_F_SHORT ? 1 : o->proto == AMRMA_RMA_F_PIPELINED ?
		2 : o->proto == AMRMA_RMA_F_RENDEZVOUS ? 3 : 0][o->bad]++;
	if (st == 0)
		cov.ok++;
	else
		cov.failed++;
	cov.enospc += st == -ENOSPC;
	cov.local += o->n_local;
	cov.packets += o->n_packet;
	cov.from_cb += o->from_cb;
	cov.max_len = RTE_MAX(cov.max_len, o->len);
	/* events: LOCAL once for a put that asked, PACKET per placed packet if asked */
	if (o->has_cb && (o->kind == K_PUT || o->kind == K_PUT_DT) &&
	    (o->flags & AMRMA_RMA_F_LOCAL_CB))
		CHECK(o->n_local == 1, "%s: %u EV_LOCAL", op_str(o), o->n_local);
	else
		CHECK(o->n_local == 0, "%s: %u EV_LOCAL", op_str(o), o->n_local);
	max_pk = o->kind == K_GET && o->proto == AMRMA_RMA_F_RENDEZVOUS ? 1 :
		 RTE_MAX(o->nchunks, 1u);
	if (!(o->flags & AMRMA_RMA_F_PER_PACKET) || !o->has_cb)
		CHECK(o->n_packet == 0, "%s: %u EV_PACKET", op_str(o), o->n_packet);
	else if (st == 0)
		CHECK(o->n_packet == (o->kind >= K_PUT_DT ? o->nchunks : max_pk),
		      "%s: %u EV_PACKET, %u packets", op_str(o), o->n_packet, max_pk);
	else
		CHECK(o->n_packet <= max_pk, "%s: %u EV_PACKET", op_str(o), o->n_packet);

	if (o->rg == RG_VOL) {
		struct region *v = &S.rg[o->dst.node][RG_VOL];
		bool same = v->gen == o->vol_gen;

		CHECK(st != -ENOKEY || !same || v->dead, "%s: -ENOKEY from a registered region",
		      op_str(o));
		if (same && v->dead && st == 0 && o->kind == K_PUT &&
		    (d = h_fill_diff(v->snap + o->off, o->len, o->fill, 0)) >= 0)
			soak_fail("%s: byte %ld not placed before the deregistration", op_str(o),
				  d);
		nodata = !same;
		if (!same || (v->dead && o->kind != K_GET && o->kind != K_GET_DT)) {
			/* the region's bytes are checked at deregistration and release */
			o->resv = false;
			if (o->kind == K_PUT || o->kind == K_PUT_DT)
				goto done;
		}
	}
	switch (o->kind) {
	case K_PUT:
	case K_PUT_DT:
		/* the source is the caller's: never written */
		if (!o->scribbled && (o->kind == K_PUT ?
		    (d = h_fill_diff(o->buf, o->len, o->fill, 0)) :
		    (d = h_fill_diff(o->alloc, o->alloc_len, o->fill, 0))) >= 0)
			soak_fail("%s: source byte %ld written", op_str(o), d);
		if (!o->resv)
			break;	/* nothing of a region may change: the end of the seed says */
		if (st == 0 && o->kind == K_PUT) {
			if ((d = h_fill_diff(r->mem + o->off, o->len, o->fill, 0)) >= 0)
				soak_fail("%s: target byte %ld is %#x", op_str(o), d,
					  r->mem[o->off + d]);
			memcpy(r->shadow + o->off, r->mem + o->off, o->len);
		} else if (st == 0) {
			CHECK(dt_scatter(o->rt, r->shadow + o->off, o->rcount, o->packed) ==
			      o->total, "reference scatter");
		} else if (o->chg_hi > o->chg_lo) {
			memcpy(r->shadow + o->chg_lo, r->mem + o->chg_lo, o->chg_hi - o->chg_lo);
		}
		check_region_range(o, st == 0 ? "after the put" : "after a failed put");
		break;
	case K_GET:
		if ((d = h_fill_diff(o->alloc, GUARD, o->fill ^ 0x9e37u, 0)) >= 0 ||
		    (d = h_fill_diff(o->alloc + GUARD + o->len, GUARD, o->fill ^ 0x9e37u,
				     GUARD + o->len)) >= 0)
			soak_fail("%s: guard byte %ld around the buffer written", op_str(o), d);
		if (st == 0 && !nodata &&
		    (d = mem_diff(o->buf, r->shadow + o->off, o->len)) >= 0) {
			who_touched(o->dst.node, o->rg, o->off + (uint64_t)d);
			soak_fail("%s: got byte %ld = %#x, must be %#x (the region has %#x)",
				  op_str(o), d, o->buf[d], r->shadow[o->off + d],
				  r->mem[o->off + d]);
		}
		break;
	case K_GET_DT:
		if (st == 0 && !nodata) {
			if ((d = mem_diff(o->alloc, o->expect_buf, o->alloc_len)) >= 0)
				soak_fail("%s: local byte %ld of %zu = %#x, must be %#x",
					  op_str(o), d, o->alloc_len, o->alloc[d],
					  o->expect_buf[d]);
		} else if ((d = h_fill_diff(o->alloc, GUARD, o->fill, 0)) >= 0 ||
			   (d = h_fill_diff(o->alloc + o->alloc_len - GUARD, GUARD, o->fill,
					    o->alloc_len - GUARD)) >= 0) {
			soak_fail("%s: local guard byte %ld written", op_str(o), d);
		}
		break;
	}
done:
	/* from now on the library may not touch the buffers */
	if (o->kind == K_GET || o->kind == K_GET_DT) {
		h_fill(o->alloc, o->alloc_len, o->fill ^ 0x7777u);
		o->marked = true;
	} else {
		scribble(o);
	}
	o->finished = true;
	o->resv = false;
	live_remove(o);
}

/* handles: test until complete (then stale); local_done may free the source early */
static void
poll_handles(void)
{
	int k;

	for (k = 0; k < S.nb_live; k++) {
		struct sop *o = &S.op[S.live[k]];
		struct amrma_ctx *ctx = h_ctx(&S.h, o->node, o->ctx);
		int ret, st = 0xdead;

		if (o->has_req && !o->tested) {
			if ((o->kind == K_PUT || o->kind == K_PUT_DT) && !o->scribbled) {
				ret = amrma_rma_local_done(ctx, o->req);
				CHECK(ret == 0 || ret == 1, "%s: local_done %d", op_str(o), ret);
				if (ret == 1)
					scribble(o);
			}
			ret = amrma_rma_test(ctx, o->req, &st);
			CHECK(ret == 0 || ret == 1, "%s: test returned %d", op_str(o), ret);
			if (ret == 0) {
				continue;
			}
			CHECK(!o->has_cb || o->done_seen, "%s: complete before its DONE",
			      op_str(o));
			o->tested = true;
			o->test_status = st;
			CHECK(amrma_rma_test(ctx, o->req, &st) == -EINVAL,
			      "%s: handle valid after test", op_str(o));
			CHECK(amrma_rma_local_done(ctx, o->req) == -EINVAL,
			      "%s: local_done valid after test", op_str(o));
		}
		if ((!o->has_cb || o->done_seen) && (!o->has_req || o->tested)) {
			finish(o);
			k--;
		}
	}
}

/* ---- tagged messages: an amrma_tag engine per context, checked against a model ---- */

static uint32_t
tsrc(uint16_t node, uint16_t ctx)
{
	return (uint32_t)node << 8 | ctx;
}

static bool
tr_matches(const struct trecv *r, const struct tmsg *m)
{
	return amrma_tag_matches(r->tag, r->ignore, m->tag) &&
	       (r->src == AMRMA_TAG_ANY_SRC || r->src == tsrc(m->src_node, m->src_ctx));
}

static void
tr_cb(const struct amrma_tag_completion *c, void *arg)
{
	struct trecv *r = arg;
	struct tmsg *m;
	uint64_t want;
	long d;

	CHECK(++r->n_cb == 1, "tag receive %ld: %u callbacks", (long)(r - S.tr), r->n_cb);
	CHECK(c->recv_id == r->id && c->buf == r->alloc + GUARD, "tag receive %ld: wrong "
	      "completion", (long)(r - S.tr));
	if (c->status == -ECANCELED) {
		CHECK(r->state == TR_POSTED, "tag receive %ld cancelled in state %d",
		      (long)(r - S.tr), r->state);
		r->state = TR_CANCELLED;
		return;
	}
	CHECK(r->msg >= 0, "tag receive %ld completed without a message", (long)(r - S.tr));
	m = &S.tm[r->msg];
	want = RTE_MIN((uint64_t)m->len, r->buflen);
	CHECK(c->status == (m->len > r->buflen ? -EMSGSIZE : 0) && c->len == want &&
	      c->msg_len == m->len && c->tag == m->tag && c->src == tsrc(m->src_node,
	      m->src_ctx), "tag receive %ld: status %d len %" PRIu64 " msg_len %" PRIu64,
	      (long)(r - S.tr), c->status, c->len, c->msg_len);
	if ((d = h_fill_diff(r->alloc + GUARD, want, m->fill, 0)) >= 0)
		soak_fail("tag message %d: byte %ld wrong", r->msg, d);
	r->state = TR_DONE;
	m->state = TM_DELIVERED;
	m->recv = (int)(r - S.tr);
}

/* place message mi into receive ri (engine matched them) and complete it */
static void
tag_deliver(struct tq *q, int ri, int mi, const void *data, uint64_t recv_id)
{
	struct trecv *r = &S.tr[ri];
	uint64_t n = RTE_MIN((uint64_t)S.tm[mi].len, r->buflen);
	int ret;

	r->msg = mi;
	if (n != 0)
		memcpy(r->alloc + GUARD, data, n);
	ret = amrma_tag_complete(q->e, recv_id, 0);
	CHECK(ret == 0, "tag complete %d", ret);
	CHECK(r->state == TR_DONE, "tag receive %d: no callback on complete", ri);
}

static int
tmsg_handler(struct amrma_ctx *ctx, amrma_am_token_t tok, const struct amrma_am_msg *msg,
	     void *arg)
{
	uint16_t node = (uint16_t)(uintptr_t)arg, c = amrma_ctx_index(ctx);
	struct tq *q = &S.tq[node][c];
	struct amrma_tag_match m;
	struct amrma_tag_msg tmm;
	struct unexp_copy *u;
	struct tmsg *t;
	int mi, k, first = -1, ret;

	RTE_SET_USED(tok);
	CHECK(msg->nargs == 2 && msg->args[1] < (uint64_t)S.nb_tm, "tag message: bad args");
	mi = (int)msg->args[1];
	t = &S.tm[mi];
	CHECK(t->dst_node == node && t->dst_ctx == c && t->src_node == msg->src.node &&
	      t->src_ctx == msg->src.ctx && t->tag == msg->args[0] && t->len == msg->len,
	      "tag message %d: arrived at %u.%u from %u.%u", mi, node, c, msg->src.node,
	      msg->src.ctx);
	CHECK(t->state == TM_IN_FLIGHT, "tag message %d handled twice (state %d)", mi,
	      t->state);
	CHECK(h_fill_diff(msg->payload, msg->len, t->fill, 0) < 0, "tag message %d: payload", mi);
	for (k = 0; k < q->nb_posted && first < 0; k++)
		if (tr_matches(&S.tr[q->posted[k]], t))
			first = k;
	u = malloc(sizeof(*u) + msg->len + 1);
	u->msg = mi;
	u->len = msg->len;
	if (msg->len != 0)
		memcpy(u->data, msg->payload, msg->len);
	tmm = (struct amrma_tag_msg){ .tag = t->tag, .src = tsrc(t->src_node, t->src_ctx),
				      .len = t->len, .held_bytes = t->len, .cookie = u };
	ret = amrma_tag_arrive(q->e, &tmm, &m);
	if (first >= 0) {
		int ri = q->posted[first];

		CHECK(ret == 1 && m.recv_id == S.tr[ri].id, "tag message %d: matched %d/%"
		      PRIx64 ", the first matching receive is %d", mi, ret, m.recv_id, ri);
		CHECK(m.copy_len == RTE_MIN((uint64_t)t->len, S.tr[ri].buflen) &&
		      m.buf == S.tr[ri].alloc + GUARD, "tag message %d: match fields", mi);
		memmove(&q->posted[first], &q->posted[first + 1],
			(q->nb_posted - first - 1) * sizeof(int));
		q->nb_posted--;
		t->state = TM_ARRIVED;
		tag_deliver(q, ri, mi, u->data, m.recv_id);
		free(u);
		return 0;
	}
	if (q->nb_unexp == TAG_MAX_UNEXP || q->unexp_bytes + t->len > TAG_MAX_UNEXP_BYTES) {
		CHECK(ret == -ENOBUFS, "tag message %d: arrive %d with the queue full", mi, ret);
		free(u);
		return -ENOBUFS;	/* the sender tries again */
	}
	CHECK(ret == 0, "tag message %d: arrive %d, expected queued", mi, ret);
	q->unexp[q->nb_unexp] = mi;
	q->cookie[q->nb_unexp++] = u;
	q->unexp_bytes += t->len;
	t->state = TM_ARRIVED;
	return 0;
}

static void
tmsg_done(struct amrma_ctx *ctx, void *arg, int status)
{
	struct tmsg *t = &S.tm[(uintptr_t)arg];

	RTE_SET_USED(ctx);
	if (status == -ENOBUFS) {
		CHECK(t->state == TM_IN_FLIGHT, "tag message refused in state %d", t->state);
		t->state = TM_TO_SEND;
		t->refusals++;
		return;
	}
	CHECK(status == 0, "tag message %ld: status %d", (long)(t - S.tm), status);
	CHECK(t->state == TM_ARRIVED || t->state == TM_DELIVERED,
	      "tag message %ld acknowledged in state %d", (long)(t - S.tm), t->state);
	CHECK(!t->acked, "tag message %ld: completed twice", (long)(t - S.tm));
	t->acked = true;
}

static int
tr_new(uint16_t node, uint16_t ctx)
{
	struct trecv *r;

	CHECK(S.nb_tr < MAX_TR, "too many receives");
	r = &S.tr[S.nb_tr];
	memset(r, 0, sizeof(*r));
	r->node = node;
	r->ctx = ctx;
	r->msg = -1;
	return S.nb_tr++;
}

static void
tr_buf(struct trecv *r, uint64_t len)
{
	r->buflen = len;
	r->alloc = malloc(len + 2 * GUARD);
	memset(r->alloc, 0xe1, len + 2 * GUARD);
}

static void
tag_post(int ri)
{
	struct trecv *r = &S.tr[ri];
	struct tq *q = &S.tq[r->node][r->ctx];
	struct amrma_tag_recv d = { .tag = r->tag, .ignore = r->ignore, .src = r->src,
				    .buf = r->alloc + GUARD, .len = r->buflen, .cb = tr_cb,
				    .cb_arg = r };
	struct amrma_tag_match m;
	int k, first = -1, ret;

	for (k = 0; k < q->nb_unexp && first < 0; k++)
		if (tr_matches(r, &S.tm[q->unexp[k]]))
			first = k;
	ret = amrma_tag_post_recv(q->e, &d, &r->id, &m);
	if (first >= 0) {
		int mi = q->unexp[first];
		struct unexp_copy *u = q->cookie[first];

		CHECK(ret == 1 && m.msg.cookie == u, "tag receive %d: post %d, the oldest "
		      "matching message is %d", ri, ret, mi);
		memmove(&q->unexp[first], &q->unexp[first + 1],
			(q->nb_unexp - first - 1) * sizeof(int));
		memmove(&q->cookie[first], &q->cookie[first + 1],
			(q->nb_unexp - first - 1) * sizeof(void *));
		q->nb_unexp--;
		q->unexp_bytes -= S.tm[mi].len;
		r->state = TR_POSTED;
		tag_deliver(q, ri, mi, u->data, r->id);
		free(u);
		return;
	}
	if (q->nb_posted == TAG_MAX_POSTED) {
		CHECK(ret == -ENOSPC, "tag receive %d: post %d with the table full", ri, ret);
		r->state = TR_REFUSED;
		return;
	}
	CHECK(ret == 0, "tag receive %d: post %d", ri, ret);
	r->state = TR_POSTED;
	q->posted[q->nb_posted++] = ri;
}

/* a new message, its receive planned with a predicate that matches it */
static void
tag_new_msg(void)
{
	struct tmsg *t;
	struct trecv *r;
	int mi, ri;

	if (S.nb_tm >= MAX_TM - 1)
		return;
	mi = S.nb_tm++;
	t = &S.tm[mi];
	memset(t, 0, sizeof(*t));
	t->src_node = (uint16_t)rnd_n(NODES);
	t->src_ctx = (uint16_t)rnd_n(Q);
	t->dst_node = (uint16_t)((t->src_node + 1 + rnd_n(NODES - 1)) % NODES);
	t->dst_ctx = (uint16_t)rnd_n(Q);
	t->tag = rnd_n(4) | (rnd_n(2) << 40);
	t->len = chance(10) ? 0 : (uint32_t)rnd_n(amrma_am_max_payload(h_ctx(&S.h, 0, 0), 2) +
						  1);
	if (chance(50))
		t->len = (uint32_t)rnd_n(64);
	t->fill = (uint32_t)rnd();
	t->recv = -1;
	t->planned = -1;
	t->state = TM_TO_SEND;
	if (chance(10))
		return;	/* none: a catch-all takes it at the end */
	ri = tr_new(t->dst_node, t->dst_ctx);
	r = &S.tr[ri];
	t->planned = ri;
	r->tag = t->tag;
	r->src = tsrc(t->src_node, t->src_ctx);
	switch (rnd_n(5)) {
	case 0:
		r->ignore = 3;
		r->tag = rnd_n(4);
		r->tag |= t->tag & ~UINT64_C(3);
		break;
	case 1:
		r->src = AMRMA_TAG_ANY_SRC;
		break;
	case 2:
		r->ignore = AMRMA_TAG_ANY_TAG;
		r->tag = rnd();
		break;
	default:
		break;
	}
	tr_buf(r, chance(20) && t->len > 0 ? rnd_n(t->len) : t->len + rnd_n(32));
	r->post_after = chance(50) ? 0 : (int)rnd_n(200);
	if (chance(5)) {
		/* a receive nothing matches: cancelled at the end */
		ri = tr_new(t->dst_node, t->dst_ctx);
		S.tr[ri].tag = UINT64_C(1) << 50 | rnd_n(8);
		S.tr[ri].src = AMRMA_TAG_ANY_SRC;
		tr_buf(&S.tr[ri], rnd_n(100));
		S.tr[ri].post_after = (int)rnd_n(50);
	}
}

static void
tag_work(void)
{
	int i;

	for (i = 0; i < S.nb_tr; i++) {
		struct trecv *r = &S.tr[i];

		if (r->state == TR_PLANNED && r->post_after-- <= 0)
			tag_post(i);
	}
	for (i = 0; i < S.nb_tm; i++) {
		struct tmsg *t = &S.tm[i];
		uint8_t *p;
		int ret;

		if (t->state != TM_TO_SEND)
			continue;
		p = malloc(t->len + 1);
		h_fill(p, t->len, t->fill);
		t->state = TM_IN_FLIGHT;
		ret = amrma_am_request(h_ctx(&S.h, t->src_node, t->src_ctx),
				       (struct amrma_ep){ .node = t->dst_node,
							  .ctx = (uint8_t)t->dst_ctx },
				       H_TMSG, (uint64_t[]){ t->tag, (uint64_t)i }, 2, p,
				       (uint16_t)t->len, tmsg_done, (void *)(uintptr_t)i);
		free(p);
		if (ret != 0) {
			CHECK(ret == -EAGAIN || ret == -ENOBUFS, "tag send: %d", ret);
			t->state = TM_TO_SEND;
		}
	}
}

static bool
tags_settled(void)
{
	int i;

	for (i = 0; i < S.nb_tm; i++)
		if (S.tm[i].state != TM_DELIVERED || !S.tm[i].acked)
			return false;
	return true;
}

/* every message without a receive still waiting: a catch-all for each */
static void
tag_catch_all(void)
{
	int i;

	for (i = 0; i < S.nb_tm; i++) {
		struct tmsg *t = &S.tm[i];
		int ri;

		if (t->state == TM_DELIVERED)
			continue;
		ri = tr_new(t->dst_node, t->dst_ctx);
		S.tr[ri].ignore = AMRMA_TAG_ANY_TAG;
		S.tr[ri].src = AMRMA_TAG_ANY_SRC;
		tr_buf(&S.tr[ri], 9000);
		S.tr[ri].post_after = 0;
	}
}

static void
tag_finish(void)
{
	struct amrma_tag_stats ts;
	struct amrma_tag_msg msg;
	unsigned int n, c;
	int i, ret;

	for (i = 0; i < S.nb_tr; i++) {
		struct trecv *r = &S.tr[i];

		if (r->state == TR_POSTED) {
			ret = amrma_tag_cancel(S.tq[r->node][r->ctx].e, r->id);
			CHECK(ret == 0 && r->state == TR_CANCELLED,
			      "cancel of tag receive %d: %d, state %d", i, ret, r->state);
			ret = amrma_tag_cancel(S.tq[r->node][r->ctx].e, r->id);
			CHECK(ret == -ENOENT, "second cancel of tag receive %d: %d", i, ret);
		}
		CHECK(r->state != TR_PLANNED && r->state != TR_POSTED,
		      "tag receive %d left in state %d", i, r->state);
		CHECK(r->state == TR_REFUSED || r->n_cb == 1, "tag receive %d: %u callbacks",
		      i, r->n_cb);
		for (c = 0; c < GUARD; c++)
			CHECK(r->alloc[c] == 0xe1 && r->alloc[GUARD + r->buflen + c] == 0xe1,
			      "tag receive %d: guard written", i);
		free(r->alloc);
	}
	for (n = 0; n < NODES; n++)
		for (c = 0; c < Q; c++) {
			struct tq *q = &S.tq[n][c];

			CHECK(q->nb_unexp == 0, "%d unexpected tag messages at %u.%u", q->nb_unexp,
			      n, c);
			CHECK(amrma_tag_unexpected_pop(q->e, &msg) == 0,
			      "the tag engine of %u.%u kept a message", n, c);
			amrma_tag_stats_get(q->e, &ts);
			CHECK(ts.posted == 0 && ts.in_progress == 0 && ts.unexpected == 0 &&
			      ts.unexpected_bytes == 0, "tag engine %u.%u not empty", n, c);
			amrma_tag_engine_free(q->e);
			q->e = NULL;
		}
	for (i = 0; i < S.nb_tm; i++)
		CHECK(S.tm[i].state == TM_DELIVERED, "tag message %d not delivered (state %d)",
		      i, S.tm[i].state);
}

/* ---- a seed ---- */

static void
seed_conf(struct amrma_node_conf *nc)
{
	h_conf(nc);
	if (chance(30))
		nc->coalesce_frame = chance(50) ? 0 : (uint16_t)(200 + rnd_n(800));
	if (chance(30))
		nc->tx_inline_max = (uint16_t)rnd_n(193);
	if (chance(20))
		nc->window = (uint16_t)(4 + rnd_n(60));
	if (chance(15))
		nc->max_ops = (uint16_t)(16 + rnd_n(64));
	amrma_rma_conf_defaults(&S.rc);
	if (chance(30))
		S.rc.max_ops = (uint32_t)(8 + rnd_n(56));
	if (chance(30))
		S.rc.short_max = (uint32_t)rnd_n(S.max4 + 1);
	switch (rnd_n(3)) {
	case 0:
		S.rc.rndv_threshold = 1 + rnd_n(64 << 10);
		S.rc.rndv_put_threshold = 1 + rnd_n(512 << 10);
		break;
	case 1:
		S.rc.rndv_threshold = S.rc.rndv_put_threshold = UINT64_MAX;
		break;
	default:
		break;
	}
	if (chance(30))
		S.rc.pipeline_depth = (uint32_t)(1 + rnd_n(16));
	S.rc.zero_copy = chance(75);
	S.rc.progress_ctx = (uint32_t)rnd_n(Q);
	if (chance(15))
		S.rc.completion_slots = 1u << rnd_n(4);
}

static void
seed_setup(uint64_t seed)
{
	struct amrma_node_conf nc;
	unsigned int i, j, q;

	memset(&S.op, 0, sizeof(S.op));
	S.seed = seed;
	S.rng = seed * UINT64_C(0x2545f4914f6cdd1d) + 1;
	S.nb_op = S.nb_live = 0;
	S.issued = S.eperm = S.cb_issued = S.cb_waits = S.cb_flushes = 0;
	S.nb_tm = S.nb_tr = 0;
	S.destroyed = false;
	memset(S.cnt, 0, sizeof(S.cnt));
	S.max4 = 1400;	/* until the harness says */
	seed_conf(&nc);
	CHECK(h_create(&S.h, NODES, Q, &nc) == 0, "h_create");
	S.max4 = amrma_am_max_payload(h_ctx(&S.h, 0, 0), 4);
	if (S.rc.short_max > S.max4)
		S.rc.short_max = S.max4;
	for (i = 0; i < NODES; i++) {
		int ret = amrma_rma_create(S.h.n[i].node, &S.rc, &S.R[i]);

		CHECK(ret == 0, "amrma_rma_create: %d", ret);
		amrma_am_register(S.h.n[i].node, H_TMSG, tmsg_handler, (void *)(uintptr_t)i);
	}
	if (!chance(20))
		for (i = 0; i < NODES; i++) {
			h_faults(&S.h, i, (uint32_t)rnd_n(4), (uint32_t)rnd_n(4),
				 (uint32_t)rnd_n(6), (uint32_t)rnd_n(3), rnd());
			S.h.n[i].fault.split_pct = (uint32_t)rnd_n(6);
		}
	if (getenv("AMRMA_SOAK_FAULTS") != NULL) {
		/* hunting: "drop,dup,reorder,corrupt,split" percentages on every node */
		unsigned int f[5] = { 0, 0, 0, 0, 0 };

		sscanf(getenv("AMRMA_SOAK_FAULTS"), "%u,%u,%u,%u,%u", &f[0], &f[1], &f[2],
		       &f[3], &f[4]);
		for (i = 0; i < NODES; i++) {
			h_faults(&S.h, i, f[0], f[1], f[2], f[3], rnd());
			S.h.n[i].fault.split_pct = f[4];
		}
	}
	for (i = 0; i < NODES; i++)
		for (j = 0; j < RG_NB; j++) {
			struct region *r = &S.rg[i][j];
			uint32_t perm = j == RG_RO ? AMRMA_REGION_READ : j == RG_WO ?
					AMRMA_REGION_WRITE : AMRMA_REGION_READ | AMRMA_REGION_WRITE;
			int ret;

			r->len = j == RG_RW ? RTE_MAX(S.max_size * 2, UINT64_C(2) << 20) +
					      rnd_n(4096) : (UINT64_C(256) << 10) + rnd_n(65536);
			r->eal = chance(50);
			r->base = buf_alloc(r->len + 2 * PAD, r->eal);
			r->mem = r->base + PAD;
			h_fill(r->base, r->len + 2 * PAD, (uint32_t)(seed * 7 + i * 3 + j));
			r->shadow = malloc(r->len);
			memcpy(r->shadow, r->mem, r->len);
			r->snap = j == RG_VOL ? malloc(r->len) : NULL;
			r->dead = r->released = false;
			r->gen = r->idle = r->releases = 0;
			ret = amrma_region_register(amrma_rma_regions(S.R[i]), r->mem, r->len,
						    perm, &r->reg, &r->key);
			CHECK(ret == 0, "region register: %d", ret);
		}
	for (i = 0; i < NODES; i++)
		for (q = 0; q < Q; q++) {
			struct amrma_tag_config tc = { .max_posted = TAG_MAX_POSTED,
				.max_unexpected = TAG_MAX_UNEXP,
				.max_unexpected_bytes = TAG_MAX_UNEXP_BYTES, .socket_id = -1 };

			memset(&S.tq[i][q], 0, sizeof(S.tq[i][q]));
			S.tq[i][q].e = amrma_tag_engine_create(&tc);
			CHECK(S.tq[i][q].e != NULL, "tag engine");
		}
	S.inflight_max = S.valgrind ? 12 : (unsigned int)(8 + rnd_n(40));
	S.tm_target = S.valgrind ? 20 : (int)rnd_n(100);
	S.destroy_mid = !S.valgrind && chance(8);
}

static uint32_t
vol_marker(const struct region *r)
{
	return (uint32_t)S.seed ^ (r->gen * 0x9e3779b9u) ^ 0xabcdu;
}

static void
vol_released(void *arg, void *addr, size_t len)
{
	struct region *r = arg;
	long d;

	CHECK(r->dead && !r->released && addr == r->mem && len == r->len,
	      "region release callback: dead %d released %d", r->dead, r->released);
	if ((d = mem_diff(r->mem, r->snap, r->len)) >= 0)
		soak_fail("byte %ld of a region changed after its deregistration", d);
	r->released = true;
	r->releases++;
	r->idle = 0;
	h_fill(r->mem, r->len, vol_marker(r));	/* the application reuses its memory */
}

/* RG_VOL: deregistered at random, registered again a while after its release */
static void
vol_work(void)
{
	unsigned int i;
	long d;
	int ret;

	for (i = 0; i < NODES; i++) {
		struct region *r = &S.rg[i][RG_VOL];
		struct amrma_region_table *t = amrma_rma_regions(S.R[i]);

		if (!r->dead && chance(1) && chance(40)) {
			memcpy(r->snap, r->mem, r->len);
			r->dead = true;
			r->released = false;
			ret = amrma_region_deregister(t, r->reg, vol_released, r);
			CHECK(ret == 0 || ret == 1, "deregister: %d", ret);
			CHECK(r->released == (ret == 0), "deregister returned %d, released %d",
			      ret, r->released);
		} else if (r->dead && !r->released && ++r->idle % 64 == 0) {
			if ((d = mem_diff(r->mem, r->snap, r->len)) >= 0)
				soak_fail("node %u: byte %ld of a region changed after its "
					  "deregistration", i, d);
		} else if (r->released && ++r->idle > 200) {
			if ((d = h_fill_diff(r->mem, r->len, vol_marker(r), 0)) >= 0)
				soak_fail("node %u: byte %ld of a region written after its "
					  "release", i, d);
			ret = amrma_region_register(t, r->mem, r->len,
				AMRMA_REGION_READ | AMRMA_REGION_WRITE, &r->reg, &r->key);
			CHECK(ret == 0, "register again: %d", ret);
			r->gen++;
			r->dead = r->released = false;
			memcpy(r->shadow, r->mem, r->len);
		}
	}
}

/* at the end: a deregistered region was released (no reference left), untouched since */
static void
vol_check_end(void)
{
	unsigned int i;
	long d;

	for (i = 0; i < NODES; i++) {
		struct region *r = &S.rg[i][RG_VOL];

		if (!r->dead)
			continue;
		CHECK(r->released, "node %u: a deregistered region is still held", i);
		if ((d = h_fill_diff(r->mem, r->len, vol_marker(r), 0)) >= 0)
			soak_fail("node %u: byte %ld of a region written after its release", i,
				  d);
		memcpy(r->shadow, r->mem, r->len);	/* for check_regions */
	}
}

static void
step(void)
{
	unsigned int i;

	S.in_poll = true;
	h_step(&S.h);
	S.in_poll = false;
	for (i = 0; i < NODES && !S.destroyed; i++)
		amrma_rma_progress(S.R[i]);
	if (!S.destroyed) {
		poll_handles();
		vol_work();
	}
	tag_work();
}

static void
dump_live(void)
{
	int k;

	for (k = 0; k < S.nb_live && k < 20; k++) {
		const struct sop *o = &S.op[S.live[k]];

		fprintf(stderr, "  live: %s done %u tested %d\n", op_str(o), o->n_done, o->tested);
	}
}

static bool
no_mbufs_held(void *arg)
{
	unsigned int i, q;

	RTE_SET_USED(arg);
	/* a reply on its way is resent from a copy: no mbuf shows it */
	for (i = 0; i < NODES; i++)
		for (q = 0; q < Q; q++)
			if (amrma_ctx_outstanding(h_ctx(&S.h, i, q)) != 0)
				return false;
	return h_mbufs_in_use(&S.h) == 0;
}

/* everything the engines hold for operations is gone */
static void
check_engines_empty(void)
{
	unsigned int i, q;

	for (i = 0; i < NODES; i++) {
		struct amrma_rma *rma = S.R[i];
		struct amrma_region_stats rs;

		CHECK(rte_ring_count(rma->queue) == 0 && rma->nb_pending == 0,
		      "node %u: RMA queue not empty", i);
		amrma_region_stats_get(amrma_rma_regions(rma), &rs);
		CHECK(rs.descriptors == rs.registered, "node %u: %u region references held", i,
		      rs.descriptors - rs.registered);
		CHECK(rte_mempool_in_use_count(rma->ext_pool) == 0,
		      "node %u: %u zero-copy mbufs held", i,
		      rte_mempool_in_use_count(rma->ext_pool));
		for (q = 0; q < Q; q++) {
			struct amrma_ctx *ctx = h_ctx(&S.h, i, q);
			struct rma_ctx *rc = &rma->rc[q];
			struct amrma_tag_stats ts;

			CHECK(amrma_rma_outstanding(ctx) == 0, "%u.%u: %u operations outstanding",
			      i, q, amrma_rma_outstanding(ctx));
			CHECK(rc->nb_rx_used == 0, "%u.%u: %u tagged receives left", i, q,
			      rc->nb_rx_used);
			CHECK(rc->nb_dt_used == 0, "%u.%u: %u program slots left", i, q,
			      rc->nb_dt_used);
			CHECK(rc->nb_track == 0 && rc->nb_done == 0,
			      "%u.%u: %u put counts, %u completions left", i, q, rc->nb_track,
			      rc->nb_done);
			CHECK(TAILQ_EMPTY(&rc->active) && TAILQ_EMPTY(&rc->finishing),
			      "%u.%u: operations listed", i, q);
			amrma_tag_stats_get(rc->tags, &ts);
			CHECK(ts.posted == 0 && ts.in_progress == 0 && ts.unexpected == 0,
			      "%u.%u: RMA tag engine: %u posted, %u matched, %u unexpected", i, q,
			      ts.posted, ts.in_progress, ts.unexpected);
			CHECK(amrma_ctx_outstanding(ctx) == 0, "%u.%u: %u AM requests outstanding",
			      i, q, amrma_ctx_outstanding(ctx));
		}
	}
}

static void
check_counters(void)
{
	struct amrma_am_stats as;
	uint64_t violations = 0;
	unsigned int i, q;

	for (i = 0; i < NODES; i++) {
		amrma_node_stats_get(S.h.n[i].node, &as);
		violations += as.rule_violations;
		CHECK(as.unknown_handler == 0 && as.bad_token == 0,
		      "node %u: %" PRIu64 " unknown handler, %" PRIu64 " bad token", i,
		      as.unknown_handler, as.bad_token);
		for (q = 0; q < Q; q++) {
			const struct counts *c = &S.cnt[i][q];
			struct amrma_rma_stats st;

			amrma_rma_stats_get(h_ctx(&S.h, i, q), &st);
			CHECK(st.puts == c->puts && st.gets == c->gets &&
			      st.put_bytes == c->put_bytes && st.get_bytes == c->get_bytes,
			      "%u.%u: counted %" PRIu64 " puts %" PRIu64 " gets %" PRIu64 "/%"
			      PRIu64 " bytes, started %" PRIu64 " %" PRIu64 " %" PRIu64 "/%"
			      PRIu64, i, q, st.puts, st.gets, st.put_bytes, st.get_bytes,
			      c->puts, c->gets, c->put_bytes, c->get_bytes);
			CHECK(st.dt_ops == c->dt_ops && st.rndv_ops == c->rndv_ops,
			      "%u.%u: counted %" PRIu64 " dt %" PRIu64 " rendezvous, started %"
			      PRIu64 " %" PRIu64, i, q, st.dt_ops, st.rndv_ops, c->dt_ops,
			      c->rndv_ops);
			/* the progress context's tagged sends fail too (a refused get) */
			CHECK(q == S.rc.progress_ctx ? st.op_errors >= c->errors :
			      st.op_errors == c->errors, "%u.%u: %" PRIu64 " op errors, saw %"
			      PRIu64, i, q, st.op_errors, c->errors);
			/* after a deregistration ended a receive, the chunks in flight to it
			 * count as bad */
			CHECK(st.bad_replies == 0 || S.rg[i][RG_VOL].releases != 0 ||
			      S.rg[i][RG_VOL].dead, "%u.%u: %" PRIu64 " bad replies", i, q,
			      st.bad_replies);
		}
	}
	/* callbacks never run inside an AM handler, so what they start is never refused
	 * as a handler's request would be */
	CHECK(violations == 0 && S.eperm == 0, "%" PRIu64 " rule violations, %u calls from "
	      "callbacks refused with -EPERM", violations, S.eperm);
	for (i = 0; i < NODES; i++)
		for (q = 0; q < Q; q++) {
			struct amrma_rma_stats st;

			amrma_rma_stats_get(h_ctx(&S.h, i, q), &st);
			cov.chunks += st.chunks;
			cov.zero_copy_chunks += st.zero_copy_chunks;
		}
}

static void
check_regions(void)
{
	unsigned int i, j;
	int k;
	long d;

	for (i = 0; i < NODES; i++)
		for (j = 0; j < RG_NB; j++) {
			struct region *r = &S.rg[i][j];
			uint8_t *tmp = malloc(r->len + 2 * PAD);

			h_fill(tmp, r->len + 2 * PAD, (uint32_t)(S.seed * 7 + i * 3 + j));
			if ((d = mem_diff(r->base, tmp, PAD)) >= 0 ||
			    (d = mem_diff(r->mem + r->len, tmp + PAD + r->len, PAD)) >= 0)
				soak_fail("node %u region %u: byte %ld of the padding written", i,
					  j, d);
			free(tmp);
			if ((d = mem_diff(r->mem, r->shadow, r->len)) >= 0) {
				who_touched((uint16_t)i, (int)j, (uint64_t)d);
				soak_fail("node %u region %u: byte %ld is %#x, must be %#x", i, j,
					  d, r->mem[d], r->shadow[d]);
			}
		}
	/* completed gets' buffers were refilled: nothing may write them since */
	for (k = 0; k < S.nb_op; k++) {
		struct sop *o = &S.op[k];

		if (o->marked && (d = h_fill_diff(o->alloc, o->alloc_len, o->fill ^ 0x7777u, 0)) >= 0)
			soak_fail("%s: buffer byte %ld written after completion", op_str(o), d);
	}
}

/* Destroy the engines with operations in flight: each reports DONE once, in destroy. */
static void
destroy_mid_flight(void)
{
	unsigned int i;
	int k;

	for (k = 0; k < S.nb_live; k++)
		S.op[S.live[k]].done_before = S.op[S.live[k]].done_seen;
	S.destroyed = true;
	for (i = 0; i < NODES; i++)
		amrma_rma_destroy(S.R[i]);
	for (k = 0; k < S.nb_live; k++) {
		struct sop *o = &S.op[S.live[k]];
		int st;

		if (o->has_req && !o->tested)
			CHECK(amrma_rma_test(h_ctx(&S.h, o->node, o->ctx), o->req, &st) == -EINVAL,
			      "%s: handle valid after destroy", op_str(o));
		if (o->has_cb) {
			CHECK(o->n_done == 1, "%s: %u DONE in destroy", op_str(o), o->n_done);
			/* ended by destroy: -ECANCELED or its first error */
			if (o->done_before)
				CHECK(status_ok(o, o->status), "%s: status %d", op_str(o),
				      o->status);
			else
				CHECK(o->status == -ECANCELED ||
				      (o->status != 0 && status_ok(o, o->status)),
				      "%s: status %d in destroy", op_str(o), o->status);
		}
		/* what it may have written: its reserved range */
		if (o->resv) {
			struct region *r = &S.rg[o->dst.node][o->rg];

			memcpy(r->shadow + o->rlo, r->mem + o->rlo, o->rhi - o->rlo);
		}
	}
	S.nb_live = 0;
}

static void
seed_teardown(void)
{
	unsigned int i, j;
	int k;

	for (i = 0; i < NODES; i++) {
		if (!S.destroyed)
			amrma_rma_destroy(S.R[i]);
		S.R[i] = NULL;
	}
	h_destroy(&S.h);
	for (i = 0; i < NODES; i++)
		for (j = 0; j < RG_NB; j++) {
			buf_free(S.rg[i][j].base, S.rg[i][j].eal);
			free(S.rg[i][j].shadow);
			free(S.rg[i][j].snap);
		}
	for (k = 0; k < S.nb_op; k++)
		op_free_bufs(&S.op[k]);
}

/*
 * What the EAL heap may hold at a seed's start beyond what it held at the first's. An
 * engine destroyed mid-flight is freed by the next create, a seed later at most; before
 * that was so, each kept 3.7 MB for good, and 5000 seeds ran out of the heap.
 */
#define HEAP_SLACK ((size_t)64 << 20)

static size_t
heap_in_use(void)
{
	struct rte_malloc_socket_stats st;

	if (rte_malloc_get_socket_stats((int)rte_socket_id(), &st) != 0)
		return 0;
	return st.heap_allocsz_bytes;
}

static void
run_seed(uint64_t seed)
{
	static size_t heap_base;
	uint64_t deadline, t0 = now_ms();
	size_t heap = heap_in_use();
	unsigned int i, stop_at, n;
	int k;

	if (heap_base == 0)
		heap_base = heap;
	seed_setup(seed);
	CHECK(heap <= heap_base + HEAP_SLACK, "the EAL heap held %zu MB at the start, %zu MB "
	      "at the first seed's", heap >> 20, heap_base >> 20);
	stop_at = S.destroy_mid ? (unsigned int)rnd_n(S.nops) : UINT32_MAX;
	deadline = t0 + (S.valgrind ? 600000 : 120000);
	while ((S.issued < S.nops && S.issued < stop_at) || S.nb_live > 0) {
		unsigned int burst = (unsigned int)rnd_n(4);

		if (S.issued >= stop_at)
			break;		/* destroyed with what is in flight */
		while (burst-- > 0 && S.issued < S.nops && S.issued < stop_at &&
		       (unsigned int)S.nb_live < S.inflight_max)
			issue_random((uint16_t)rnd_n(NODES), (uint16_t)rnd_n(Q), false);
		if (S.nb_tm < S.tm_target && chance(30))
			tag_new_msg();
		step();
		if (now_ms() > deadline) {
			dump_live();
			soak_fail("not done in time: %d operations live, %u of %u issued",
				  S.nb_live, S.issued, S.nops);
		}
	}
	if (S.destroy_mid)
		destroy_mid_flight();
	while (S.nb_tm < S.tm_target)
		tag_new_msg();
	/* tag messages: planned receives are all posted within 200 steps; what still
	 * waits then (no receive, or one a wildcard took) gets a catch-all */
	for (n = 1; !tags_settled(); n++) {
		step();
		if (n % 2000 == 1000)
			tag_catch_all();
		CHECK(now_ms() < deadline, "tag messages not settled in time");
	}
	for (i = 0; i < 300; i++)
		step();		/* late events would show */
	tag_finish();
	if (!S.destroyed) {
		for (k = 0; k < S.nb_op; k++)
			CHECK(!S.op[k].started || S.op[k].finished, "%s unfinished",
			      op_str(&S.op[k]));
		if (!h_run_until(&S.h, no_mbufs_held, NULL, 5000))
			soak_fail("%u mbufs still held", h_mbufs_in_use(&S.h));
		check_engines_empty();
		check_counters();
	} else if (!h_run_until(&S.h, no_mbufs_held, NULL, 5000)) {
		soak_fail("%u mbufs still held after destroy", h_mbufs_in_use(&S.h));
	}
	vol_check_end();
	check_regions();
	/* quiesce polls its own node only: the peers' acks come in the steps between (a
	 * small frame waits for its ack as a copy, not as an mbuf) */
	for (n = 0;; n++) {
		int ret = 0;

		for (i = 0; i < NODES && ret == 0; i++)
			ret = amrma_node_quiesce(S.h.n[i].node, 2000);
		if (ret == 0)
			break;
		CHECK(ret == -ETIMEDOUT && n < 1000, "node %u: quiesce %d (round %u)", i - 1,
		      ret, n);
		for (i = 0; i < 4; i++)
			h_step(&S.h);
	}
	/* the acks the last quiesce sent may still be on the wire (a ring, or a frame the
	 * fault injector holds back to reorder) */
	if (!h_run_until(&S.h, no_mbufs_held, NULL, 2000))
		soak_fail("%u mbufs held after quiesce", h_mbufs_in_use(&S.h));
	cov.seeds++;
	cov.eperm += S.eperm;
	cov.destroyed += S.destroyed;
	cov.tags += (uint64_t)S.nb_tm;
	for (k = 0; k < S.nb_tm; k++)
		cov.tag_refusals += S.tm[k].refusals;
	for (k = 0; k < S.nb_op; k++)
		cov.incall += S.op[k].bad == B_INCALL;
	if (getenv("AMRMA_SOAK_VERBOSE") != NULL)
		printf("seed %" PRIu64 ": %u ops (%u from callbacks, %u refused there; %u waits "
		       "and %u flushes from callbacks), %d tag messages, %u deregistrations, "
		       "slots %u, zero copy %d, %u ms%s\n", seed, S.issued, S.cb_issued, S.eperm,
		       S.cb_waits, S.cb_flushes, S.nb_tm, S.rg[0][RG_VOL].releases +
		       S.rg[1][RG_VOL].releases + S.rg[2][RG_VOL].releases,
		       S.rc.completion_slots, S.rc.zero_copy, (unsigned int)(now_ms() - t0),
		       S.destroyed ? ", destroyed mid-flight" : "");
	seed_teardown();
}

static void
print_coverage(void)
{
	static const char *const pn[] = { "dt", "short", "pipelined", "rendezvous" };
	unsigned int k, p, b;

	printf("soak coverage: %" PRIu64 " seeds, %" PRIu64 " ok, %" PRIu64 " failed as "
	       "expected (%" PRIu64 " -ENOSPC), %" PRIu64 " refused in the call, %" PRIu64
	       " started from callbacks (%" PRIu64 " refused there), %" PRIu64 " EV_LOCAL, %"
	       PRIu64 " EV_PACKET, %" PRIu64 " of %" PRIu64 " chunks zero-copy, largest %"
	       PRIu64 " bytes, %" PRIu64 " seeds destroyed mid-flight, %" PRIu64
	       " tag messages (%" PRIu64 " refused and resent)\n", cov.seeds, cov.ok,
	       cov.failed, cov.enospc, cov.incall, cov.from_cb, cov.eperm, cov.local,
	       cov.packets, cov.zero_copy_chunks, cov.chunks, cov.max_len, cov.destroyed,
	       cov.tags, cov.tag_refusals);
	for (k = 0; k < 4; k++)
		for (p = 0; p < 4; p++) {
			uint64_t n = 0;

			for (b = 0; b < 6; b++)
				n += cov.ops[k][p][b];
			if (n == 0)
				continue;
			printf("  %-6s %-10s", kind_name[k], pn[p]);
			for (b = 0; b < 6; b++)
				printf(" %s %" PRIu64, bad_name[b], cov.ops[k][p][b]);
			printf("\n");
		}
}

static uint64_t
env_u64(const char *name, uint64_t def)
{
	const char *v = getenv(name);

	return v != NULL && *v != '\0' ? strtoull(v, NULL, 0) : def;
}

static void
test_soak(void **state)
{
	/* with this generator: destroyed mid-flight (1, 3), completion slots 4, 1, 2, 4
	 * (2, 4, 6, 10), zero copy off (3, 6, 10), regions deregistered (all but 3) */
	static const uint64_t fixed[] = { 1, 2, 3, 4, 6, 10 };
	uint64_t n = env_u64("AMRMA_SOAK_SEEDS", 0), seed0 = env_u64("AMRMA_SOAK_SEED0", 1);
	uint64_t s, t0 = now_ms();

	RTE_SET_USED(state);
	S.valgrind = getenv("AMRMA_UNDER_VALGRIND") != NULL;
	S.nops = (unsigned int)env_u64("AMRMA_SOAK_OPS", S.valgrind ? 40 : 150);
	S.max_size = env_u64("AMRMA_SOAK_MAX", S.valgrind ? UINT64_C(256) << 10 :
			     UINT64_C(3) << 20);
	if (n == 0) {
		for (s = 0; s < RTE_DIM(fixed) && !(S.valgrind && s >= 2); s++)
			run_seed(fixed[s]);
		if (getenv("AMRMA_SOAK_VERBOSE") != NULL)
			print_coverage();
		return;
	}
	for (s = seed0; s < seed0 + n; s++) {
		run_seed(s);
		if ((s - seed0) % 100 == 99)
			printf("soak: %" PRIu64 " seeds passed (%" PRIu64 " s)\n", s - seed0 + 1,
			       (now_ms() - t0) / 1000);
	}
	printf("soak: seeds %" PRIu64 "..%" PRIu64 " passed in %" PRIu64 " ms\n", seed0,
	       seed0 + n - 1, now_ms() - t0);
	print_coverage();
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_soak),
	};

	h_eal_init("test_soak");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
