/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The verifier. Every program, compiled here or read from the wire, goes
 * through dgsp_analyze() before a machine may run it. Structural rules make
 * termination and bounds provable in one linear pass:
 *  - the program is a sequence of subroutines; each ends at its first
 *    ITERATE or CONTROL RET, and the last instruction ends one;
 *  - GOSUB may only call the start of a *later* subroutine, so the call
 *    graph is a DAG (no recursion, no loops other than counted ITERATE);
 *  - every count is >= 1 and <= max_iter, call depth <= max_depth.
 * Processing subroutines from last to first then gives, for each, its exact
 * packed size, chunk count, work and byte footprint, all overflow-checked.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dgsp_priv.h"

typedef __int128 i128;

#define BYTES_MAX ((i128)1 << 62)

static const char *const reason_names[AMRMA_DGSP_E_MAX] = {
	[AMRMA_DGSP_OK] = "ok",
	[AMRMA_DGSP_E_TRUNCATED] = "truncated",
	[AMRMA_DGSP_E_MAGIC] = "bad magic",
	[AMRMA_DGSP_E_VERSION] = "unsupported version",
	[AMRMA_DGSP_E_FLAGS] = "unknown flags or reserved field set",
	[AMRMA_DGSP_E_HEADER] = "bad header field",
	[AMRMA_DGSP_E_TOO_MANY_INSNS] = "too many instructions",
	[AMRMA_DGSP_E_OPCODE] = "unknown opcode",
	[AMRMA_DGSP_E_VARINT] = "malformed operand",
	[AMRMA_DGSP_E_CONTROL] = "unknown control operation",
	[AMRMA_DGSP_E_UNTERMINATED] = "unterminated subroutine",
	[AMRMA_DGSP_E_TARGET] = "jump target out of range",
	[AMRMA_DGSP_E_RECURSION] = "backward or recursive call",
	[AMRMA_DGSP_E_ZERO_COUNT] = "zero repetition count",
	[AMRMA_DGSP_E_COUNT_LIMIT] = "repetition count over limit",
	[AMRMA_DGSP_E_DEPTH_LIMIT] = "stack depth over limit",
	[AMRMA_DGSP_E_WORK_LIMIT] = "total work over limit",
	[AMRMA_DGSP_E_OVERFLOW] = "arithmetic overflow",
	[AMRMA_DGSP_E_SIZE_MISMATCH] = "declared size differs from program",
	[AMRMA_DGSP_E_TRAILING] = "trailing bytes",
	[AMRMA_DGSP_E_WINDOW] = "footprint outside window",
	[AMRMA_DGSP_E_NOMEM] = "out of memory",
};

const char *
amrma_dgsp_reason_str(enum amrma_dgsp_reason r)
{
	if ((unsigned int)r >= AMRMA_DGSP_E_MAX)
		return "unknown reason";
	return reason_names[r];
}

void
amrma_dgsp_limits_default(struct amrma_dgsp_limits *lim)
{
	memset(lim, 0, sizeof(*lim));
	lim->max_insns = 1u << 20;
	lim->max_depth = AMRMA_DGSP_MAX_DEPTH;
	lim->max_iter = UINT64_C(1) << 32;
	lim->max_work = UINT64_C(1) << 32;
	lim->max_bytes = UINT64_C(1) << 40;
}

struct amrma_dgsp *
dgsp_alloc(uint32_t n)
{
	struct amrma_dgsp *p = calloc(1, sizeof(*p));

	if (p == NULL)
		return NULL;
	p->ins = calloc(n ? n : 1, sizeof(*p->ins));
	p->sub_of = calloc(n ? n : 1, sizeof(*p->sub_of));
	p->hot = calloc(n ? n : 1, sizeof(*p->hot));
	p->run = calloc(n ? n : 1, sizeof(*p->run));
	p->dense = calloc(n ? n : 1, sizeof(*p->dense));
	if (p->ins == NULL || p->sub_of == NULL || p->hot == NULL ||
			p->run == NULL || p->dense == NULL) {
		amrma_dgsp_free(p);
		return NULL;
	}
	p->ninsns = n;
	return p;
}

void
amrma_dgsp_free(struct amrma_dgsp *p)
{
	if (p == NULL)
		return;
	free(p->ins);
	free(p->subs);
	free(p->sub_of);
	free(p->hot);
	free(p->run);
	free(p->dense);
	free(p);
}

void
amrma_dgsp_get_info(const struct amrma_dgsp *p, struct amrma_dgsp_info *info)
{
	*info = p->info;
}

static uint64_t
sat_mul(uint64_t a, uint64_t b)
{
	uint64_t r;

	return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

static uint64_t
sat_add(uint64_t a, uint64_t b)
{
	uint64_t r;

	return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

static bool
fits(i128 v)
{
	return v >= INT64_MIN && v <= INT64_MAX;
}

/* Footprint of n copies of [lo, hi) placed span/(n-1) apart. */
static void
fp_widen(i128 *lo, i128 *hi, i128 span)
{
	if (span < 0)
		*lo += span;
	else
		*hi += span;
}

/*
 * Uniform MCOPY chunk length lattice: ULEN_NONE (no chunks yet), a length,
 * or 0 (mixed, or chunks from plain COPY).
 */
#define ULEN_NONE UINT64_MAX

static uint64_t
ulen_join(uint64_t a, uint64_t b)
{
	if (a == ULEN_NONE)
		return b;
	if (b == ULEN_NONE || a == b)
		return a;
	return 0;
}

/* Structure: opcodes, partition into subroutines, targets, counts. */
static enum amrma_dgsp_reason
check_structure(struct amrma_dgsp *p, const struct amrma_dgsp_limits *lim)
{
	uint32_t i, ns = 0, s;

	if (p->ninsns == 0)
		return AMRMA_DGSP_E_UNTERMINATED;
	if (p->ninsns > lim->max_insns)
		return AMRMA_DGSP_E_TOO_MANY_INSNS;
	for (i = 0; i < p->ninsns; i++) {
		const struct dgsp_ins *in = &p->ins[i];

		p->sub_of[i] = ns;
		switch (in->op) {
		case AMRMA_DGSP_COPY:
		case AMRMA_DGSP_GOSUB:
			break;
		case AMRMA_DGSP_MCOPY:
		case AMRMA_DGSP_ITERATE:
			if (in->count == 0)
				return AMRMA_DGSP_E_ZERO_COUNT;
			if (in->count > lim->max_iter)
				return AMRMA_DGSP_E_COUNT_LIMIT;
			if (in->op == AMRMA_DGSP_ITERATE)
				ns++;
			break;
		case AMRMA_DGSP_CONTROL:
			if (in->ctl != AMRMA_DGSP_CTL_RET)
				return AMRMA_DGSP_E_CONTROL;
			ns++;
			break;
		default:
			return AMRMA_DGSP_E_OPCODE;
		}
	}
	if (p->sub_of[p->ninsns - 1] == ns)
		return AMRMA_DGSP_E_UNTERMINATED;
	p->subs = calloc(ns, sizeof(*p->subs));
	if (p->subs == NULL)
		return AMRMA_DGSP_E_NOMEM;
	p->nsubs = ns;
	s = 0;
	p->subs[0].start = 0;
	for (i = 0; i < p->ninsns; i++) {
		struct dgsp_ins *in = &p->ins[i];

		if (in->op == AMRMA_DGSP_ITERATE || in->op == AMRMA_DGSP_CONTROL) {
			p->subs[s].term = i;
			p->subs[s].iter = in->op == AMRMA_DGSP_ITERATE ?
					in->count : 1;
			p->subs[s].stride = in->op == AMRMA_DGSP_ITERATE ?
					in->stride : 0;
			if (++s < ns)
				p->subs[s].start = i + 1;
		}
	}
	for (i = 0; i < p->ninsns; i++) {
		struct dgsp_ins *in = &p->ins[i];
		uint32_t c;

		if (in->op != AMRMA_DGSP_GOSUB)
			continue;
		if (in->target >= p->ninsns)
			return AMRMA_DGSP_E_TARGET;
		c = p->sub_of[in->target];
		if (p->subs[c].start != in->target)
			return AMRMA_DGSP_E_TARGET;
		if (c <= p->sub_of[i])
			return AMRMA_DGSP_E_RECURSION;
		in->callee = c;
	}
	return AMRMA_DGSP_OK;
}

/*
 * How densely a gather reads a run of COPYs: the forward gaps it would read with it
 * (each at most dgsm_gap_cap() of the block after it) against its data, see
 * dgsm_gap_fill(). A run where more than one gap in DGSM_GAP_UNREAD_MAX is not read
 * (longer, or backwards) is not read densely at all: a scattered layout.
 */
static void
mark_dense_run(struct amrma_dgsp *p, uint32_t start, uint32_t n)
{
	uint64_t data = 0, gaps = 0;
	uint32_t i, unread = 0;
	uint8_t dense;

	for (i = start; i < start + n; i++) {
		const struct dgsp_hot *h = &p->hot[i];

		data += h->len;
		if (i + 1 < start + n) {
			/* from the line after this block's end to the next one's first line;
			 * unsigned: offsets come from the wire */
			uint64_t end = ((uint64_t)h->off + h->len + 63) & ~UINT64_C(63);
			uint64_t gap = ((uint64_t)p->hot[i + 1].off & ~UINT64_C(63)) - end;

			if ((int64_t)gap < -64)
				unread++;	/* backwards */
			else if ((int64_t)gap <= 0)
				continue;	/* the next block starts in this one's last line */
			else if (gap <= dgsm_gap_cap(p->hot[i + 1].len))
				gaps += gap;
			else
				unread++;
		}
	}
	dense = (uint8_t)dgsm_gap_fill(gaps, data);
	if ((uint64_t)unread * DGSM_GAP_UNREAD_MAX > n)
		dense = DGSM_FILL_NONE;
	for (i = start; i < start + n; i++)
		p->dense[i] = dense;
}

/*
 * How densely a gather reads the chunks of an MCOPY: from density 1/2 only, and up to
 * DGSM_GAP_FILL_REGULAR_MAX bytes (see dgsp_priv.h).
 */
static uint8_t
dense_mcopy(const struct dgsp_ins *in)
{
	if (in->len > DGSM_GAP_FILL_REGULAR_MAX || in->stride <= (int64_t)in->len ||
	    dgsm_gap_fill((uint64_t)in->stride - in->len, in->len) != DGSM_FILL_ALL)
		return DGSM_FILL_NONE;
	return DGSM_FILL_ALL;
}

enum amrma_dgsp_reason
dgsp_analyze(struct amrma_dgsp *p, const struct amrma_dgsp_limits *lim)
{
	enum amrma_dgsp_reason r;
	uint32_t s, i, maxd;
	struct dgsp_sub *m;

	r = check_structure(p, lim);
	if (r != AMRMA_DGSP_OK)
		return r;
	/* COPY runs end at a terminator, so never cross a subroutine. */
	for (i = p->ninsns; i-- > 0;) {
		const struct dgsp_ins *in = &p->ins[i];

		p->hot[i].off = in->off;
		p->hot[i].len = in->len;
		p->run[i] = in->op != AMRMA_DGSP_COPY ? 0 :
			1 + (i + 1 < p->ninsns ? p->run[i + 1] : 0);
	}
	for (i = 0; i < p->ninsns; i += p->run[i] ? p->run[i] : 1)
		if (p->run[i] != 0)
			mark_dense_run(p, i, p->run[i]);
		else if (p->ins[i].op == AMRMA_DGSP_MCOPY)
			p->dense[i] = dense_mcopy(&p->ins[i]);
	/* Callees always follow callers: walk backwards, callees are done. */
	for (s = p->nsubs; s-- > 0;) {
		struct dgsp_sub *sb = &p->subs[s];
		i128 body = 0, lo = 0, hi = 0, span;
		uint64_t chunks = 0, work = 0;
		bool touch = false;
		uint32_t depth = 1;
		uint64_t ulen = ULEN_NONE;

		for (i = sb->start; i < sb->term; i++) {
			struct dgsp_ins *in = &p->ins[i];
			i128 ilo = 0, ihi = 0, bytes = 0;
			bool itouch = false;

			in->pos = (uint64_t)body;
			switch (in->op) {
			case AMRMA_DGSP_COPY:
				bytes = in->len;
				itouch = in->len > 0;
				ilo = in->off;
				ihi = (i128)in->off + in->len;
				chunks = sat_add(chunks, itouch);
				work = sat_add(work, 1);
				if (itouch)
					ulen = 0;
				break;
			case AMRMA_DGSP_MCOPY:
				bytes = (i128)in->len * in->count;
				itouch = in->len > 0;
				ilo = in->off;
				ihi = (i128)in->off + in->len;
				fp_widen(&ilo, &ihi,
					 (i128)(in->count - 1) * in->stride);
				chunks = sat_add(chunks,
						 itouch ? in->count : 0);
				work = sat_add(work, in->count);
				if (itouch)
					ulen = ulen_join(ulen, in->len);
				break;
			case AMRMA_DGSP_GOSUB: {
				const struct dgsp_sub *c = &p->subs[in->callee];

				bytes = c->total;
				itouch = c->touch;
				ilo = (i128)in->off + c->lo;
				ihi = (i128)in->off + c->hi;
				chunks = sat_add(chunks, c->chunks);
				work = sat_add(work, sat_add(c->work, 1));
				if (c->depth + 1 > depth)
					depth = c->depth + 1;
				ulen = ulen_join(ulen, c->ulen);
				break;
			}
			}
			if (bytes > BYTES_MAX)
				return AMRMA_DGSP_E_OVERFLOW;
			in->bytes = (uint64_t)bytes;
			body += bytes;
			if (body > BYTES_MAX)
				return AMRMA_DGSP_E_OVERFLOW;
			if (itouch) {
				if (!fits(ilo) || !fits(ihi))
					return AMRMA_DGSP_E_OVERFLOW;
				if (!touch || ilo < lo)
					lo = ilo;
				if (!touch || ihi > hi)
					hi = ihi;
				touch = true;
			}
		}
		p->ins[sb->term].pos = (uint64_t)body;
		if (depth > lim->max_depth || depth > AMRMA_DGSP_MAX_DEPTH)
			return AMRMA_DGSP_E_DEPTH_LIMIT;
		if (body * sb->iter > BYTES_MAX)
			return AMRMA_DGSP_E_OVERFLOW;
		span = (i128)(sb->iter - 1) * sb->stride;
		fp_widen(&lo, &hi, span);
		if (touch && (!fits(lo) || !fits(hi)))
			return AMRMA_DGSP_E_OVERFLOW;
		sb->body = (uint64_t)body;
		sb->total = (uint64_t)(body * sb->iter);
		sb->chunks = sat_mul(chunks, sb->iter);
		sb->work = sat_mul(sat_add(work, 1), sb->iter);
		sb->lo = touch ? (int64_t)lo : 0;
		sb->hi = touch ? (int64_t)hi : 0;
		sb->touch = touch;
		sb->depth = depth;
		sb->ulen = ulen;
	}
	m = &p->subs[0];
	maxd = m->depth;
	if (m->work > lim->max_work)
		return AMRMA_DGSP_E_WORK_LIMIT;
	if (m->total > lim->max_bytes)
		return AMRMA_DGSP_E_WORK_LIMIT;
	p->info.size = m->total;
	p->info.lb = p->lb;
	p->info.extent = p->extent;
	p->info.true_lb = m->lo;
	p->info.true_ub = m->hi;
	p->info.chunks = m->chunks;
	p->info.avg_chunk = m->chunks ? m->total / m->chunks : 0;
	p->info.work = m->work;
	p->info.ninsns = p->ninsns;
	p->info.nsubs = p->nsubs;
	p->info.depth = maxd;
	p->info.mcopy_len = m->ulen == ULEN_NONE ? 0 : m->ulen;
	return AMRMA_DGSP_OK;
}

int
amrma_dgsp_check_use(const struct amrma_dgsp *p, uint64_t count,
		int64_t win_lo, int64_t win_hi,
		const struct amrma_dgsp_limits *lim, enum amrma_dgsp_reason *why)
{
	enum amrma_dgsp_reason r = AMRMA_DGSP_OK;
	const struct dgsp_sub *m = &p->subs[0];
	i128 span, lo, hi;

	if (count == 0)
		goto out;
	if ((i128)count * p->info.size > (i128)lim->max_bytes ||
			(i128)count * m->work > (i128)lim->max_work) {
		r = AMRMA_DGSP_E_WORK_LIMIT;
		goto out;
	}
	if (!m->touch)
		goto out;
	span = (i128)(count - 1) * p->extent;
	lo = m->lo;
	hi = m->hi;
	fp_widen(&lo, &hi, span);
	if (lo < win_lo || hi > win_hi)
		r = AMRMA_DGSP_E_WINDOW;
out:
	if (why != NULL)
		*why = r;
	return r == AMRMA_DGSP_OK ? 0 : -EINVAL;
}

int
amrma_dgsp_from_insns(const struct amrma_dgsp_insn *ins, uint32_t n,
		int64_t lb, int64_t extent, const struct amrma_dgsp_limits *lim,
		struct amrma_dgsp **out, enum amrma_dgsp_reason *why)
{
	struct amrma_dgsp_limits dl;
	enum amrma_dgsp_reason r;
	struct amrma_dgsp *p;
	uint32_t i;

	if (lim == NULL) {
		amrma_dgsp_limits_default(&dl);
		lim = &dl;
	}
	if (why == NULL)
		why = &r;
	if (extent < 0 || (n > 0 && ins == NULL) || out == NULL) {
		*why = AMRMA_DGSP_E_HEADER;
		return -EINVAL;
	}
	if (n > lim->max_insns) {
		*why = AMRMA_DGSP_E_TOO_MANY_INSNS;
		return -EINVAL;
	}
	p = dgsp_alloc(n);
	if (p == NULL) {
		*why = AMRMA_DGSP_E_NOMEM;
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		p->ins[i].op = ins[i].op;
		p->ins[i].ctl = ins[i].ctl;
		p->ins[i].target = ins[i].target;
		p->ins[i].off = ins[i].off;
		p->ins[i].len = ins[i].len;
		p->ins[i].count = ins[i].count;
		p->ins[i].stride = ins[i].stride;
	}
	p->lb = lb;
	p->extent = extent;
	*why = dgsp_analyze(p, lim);
	if (*why == AMRMA_DGSP_OK && lim->check_window)
		amrma_dgsp_check_use(p, lim->count, lim->win_lo, lim->win_hi,
				lim, why);
	if (*why != AMRMA_DGSP_OK) {
		int rc = *why == AMRMA_DGSP_E_NOMEM ? -ENOMEM : -EINVAL;

		amrma_dgsp_free(p);
		return rc;
	}
	*out = p;
	return 0;
}
