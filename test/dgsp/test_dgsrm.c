/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DGS-RM against the reference: random source/destination layouts,
 * push and pull, direct and staged, random sub-ranges, and a simulated
 * foreign master address space attached segment by segment.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "check.h"

/* Master addresses are shifted by this: only the relocation finds them. */
#define FAKE_DELTA (UINT64_C(1) << 44)

/*
 * Each attach copies the segment into a fresh heap block of exactly the
 * segment size (its own relocation constant); detach writes it back and
 * frees it. A machine that strays past a segment reads or writes outside
 * that block: wrong data here, a report under ASan/valgrind.
 */
struct fake_xmem {
	uint64_t seg;		/* segment size */
	int attached;		/* live attaches */
	int attaches;		/* total attaches */
	int fail_after;		/* attach fails after this many (-1: never) */
	uint8_t *mem;		/* real master memory ... */
	size_t len;		/* ... and its length */
};

/* Overlap of [lo, hi) (fake addresses) with the real memory. */
static bool
overlap(const struct fake_xmem *x, uint64_t lo, uint64_t hi, uint64_t *a,
		uint64_t *b)
{
	uint64_t rlo = (uint64_t)(uintptr_t)x->mem + FAKE_DELTA;

	*a = lo > rlo ? lo : rlo;
	*b = hi < rlo + x->len ? hi : rlo + x->len;
	return *a < *b;
}

static int
fake_attach(void *arg, uint64_t maddr, struct amrma_dgsrm_seg *s)
{
	struct fake_xmem *x = arg;
	uint64_t a, b;
	uint8_t *blk;

	if (x->fail_after >= 0 && x->attaches >= x->fail_after)
		return -EIO;
	assert_int_equal(x->attached, 0);	/* one segment at a time */
	s->lo = maddr - maddr % x->seg;
	s->hi = s->lo + x->seg;
	blk = malloc(x->seg);
	assert_non_null(blk);
	memset(blk, 0xee, x->seg);
	if (overlap(x, s->lo, s->hi, &a, &b))
		memcpy(blk + (a - s->lo), (void *)(uintptr_t)(a - FAKE_DELTA),
				b - a);
	s->reloc = (int64_t)((uint64_t)(uintptr_t)blk - s->lo);
	s->cookie = blk;
	x->attached++;
	x->attaches++;
	return 0;
}

static void
fake_detach(void *arg, struct amrma_dgsrm_seg *s)
{
	struct fake_xmem *x = arg;
	uint8_t *blk = s->cookie;
	uint64_t a, b;

	if (overlap(x, s->lo, s->hi, &a, &b))
		memcpy((void *)(uintptr_t)(a - FAKE_DELTA), blk + (a - s->lo),
				b - a);
	free(blk);
	x->attached--;
}

enum how { DIRECT, STAGED, SEGMENTED, SEG_STAGED, AUTO };

static void
one_case(struct pt *a, struct pt *b, uint64_t ca, uint64_t cb, uint64_t *rng,
		enum how how, enum amrma_dgsrm_mode mode)
{
	struct amrma_dgsrm_side ms, ws;
	struct amrma_dgsrm_attach_ops ops;
	struct fake_xmem fx = { 0, 0, 0, -1, NULL, 0 };
	struct tbuf sa, db, rb;
	int64_t *ma, *mb;
	size_t na, nb, n, i;
	uint64_t off, len;
	uint8_t stage[64];
	int64_t r;

	ma = ref_bytemap(&a->m, ca, &na);
	mb = ref_bytemap(&b->m, cb, &nb);
	n = na < nb ? na : nb;
	off = rng_range(rng, 0, n);
	len = rng_range(rng, 0, n - off);
	tbuf_alloc(&sa, ma, na, 32);
	tbuf_alloc(&db, mb, nb, 32);
	tbuf_alloc(&rb, mb, nb, 32);
	for (i = 0; i < sa.len; i++)
		sa.mem[i] = (uint8_t)(rng_next(rng) | 1);
	for (i = 0; i < len; i++)
		rb.base[mb[off + i]] = sa.base[ma[off + i]];

	/* Pull: master is the source; push: master is the destination. */
	if (mode == AMRMA_DGSRM_PULL) {
		ms = side_of(a->t, sa.base, ca);
		ws = side_of(b->t, db.base, cb);
	} else {
		ms = side_of(b->t, db.base, cb);
		ws = side_of(a->t, sa.base, ca);
	}
	ops.attach = fake_attach;
	ops.detach = fake_detach;
	ops.arg = &fx;
	fx.seg = (uint64_t)1 << rng_range(rng, 2, 7);
	fx.mem = mode == AMRMA_DGSRM_PULL ? sa.mem : db.mem;
	fx.len = mode == AMRMA_DGSRM_PULL ? sa.len : db.len;
	if (how == SEGMENTED || how == SEG_STAGED)
		ms.addr += FAKE_DELTA;
	switch (how) {
	case DIRECT:
		r = amrma_dgsrm_direct(&ms, &ws, mode, NULL, off, len);
		break;
	case STAGED:
		r = amrma_dgsrm_staged(&ms, &ws, mode, NULL, stage,
				rng_range(rng, 1, sizeof(stage)), off, len);
		break;
	case SEGMENTED:
		r = amrma_dgsrm_direct(&ms, &ws, mode, &ops, off, len);
		break;
	case SEG_STAGED:
		r = amrma_dgsrm_staged(&ms, &ws, mode, &ops, stage,
				rng_range(rng, 1, sizeof(stage)), off, len);
		break;
	default:
		r = amrma_dgsrm_copy(&ms, &ws, mode, NULL, NULL, stage,
				sizeof(stage), off, len);
		break;
	}
	assert_int_equal(r, (int64_t)len);
	assert_int_equal(fx.attached, 0);
	assert_memory_equal(db.mem, rb.mem, rb.len);
	/* Beyond either stream: refused. */
	assert_int_equal(amrma_dgsrm_direct(&ms, &ws, mode, NULL, n, 1 +
			(na > nb ? na - nb : nb - na)), -ERANGE);
	tbuf_free(&sa);
	tbuf_free(&db);
	tbuf_free(&rb);
	free(ma);
	free(mb);
}

static void
test_random_redistribute(void **state)
{
	uint64_t rng = 0xd65a;
	int i;

	(void)state;
	for (i = 0; i < 600; i++) {
		struct pt *a = gen_type(&rng, (int)rng_range(&rng, 1, 4));
		struct pt *b = gen_type(&rng, (int)rng_range(&rng, 1, 4));
		uint64_t ca = rng_range(&rng, 1, 3), cb = rng_range(&rng, 1, 3);

		assert_int_equal(amrma_dgsp_type_commit(a->t), 0);
		assert_int_equal(amrma_dgsp_type_commit(b->t), 0);
		one_case(a, b, ca, cb, &rng, (enum how)(i % 5),
				(enum amrma_dgsrm_mode)(i / 5 % 2));
		pt_free(a);
		pt_free(b);
	}
}

/* A chunk spanning several segments is split and resumed. */
static void
test_segment_crossing(void **state)
{
	struct amrma_dgsp_type *c1, *big, *col;
	struct amrma_dgsrm_side ms, ws;
	struct amrma_dgsrm_attach_ops ops;
	struct fake_xmem fx = { 64, 0, 0, -1, NULL, 4096 };
	uint8_t *src = malloc(4096), *dst = calloc(1, 8192);
	int i;

	fx.mem = src;
	(void)state;
	for (i = 0; i < 4096; i++)
		src[i] = (uint8_t)(i * 7 + 1);
	amrma_dgsp_type_basic(1, &c1);
	amrma_dgsp_type_contiguous(4096, c1, &big);
	amrma_dgsp_type_vector(4096, 1, 2, c1, &col);
	amrma_dgsp_type_commit(big);
	amrma_dgsp_type_commit(col);
	ms = side_of(big, src, 1);
	ms.addr += FAKE_DELTA;
	ws = side_of(col, dst, 1);
	ops.attach = fake_attach;
	ops.detach = fake_detach;
	ops.arg = &fx;
	assert_int_equal(amrma_dgsrm_direct(&ms, &ws, AMRMA_DGSRM_PULL, &ops,
			0, 4096), 4096);
	for (i = 0; i < 4096; i++)
		assert_int_equal(dst[2 * i], src[i]);
	/* One master chunk, but every 64-byte segment attached once or twice. */
	assert_true(fx.attaches >= 4096 / 64);
	assert_true(fx.attaches <= 4096 / 64 + 1);
	/* Attach failure is reported and leaves nothing attached. */
	fx.attaches = 0;
	fx.fail_after = 3;
	assert_int_equal(amrma_dgsrm_direct(&ms, &ws, AMRMA_DGSRM_PULL, &ops,
			0, 4096), -EIO);
	assert_int_equal(fx.attached, 0);
	amrma_dgsp_type_free(col);
	amrma_dgsp_type_free(big);
	amrma_dgsp_type_free(c1);
	free(src);
	free(dst);
}

/* Regular layouts take the paired fast path; check it at every offset. */
static void
test_paired_runs(void **state)
{
	struct pt *b8 = pt_basic(8), *ma, *v1, *v2, *mb, *ts[2];
	uint64_t rng = 99, bl[2] = { 1, 1 };
	int64_t d[2] = { 0, 5000 };
	int i;

	(void)state;
	ma = pt_vector(100, 1, 2, b8);		/* 100 chunks of 8, stride 16 */
	v1 = pt_hvector(37, 1, 24, b8);
	v2 = pt_hvector(63, 1, -40, b8);
	ts[0] = v1;
	ts[1] = v2;
	mb = pt_struct(2, bl, d, ts);		/* 37 + 63 chunks of 8 */
	assert_int_equal(amrma_dgsp_type_commit(ma->t), 0);
	assert_int_equal(amrma_dgsp_type_commit(mb->t), 0);
	for (i = 0; i < 400; i++) {
		one_case(ma, mb, 1, 1, &rng, i % 4 < 2 ? DIRECT : SEGMENTED,
				(enum amrma_dgsrm_mode)(i % 2));
		one_case(mb, ma, 1, 1, &rng, i % 4 < 2 ? DIRECT : SEGMENTED,
				(enum amrma_dgsrm_mode)(i % 2));
	}
	pt_free(mb);
	pt_free(v2);
	pt_free(v1);
	pt_free(ma);
	pt_free(b8);
}

static void
test_heuristic(void **state)
{
	struct amrma_dgsp_type *c1, *fine, *coarse;
	struct amrma_dgsrm_thresholds t;

	(void)state;
	amrma_dgsp_type_basic(1, &c1);
	amrma_dgsp_type_vector(1000, 4, 8, c1, &fine);		/* 4 B chunks */
	amrma_dgsp_type_vector(1000, 1024, 2048, c1, &coarse);	/* 1 KiB */
	amrma_dgsp_type_commit(fine);
	amrma_dgsp_type_commit(coarse);
	t.min_avg_chunk = 64;
	t.min_bytes = 100000;
	assert_int_equal(amrma_dgsrm_choose(amrma_dgsp_type_program(fine),
			NULL, 1 << 30, &t), AMRMA_DGSRM_STAGED);
	assert_int_equal(amrma_dgsrm_choose(amrma_dgsp_type_program(coarse),
			NULL, 99999, &t), AMRMA_DGSRM_STAGED);
	assert_int_equal(amrma_dgsrm_choose(amrma_dgsp_type_program(coarse),
			NULL, 100000, &t), AMRMA_DGSRM_DIRECT);
	t.min_avg_chunk = 1024;
	assert_int_equal(amrma_dgsrm_choose(amrma_dgsp_type_program(coarse),
			NULL, 1 << 30, &t), AMRMA_DGSRM_STAGED);
	/* Two regular layouts of one chunk length: direct regardless. */
	assert_int_equal(amrma_dgsrm_choose(amrma_dgsp_type_program(fine),
			amrma_dgsp_type_program(fine), 1 << 30, &t),
			AMRMA_DGSRM_DIRECT);
	assert_int_equal(amrma_dgsrm_choose(amrma_dgsp_type_program(fine),
			amrma_dgsp_type_program(coarse), 1 << 30, &t),
			AMRMA_DGSRM_STAGED);
	amrma_dgsrm_thresholds_default(&t);
	assert_true(t.min_avg_chunk > 0 && t.min_bytes > 0);
	amrma_dgsp_type_free(fine);
	amrma_dgsp_type_free(coarse);
	amrma_dgsp_type_free(c1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_redistribute),
		cmocka_unit_test(test_segment_crossing),
		cmocka_unit_test(test_paired_runs),
		cmocka_unit_test(test_heuristic),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
