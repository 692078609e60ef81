/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Randomized (seeded) nested datatypes: bounds, gather, scatter, every
 * activation size, random restarts, chunk walk and wire round trip all
 * against the reference model. Plus seek cost on a long program.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "check.h"
#include "dgsp_priv.h"	/* dense[]: which COPY runs are gathered with their gaps */

#define NTYPES 1500

static void
test_random_nested(void **state)
{
	uint64_t seed = 0x5eed0001, rng;
	int i;

	(void)state;
	rng = seed;
	for (i = 0; i < NTYPES; i++) {
		struct pt *p = gen_type(&rng, (int)rng_range(&rng, 1, 5));

		check_pt(p, rng_range(&rng, 0, 3), &rng, i % 4 == 0);
		pt_free(p);
	}
}

/* Deep nests exercise many frames on the DGSM stack. */
static void
test_random_deep(void **state)
{
	uint64_t rng = 0xdeef;
	int i;

	(void)state;
	for (i = 0; i < 200; i++) {
		struct pt *p = gen_type(&rng, 7);

		check_pt(p, rng_range(&rng, 1, 2), &rng, false);
		pt_free(p);
	}
}

/*
 * Restart cost does not grow with the chunks before the offset: seeking to
 * the end of a 2^22-chunk program costs about as much as seeking near the
 * start (a linear walk would be ~10^5 times slower).
 */
static void
test_seek_sublinear(void **state)
{
	struct amrma_dgsp_type *i1, *v, *w;
	const struct amrma_dgsp *p;
	struct amrma_dgsm m;
	struct timespec t0, t1;
	uint64_t total, x, sum = 0;	/* mismatches */
	uint8_t *buf, b;
	double ns;
	int i;

	(void)state;
	amrma_dgsp_type_basic(1, &i1);
	/* 2048 x 2048 single-byte chunks, stride 2: 4M chunks, 8 MiB buffer. */
	amrma_dgsp_type_vector(2048, 1, 2, i1, &v);
	amrma_dgsp_type_hvector(2048, 1, 4096 + 64, v, &w);
	assert_int_equal(amrma_dgsp_type_commit(w), 0);
	p = amrma_dgsp_type_program(w);
	buf = calloc(1, (size_t)(4096 + 64) * 2048);
	assert_non_null(buf);
	for (i = 0; i < 2048; i++)
		buf[(size_t)i * (4096 + 64) + 2 * 2047] = (uint8_t)i;
	amrma_dgsm_init(&m, p, buf, 1);
	total = m.total;
	assert_int_equal(total, 2048 * 2048);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < 100000; i++) {
		x = total - 1 - (uint64_t)(i % 2048) * 2048;
		assert_int_equal(amrma_dgsm_gather_at(&m, x, &b, 1), 1);
		sum += b != (uint8_t)(x / 2048);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ns = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 +
		(double)(t1.tv_nsec - t0.tv_nsec)) / 100000;
	/* The last byte of row r holds r. */
	assert_int_equal(sum, 0);
	printf("seek+gather near end of %llu chunks: %.0f ns\n",
			(unsigned long long)total, ns);
	assert_true(ns < 20000);	/* linear would be milliseconds */
	free(buf);
	amrma_dgsp_type_free(w);
	amrma_dgsp_type_free(v);
	amrma_dgsp_type_free(i1);
}

/* Chunks big enough for the streaming-store and prefetch paths. */
static void
test_big_chunks(void **state)
{
	uint64_t rng = 0xb16, bl[4] = { 1, 2, 1, 3 };
	int64_t d[4] = { 5, 9000, -7001, 20003 };
	int k;

	(void)state;
	for (k = 0; k < 12; k++) {
		struct pt *b = pt_basic(128 + (size_t)k * 331);
		struct pt *v = pt_hvector(6, 1, (int64_t)(4099 + k * 17) *
				(k % 3 == 0 ? -1 : 1), b);
		struct pt *h = pt_hindexed(4, bl, d, b);
		struct pt *c = pt_contiguous(3, v);

		check_pt(v, 2, &rng, false);
		check_pt(h, 1, &rng, false);
		check_pt(c, 1, &rng, false);
		pt_free(c);
		pt_free(h);
		pt_free(v);
		pt_free(b);
	}
}

/*
 * How densely the program of nb blocks of n bytes at byte displacements d is gathered
 * (enum dgsm_fill, one value for a whole run of COPYs), -1 when it has no COPY run.
 */
static int
dense_of(const int64_t *d, uint32_t nb, uint64_t n)
{
	struct amrma_dgsp_type *b, *t;
	const struct amrma_dgsp *p;
	int dense = -1;
	uint32_t i;

	amrma_dgsp_type_basic(1, &b);
	assert_int_equal(amrma_dgsp_type_hindexed_block(nb, n, d, b, &t), 0);
	assert_int_equal(amrma_dgsp_type_commit(t), 0);
	p = amrma_dgsp_type_program(t);
	for (i = 0; i < p->ninsns; i++) {
		if (p->run[i] == 0)
			continue;
		assert_true(dense < 0 || dense == p->dense[i]);
		dense = p->dense[i];
	}
	amrma_dgsp_type_free(t);
	amrma_dgsp_type_free(b);
	return dense;
}

/* How densely the MCOPY of 64 chunks of n bytes every stride bytes is gathered. */
static int
mcopy_dense(uint64_t n, int64_t stride)
{
	struct amrma_dgsp_type *b, *t;
	const struct amrma_dgsp *p;
	int dense = -1;
	uint32_t i;

	amrma_dgsp_type_basic(1, &b);
	assert_int_equal(amrma_dgsp_type_hvector(64, n, stride, b, &t), 0);
	assert_int_equal(amrma_dgsp_type_commit(t), 0);
	p = amrma_dgsp_type_program(t);
	for (i = 0; i < p->ninsns; i++)
		if (p->ins[i].op == AMRMA_DGSP_MCOPY)
			dense = p->dense[i];
	amrma_dgsp_type_free(t);
	amrma_dgsp_type_free(b);
	return dense;
}

/*
 * Block i at i * gap_num * n / 2 plus a few bytes that vary (density 2 / gap_num), and
 * with jump_every != 0 a jump of 1 MiB before every jump_every-th block.
 */
static int
indexed_dense(uint32_t nb, uint64_t n, uint64_t gap_num, uint32_t jump_every)
{
	int64_t *d = malloc(nb * sizeof(*d));
	uint32_t i;
	int dense;

	for (i = 0; i < nb; i++)
		d[i] = (int64_t)(i * gap_num * n / 2 + (i * 37 % 16) * 4 +
				 (jump_every ? i / jump_every * (1u << 20) : 0));
	dense = dense_of(d, nb, n);
	free(d);
	return dense;
}

/*
 * Packets (not streaming) of a transfer at least nt_threshold big read the gaps of dense
 * layouts too (irregular blocks: a run of COPYs; regular ones: an MCOPY), carrying the
 * prefetch position from one activation to the next: packets in order, of odd sizes,
 * and out of order (gather_at) all give the bytes of one gather.
 */
static void
check_packets(uint32_t nb, uint64_t n, uint64_t gap_num, bool regular)
{
	struct amrma_dgsp_type *b, *t;
	const struct amrma_dgsp *p;
	struct amrma_dgsm m;
	int64_t *d = malloc(nb * sizeof(*d));
	uint64_t span = nb * gap_num * n / 2 + n + 64, total, off, i;
	uint8_t *buf = malloc(span), *whole, *pk;
	uint64_t rng = 0x9ac4e7 + n;

	for (i = 0; i < nb; i++)
		d[i] = (int64_t)(i * gap_num * n / 2 + (regular ? 0 : (i * 37 % 16) * 4));
	for (i = 0; i < span; i++)
		buf[i] = (uint8_t)(i * 131 + (i >> 8));
	amrma_dgsp_type_basic(1, &b);
	if (regular)	/* one MCOPY */
		assert_int_equal(amrma_dgsp_type_hvector(nb, n, (int64_t)(gap_num * n / 2), b,
							 &t), 0);
	else		/* a run of COPYs */
		assert_int_equal(amrma_dgsp_type_hindexed_block(nb, n, d, b, &t), 0);
	assert_int_equal(amrma_dgsp_type_commit(t), 0);
	p = amrma_dgsp_type_program(t);
	total = (uint64_t)nb * n;
	whole = malloc(total);
	pk = calloc(1, total);
	amrma_dgsm_init(&m, p, buf, 1);
	assert_int_equal(amrma_dgsm_gather(&m, whole, total), total);

	amrma_dgsm_init(&m, p, buf, 1);
	m.nt_threshold = total;		/* a transfer that big, packets that small */
	off = amrma_dgsm_gather(&m, pk, 1500);
	if (n < 1024)	/* read ahead past this packet's last block */
		assert_true(m.pf_cur > (uint64_t)(uintptr_t)buf + (uint64_t)d[1499 / n] + n);
	else		/* such blocks gain only from streaming activations */
		assert_int_equal(m.pf_cur, 0);
	while (off < total) {
		size_t len = (size_t)rng_range(&rng, 1, 3000);

		off += amrma_dgsm_gather(&m, pk + off, len);
	}
	assert_memory_equal(pk, whole, total);

	memset(pk, 0, total);
	amrma_dgsm_init(&m, p, buf, 1);
	m.nt_threshold = total;
	for (off = (total - 1) / 1500 * 1500;; off -= 1500) {
		size_t len = (size_t)(total - off < 1500 ? total - off : 1500);

		assert_int_equal(amrma_dgsm_gather_at(&m, off, pk + off, len), (ssize_t)len);
		if (off == 0)
			break;
	}
	assert_memory_equal(pk, whole, total);
	free(pk);
	free(whole);
	free(buf);
	free(d);
	amrma_dgsp_type_free(t);
	amrma_dgsp_type_free(b);
}

/*
 * Streaming gathers of irregular 256 B - 4 KiB blocks at density >= 40 % (from 1 KiB:
 * 50 %) prefetch the gaps too (COPY runs marked dense), and streaming scatters of blocks from 256 B prefetch their
 * partial end lines: the decision, and the bytes moved on both sides of it, with and
 * without streaming stores (check_pt), beside regular (MCOPY) chunks of the same shape.
 */
static void
test_dense_chunks(void **state)
{
	static const uint64_t lens[] = { 256, 300, 512, 768, 1000, 1024, 2048, 2100, 4096, 5000 };
	uint64_t rng = 0xde45e, gap_num;
	unsigned int k;
	int64_t tight[64];
	uint32_t i;

	(void)state;
	assert_int_equal(indexed_dense(64, 512, 4, 0), DGSM_FILL_ALL);	/* 1/2 */
	assert_int_equal(indexed_dense(64, 512, 5, 0), DGSM_FILL_SHORT);	/* 2/5 */
	assert_int_equal(indexed_dense(64, 512, 6, 0), DGSM_FILL_NONE);	/* 1/3 */
	assert_int_equal(indexed_dense(64, 512, 8, 0), DGSM_FILL_NONE);	/* 1/4 */
	/* 4 KiB blocks, gaps of 4 KiB: read up to two blocks' worth */
	assert_int_equal(indexed_dense(64, 4096, 4, 0), DGSM_FILL_ALL);
	/* gaps too long to read: a scattered layout, not a dense one */
	assert_int_equal(indexed_dense(64, 4096, 8, 0), DGSM_FILL_NONE);
	assert_int_equal(indexed_dense(64, 256, 40, 0), DGSM_FILL_NONE);
	/* a jump now and then (planes of a subarray) leaves it dense; often, not */
	assert_int_equal(indexed_dense(64, 512, 4, 16), DGSM_FILL_ALL);
	assert_int_equal(indexed_dense(64, 512, 4, 4), DGSM_FILL_NONE);
	/* gaps shorter than a line, and blocks in reverse order */
	for (i = 0; i < 64; i++)
		tight[i] = (int64_t)i * (256 + 32);
	assert_int_equal(dense_of(tight, 64, 256), DGSM_FILL_ALL);
	for (i = 0; i < 64; i++)
		tight[i] = (int64_t)(63 - i) * 1024;
	assert_int_equal(dense_of(tight, 64, 512), DGSM_FILL_NONE);
	/* regular chunks: density 1/2 up to 2 KiB */
	assert_int_equal(mcopy_dense(512, 1024), DGSM_FILL_ALL);
	assert_int_equal(mcopy_dense(2048, 3072), DGSM_FILL_ALL);
	assert_int_equal(mcopy_dense(512, 1280), DGSM_FILL_NONE);	/* 2/5 */
	assert_int_equal(mcopy_dense(4096, 8192), DGSM_FILL_NONE);
	assert_int_equal(mcopy_dense(512, -1024), DGSM_FILL_NONE);
	check_packets(400, 256, 4, false);
	check_packets(300, 768, 5, false);
	check_packets(100, 2048, 4, false);
	check_packets(400, 256, 4, true);
	check_packets(300, 768, 3, true);
	check_packets(100, 2048, 4, true);
	for (k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
		for (gap_num = 3; gap_num <= 6; gap_num++) {
			/* the reference map holds at most REF_MAX_ENTRIES elements */
			uint32_t nb = lens[k] <= 1024 ? 97 : lens[k] <= 2100 ? 60 : 25, i;
			int64_t *d = malloc(nb * sizeof(*d));
			/* 4-byte elements: the reference map holds one entry per element */
			struct pt *b = pt_basic(4), *h, *v;

			for (i = 0; i < nb; i++)
				d[i] = (int64_t)(i * gap_num * lens[k] / 2 +
						 rng_range(&rng, 0, 15) * 4);
			h = pt_hindexed_block(nb, lens[k] / 4, d, b);
			v = pt_hvector(nb, lens[k] / 4, (int64_t)(gap_num * lens[k] / 2), b);
			assert_non_null(h);
			assert_non_null(v);
			check_pt(h, 2, &rng, false);
			check_pt(v, 2, &rng, false);
			pt_free(v);
			pt_free(h);
			pt_free(b);
			free(d);
		}
	}
}

/* Large indexed lists go through binary search within one subroutine. */
static void
test_seek_indexed(void **state)
{
	enum { N = 100000 };
	struct amrma_dgsp_type *i1, *t;
	uint64_t *bl = malloc(N * sizeof(*bl));
	int64_t *d = malloc(N * sizeof(*d));
	uint64_t rng = 7, pos = 0, *start = malloc(N * sizeof(*start));
	struct amrma_dgsm m;
	uint8_t *buf;
	int i;

	(void)state;
	for (i = 0; i < N; i++) {
		bl[i] = rng_range(&rng, 1, 5);
		d[i] = (int64_t)i * 8;
		start[i] = pos;
		pos += bl[i];
	}
	amrma_dgsp_type_basic(1, &i1);
	assert_int_equal(amrma_dgsp_type_hindexed(N, bl, d, i1, &t), 0);
	assert_int_equal(amrma_dgsp_type_commit(t), 0);
	buf = malloc((size_t)N * 8);
	for (i = 0; i < N * 8; i++)
		buf[i] = (uint8_t)(i / 8 * 31 + i % 8);
	amrma_dgsm_init(&m, amrma_dgsp_type_program(t), buf, 1);
	for (i = 0; i < 2000; i++) {
		uint64_t blk = rng_range(&rng, 0, N - 1);
		uint64_t j = rng_range(&rng, 0, bl[blk] - 1);
		uint8_t b;

		assert_int_equal(amrma_dgsm_gather_at(&m, start[blk] + j, &b,
				1), 1);
		assert_int_equal(b, (uint8_t)(blk * 31 + j));
	}
	free(buf);
	free(bl);
	free(d);
	free(start);
	amrma_dgsp_type_free(t);
	amrma_dgsp_type_free(i1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_nested),
		cmocka_unit_test(test_random_deep),
		cmocka_unit_test(test_big_chunks),
		cmocka_unit_test(test_dense_chunks),
		cmocka_unit_test(test_seek_sublinear),
		cmocka_unit_test(test_seek_indexed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
