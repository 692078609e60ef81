/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared assertions: one paired type checked end to end against ref.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "check.h"
#include "dgsp_priv.h"	/* dgsm_use_avx2() */

static uint8_t
pat(int64_t off)
{
	return (uint8_t)((uint64_t)off * 2654435761u >> 13) ^ 0x5a;
}

void
check_bounds(const struct pt *p)
{
	struct amrma_dgsp_type_info ti;
	struct rbounds b;

	rmap_bounds(&p->m, &b);
	assert_int_equal(amrma_dgsp_type_get_info(p->t, &ti), 0);
	assert_int_equal(ti.size, b.size);
	assert_int_equal(ti.lb, b.lb);
	assert_int_equal(ti.extent, b.ub - b.lb);
	assert_int_equal(ti.true_lb, b.tlb);
	assert_int_equal(ti.true_extent, b.tub - b.tlb);
}

static int
cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static bool
has_dups(const int64_t *map, size_t n)
{
	int64_t *s = malloc((n + 1) * sizeof(*s));
	bool dup = false;
	size_t i;

	assert_non_null(s);
	memcpy(s, map, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp64);
	for (i = 1; i < n && !dup; i++)
		dup = s[i] == s[i - 1];
	free(s);
	return dup;
}

static void
check_prog(const struct amrma_dgsp *prog, const int64_t *map, size_t n,
		uint64_t count, uint64_t *rng, bool deep)
{
	static const size_t acts[] = { 1, 2, 3, 4, 5, 7, 8, 9, 13, 16, 17, 31,
		64, 100, 257, 4096 };
	struct tbuf src, dst, ref;
	struct amrma_dgsm m;
	uint8_t *exp, *got;
	uint64_t a, l, pos;
	size_t i, ai, nact;
	int t;

	tbuf_alloc(&src, map, n, 64);
	tbuf_alloc(&dst, map, n, 64);
	tbuf_alloc(&ref, map, n, 64);
	for (i = 0; i < src.len; i++)
		src.mem[i] = pat((int64_t)i);
	exp = malloc(n + 1);
	got = malloc(n + 1);
	assert_non_null(exp);
	assert_non_null(got);
	for (i = 0; i < n; i++)
		exp[i] = src.base[map[i]];

	/* Whole stream in one activation. */
	assert_int_equal(amrma_dgsm_init(&m, prog, src.base, count), 0);
	assert_int_equal(m.total, n);
	assert_int_equal(amrma_dgsm_gather(&m, got, n + 10), n);
	assert_memory_equal(got, exp, n);
	assert_int_equal(amrma_dgsm_left(&m), 0);

	/* Streaming-store path (normally only for huge activations), 32-byte stores
	 * where the CPU has them, then 16-byte ones. */
	for (t = 0; t < 2; t++) {
		bool had = dgsm_use_avx2(t == 0);

		assert_int_equal(amrma_dgsm_init(&m, prog, src.base, count), 0);
		m.nt_threshold = 0;
		memset(got, 0, n);
		got[n] = 0xa5;	/* streamed partial lines end at the buffer's end */
		assert_int_equal(amrma_dgsm_gather(&m, got, n), n);
		assert_memory_equal(got, exp, n);
		assert_int_equal(got[n], 0xa5);
		if (!has_dups(map, n)) {
			/* every byte outside the layout, gaps and guards, keeps its value:
			 * streamed partial lines write only the layout's bytes */
			memset(dst.mem, 0xee, dst.len);
			memset(ref.mem, 0xee, ref.len);
			for (i = 0; i < n; i++)
				ref.base[map[i]] = exp[i];
			amrma_dgsm_init(&m, prog, dst.base, count);
			m.nt_threshold = 0;
			assert_int_equal(amrma_dgsm_scatter(&m, exp, n), n);
			assert_memory_equal(dst.mem, ref.mem, ref.len);
			memset(dst.mem, 0, dst.len);
			memset(ref.mem, 0, ref.len);
		}
		dgsm_use_avx2(had);
	}

	/* Every chunk boundary against the byte map. */
	amrma_dgsm_init(&m, prog, src.base, count);
	pos = 0;
	while (amrma_dgsm_next(&m, UINT64_MAX, &a, &l) == 0) {
		assert_true(l > 0);
		for (i = 0; i < l; i++)
			assert_int_equal((int64_t)(a + i -
				(uint64_t)(uintptr_t)src.base), map[pos + i]);
		pos += l;
	}
	assert_int_equal(pos, n);

	/* Resumable: every activation size from 1 up. */
	nact = deep ? sizeof(acts) / sizeof(acts[0]) : 4;
	for (ai = 0; ai < nact; ai++) {
		amrma_dgsm_init(&m, prog, src.base, count);
		memset(got, 0, n);
		for (pos = 0; pos < n;)
			pos += amrma_dgsm_gather(&m, got + pos, acts[ai]);
		assert_memory_equal(got, exp, n);
	}

	/* Restart at random packed offsets (packets of a random MTU). */
	for (t = 0; t < (deep ? 24 : 6) && n > 0; t++) {
		uint64_t x = rng_range(rng, 0, n);
		size_t len = (size_t)rng_range(rng, 0, n - x);
		ssize_t r;

		if (rng_range(rng, 0, 1))
			amrma_dgsm_init(&m, prog, src.base, count);
		r = amrma_dgsm_gather_at(&m, x, got, len);
		assert_int_equal(r, (ssize_t)len);
		assert_memory_equal(got, exp + x, len);
	}
	assert_int_equal(amrma_dgsm_seek(&m, n + 1), -ERANGE);

	/* Scatter in packets, out of order unless the layout overlaps. */
	{
		size_t mtu = (size_t)rng_range(rng, 1, 64), np, k;
		size_t *order;

		np = n ? (n + mtu - 1) / mtu : 0;
		order = malloc((np + 1) * sizeof(*order));
		assert_non_null(order);
		for (k = 0; k < np; k++)
			order[k] = k;
		if (!has_dups(map, n)) {
			for (k = np; k > 1; k--) {
				size_t j = (size_t)rng_range(rng, 0, k - 1);
				size_t tmp = order[k - 1];

				order[k - 1] = order[j];
				order[j] = tmp;
			}
		}
		amrma_dgsm_init(&m, prog, dst.base, count);
		for (k = 0; k < np; k++) {
			uint64_t x = order[k] * mtu;
			size_t len = n - x < mtu ? n - x : mtu;

			assert_int_equal(amrma_dgsm_scatter_at(&m, x, exp + x,
					len), (ssize_t)len);
		}
		for (i = 0; i < n; i++)
			ref.base[map[i]] = exp[i];
		assert_memory_equal(dst.mem, ref.mem, ref.len);
		free(order);
	}
	free(exp);
	free(got);
	tbuf_free(&src);
	tbuf_free(&dst);
	tbuf_free(&ref);
}

void
check_pt(struct pt *p, uint64_t count, uint64_t *rng, bool deep)
{
	struct amrma_dgsp_info pi;
	const struct amrma_dgsp *prog;
	struct amrma_dgsp *loaded = NULL;
	enum amrma_dgsp_reason why;
	struct rbounds b;
	uint8_t *ser, *ser2;
	ssize_t sl;
	int64_t *map;
	size_t n;

	check_bounds(p);
	rmap_bounds(&p->m, &b);
	assert_int_equal(amrma_dgsp_type_commit(p->t), 0);
	prog = amrma_dgsp_type_program(p->t);
	assert_non_null(prog);
	amrma_dgsp_get_info(prog, &pi);
	assert_int_equal(pi.size, b.size);
	assert_int_equal(pi.extent, b.ub - b.lb);
	if (b.size > 0) {
		assert_int_equal(pi.true_lb, b.tlb);
		assert_int_equal(pi.true_ub, b.tub);
		assert_true(pi.chunks >= 1);
		assert_int_equal(pi.avg_chunk, pi.size / pi.chunks);
	}
	map = ref_bytemap(&p->m, count, &n);
	check_prog(prog, map, n, count, rng, deep);

	/* Round trip through the wire form, then run the loaded copy. */
	sl = amrma_dgsp_serialize(prog, NULL, 0);
	assert_true(sl >= AMRMA_DGSP_HDR_LEN);
	ser = malloc((size_t)sl);
	ser2 = malloc((size_t)sl);
	assert_int_equal(amrma_dgsp_serialize(prog, ser, (size_t)sl), sl);
	assert_int_equal(amrma_dgsp_serialize(prog, ser, (size_t)sl - 1),
			-ENOSPC);
	assert_int_equal(amrma_dgsp_load(ser, (size_t)sl, NULL, &loaded, &why),
			0);
	assert_int_equal(why, AMRMA_DGSP_OK);
	assert_int_equal(amrma_dgsp_serialize(loaded, ser2, (size_t)sl), sl);
	assert_memory_equal(ser, ser2, (size_t)sl);
	check_prog(loaded, map, n, count, rng, false);
	amrma_dgsp_free(loaded);
	free(ser);
	free(ser2);
	free(map);
}

struct amrma_dgsrm_side
side_of(const struct amrma_dgsp_type *t, const void *addr, uint64_t count)
{
	struct amrma_dgsrm_side s = {
		.prog = amrma_dgsp_type_program(t),
		.addr = (uint64_t)(uintptr_t)addr,
		.count = count,
	};

	return s;
}
