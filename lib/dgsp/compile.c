/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Datatype -> DGSP compiler.
 *
 * One element of a type becomes a list of items (COPY, MCOPY, GOSUB).
 * Small child lists are inlined (shifted by the block displacement); large
 * ones become a shared subroutine reached by GOSUB, so a program stays
 * proportional to the type description, not to its typemap. Repetition
 * folds to the cheapest form: adjacent COPYs merge, a COPY repeated at its
 * own length becomes one longer COPY (contiguous nests collapse), a COPY
 * repeated at a stride becomes an MCOPY, an MCOPY repeated at its full span
 * becomes a longer MCOPY, anything else becomes a subroutine closed by
 * ITERATE.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dgsp_priv.h"

typedef __int128 i128;

#define INLINE_MAX 16		/* items inlined into a parent */
#define ITEMS_MAX (1u << 24)	/* compile output bound */

struct item {
	uint8_t op;
	int64_t off;
	uint64_t len, count;
	int64_t stride;
	uint32_t sub;
};

struct ivec {
	struct item *v;
	uint32_t n, cap;
};

struct csub {
	struct ivec body;
	uint64_t iter;
	int64_t stride;
};

struct memo {
	const struct amrma_dgsp_type *t;
	uint32_t sub;
};

struct cctx {
	struct csub *subs;
	uint32_t nsubs, cap;
	struct memo *memo;
	uint32_t nmemo, cmemo;
	uint64_t items;
	int err;
};

static bool
fits(i128 v)
{
	return v >= INT64_MIN && v <= INT64_MAX;
}

static void
raw_push(struct cctx *c, struct ivec *v, const struct item *it)
{
	if (c->err)
		return;
	if (++c->items > ITEMS_MAX) {
		c->err = -E2BIG;
		return;
	}
	if (v->n == v->cap) {
		uint32_t nc = v->cap ? v->cap * 2 : 8;
		struct item *nv = realloc(v->v, nc * sizeof(*nv));

		if (nv == NULL) {
			c->err = -ENOMEM;
			return;
		}
		v->v = nv;
		v->cap = nc;
	}
	v->v[v->n++] = *it;
}

/* Append with peephole folding. */
static void
push(struct cctx *c, struct ivec *v, struct item it)
{
	struct item *last;

	if (it.op == AMRMA_DGSP_MCOPY) {
		if (it.len == 0 || it.count == 0)
			return;
		if (it.count == 1) {
			it.op = AMRMA_DGSP_COPY;
		} else if ((i128)it.stride == (i128)it.len) {
			it.op = AMRMA_DGSP_COPY;
			it.len *= it.count;	/* bounded by type size */
		}
	}
	if (it.op == AMRMA_DGSP_COPY && it.len == 0)
		return;
	last = v->n ? &v->v[v->n - 1] : NULL;
	if (it.op == AMRMA_DGSP_COPY && last != NULL &&
			last->op == AMRMA_DGSP_COPY &&
			(i128)last->off + last->len == it.off) {
		last->len += it.len;
		return;
	}
	raw_push(c, v, &it);
}

static void
append_shifted(struct cctx *c, struct ivec *out, const struct ivec *x, int64_t d)
{
	uint32_t i;

	for (i = 0; i < x->n && !c->err; i++) {
		struct item it = x->v[i];
		i128 o = (i128)it.off + d;

		if (!fits(o)) {
			c->err = -EOVERFLOW;
			return;
		}
		it.off = (int64_t)o;
		push(c, out, it);
	}
}

static uint32_t
new_sub(struct cctx *c, struct ivec *body, uint64_t iter, int64_t stride)
{
	if (c->err)
		return 0;
	if (c->nsubs == c->cap) {
		uint32_t nc = c->cap ? c->cap * 2 : 8;
		struct csub *ns = realloc(c->subs, nc * sizeof(*ns));

		if (ns == NULL) {
			c->err = -ENOMEM;
			return 0;
		}
		c->subs = ns;
		c->cap = nc;
	}
	c->subs[c->nsubs].body = *body;
	c->subs[c->nsubs].iter = iter;
	c->subs[c->nsubs].stride = stride;
	memset(body, 0, sizeof(*body));
	return c->nsubs++;
}

static void
ivec_copy(struct cctx *c, struct ivec *dst, const struct ivec *src)
{
	uint32_t i;

	for (i = 0; i < src->n; i++)
		raw_push(c, dst, &src->v[i]);
}

/* Append n repetitions of x, each stride s apart, shifted by d. */
static void
repeat(struct cctx *c, const struct ivec *x, uint64_t n, int64_t s, int64_t d,
		struct ivec *out)
{
	const struct item *it = x->v;
	struct item ni;
	i128 o;

	if (c->err || n == 0 || x->n == 0)
		return;
	if (n == 1) {
		append_shifted(c, out, x, d);
		return;
	}
	memset(&ni, 0, sizeof(ni));
	o = x->n == 1 ? (i128)it->off + d : 0;
	if (!fits(o)) {
		c->err = -EOVERFLOW;
		return;
	}
	if (x->n == 1 && it->op == AMRMA_DGSP_COPY) {
		ni.op = AMRMA_DGSP_MCOPY;
		ni.off = (int64_t)o;
		ni.len = it->len;
		ni.count = n;
		ni.stride = s;
		push(c, out, ni);	/* folds to COPY when s == len */
		return;
	}
	if (x->n == 1 && it->op == AMRMA_DGSP_MCOPY &&
			(i128)it->count * it->stride == s &&
			(i128)it->count * n <= (i128)1 << 62) {
		ni = *it;
		ni.off = (int64_t)o;
		ni.count = it->count * n;
		push(c, out, ni);
		return;
	}
	{
		struct ivec body = { NULL, 0, 0 };

		ivec_copy(c, &body, x);
		ni.op = AMRMA_DGSP_GOSUB;
		ni.off = d;
		ni.sub = new_sub(c, &body, n, s);
		free(body.v);
		push(c, out, ni);
	}
}

static void emit(struct cctx *c, const struct amrma_dgsp_type *t, int64_t d,
		struct ivec *out);

/* Items of one element of t at offset 0, possibly a GOSUB to a shared sub. */
static void
child_items(struct cctx *c, const struct amrma_dgsp_type *t, struct ivec *x)
{
	struct item g;
	uint32_t i;

	memset(&g, 0, sizeof(g));
	g.op = AMRMA_DGSP_GOSUB;
	for (i = 0; i < c->nmemo; i++) {
		if (c->memo[i].t == t) {
			g.sub = c->memo[i].sub;
			raw_push(c, x, &g);
			return;
		}
	}
	emit(c, t, 0, x);
	if (c->err || x->n <= INLINE_MAX)
		return;
	g.sub = new_sub(c, x, 1, 0);
	if (c->err)
		return;
	if (c->nmemo == c->cmemo) {
		uint32_t nc = c->cmemo ? c->cmemo * 2 : 8;
		struct memo *nm = realloc(c->memo, nc * sizeof(*nm));

		if (nm == NULL) {
			c->err = -ENOMEM;
			return;
		}
		c->memo = nm;
		c->cmemo = nc;
	}
	c->memo[c->nmemo].t = t;
	c->memo[c->nmemo++].sub = g.sub;
	raw_push(c, x, &g);
}

/* b elements of t starting at d. */
static void
emit_block(struct cctx *c, const struct amrma_dgsp_type *t, uint64_t b,
		int64_t d, struct ivec *out)
{
	struct ivec x = { NULL, 0, 0 };

	if (b == 0 || t->size == 0 || c->err)
		return;
	child_items(c, t, &x);
	repeat(c, &x, b, t->ub - t->lb, d, out);
	free(x.v);
}

static void
emit(struct cctx *c, const struct amrma_dgsp_type *t, int64_t d,
		struct ivec *out)
{
	struct item it;
	uint32_t i;

	if (c->err || t->size == 0)
		return;
	switch (t->kind) {
	case TK_BASIC:
		memset(&it, 0, sizeof(it));
		it.op = AMRMA_DGSP_COPY;
		it.off = d;
		it.len = t->size;
		push(c, out, it);
		break;
	case TK_RESIZED:
		emit(c, t->u.rs.child, d, out);
		break;
	case TK_HSTRUCT:
		for (i = 0; i < t->u.st.n; i++) {
			i128 o = (i128)d + t->u.st.disp[i];

			if (!fits(o)) {
				c->err = -EOVERFLOW;
				return;
			}
			emit_block(c, t->u.st.child[i], t->u.st.bl[i],
					(int64_t)o, out);
		}
		break;
	case TK_HVECTOR: {
		struct ivec x = { NULL, 0, 0 };

		if (t->u.vec.count == 0)
			break;
		emit_block(c, t->u.vec.child, t->u.vec.blocklen, 0, &x);
		repeat(c, &x, t->u.vec.count, t->u.vec.stride, d, out);
		free(x.v);
		break;
	}
	}
}

int
amrma_dgsp_compile(const struct amrma_dgsp_type *t, struct amrma_dgsp **out)
{
	struct amrma_dgsp_limits lim;
	struct amrma_dgsp_insn *ins = NULL;
	struct cctx c;
	struct ivec top = { NULL, 0, 0 };
	uint32_t *start = NULL, n = 0, i, j, e;
	enum amrma_dgsp_reason why;
	int rc;

	if (t == NULL || out == NULL)
		return -EINVAL;
	memset(&c, 0, sizeof(c));
	emit(&c, t, 0, &top);
	new_sub(&c, &top, 1, 0);	/* main: created last, emitted first */
	free(top.v);
	if (c.err) {
		rc = c.err;
		goto out;
	}
	start = calloc(c.nsubs, sizeof(*start));
	if (start == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	/* Emit in reverse creation order so every GOSUB points forward. */
	for (e = 0; e < c.nsubs; e++) {
		start[c.nsubs - 1 - e] = n;
		n += c.subs[c.nsubs - 1 - e].body.n + 1;
	}
	ins = calloc(n, sizeof(*ins));
	if (ins == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	n = 0;
	for (e = 0; e < c.nsubs; e++) {
		const struct csub *s = &c.subs[c.nsubs - 1 - e];

		for (j = 0; j < s->body.n; j++, n++) {
			const struct item *it = &s->body.v[j];

			ins[n].op = it->op;
			ins[n].off = it->off;
			ins[n].len = it->len;
			ins[n].count = it->count;
			ins[n].stride = it->stride;
			if (it->op == AMRMA_DGSP_GOSUB)
				ins[n].target = start[it->sub];
		}
		if (s->iter == 1) {
			ins[n].op = AMRMA_DGSP_CONTROL;
			ins[n].ctl = AMRMA_DGSP_CTL_RET;
		} else {
			ins[n].op = AMRMA_DGSP_ITERATE;
			ins[n].count = s->iter;
			ins[n].stride = s->stride;
		}
		n++;
	}
	/* Locally built programs get the same analysis, with no policy limits. */
	memset(&lim, 0, sizeof(lim));
	lim.max_insns = UINT32_MAX;
	lim.max_depth = AMRMA_DGSP_MAX_DEPTH;
	lim.max_iter = UINT64_MAX;
	lim.max_work = UINT64_MAX;
	lim.max_bytes = UINT64_MAX;
	rc = amrma_dgsp_from_insns(ins, n, t->lb, t->ub - t->lb, &lim, out,
			&why);
	if (rc == -EINVAL)
		rc = why == AMRMA_DGSP_E_DEPTH_LIMIT ? -E2BIG : -EOVERFLOW;
out:
	for (i = 0; i < c.nsubs; i++)
		free(c.subs[i].body.v);
	free(c.subs);
	free(c.memo);
	free(start);
	free(ins);
	return rc;
}
