/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Datatype constructors with MPI bounds semantics.
 *
 * Every constructor is reduced to one of four node kinds (basic, hvector,
 * hstruct, resized). Bounds follow MPI 3.1 section 4.1: lb/ub are the
 * min/max over the typemap unless an explicit (sticky) marker from a
 * resized type is present below, in which case only markers count. True
 * bounds ignore markers. No implicit alignment padding is added.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dgsp_priv.h"

typedef __int128 i128;

#define I64_MIN_ ((i128)INT64_MIN)
#define I64_MAX_ ((i128)INT64_MAX)
/* Keep sizes far from 2^64 so count*size products stay checkable. */
#define SIZE_MAX_ ((i128)1 << 62)

struct bacc {
	bool any, any_lbm, any_ubm, any_data, ovf;
	i128 lb, ub, lbm, ubm, tlb, tub, size;
};

static void
acc_init(struct bacc *a)
{
	memset(a, 0, sizeof(*a));
}

/* Blocks of b elements of c at displacements spanning [dmin, dmax]; nblk blocks. */
static void
acc_block(struct bacc *a, i128 dmin, i128 dmax, i128 nblk, uint64_t b,
		const struct amrma_dgsp_type *c)
{
	i128 ext, blb, bub;

	if (b == 0 || nblk == 0 || c->empty)
		return;
	ext = (i128)c->ub - c->lb;
	blb = dmin + c->lb;
	bub = dmax + (i128)(b - 1) * ext + c->ub;
	if (!a->any || blb < a->lb)
		a->lb = blb;
	if (!a->any || bub > a->ub)
		a->ub = bub;
	a->any = true;
	if (c->lb_mark) {
		if (!a->any_lbm || blb < a->lbm)
			a->lbm = blb;
		a->any_lbm = true;
	}
	if (c->ub_mark) {
		if (!a->any_ubm || bub > a->ubm)
			a->ubm = bub;
		a->any_ubm = true;
	}
	if (c->size > 0) {
		i128 tl = dmin + c->true_lb;
		i128 tu = dmax + (i128)(b - 1) * ext + c->true_ub;

		if (!a->any_data || tl < a->tlb)
			a->tlb = tl;
		if (!a->any_data || tu > a->tub)
			a->tub = tu;
		a->any_data = true;
		if (nblk * (i128)b > SIZE_MAX_ / (i128)c->size)
			a->ovf = true;
		else
			a->size += nblk * (i128)b * c->size;
	}
}

static bool
fits(i128 v)
{
	return v >= I64_MIN_ && v <= I64_MAX_;
}

static int
acc_finish(struct bacc *a, struct amrma_dgsp_type *t)
{
	i128 lb, ub;

	if (a->ovf || a->size > SIZE_MAX_)
		return -EOVERFLOW;
	t->size = (uint64_t)a->size;
	if (!a->any) {
		t->empty = true;
		return 0;
	}
	lb = a->any_lbm ? a->lbm : a->lb;
	ub = a->any_ubm ? a->ubm : a->ub;
	if (!fits(lb) || !fits(ub) || !fits(ub - lb) || !fits(a->tlb) ||
			!fits(a->tub) || !fits(a->tub - a->tlb))
		return -EOVERFLOW;
	t->lb = (int64_t)lb;
	t->ub = (int64_t)ub;
	t->lb_mark = a->any_lbm;
	t->ub_mark = a->any_ubm;
	if (a->any_data) {
		t->true_lb = (int64_t)a->tlb;
		t->true_ub = (int64_t)a->tub;
	}
	return 0;
}

static struct amrma_dgsp_type *
tnew(enum dgsp_tkind kind)
{
	struct amrma_dgsp_type *t = calloc(1, sizeof(*t));

	if (t != NULL) {
		t->refcnt = 1;
		t->kind = kind;
	}
	return t;
}

static struct amrma_dgsp_type *
tref(struct amrma_dgsp_type *t)
{
	t->refcnt++;
	return t;
}

void
amrma_dgsp_type_free(struct amrma_dgsp_type *t)
{
	uint32_t i;

	if (t == NULL || --t->refcnt > 0)
		return;
	switch (t->kind) {
	case TK_HVECTOR:
		amrma_dgsp_type_free(t->u.vec.child);
		break;
	case TK_HSTRUCT:
		for (i = 0; i < t->u.st.n; i++)
			amrma_dgsp_type_free(t->u.st.child[i]);
		free(t->u.st.bl);
		free(t->u.st.disp);
		free(t->u.st.child);
		break;
	case TK_RESIZED:
		amrma_dgsp_type_free(t->u.rs.child);
		break;
	case TK_BASIC:
		break;
	}
	amrma_dgsp_free(t->prog);
	free(t);
}

static int
set_depth(struct amrma_dgsp_type *t, uint32_t child_depth)
{
	t->depth = child_depth + 1;
	return t->depth > AMRMA_DGSP_TYPE_MAX_DEPTH ? -E2BIG : 0;
}

int
amrma_dgsp_type_basic(size_t size, struct amrma_dgsp_type **out)
{
	struct amrma_dgsp_type *t;

	if (out == NULL || size == 0 || (i128)size > SIZE_MAX_)
		return -EINVAL;
	t = tnew(TK_BASIC);
	if (t == NULL)
		return -ENOMEM;
	t->size = size;
	t->ub = (int64_t)size;
	t->true_ub = (int64_t)size;
	t->depth = 1;
	*out = t;
	return 0;
}

int
amrma_dgsp_type_hvector(uint64_t count, uint64_t blocklen, int64_t stride,
		struct amrma_dgsp_type *old, struct amrma_dgsp_type **out)
{
	struct amrma_dgsp_type *t;
	struct bacc a;
	i128 span;
	int rc;

	if (old == NULL || out == NULL || count > AMRMA_DGSP_MAX_COUNT ||
			blocklen > AMRMA_DGSP_MAX_COUNT)
		return -EINVAL;
	t = tnew(TK_HVECTOR);
	if (t == NULL)
		return -ENOMEM;
	t->u.vec.count = count;
	t->u.vec.blocklen = blocklen;
	t->u.vec.stride = stride;
	t->u.vec.child = tref(old);
	acc_init(&a);
	span = count > 0 ? (i128)(count - 1) * stride : 0;
	acc_block(&a, span < 0 ? span : 0, span > 0 ? span : 0, count,
			blocklen, old);
	rc = acc_finish(&a, t);
	if (rc == 0)
		rc = set_depth(t, old->depth);
	if (rc != 0) {
		amrma_dgsp_type_free(t);
		return rc;
	}
	*out = t;
	return 0;
}

int
amrma_dgsp_type_vector(uint64_t count, uint64_t blocklen, int64_t stride,
		struct amrma_dgsp_type *old, struct amrma_dgsp_type **out)
{
	i128 s;

	if (old == NULL)
		return -EINVAL;
	s = (i128)stride * ((i128)old->ub - old->lb);
	if (!fits(s))
		return -EOVERFLOW;
	return amrma_dgsp_type_hvector(count, blocklen, (int64_t)s, old, out);
}

int
amrma_dgsp_type_contiguous(uint64_t count, struct amrma_dgsp_type *old,
		struct amrma_dgsp_type **out)
{
	if (old == NULL)
		return -EINVAL;
	/* One block of count elements: the compiler folds it to one COPY. */
	return amrma_dgsp_type_hvector(1, count, 0, old, out);
}

/* Shared by every displacement-list constructor. types[i] may repeat. */
static int
hstruct(uint32_t n, const uint64_t *bl, uint64_t bl1, const int64_t *disp,
		i128 dscale, struct amrma_dgsp_type *const *types,
		struct amrma_dgsp_type *old, struct amrma_dgsp_type **out)
{
	struct amrma_dgsp_type *t;
	struct bacc a;
	uint32_t i, maxd = 0;
	int rc = 0;

	if (out == NULL || (n > 0 && disp == NULL) ||
			(types == NULL && old == NULL))
		return -EINVAL;
	t = tnew(TK_HSTRUCT);
	if (t == NULL)
		return -ENOMEM;
	t->u.st.bl = calloc(n ? n : 1, sizeof(*t->u.st.bl));
	t->u.st.disp = calloc(n ? n : 1, sizeof(*t->u.st.disp));
	t->u.st.child = calloc(n ? n : 1, sizeof(*t->u.st.child));
	if (!t->u.st.bl || !t->u.st.disp || !t->u.st.child) {
		amrma_dgsp_type_free(t);
		return -ENOMEM;
	}
	acc_init(&a);
	for (i = 0; i < n; i++) {
		struct amrma_dgsp_type *c = types != NULL ? types[i] : old;
		uint64_t b = bl != NULL ? bl[i] : bl1;
		i128 d = (i128)disp[i] * dscale;

		if (c == NULL || b > AMRMA_DGSP_MAX_COUNT) {
			rc = -EINVAL;
			break;
		}
		if (!fits(d)) {
			rc = -EOVERFLOW;
			break;
		}
		t->u.st.child[i] = tref(c);
		t->u.st.n = i + 1;
		t->u.st.bl[i] = b;
		t->u.st.disp[i] = (int64_t)d;
		acc_block(&a, d, d, 1, b, c);
		if (c->depth > maxd)
			maxd = c->depth;
	}
	if (rc == 0)
		rc = acc_finish(&a, t);
	if (rc == 0)
		rc = set_depth(t, maxd);
	if (rc != 0) {
		amrma_dgsp_type_free(t);
		return rc;
	}
	*out = t;
	return 0;
}

int
amrma_dgsp_type_hindexed(uint32_t count, const uint64_t *blocklens,
		const int64_t *disps, struct amrma_dgsp_type *old,
		struct amrma_dgsp_type **out)
{
	if (old == NULL || (count > 0 && blocklens == NULL))
		return -EINVAL;
	return hstruct(count, blocklens, 0, disps, 1, NULL, old, out);
}

int
amrma_dgsp_type_indexed(uint32_t count, const uint64_t *blocklens,
		const int64_t *disps, struct amrma_dgsp_type *old,
		struct amrma_dgsp_type **out)
{
	if (old == NULL || (count > 0 && blocklens == NULL))
		return -EINVAL;
	return hstruct(count, blocklens, 0, disps, (i128)old->ub - old->lb,
			NULL, old, out);
}

int
amrma_dgsp_type_hindexed_block(uint32_t count, uint64_t blocklen,
		const int64_t *disps, struct amrma_dgsp_type *old,
		struct amrma_dgsp_type **out)
{
	if (old == NULL)
		return -EINVAL;
	return hstruct(count, NULL, blocklen, disps, 1, NULL, old, out);
}

int
amrma_dgsp_type_indexed_block(uint32_t count, uint64_t blocklen,
		const int64_t *disps, struct amrma_dgsp_type *old,
		struct amrma_dgsp_type **out)
{
	if (old == NULL)
		return -EINVAL;
	return hstruct(count, NULL, blocklen, disps, (i128)old->ub - old->lb,
			NULL, old, out);
}

int
amrma_dgsp_type_struct(uint32_t count, const uint64_t *blocklens,
		const int64_t *disps, struct amrma_dgsp_type *const *types,
		struct amrma_dgsp_type **out)
{
	if (count > 0 && (blocklens == NULL || types == NULL))
		return -EINVAL;
	if (count == 0 && types == NULL) {
		/* An empty struct still needs a non-NULL type list internally. */
		static struct amrma_dgsp_type *const none[1];

		return hstruct(0, blocklens, 0, disps, 1, none, NULL, out);
	}
	return hstruct(count, blocklens, 0, disps, 1, types, NULL, out);
}

int
amrma_dgsp_type_dup(struct amrma_dgsp_type *old, struct amrma_dgsp_type **out)
{
	static const int64_t zero;

	if (old == NULL)
		return -EINVAL;
	/* One block of one element at 0 has exactly old's typemap and markers. */
	return hstruct(1, NULL, 1, &zero, 1, NULL, old, out);
}

int
amrma_dgsp_type_resized(struct amrma_dgsp_type *old, int64_t lb, int64_t extent,
		struct amrma_dgsp_type **out)
{
	struct amrma_dgsp_type *t;

	if (old == NULL || out == NULL || extent < 0)
		return -EINVAL;
	if (!fits((i128)lb + extent))
		return -EOVERFLOW;
	t = tnew(TK_RESIZED);
	if (t == NULL)
		return -ENOMEM;
	t->u.rs.child = tref(old);
	t->size = old->size;
	t->lb = lb;
	t->ub = lb + extent;
	t->lb_mark = true;
	t->ub_mark = true;
	t->true_lb = old->true_lb;
	t->true_ub = old->true_ub;
	t->empty = false;
	if (set_depth(t, old->depth) != 0) {
		amrma_dgsp_type_free(t);
		return -E2BIG;
	}
	*out = t;
	return 0;
}

int
amrma_dgsp_type_subarray(uint32_t ndims, const uint64_t *sizes,
		const uint64_t *subsizes, const uint64_t *starts,
		enum amrma_dgsp_order order, struct amrma_dgsp_type *old,
		struct amrma_dgsp_type **out)
{
	struct amrma_dgsp_type *t = NULL, *nt;
	i128 stride[AMRMA_DGSP_TYPE_MAX_DEPTH], ext, disp = 0, full;
	int64_t d;
	uint32_t i, j;
	int rc;

	if (old == NULL || out == NULL || ndims == 0 ||
			ndims > AMRMA_DGSP_TYPE_MAX_DEPTH / 2 || sizes == NULL ||
			subsizes == NULL || starts == NULL ||
			(order != AMRMA_DGSP_ORDER_C &&
			 order != AMRMA_DGSP_ORDER_FORTRAN))
		return -EINVAL;
	ext = (i128)old->ub - old->lb;
	full = ext;
	for (i = 0; i < ndims; i++) {
		if (sizes[i] == 0 || subsizes[i] == 0 ||
				subsizes[i] > sizes[i] ||
				starts[i] > sizes[i] - subsizes[i] ||
				sizes[i] > AMRMA_DGSP_MAX_COUNT)
			return -EINVAL;
	}
	/* Byte stride of each dimension; j walks from fastest to slowest. */
	for (j = 0; j < ndims; j++) {
		i = order == AMRMA_DGSP_ORDER_C ? ndims - 1 - j : j;
		stride[i] = full;
		full *= sizes[i];
		if (!fits(full))
			return -EOVERFLOW;
		disp += (i128)starts[i] * stride[i];
	}
	if (!fits(disp))
		return -EOVERFLOW;
	for (j = 0; j < ndims; j++) {
		i = order == AMRMA_DGSP_ORDER_C ? ndims - 1 - j : j;
		if (j == 0)
			rc = amrma_dgsp_type_contiguous(subsizes[i], old, &nt);
		else
			rc = amrma_dgsp_type_hvector(subsizes[i], 1,
					(int64_t)stride[i], t, &nt);
		amrma_dgsp_type_free(t);
		if (rc != 0)
			return rc;
		t = nt;
	}
	d = (int64_t)disp;
	rc = amrma_dgsp_type_hindexed_block(1, 1, &d, t, &nt);
	amrma_dgsp_type_free(t);
	if (rc != 0)
		return rc;
	rc = amrma_dgsp_type_resized(nt, 0, (int64_t)full, out);
	amrma_dgsp_type_free(nt);
	return rc;
}

int
amrma_dgsp_type_get_info(const struct amrma_dgsp_type *t,
		struct amrma_dgsp_type_info *info)
{
	if (t == NULL || info == NULL)
		return -EINVAL;
	info->size = t->size;
	info->lb = t->lb;
	info->extent = t->ub - t->lb;
	info->true_lb = t->true_lb;
	info->true_extent = t->true_ub - t->true_lb;
	info->depth = t->depth;
	return 0;
}

int
amrma_dgsp_type_commit(struct amrma_dgsp_type *t)
{
	if (t == NULL)
		return -EINVAL;
	if (t->prog != NULL)
		return 0;
	return amrma_dgsp_compile(t, &t->prog);
}

const struct amrma_dgsp *
amrma_dgsp_type_program(const struct amrma_dgsp_type *t)
{
	return t != NULL ? t->prog : NULL;
}
