/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Wire form and verifier: header layout, malicious programs rejected with
 * the right reason, every truncation and every single-byte corruption of a
 * real program handled without a crash, footprint/window checks per use.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cases.h"
#include "check.h"

static struct dasm a;

static uint64_t
le(const uint8_t *p, int n)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static void
test_bad_cases(void **state)
{
	struct amrma_dgsp_limits lim;
	enum amrma_dgsp_reason want, got;
	struct amrma_dgsp *p;
	int i;

	(void)state;
	fuzz_limits(&lim);
	for (i = 0; bad_case(i, &a, &want) == 0; i++) {
		p = NULL;
		got = AMRMA_DGSP_OK;
		assert_int_equal(amrma_dgsp_load(a.buf, a.len, &lim, &p, &got),
				-EINVAL);
		assert_null(p);
		if (got != want)
			fail_msg("case %d: got %s, want %s", i,
				amrma_dgsp_reason_str(got),
				amrma_dgsp_reason_str(want));
	}
	assert_true(i >= 30);
}

static void
test_good_cases(void **state)
{
	enum amrma_dgsp_reason why;
	int i;

	(void)state;
	for (i = 0; good_case(i, &a) == 0; i++) {
		if (fuzz_one(a.buf, a.len, &why) != 0)
			fail_msg("good case %d rejected: %s", i,
				amrma_dgsp_reason_str(why));
	}
	assert_int_equal(i, 4);
}

static void
test_reason_names(void **state)
{
	int i, j;

	(void)state;
	for (i = 0; i < AMRMA_DGSP_E_MAX; i++)
		for (j = 0; j < i; j++)
			assert_string_not_equal(amrma_dgsp_reason_str(i),
				amrma_dgsp_reason_str(j));
	assert_string_equal(amrma_dgsp_reason_str(AMRMA_DGSP_E_MAX),
			"unknown reason");
}

/* A nontrivial compiled program, its bytes in *buf. */
static size_t
sample(uint8_t **buf, struct amrma_dgsp_type **keep)
{
	struct amrma_dgsp_type *i4, *v, *s, *t[3];
	uint64_t bl[3] = { 1, 2, 1 };
	int64_t d[3] = { -40, 0, 900 };
	ssize_t n;

	amrma_dgsp_type_basic(4, &i4);
	amrma_dgsp_type_vector(7, 2, -5, i4, &v);
	t[0] = i4;
	t[1] = v;
	t[2] = v;
	amrma_dgsp_type_struct(3, bl, d, t, &s);
	amrma_dgsp_type_hvector(3, 1, 2000, s, keep);
	amrma_dgsp_type_commit(*keep);
	n = amrma_dgsp_serialize(amrma_dgsp_type_program(*keep), NULL, 0);
	*buf = malloc((size_t)n);
	amrma_dgsp_serialize(amrma_dgsp_type_program(*keep), *buf, (size_t)n);
	amrma_dgsp_type_free(s);
	amrma_dgsp_type_free(v);
	amrma_dgsp_type_free(i4);
	return (size_t)n;
}

static void
test_header_layout(void **state)
{
	struct amrma_dgsp_type *t;
	struct amrma_dgsp_type_info ti;
	struct amrma_dgsp_info pi;
	uint8_t *b;
	size_t n;

	(void)state;
	n = sample(&b, &t);
	amrma_dgsp_type_get_info(t, &ti);
	amrma_dgsp_get_info(amrma_dgsp_type_program(t), &pi);
	assert_memory_equal(b, "DGSP", 4);
	assert_int_equal(b[4], 1);
	assert_int_equal(b[5], 0);
	assert_int_equal(le(b + 6, 2), 0);
	assert_int_equal(le(b + 8, 4), pi.ninsns);
	assert_int_equal(le(b + 12, 4), n - 40);
	assert_int_equal(le(b + 16, 8), ti.size);
	assert_int_equal((int64_t)le(b + 24, 8), ti.lb);
	assert_int_equal((int64_t)le(b + 32, 8), ti.extent);
	/* main starts with GOSUB (opcode 3) into the struct body or a COPY */
	assert_true(b[40] >= 1 && b[40] <= 5);
	free(b);
	amrma_dgsp_type_free(t);
}

static void
test_truncation_and_corruption(void **state)
{
	struct amrma_dgsp_type *t;
	enum amrma_dgsp_reason why;
	struct amrma_dgsp *p;
	uint8_t *b, *c;
	size_t n, i;
	int accepted = 0, v;

	(void)state;
	n = sample(&b, &t);
	for (i = 0; i < n; i++) {
		p = NULL;
		assert_int_equal(amrma_dgsp_load(b, i, NULL, &p, &why), -EINVAL);
		assert_true(why == AMRMA_DGSP_E_TRUNCATED ||
				why == AMRMA_DGSP_E_MAGIC);
	}
	c = malloc(n);
	for (i = 0; i < n; i++) {
		for (v = 0; v < 256; v += 17) {
			memcpy(c, b, n);
			c[i] ^= (uint8_t)(v | 1);
			accepted += fuzz_one(c, n, &why) == 0;
		}
	}
	/* Some flips only move a displacement within the window. */
	assert_true(accepted > 0);
	free(c);
	free(b);
	amrma_dgsp_type_free(t);
}

static void
test_window_per_use(void **state)
{
	struct amrma_dgsp_limits lim;
	struct amrma_dgsp_type *i4, *v;
	const struct amrma_dgsp *p;
	enum amrma_dgsp_reason why;

	(void)state;
	amrma_dgsp_limits_default(&lim);
	amrma_dgsp_type_basic(4, &i4);
	/* blocks at 0, -16, -32; extent 40 */
	amrma_dgsp_type_vector(3, 2, -4, i4, &v);
	amrma_dgsp_type_commit(v);
	p = amrma_dgsp_type_program(v);
	assert_int_equal(amrma_dgsp_check_use(p, 1, -32, 8, &lim, &why), 0);
	assert_int_equal(amrma_dgsp_check_use(p, 1, -31, 8, &lim, &why),
			-EINVAL);
	assert_int_equal(why, AMRMA_DGSP_E_WINDOW);
	assert_int_equal(amrma_dgsp_check_use(p, 1, -32, 7, &lim, &why),
			-EINVAL);
	assert_int_equal(amrma_dgsp_check_use(p, 10, -32, 8 + 9 * 40, &lim,
			&why), 0);
	assert_int_equal(amrma_dgsp_check_use(p, 10, -32, 7 + 9 * 40, &lim,
			&why), -EINVAL);
	assert_int_equal(amrma_dgsp_check_use(p, 0, 0, 0, &lim, &why), 0);
	lim.max_bytes = 24 * 10 - 1;
	assert_int_equal(amrma_dgsp_check_use(p, 10, INT64_MIN, INT64_MAX,
			&lim, &why), -EINVAL);
	assert_int_equal(why, AMRMA_DGSP_E_WORK_LIMIT);
	amrma_dgsp_type_free(v);
	amrma_dgsp_type_free(i4);
}

static void
test_from_insns(void **state)
{
	struct amrma_dgsp_insn ins[5];
	enum amrma_dgsp_reason why;
	struct amrma_dgsp *p = NULL;
	struct amrma_dgsp_info pi;

	(void)state;
	memset(ins, 0, sizeof(ins));
	ins[0].op = AMRMA_DGSP_GOSUB;
	ins[0].target = 2;
	ins[0].off = 100;
	ins[1].op = AMRMA_DGSP_CONTROL;
	ins[2].op = AMRMA_DGSP_MCOPY;
	ins[2].len = 8;
	ins[2].count = 3;
	ins[2].stride = 16;
	ins[3].op = AMRMA_DGSP_ITERATE;
	ins[3].count = 4;
	ins[3].stride = 64;
	assert_int_equal(amrma_dgsp_from_insns(ins, 4, 0, 400, NULL, &p, &why),
			0);
	amrma_dgsp_get_info(p, &pi);
	assert_int_equal(pi.size, 96);
	assert_int_equal(pi.chunks, 12);
	assert_int_equal(pi.avg_chunk, 8);
	assert_int_equal(pi.true_lb, 100);
	assert_int_equal(pi.true_ub, 100 + 3 * 64 + 32 + 8);
	assert_int_equal(pi.depth, 2);
	assert_int_equal(pi.nsubs, 2);
	assert_int_equal(pi.mcopy_len, 8);
	amrma_dgsp_free(p);
	/* A COPY among the chunks: not regular. */
	ins[1].op = AMRMA_DGSP_COPY;
	ins[1].len = 8;
	memmove(&ins[2], &ins[1], sizeof(ins[0]) * 3);
	ins[2].op = AMRMA_DGSP_CONTROL;
	ins[2].len = 0;
	ins[0].target = 3;
	assert_int_equal(amrma_dgsp_from_insns(ins, 5, 0, 400, NULL, &p, &why),
			0);
	amrma_dgsp_get_info(p, &pi);
	assert_int_equal(pi.mcopy_len, 0);
	assert_int_equal(pi.size, 104);
	amrma_dgsp_free(p);
	ins[0].target = 2;
	assert_int_equal(amrma_dgsp_from_insns(ins, 5, 0, 400, NULL, &p, &why),
			-EINVAL);
	assert_int_equal(why, AMRMA_DGSP_E_TARGET);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_cases),
		cmocka_unit_test(test_good_cases),
		cmocka_unit_test(test_reason_names),
		cmocka_unit_test(test_header_layout),
		cmocka_unit_test(test_truncation_and_corruption),
		cmocka_unit_test(test_window_per_use),
		cmocka_unit_test(test_from_insns),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
