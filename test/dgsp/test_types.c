/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Constructors: hand-computed MPI bounds for known layouts, every
 * constructor against the reference typemap model, compile-time folding,
 * and argument/overflow errors.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <cmocka.h>

#include "check.h"

static void
expect_info(struct amrma_dgsp_type *t, uint64_t size, int64_t lb, int64_t ext,
		int64_t tlb, int64_t text)
{
	struct amrma_dgsp_type_info ti;

	assert_int_equal(amrma_dgsp_type_get_info(t, &ti), 0);
	assert_int_equal(ti.size, size);
	assert_int_equal(ti.lb, lb);
	assert_int_equal(ti.extent, ext);
	assert_int_equal(ti.true_lb, tlb);
	assert_int_equal(ti.true_extent, text);
}

/* a struct of one a at byte 0 and one b at byte disp */
static struct amrma_dgsp_type *
struct2(struct amrma_dgsp_type *a, struct amrma_dgsp_type *b, int64_t disp)
{
	struct amrma_dgsp_type *ts[2] = { a, b }, *t;
	uint64_t one[2] = { 1, 1 };
	int64_t d[2] = { 0, disp };

	assert_int_equal(amrma_dgsp_type_struct(2, one, d, ts, &t), 0);
	return t;
}

static void
test_known_bounds(void **state)
{
	struct amrma_dgsp_type *i4, *c1, *t, *r, *u;
	uint64_t bl[2] = { 2, 0 };
	int64_t d[3] = { 0, 1000, 0 }, ib[3] = { 5, 0, -2 };
	uint64_t sz[2] = { 4, 5 }, sub[2] = { 2, 3 }, st[2] = { 1, 2 };

	(void)state;
	assert_int_equal(amrma_dgsp_type_basic(4, &i4), 0);
	assert_int_equal(amrma_dgsp_type_basic(1, &c1), 0);
	expect_info(i4, 4, 0, 4, 0, 4);

	/* Negative stride: blocks at 0, -16, -32. */
	assert_int_equal(amrma_dgsp_type_vector(3, 2, -4, i4, &t), 0);
	expect_info(t, 24, -32, 40, -32, 40);
	amrma_dgsp_type_free(t);

	/* Resized lb/extent propagate through contiguous. */
	assert_int_equal(amrma_dgsp_type_resized(i4, -4, 16, &r), 0);
	expect_info(r, 4, -4, 16, 0, 4);
	assert_int_equal(amrma_dgsp_type_contiguous(2, r, &t), 0);
	expect_info(t, 8, -4, 32, 0, 20);
	amrma_dgsp_type_free(t);

	/* No implicit alignment padding. */
	t = struct2(i4, c1, 8);
	expect_info(t, 5, 0, 9, 0, 9);
	amrma_dgsp_type_free(t);

	/* Zero-length blocks do not move the bounds. */
	assert_int_equal(amrma_dgsp_type_hindexed(2, bl, d, i4, &t), 0);
	expect_info(t, 8, 0, 8, 0, 8);
	amrma_dgsp_type_free(t);

	/* Sticky markers: data outside [lb, ub) stays outside. */
	assert_int_equal(amrma_dgsp_type_resized(i4, 0, 8, &u), 0);
	t = struct2(u, i4, 100);
	expect_info(t, 8, 0, 8, 0, 104);
	amrma_dgsp_type_free(t);
	amrma_dgsp_type_free(u);

	assert_int_equal(amrma_dgsp_type_indexed_block(3, 2, ib, i4, &t), 0);
	expect_info(t, 24, -8, 36, -8, 36);
	amrma_dgsp_type_free(t);

	assert_int_equal(amrma_dgsp_type_subarray(2, sz, sub, st,
			AMRMA_DGSP_ORDER_C, i4, &t), 0);
	expect_info(t, 24, 0, 80, 28, 32);
	amrma_dgsp_type_free(t);
	assert_int_equal(amrma_dgsp_type_subarray(2, sz, sub, st,
			AMRMA_DGSP_ORDER_FORTRAN, i4, &t), 0);
	expect_info(t, 24, 0, 80, 36, 40);
	amrma_dgsp_type_free(t);

	/* Empty types. */
	assert_int_equal(amrma_dgsp_type_contiguous(0, i4, &t), 0);
	expect_info(t, 0, 0, 0, 0, 0);
	assert_int_equal(amrma_dgsp_type_commit(t), 0);
	amrma_dgsp_type_free(t);
	assert_int_equal(amrma_dgsp_type_hindexed(0, NULL, NULL, i4, &t), 0);
	expect_info(t, 0, 0, 0, 0, 0);
	amrma_dgsp_type_free(t);

	amrma_dgsp_type_free(r);
	amrma_dgsp_type_free(i4);
	amrma_dgsp_type_free(c1);
}

/* Each constructor, a few parameter sets, against the reference. */
static void
test_constructors_vs_ref(void **state)
{
	uint64_t rng = 42, bl[4] = { 1, 0, 3, 2 }, count;
	int64_t d[4] = { 3, -2, 7, 0 }, hd[4] = { 40, -24, 0, 100 };
	uint64_t sz[3] = { 3, 4, 5 }, sub[3] = { 2, 2, 3 }, st[3] = { 1, 0, 2 };
	struct pt *i4, *c3, *v, *list[16], *ts[3];
	int n = 0, i;

	(void)state;
	i4 = pt_basic(4);
	c3 = pt_basic(3);
	v = pt_vector(3, 2, -3, i4);
	list[n++] = pt_contiguous(5, i4);
	list[n++] = pt_contiguous(2, v);
	list[n++] = pt_vector(4, 1, 3, c3);
	list[n++] = pt_hvector(3, 2, -20, v);
	list[n++] = pt_indexed(4, bl, d, i4);
	list[n++] = pt_hindexed(4, bl, hd, v);
	list[n++] = pt_indexed_block(4, 2, d, c3);
	list[n++] = pt_hindexed_block(4, 1, hd, v);
	ts[0] = i4;
	ts[1] = v;
	ts[2] = c3;
	list[n++] = pt_struct(3, bl + 1, hd + 1, ts);
	list[n++] = pt_subarray(3, sz, sub, st, AMRMA_DGSP_ORDER_C, i4);
	list[n++] = pt_subarray(3, sz, sub, st, AMRMA_DGSP_ORDER_FORTRAN, v);
	list[n++] = pt_resized(v, -7, 50);
	list[n] = pt_dup(list[n - 1]);
	n++;
	list[n] = pt_vector(2, 2, 1, list[n - 2]);	/* overlapping blocks */
	n++;
	for (i = 0; i < n; i++) {
		assert_non_null(list[i]);
		for (count = 0; count <= 3; count++)
			check_pt(list[i], count, &rng, true);
		pt_free(list[i]);
	}
	pt_free(v);
	pt_free(i4);
	pt_free(c3);
}

static uint32_t
ninsns(struct amrma_dgsp_type *t, uint64_t *chunks)
{
	struct amrma_dgsp_info pi;

	assert_int_equal(amrma_dgsp_type_commit(t), 0);
	amrma_dgsp_get_info(amrma_dgsp_type_program(t), &pi);
	*chunks = pi.chunks;
	return pi.ninsns;
}

/* Compile-time folding produces the minimal programs. */
static void
test_compile_folding(void **state)
{
	struct amrma_dgsp_type *i4, *a, *b, *c;
	uint64_t ch, sz[3] = { 8, 8, 8 }, sub[3] = { 2, 8, 8 }, st[3] = { 3, 0, 0 };
	uint64_t sub2[3] = { 2, 4, 8 };

	(void)state;
	amrma_dgsp_type_basic(4, &i4);
	/* vector with stride == blocklen is contiguous: one COPY + RET. */
	amrma_dgsp_type_vector(10, 2, 2, i4, &a);
	assert_int_equal(ninsns(a, &ch), 2);
	assert_int_equal(ch, 1);
	/* contiguous of contiguous collapses. */
	amrma_dgsp_type_contiguous(100, a, &b);
	assert_int_equal(ninsns(b, &ch), 2);
	assert_int_equal(ch, 1);
	amrma_dgsp_type_free(b);
	amrma_dgsp_type_free(a);
	/* strided: MCOPY + RET, 10 chunks of 4. */
	amrma_dgsp_type_vector(10, 1, 3, i4, &a);
	assert_int_equal(ninsns(a, &ch), 2);
	assert_int_equal(ch, 10);
	/* vector of that vector at its span: one longer MCOPY. */
	amrma_dgsp_type_hvector(5, 1, 120, a, &b);
	assert_int_equal(ninsns(b, &ch), 2);
	assert_int_equal(ch, 50);
	/* ... at another stride: a subroutine with ITERATE. */
	amrma_dgsp_type_hvector(5, 1, 200, a, &c);
	assert_int_equal(ninsns(c, &ch), 4);
	assert_int_equal(ch, 50);
	amrma_dgsp_type_free(c);
	amrma_dgsp_type_free(b);
	amrma_dgsp_type_free(a);
	/* subarray with full inner dimensions: one COPY. */
	amrma_dgsp_type_subarray(3, sz, sub, st, AMRMA_DGSP_ORDER_C, i4, &a);
	assert_int_equal(ninsns(a, &ch), 2);
	assert_int_equal(ch, 1);
	amrma_dgsp_type_free(a);
	/* a face with a full innermost row: MCOPY of rows. */
	amrma_dgsp_type_subarray(3, sz, sub2, st, AMRMA_DGSP_ORDER_C, i4, &a);
	assert_int_equal(ninsns(a, &ch), 2);
	assert_int_equal(ch, 2);	/* 4 full rows are contiguous */
	amrma_dgsp_type_free(a);
	amrma_dgsp_type_free(i4);
}

static void
test_constructor_errors(void **state)
{
	struct amrma_dgsp_type *i4, *t, *n;
	uint64_t sz[2] = { 4, 4 }, sub[2] = { 2, 3 }, st[2] = { 0, 2 };
	int i;

	(void)state;
	assert_int_equal(amrma_dgsp_type_basic(0, &t), -EINVAL);
	amrma_dgsp_type_basic(4, &i4);
	assert_int_equal(amrma_dgsp_type_resized(i4, 0, -1, &t), -EINVAL);
	assert_int_equal(amrma_dgsp_type_vector(1, 1, 1, NULL, &t), -EINVAL);
	assert_int_equal(amrma_dgsp_type_subarray(2, sz, sub, st,
			AMRMA_DGSP_ORDER_C, i4, &t), -EINVAL);
	assert_int_equal(amrma_dgsp_type_hvector(AMRMA_DGSP_MAX_COUNT + 1, 1, 4,
			i4, &t), -EINVAL);
	assert_int_equal(amrma_dgsp_type_hvector(AMRMA_DGSP_MAX_COUNT,
			AMRMA_DGSP_MAX_COUNT, INT64_MAX / 4, i4, &t),
			-EOVERFLOW);
	assert_int_equal(amrma_dgsp_type_vector(2, 1, INT64_MAX / 2, i4, &t),
			-EOVERFLOW);
	/* Nesting beyond the bound. */
	assert_int_equal(amrma_dgsp_type_dup(i4, &t), 0);
	for (i = 0; i < AMRMA_DGSP_TYPE_MAX_DEPTH + 2; i++) {
		int rc = amrma_dgsp_type_dup(t, &n);

		amrma_dgsp_type_free(t);
		if (rc != 0) {
			assert_int_equal(rc, -E2BIG);
			t = NULL;
			break;
		}
		t = n;
	}
	assert_null(t);
	/* Deep but legal types that compile deeper than the DGSM stack. */
	{
		struct amrma_dgsp_type *v;
		int depth_fail = 0;

		assert_int_equal(amrma_dgsp_type_dup(i4, &v), 0);
		for (i = 0; i < AMRMA_DGSP_MAX_DEPTH + 4; i++) {
			amrma_dgsp_type_hvector(2, 1, 1 + 10000 * (i + 1), v, &n);
			amrma_dgsp_type_free(v);
			v = n;
			if (amrma_dgsp_type_commit(v) != 0) {
				depth_fail = 1;
				break;
			}
		}
		assert_int_equal(depth_fail, 1);
		assert_int_equal(amrma_dgsp_type_commit(v), -E2BIG);
		amrma_dgsp_type_free(v);
	}
	amrma_dgsp_type_free(i4);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known_bounds),
		cmocka_unit_test(test_constructors_vs_ref),
		cmocka_unit_test(test_compile_folding),
		cmocka_unit_test(test_constructor_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
