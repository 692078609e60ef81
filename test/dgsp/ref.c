/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref.h"

static bool
rmap_push(struct rmap *m, int kind, int64_t disp, uint64_t len)
{
	if (m->n >= REF_MAX_ENTRIES)
		return false;
	if (m->n == m->cap) {
		size_t nc = m->cap ? m->cap * 2 : 16;
		struct rent *ne = realloc(m->e, nc * sizeof(*ne));

		if (ne == NULL)
			abort();
		m->e = ne;
		m->cap = nc;
	}
	m->e[m->n].kind = kind;
	m->e[m->n].disp = disp;
	m->e[m->n].len = len;
	m->n++;
	return true;
}

void
rmap_bounds(const struct rmap *m, struct rbounds *b)
{
	bool lbm = false, ubm = false, data = false;
	int64_t dlo = 0, dhi = 0, mlo = 0, mhi = 0;
	size_t i;

	memset(b, 0, sizeof(*b));
	for (i = 0; i < m->n; i++) {
		const struct rent *e = &m->e[i];

		switch (e->kind) {
		case RE_DATA:
			if (!data || e->disp < dlo)
				dlo = e->disp;
			if (!data || e->disp + (int64_t)e->len > dhi)
				dhi = e->disp + (int64_t)e->len;
			data = true;
			b->size += e->len;
			break;
		case RE_LB:
			if (!lbm || e->disp < mlo)
				mlo = e->disp;
			lbm = true;
			break;
		case RE_UB:
			if (!ubm || e->disp > mhi)
				mhi = e->disp;
			ubm = true;
			break;
		}
	}
	b->tlb = data ? dlo : 0;
	b->tub = data ? dhi : 0;
	b->lb = lbm ? mlo : b->tlb;
	b->ub = ubm ? mhi : b->tub;
}

static int64_t
rext(const struct rmap *m)
{
	struct rbounds b;

	rmap_bounds(m, &b);
	return b.ub - b.lb;
}

/* Append src shifted; markers kept (MPI concatenation semantics). */
static bool
rmap_append(struct rmap *dst, const struct rmap *src, int64_t shift)
{
	size_t i;

	for (i = 0; i < src->n; i++)
		if (!rmap_push(dst, src->e[i].kind, src->e[i].disp + shift,
				src->e[i].len))
			return false;
	return true;
}

void
pt_free(struct pt *p)
{
	if (p == NULL)
		return;
	amrma_dgsp_type_free(p->t);
	free(p->m.e);
	free(p);
}

static struct pt *
pt_new(void)
{
	struct pt *p = calloc(1, sizeof(*p));

	if (p == NULL)
		abort();
	return p;
}

/* Keep the pair only when both sides built. */
static struct pt *
pt_done(struct pt *p, int rc, bool ok)
{
	if (rc != 0 || !ok) {
		if (rc == 0)
			amrma_dgsp_type_free(p->t);
		p->t = NULL;
		pt_free(p);
		return NULL;
	}
	return p;
}

struct pt *
pt_basic(size_t size)
{
	struct pt *p = pt_new();
	int rc = amrma_dgsp_type_basic(size, &p->t);

	return pt_done(p, rc, rmap_push(&p->m, RE_DATA, 0, size));
}

/* Blocks: for block i, bl[i] elements of old at byte d[i]. */
static bool
ref_blocks(struct rmap *out, uint32_t n, const uint64_t *bl, uint64_t bl1,
		const int64_t *d, int64_t scale, struct pt **types,
		struct pt *old)
{
	uint32_t i;
	uint64_t j;

	for (i = 0; i < n; i++) {
		const struct rmap *c = types ? &types[i]->m : &old->m;
		uint64_t b = bl ? bl[i] : bl1;
		int64_t ext = rext(c);

		for (j = 0; j < b; j++)
			if (!rmap_append(out, c, d[i] * scale + (int64_t)j * ext))
				return false;
	}
	return true;
}

/*
 * Strided blocks: c blocks of bl elements of old, stride bytes apart, or stride extents
 * of old apart (in_ext: the offsets are counted in extents, then scaled).
 */
static bool
ref_strided(struct rmap *out, uint64_t c, uint64_t bl, int64_t stride,
		bool in_ext, struct pt *old)
{
	int64_t ext = rext(&old->m);
	int64_t unit = in_ext ? 1 : ext, scale = in_ext ? ext : 1;
	uint64_t i, j;

	for (i = 0; i < c; i++)
		for (j = 0; j < bl; j++)
			if (!rmap_append(out, &old->m,
					((int64_t)i * stride + (int64_t)j * unit) * scale))
				return false;
	return true;
}

struct pt *
pt_hvector(uint64_t c, uint64_t bl, int64_t stride, struct pt *old)
{
	struct pt *p = pt_new();
	int rc = amrma_dgsp_type_hvector(c, bl, stride, old->t, &p->t);

	return pt_done(p, rc, ref_strided(&p->m, c, bl, stride, false, old));
}

struct pt *
pt_vector(uint64_t c, uint64_t bl, int64_t stride, struct pt *old)
{
	struct pt *p = pt_new();
	int rc = amrma_dgsp_type_vector(c, bl, stride, old->t, &p->t);

	return pt_done(p, rc, ref_strided(&p->m, c, bl, stride, true, old));
}

struct pt *
pt_contiguous(uint64_t c, struct pt *old)
{
	struct pt *p = pt_new();
	int64_t ext = rext(&old->m);
	bool ok = true;
	uint64_t i;
	int rc;

	rc = amrma_dgsp_type_contiguous(c, old->t, &p->t);
	for (i = 0; i < c && ok; i++)
		ok = rmap_append(&p->m, &old->m, (int64_t)i * ext);
	return pt_done(p, rc, ok);
}

struct pt *
pt_indexed(uint32_t n, const uint64_t *bl, const int64_t *d, struct pt *old)
{
	struct pt *p = pt_new();
	int rc = amrma_dgsp_type_indexed(n, bl, d, old->t, &p->t);

	return pt_done(p, rc, ref_blocks(&p->m, n, bl, 0, d, rext(&old->m),
			NULL, old));
}

struct pt *
pt_hindexed(uint32_t n, const uint64_t *bl, const int64_t *d, struct pt *old)
{
	struct pt *p = pt_new();
	int rc = amrma_dgsp_type_hindexed(n, bl, d, old->t, &p->t);

	return pt_done(p, rc, ref_blocks(&p->m, n, bl, 0, d, 1, NULL, old));
}

struct pt *
pt_indexed_block(uint32_t n, uint64_t bl, const int64_t *d, struct pt *old)
{
	struct pt *p = pt_new();
	int rc = amrma_dgsp_type_indexed_block(n, bl, d, old->t, &p->t);

	return pt_done(p, rc, ref_blocks(&p->m, n, NULL, bl, d, rext(&old->m),
			NULL, old));
}

struct pt *
pt_hindexed_block(uint32_t n, uint64_t bl, const int64_t *d, struct pt *old)
{
	struct pt *p = pt_new();
	int rc = amrma_dgsp_type_hindexed_block(n, bl, d, old->t, &p->t);

	return pt_done(p, rc, ref_blocks(&p->m, n, NULL, bl, d, 1, NULL, old));
}

struct pt *
pt_struct(uint32_t n, const uint64_t *bl, const int64_t *d, struct pt **types)
{
	struct pt *p = pt_new();
	struct amrma_dgsp_type *lt[16] = { NULL };
	uint32_t i;
	int rc;

	if (n > 16)
		abort();
	for (i = 0; i < n; i++)
		lt[i] = types[i]->t;
	rc = amrma_dgsp_type_struct(n, bl, d, lt, &p->t);
	return pt_done(p, rc, ref_blocks(&p->m, n, bl, 0, d, 1, types, NULL));
}

struct pt *
pt_resized(struct pt *old, int64_t lb, int64_t extent)
{
	struct pt *p = pt_new();
	bool ok = true;
	size_t i;
	int rc;

	rc = amrma_dgsp_type_resized(old->t, lb, extent, &p->t);
	/* Old markers are replaced by the new ones. */
	for (i = 0; i < old->m.n && ok; i++)
		if (old->m.e[i].kind == RE_DATA)
			ok = rmap_push(&p->m, RE_DATA, old->m.e[i].disp,
					old->m.e[i].len);
	ok = ok && rmap_push(&p->m, RE_LB, lb, 0);
	ok = ok && rmap_push(&p->m, RE_UB, lb + extent, 0);
	return pt_done(p, rc, ok);
}

struct pt *
pt_dup(struct pt *old)
{
	struct pt *p = pt_new();
	int rc = amrma_dgsp_type_dup(old->t, &p->t);

	return pt_done(p, rc, rmap_append(&p->m, &old->m, 0));
}

/* Subarray by enumerating index tuples in memory order. */
struct pt *
pt_subarray(uint32_t nd, const uint64_t *sizes, const uint64_t *sub,
		const uint64_t *starts, enum amrma_dgsp_order order,
		struct pt *old)
{
	struct pt *p = pt_new();
	uint64_t idx[8] = { 0 }, total = 1;
	int64_t ext = rext(&old->m);
	bool ok = true;
	uint32_t i;
	int rc;

	if (nd > 8)
		abort();
	rc = amrma_dgsp_type_subarray(nd, sizes, sub, starts, order, old->t,
			&p->t);
	for (i = 0; i < nd; i++)
		total *= sizes[i];
	for (;;) {
		uint64_t lin = 0;

		/* Linear index of (starts + idx) in the full array. */
		for (i = 0; i < nd; i++) {
			uint32_t dim = order == AMRMA_DGSP_ORDER_C ? i : nd - 1 - i;

			lin = lin * sizes[dim] + starts[dim] + idx[dim];
		}
		ok = ok && rmap_append(&p->m, &old->m, (int64_t)lin * ext);
		/* Increment the fastest-varying index first. */
		for (i = 0; i < nd; i++) {
			uint32_t dim = order == AMRMA_DGSP_ORDER_C ? nd - 1 - i : i;

			if (++idx[dim] < sub[dim])
				break;
			idx[dim] = 0;
		}
		if (i == nd)
			break;
	}
	{
		/* Data keeps old's data; bounds are the whole array. */
		struct rmap m = { NULL, 0, 0 };
		size_t j;

		for (j = 0; j < p->m.n && ok; j++)
			if (p->m.e[j].kind == RE_DATA)
				ok = rmap_push(&m, RE_DATA, p->m.e[j].disp,
						p->m.e[j].len);
		ok = ok && rmap_push(&m, RE_LB, 0, 0);
		ok = ok && rmap_push(&m, RE_UB, (int64_t)total * ext, 0);
		free(p->m.e);
		p->m = m;
	}
	return pt_done(p, rc, ok);
}

int64_t *
ref_bytemap(const struct rmap *m, uint64_t count, size_t *n)
{
	struct rbounds b;
	int64_t *map, ext;
	size_t k = 0, i;
	uint64_t e, j;

	rmap_bounds(m, &b);
	ext = b.ub - b.lb;
	map = malloc((b.size * count + 1) * sizeof(*map));
	if (map == NULL)
		abort();
	for (e = 0; e < count; e++)
		for (i = 0; i < m->n; i++)
			if (m->e[i].kind == RE_DATA)
				for (j = 0; j < m->e[i].len; j++)
					map[k++] = (int64_t)e * ext +
						m->e[i].disp + (int64_t)j;
	*n = k;
	return map;
}

uint64_t
rng_next(uint64_t *s)
{
	uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

uint64_t
rng_range(uint64_t *s, uint64_t lo, uint64_t hi)
{
	return lo + rng_next(s) % (hi - lo + 1);
}

int64_t
rng_srange(uint64_t *s, int64_t lo, int64_t hi)
{
	return lo + (int64_t)(rng_next(s) % (uint64_t)(hi - lo + 1));
}

static struct pt *
gen_once(uint64_t *r, int depth)
{
	static const size_t basics[] = { 1, 2, 3, 4, 8, 16 };
	struct pt *c, *c2, *p = NULL;
	uint64_t bl[4], sizes[3], sub[3], starts[3];
	int64_t d[4];
	uint32_t n, i;

	if (depth == 0 || rng_range(r, 0, 9) == 0)
		return pt_basic(basics[rng_range(r, 0, 5)]);
	c = gen_type(r, depth - 1);
	n = (uint32_t)rng_range(r, 0, 4);
	for (i = 0; i < 4; i++) {
		bl[i] = rng_range(r, 0, 5);
		d[i] = rng_srange(r, -6, 10);
	}
	switch (rng_range(r, 0, 11)) {
	case 0:
		p = pt_contiguous(rng_range(r, 0, 6), c);
		break;
	case 1:
		p = pt_vector(rng_range(r, 0, 9), rng_range(r, 0, 4),
				rng_srange(r, -4, 6), c);
		break;
	case 2:
		p = pt_hvector(rng_range(r, 0, 9), rng_range(r, 0, 4),
				rng_srange(r, -48, 64), c);
		break;
	case 3:
		p = pt_indexed(n, bl, d, c);
		break;
	case 4:
		for (i = 0; i < 4; i++)
			d[i] *= 5;
		p = pt_hindexed(n, bl, d, c);
		break;
	case 5:
		p = pt_indexed_block(n, bl[0], d, c);
		break;
	case 6:
		for (i = 0; i < 4; i++)
			d[i] *= 7;
		p = pt_hindexed_block(n, bl[0], d, c);
		break;
	case 7: {
		struct pt *ts[3];

		c2 = gen_type(r, depth - 1);
		ts[0] = c;
		ts[1] = c2;
		ts[2] = c;
		n = (uint32_t)rng_range(r, 1, 3);
		for (i = 0; i < 4; i++)
			d[i] *= 9;
		p = pt_struct(n, bl, d, ts);
		pt_free(c2);
		break;
	}
	case 8:
	case 9:
		n = (uint32_t)rng_range(r, 1, 3);
		for (i = 0; i < n; i++) {
			sizes[i] = rng_range(r, 1, 4);
			sub[i] = rng_range(r, 1, sizes[i]);
			starts[i] = rng_range(r, 0, sizes[i] - sub[i]);
		}
		p = pt_subarray(n, sizes, sub, starts,
				rng_range(r, 0, 1) ? AMRMA_DGSP_ORDER_FORTRAN :
				AMRMA_DGSP_ORDER_C, c);
		break;
	case 10: {
		struct rbounds b;

		rmap_bounds(&c->m, &b);
		p = pt_resized(c, b.lb + rng_srange(r, -8, 8),
				(int64_t)rng_range(r, 0, 8) + (b.ub - b.lb));
		break;
	}
	default:
		p = pt_dup(c);
		break;
	}
	pt_free(c);
	return p;
}

struct pt *
gen_type(uint64_t *r, int depth)
{
	int tries;

	/* Only the entry budget may refuse a type; a library refusal repeats. */
	for (tries = 0; tries < 10000; tries++) {
		struct pt *p = gen_once(r, depth);
		struct rbounds b;

		if (p == NULL)
			continue;
		rmap_bounds(&p->m, &b);
		if (b.size <= 4096)
			return p;
		pt_free(p);
	}
	fprintf(stderr, "gen_type: no type could be built\n");
	abort();
}

void
tbuf_alloc(struct tbuf *b, const int64_t *map, size_t n, size_t guard)
{
	int64_t lo = 0, hi = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		if (map[i] < lo)
			lo = map[i];
		if (map[i] + 1 > hi)
			hi = map[i] + 1;
	}
	b->len = (size_t)(hi - lo) + 2 * guard;
	b->mem = calloc(1, b->len);
	if (b->mem == NULL)
		abort();
	b->base = b->mem + guard - lo;
}

void
tbuf_free(struct tbuf *b)
{
	free(b->mem);
	b->mem = NULL;
}
