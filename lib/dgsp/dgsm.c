/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The DGSM: a resumable stack machine over a verified program.
 *
 * State is the frame stack plus (k, done) inside the current COPY/MCOPY,
 * so an activation may stop in the middle of any chunk and the next one
 * resumes there. seek() rebuilds that state for any packed offset by
 * descending the subroutine tree: at each level a division picks the body
 * pass and a binary search over the cached per-instruction packed offsets
 * picks the item, O(depth * log(width)) in all.
 */
#include <errno.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "dgsp_priv.h"

static void
frame_main(struct amrma_dgsm *m)
{
	struct amrma_dgsm_frame *f = &m->f[0];

	m->depth = 0;
	f->pc = 0;
	f->sub = 0;
	f->iter = 0;
	f->base0 = m->addr + m->elem * (uint64_t)m->prog->extent;
	f->base = f->base0;
}

int
amrma_dgsm_init_addr(struct amrma_dgsm *m, const struct amrma_dgsp *p,
		uint64_t addr, uint64_t count)
{
	if (m == NULL || p == NULL)
		return -EINVAL;
	if (p->info.size != 0 && count > UINT64_MAX / p->info.size)
		return -EOVERFLOW;
	m->prog = p;
	m->addr = addr;
	m->count = count;
	m->total = count * p->info.size;
	m->pos = 0;
	m->elem = 0;
	m->k = 0;
	m->done = 0;
	m->nt_threshold = AMRMA_DGSM_NT_DEFAULT;
	frame_main(m);
	return 0;
}

int
amrma_dgsm_init(struct amrma_dgsm *m, const struct amrma_dgsp *p, void *buf,
		uint64_t count)
{
	return amrma_dgsm_init_addr(m, p, (uint64_t)(uintptr_t)buf, count);
}

/* Point the top frame at a COPY/MCOPY with bytes left. Needs pos < total. */
static inline void
settle(struct amrma_dgsm *m)
{
	const struct amrma_dgsp *p = m->prog;

	for (;;) {
		struct amrma_dgsm_frame *f = &m->f[m->depth];
		const struct dgsp_ins *in = &p->ins[f->pc];
		const struct dgsp_sub *s;

		switch (in->op) {
		case AMRMA_DGSP_COPY:
		case AMRMA_DGSP_MCOPY:
			if (in->len != 0)
				return;
			f->pc++;
			break;
		case AMRMA_DGSP_GOSUB:
			s = &p->subs[in->callee];
			if (s->total == 0) {
				f->pc++;
				break;
			}
			f = &m->f[++m->depth];
			f->pc = s->start;
			f->sub = in->callee;
			f->iter = 0;
			f->base0 = m->f[m->depth - 1].base + (uint64_t)in->off;
			f->base = f->base0;
			break;
		default:	/* ITERATE or RET closes the body pass */
			s = &p->subs[f->sub];
			if (++f->iter < s->iter) {
				f->base += (uint64_t)s->stride;
				f->pc = s->start;
			} else if (m->depth == 0) {
				m->elem++;
				frame_main(m);
			} else {
				m->depth--;
				m->f[m->depth].pc++;
			}
			break;
		}
	}
}

int
amrma_dgsm_peek(struct amrma_dgsm *m, uint64_t *addr, uint64_t *len)
{
	const struct amrma_dgsm_frame *f;
	const struct dgsp_ins *in;

	if (m->pos >= m->total)
		return -ENODATA;
	settle(m);
	f = &m->f[m->depth];
	in = &m->prog->ins[f->pc];
	*addr = f->base + (uint64_t)in->off + m->k * (uint64_t)in->stride +
		m->done;
	*len = in->len - m->done;
	return 0;
}

void
amrma_dgsm_advance(struct amrma_dgsm *m, uint64_t n)
{
	struct amrma_dgsm_frame *f = &m->f[m->depth];
	const struct dgsp_ins *in = &m->prog->ins[f->pc];

	m->pos += n;
	m->done += n;
	if (m->done < in->len)
		return;
	m->done = 0;
	if (in->op == AMRMA_DGSP_MCOPY && ++m->k < in->count)
		return;
	m->k = 0;
	f->pc++;
}

int
amrma_dgsm_next(struct amrma_dgsm *m, uint64_t max, uint64_t *addr,
		uint64_t *len)
{
	int rc = amrma_dgsm_peek(m, addr, len);

	if (rc != 0)
		return rc;
	if (*len > max)
		*len = max;
	amrma_dgsm_advance(m, *len);
	return 0;
}

int
amrma_dgsm_seek(struct amrma_dgsm *m, uint64_t off)
{
	const struct amrma_dgsp *p = m->prog;
	uint64_t r;

	if (off > m->total)
		return -ERANGE;
	m->pos = off;
	m->k = 0;
	m->done = 0;
	if (off == m->total) {
		/* End state: nothing left, no frame is ever consulted. */
		m->elem = m->count;
		frame_main(m);
		return 0;
	}
	m->elem = off / p->info.size;
	r = off % p->info.size;
	frame_main(m);
	for (;;) {
		struct amrma_dgsm_frame *f = &m->f[m->depth];
		const struct dgsp_sub *s = &p->subs[f->sub];
		const struct dgsp_ins *in;
		uint32_t lo = s->start, hi = s->term;

		f->iter = r / s->body;
		r %= s->body;
		f->base = f->base0 + f->iter * (uint64_t)s->stride;
		/* pos[lo] <= r < pos[hi]: the item found has bytes > 0. */
		while (hi - lo > 1) {
			uint32_t mid = lo + (hi - lo) / 2;

			if (p->ins[mid].pos <= r)
				lo = mid;
			else
				hi = mid;
		}
		f->pc = lo;
		in = &p->ins[lo];
		r -= in->pos;
		if (in->op == AMRMA_DGSP_COPY) {
			m->done = r;
			return 0;
		}
		if (in->op == AMRMA_DGSP_MCOPY) {
			m->k = r / in->len;
			m->done = r % in->len;
			return 0;
		}
		f = &m->f[++m->depth];
		f->pc = p->subs[in->callee].start;
		f->sub = in->callee;
		f->base0 = m->f[m->depth - 1].base + (uint64_t)in->off;
	}
}

/*
 * nk chunks of len bytes, a advancing by st, c by len. Common short lengths
 * get a loop with a constant-size copy the compiler inlines; the generic
 * memcpy call costs a few ns per chunk, which matters below ~512 B.
 */
#define CHUNK_LOOP(L, SCAT) do {					\
	for (; nk > 0; nk--, a += st, c += (L)) {			\
		if (SCAT)						\
			memcpy((void *)(uintptr_t)a, c, (L));		\
		else							\
			memcpy(c, (void *)(uintptr_t)a, (L));		\
	}								\
} while (0)

/* Copy with streaming stores for the aligned middle; caller fences. */
static inline void
copy_nt(void *d, const void *s, uint64_t n)
{
#ifdef __SSE2__
	uint8_t *dp = d;
	const uint8_t *sp = s;
	uint64_t head = (16 - ((uintptr_t)dp & 15)) & 15;

	if (n < 128) {
		memcpy(d, s, n);
		return;
	}
	memcpy(dp, sp, head);
	dp += head;
	sp += head;
	n -= head;
	for (; n >= 64; n -= 64, dp += 64, sp += 64) {
		__m128i x0 = _mm_loadu_si128((const __m128i *)sp);
		__m128i x1 = _mm_loadu_si128((const __m128i *)(sp + 16));
		__m128i x2 = _mm_loadu_si128((const __m128i *)(sp + 32));
		__m128i x3 = _mm_loadu_si128((const __m128i *)(sp + 48));

		_mm_stream_si128((__m128i *)dp, x0);
		_mm_stream_si128((__m128i *)(dp + 16), x1);
		_mm_stream_si128((__m128i *)(dp + 32), x2);
		_mm_stream_si128((__m128i *)(dp + 48), x3);
	}
	memcpy(dp, sp, n);
#else
	memcpy(d, s, n);
#endif
}

static inline void
nt_fence(void)
{
#ifdef __SSE2__
	_mm_sfence();
#endif
}

/* One piece in the direction of the activation. */
static inline void
copy_dir(uint64_t a, uint8_t *c, uint64_t len, const bool scatter, bool nt)
{
	void *d = scatter ? (void *)(uintptr_t)a : (void *)c;
	const void *s = scatter ? (const void *)c : (const void *)(uintptr_t)a;

	if (nt)
		copy_nt(d, s, len);
	else
		memcpy(d, s, len);
}

static inline uint8_t *
chunks(uint8_t *c, uint64_t a, uint64_t len, uint64_t st, uint64_t nk,
		const bool scatter, bool nt)
{
	if (len >= 512) {
		/*
		 * Gaps between big chunks stop the hardware stream prefetcher;
		 * touching the chunk two ahead restarts it early.
		 */
		for (; nk > 0; nk--, a += st, c += len) {
			const char *nx = (const char *)(uintptr_t)(a + 2 * st);
			uint64_t pl;

			for (pl = 0; pl < len && pl < 4096; pl += 64)
				__builtin_prefetch(nx + pl);
			copy_dir(a, c, len, scatter, nt);
		}
		return c;
	}
	if (nt && len >= 128) {
		for (; nk > 0; nk--, a += st, c += len)
			copy_dir(a, c, len, scatter, true);
		return c;
	}
	switch (len) {
	case 4: CHUNK_LOOP(4, scatter); break;
	case 8: CHUNK_LOOP(8, scatter); break;
	case 16: CHUNK_LOOP(16, scatter); break;
	case 32: CHUNK_LOOP(32, scatter); break;
	case 64: CHUNK_LOOP(64, scatter); break;
	case 128: CHUNK_LOOP(128, scatter); break;
	case 256: CHUNK_LOOP(256, scatter); break;
	default: CHUNK_LOOP(len, scatter); break;
	}
	return c;
}

static inline size_t
run(struct amrma_dgsm *m, uint8_t *c, size_t n, const bool scatter)
{
	size_t left;
	bool nt;

	if (n > m->total - m->pos)
		n = (size_t)(m->total - m->pos);
	left = n;
	nt = n >= m->nt_threshold;
	while (left > 0) {
		struct amrma_dgsm_frame *f;
		const struct dgsp_ins *in;
		uint64_t a, piece;

		settle(m);
		f = &m->f[m->depth];
		in = &m->prog->ins[f->pc];
		a = f->base + (uint64_t)in->off;
		if (in->op == AMRMA_DGSP_MCOPY && m->done == 0 &&
				left >= in->len) {
			/* Whole chunks in a tight loop. */
			uint64_t len = in->len, k = m->k, st = in->stride;
			uint64_t nk = in->count - k;

			if (nk > left / len)
				nk = left / len;
			a += k * st;
			left -= nk * len;
			m->pos += nk * len;
			k += nk;
			c = chunks(c, a, len, st, nk, scatter, nt);
			if (k == in->count) {
				k = 0;
				f->pc++;
			}
			m->k = k;
			continue;
		}
		if (in->op == AMRMA_DGSP_COPY && m->done == 0 &&
				left >= in->len) {
			/* A run of whole COPYs (indexed types) without settle(). */
			const struct dgsp_ins *end =
				&m->prog->ins[m->prog->subs[f->sub].term];
			uint64_t base = f->base, moved = 0;

			do {
				a = base + (uint64_t)in->off;
				copy_dir(a, c, in->len, scatter, nt);
				c += in->len;
				moved += in->len;
				left -= in->len;
				in++;
			} while (in < end && in->op == AMRMA_DGSP_COPY &&
					left >= in->len);
			m->pos += moved;
			f->pc = (uint32_t)(in - m->prog->ins);
			continue;
		}
		if (in->op == AMRMA_DGSP_MCOPY)
			a += m->k * (uint64_t)in->stride;
		a += m->done;
		piece = in->len - m->done;
		if (piece > left)
			piece = left;
		copy_dir(a, c, piece, scatter, nt);
		c += piece;
		left -= piece;
		amrma_dgsm_advance(m, piece);
	}
	if (nt)
		nt_fence();
	return n;
}

size_t
amrma_dgsm_gather(struct amrma_dgsm *m, void *dst, size_t n)
{
	return run(m, dst, n, false);
}

size_t
amrma_dgsm_scatter(struct amrma_dgsm *m, const void *src, size_t n)
{
	return run(m, (uint8_t *)(uintptr_t)src, n, true);
}

ssize_t
amrma_dgsm_gather_at(struct amrma_dgsm *m, uint64_t off, void *dst, size_t n)
{
	if (off != m->pos && amrma_dgsm_seek(m, off) != 0)
		return -ERANGE;
	return (ssize_t)run(m, dst, n, false);
}

ssize_t
amrma_dgsm_scatter_at(struct amrma_dgsm *m, uint64_t off, const void *src,
		size_t n)
{
	if (off != m->pos && amrma_dgsm_seek(m, off) != 0)
		return -ERANGE;
	return (ssize_t)run(m, (uint8_t *)(uintptr_t)src, n, true);
}
