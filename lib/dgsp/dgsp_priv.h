/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal layout shared by the dgsp sources. Not installed. */
#ifndef DGSP_PRIV_H
#define DGSP_PRIV_H

#include <errno.h>

#include "amrma_dgsp.h"

/* Internal symbols stay out of libamrma's dynamic symbol table. */
#define DGSP_INTERNAL __attribute__((visibility("hidden")))

enum dgsp_tkind {
	TK_BASIC,
	TK_HVECTOR,
	TK_HSTRUCT,	/* also indexed, hindexed, blocks, dup */
	TK_RESIZED,
};

struct amrma_dgsp_type {
	uint32_t refcnt;
	enum dgsp_tkind kind;
	uint64_t size;
	int64_t lb, ub, true_lb, true_ub;
	bool lb_mark, ub_mark;	/* sticky explicit bounds (resized) */
	bool empty;		/* typemap has no entries and no markers */
	uint32_t depth;
	union {
		struct {
			uint64_t count, blocklen;
			int64_t stride;
			struct amrma_dgsp_type *child;
		} vec;
		struct {
			uint32_t n;
			uint64_t *bl;
			int64_t *disp;
			struct amrma_dgsp_type **child;
		} st;
		struct {
			struct amrma_dgsp_type *child;
		} rs;
	} u;
	struct amrma_dgsp *prog;	/* cached by commit */
};

/* Per-subroutine facts computed by the verifier (dgsp_analyze). */
struct dgsp_sub {
	uint32_t start;		/* first instruction */
	uint32_t term;		/* RET or ITERATE closing it */
	uint64_t iter;		/* body passes */
	int64_t stride;		/* base advance per pass */
	uint64_t body;		/* bytes per pass */
	uint64_t total;		/* bytes for all passes */
	uint64_t chunks;	/* chunks for all passes */
	uint64_t work;		/* chunks + calls for all passes */
	int64_t lo, hi;		/* footprint relative to base (hi exclusive) */
	bool touch;		/* any byte touched */
	uint32_t depth;		/* frames needed, self included */
	uint64_t ulen;		/* uniform MCOPY chunk length, see ulen_join */
};

/* In-memory instruction: operands plus cached analysis. */
struct dgsp_ins {
	uint8_t op;
	uint8_t ctl;
	uint32_t target;	/* GOSUB: callee instruction index */
	uint32_t callee;	/* GOSUB: callee subroutine index */
	int64_t off;
	uint64_t len;
	uint64_t count;
	int64_t stride;
	uint64_t pos;		/* packed offset within one body pass */
	uint64_t bytes;		/* packed bytes of this item */
};

/* Packed operands of COPY runs, the hot data of indexed types. */
struct dgsp_hot {
	int64_t off;
	uint64_t len;
};

struct amrma_dgsp {
	uint32_t ninsns, nsubs;
	struct dgsp_ins *ins;
	struct dgsp_hot *hot;	/* per instruction: COPY off/len */
	uint32_t *run;		/* COPYs in a row starting here (0: not COPY) */
	uint8_t *dense;		/* per COPY/MCOPY: enum dgsm_fill (mark_dense_run/_mcopy) */
	struct dgsp_sub *subs;
	uint32_t *sub_of;	/* instruction -> subroutine */
	int64_t lb, extent;
	struct amrma_dgsp_info info;
};

/* Verify p->ins (ops, targets, counts, bounds) and fill every cached fact. */
DGSP_INTERNAL enum amrma_dgsp_reason dgsp_analyze(struct amrma_dgsp *p,
		const struct amrma_dgsp_limits *lim);
/* Allocate an empty program able to hold n instructions. */
DGSP_INTERNAL struct amrma_dgsp *dgsp_alloc(uint32_t n);
/* DGS-RM: start master and worker machines at packed offset off for n bytes (also used
 * by the xmem backends). 0, -EINVAL or -ERANGE. */
DGSP_INTERNAL int dgsrm_start(struct amrma_dgsm *m, struct amrma_dgsm *w,
		const struct amrma_dgsrm_side *master,
		const struct amrma_dgsrm_side *worker, uint64_t off, uint64_t n);

/*
 * Gaps between big chunks stop the hardware stream prefetcher, so software
 * restarts it: the first 4 KiB of a chunk ahead, usually two chunks (measured: more,
 * or whole big chunks, is slower).
 */
static inline void
prefetch_head(uint64_t a, uint64_t len)
{
	const char *p = (const char *)(uintptr_t)a;
	uint64_t pl;

	for (pl = 0; pl < len && pl < 4096; pl += 64)
		__builtin_prefetch(p + pl);
}

/*
 * Streaming gathers of long chunks: the first 4 KiB of a chunk is fetched two
 * chunks ahead (prefetch_head), the rest while copying, this far ahead of the
 * loads. Measured (indexed, 16 KiB chunks): 0.55-0.61 of memcpy without,
 * 0.71-0.82 with; 2 KiB ahead 0.67-0.75.
 */
#define DGSM_NT_READ_AHEAD 4096

/*
 * Gathers of irregular blocks (runs of COPYs: indexed types) from 1 KiB up to
 * DGSM_RUN_MEMCPY_MAX go through memcpy even when the activation streams. Measured
 * with 16-byte streaming stores (indexed layout, ÷ memcpy of the same bytes,
 * streaming → memcpy): 1 KiB 0.55-0.57 → 0.67-0.71, 4 KiB 0.57-0.64 → 0.65-0.68,
 * 8 KiB 0.62-0.68 → 0.66-0.71; but 256 B 0.59-0.65 → 0.46-0.49 and 16 KiB (with the
 * read-ahead) 0.70-0.72 → 0.65-0.70. Regular (MCOPY) gathers keep streaming stores at
 * every size: 0.79-0.91 against 0.69-0.80 at 4 KiB.
 *
 * With 32-byte (AVX2) streaming stores only blocks under 2 KiB still gain from
 * memcpy. Measured (indexed, 32 MiB, alternating runs, memcpy → AVX2 streaming):
 * 1 KiB 0.66-0.71 → 0.55-0.65, 2 KiB 0.67-0.72 → 0.69-0.76, 4 KiB 0.60-0.71 →
 * 0.70-0.86, 8 KiB 0.64-0.68 → 0.78-0.86.
 */
#define DGSM_RUN_MEMCPY_MIN 1024
#define DGSM_RUN_MEMCPY_MAX 16384
#define DGSM_RUN_MEMCPY_MAX_AVX2 2048

/*
 * Gathers of mid-size chunks (256 B .. 1 KiB) with gaps between them starve
 * the stream prefetcher as well, and two chunks ahead is too late: fetch the
 * whole chunk `ahead` chunks ahead (a prefetch past the end of the data is only
 * a hint). Measured: 128 B chunks and scatters get slower with it.
 *
 * Regular (MCOPY) gathers look ahead by at least DGSM_PF_MID_SPAN bytes of source, in
 * whole chunks, up to DGSM_PF_MID_AHEAD_MAX of them: eight 256-byte chunks of a strided
 * layout are only 4 KiB ahead. Measured (32 MiB, ÷ memcpy, medians of 4 alternating
 * runs; 8 chunks → 8 KiB): struct-of-vector 256 B 0.63 → 0.72-0.77, strided 256 B 0.72
 * → 0.74-0.82 (two sets of runs); 512 B unchanged; 12 KiB no better. Irregular blocks
 * (runs of COPYs) keep 8: 16 was slower there (indexed 256 B 0.66 → 0.61). A plain read
 * of 256-byte blocks every 512 bytes runs at 9-10 GB/s without prefetching, 17 with it
 * 8 blocks ahead and 20-21 with 16 (memcpy of the same bytes: 18-21 GB/s).
 */
#define DGSM_PF_MID_MIN 256
#define DGSM_PF_MID_MAX 1024
#define DGSM_PF_MID_AHEAD 8
#define DGSM_PF_MID_SPAN 8192
#define DGSM_PF_MID_AHEAD_MAX 32
/*
 * Irregular 256 B - 1 KiB blocks of transfers under DGSM_PF_NEAR_MAX, whose source is
 * mostly in L2 (1 MiB a core here) and L3, are read this many blocks ahead instead.
 * Measured (indexed, one binary switching per run, medians of 12 and 6 runs, 8 → 4
 * blocks ahead): 1 MiB 256 B 0.68 → 0.73 of memcpy, 512 B packets 33.0 → 35.4 GB/s;
 * but 4 MiB 256 B 0.69 → 0.53.
 */
#define DGSM_PF_NEAR_MAX (2u << 20)
#define DGSM_PF_NEAR_AHEAD 4
/*
 * Gathers of 128-255 B pieces from DRAM (streaming, or the packets of a dense run) read
 * ahead too: regular chunks as those of DGSM_PF_MID_MIN and up, irregular blocks
 * DGSM_PF_SHORT_AHEAD ahead. Measured (32 MiB, ÷ memcpy, one binary switching per run,
 * medians of 4; none → with): strided 128 B 0.23 → 0.95 and 192 B 0.71 → 0.90, indexed
 * 128 B 0.59 → 0.72 and 192 B 0.59 → 0.73 (their packets 6.2 → 7.6 GB/s). Indexed blocks
 * 16 ahead: 0.67 and 0.72. Packets of regular chunks got slower with it (128 B: 10.2 →
 * 8.7 GB/s), scatters no faster (prefetched for writing 8, 16 or 32 ahead).
 */
#define DGSM_PF_SHORT_MIN 128
#define DGSM_PF_SHORT_AHEAD 32
/*
 * Regular gathers of 1-2 KiB chunks fetch a chunk this much source ahead instead of two
 * chunks (4 KiB of a strided layout). Measured (32 MiB, ÷ memcpy, 3 runs each, 2 chunks
 * → 8 / 16 / 32 KiB): strided 1 KiB 0.62-0.64 → 0.68-0.69 / 0.65-0.66 / 0.67-0.71,
 * struct-of-vector 1 KiB 0.69-0.77 → 0.72-0.82 / 0.84 / 0.82-0.85; 2 KiB chunks were
 * slightly slower with it (0.77-0.81 → 0.68-0.80), 4 KiB unchanged.
 */
#define DGSM_PF_LONG_SPAN 16384

/*
 * Scatters of irregular blocks (runs of COPYs) shorter than DGSM_SCATTER_NT_MIN store
 * through the cache even when the activation streams, with the destination prefetched
 * for writing DGSM_PF_W_AHEAD blocks ahead: such a block is mostly partial lines.
 * Measured (indexed layout, 32 MiB, ÷ memcpy): 256 B 0.47-0.49 streaming whole lines
 * only, 0.55-0.58 cached, 0.59-0.61 cached with the prefetch 8 ahead (4: 0.56-0.59,
 * 16: 0.59-0.60).
 *
 * Longer ones stream every byte, their partial first and last lines included
 * (stream_bytes() in dgsm.c): the write-combining buffer then sends only the bytes
 * written, and nothing of the block is read for ownership. Measured (blocks at 4-byte
 * offsets, 32 MiB, ÷ memcpy, one binary switching per run; whole lines streamed and
 * partial lines stored through the cache, prefetched for writing 16 blocks ahead →
 * every byte streamed, no prefetch): 256 B 0.63-0.66 → 0.80-0.84 (3 runs) and 0.72 →
 * 0.97 (median of 3); keeping the prefetch: 0.81 against 0.88 without (median of 4);
 * 512 B unchanged (0.99 → 0.98). From 128 instead of 256 B (4 runs): 128 B 0.56-0.61 →
 * 0.67-0.72, 192 B 0.49-0.60 → 0.76-0.81. From 64 B: 0.58 → 0.61; 32 B 0.51 → 0.37.
 * Regular chunks of 8-32 B streamed byte by byte: 0.17-0.53 against 0.60-0.75.
 */
#define DGSM_SCATTER_NT_MIN 128
#define DGSM_PF_W_AHEAD 8

/*
 * Every line of the block [a, a + len), at most DGSM_PF_MID_MAX bytes' worth, the last
 * one included: an unaligned start pushes it past len bytes, and it is a fifth of a
 * 256-byte block. Measured (indexed layout, blocks at 4-byte offsets, 32 MiB, ÷ memcpy,
 * 11 alternating pairs): 256 B 0.60-0.68 → 0.65-0.74 with the last line, better in every
 * pair; 512 and 768 B within the noise (0.59-0.66 and 0.61-0.74 either way).
 */
static inline void
prefetch_mid(uint64_t a, uint64_t len)
{
	const char *p = (const char *)(uintptr_t)(a & ~UINT64_C(63));
	uint64_t end = len + (a & 63), pl;

	for (pl = 0; pl < end && pl < DGSM_PF_MID_MAX; pl += 64)
		__builtin_prefetch(p + pl);
}

/*
 * prefetch_mid() for storing: the lines of a block a scatter is about to write. Built
 * for the DPDK baseline ISA (-march=corei7, no PREFETCHW) the hint compiles to the same
 * prefetcht0 as a read: every number measured with it is for that instruction.
 */
static inline void
prefetch_w(uint64_t a, uint64_t len)
{
	const char *p = (const char *)(uintptr_t)(a & ~UINT64_C(63));
	uint64_t end = len + (a & 63), pl;

	for (pl = 0; pl < end && pl < DGSM_PF_MID_MAX; pl += 64)
		__builtin_prefetch(p + pl, 1);
}

/*
 * Streaming gathers (activations from nt_threshold) of irregular blocks (runs of COPYs:
 * indexed types) read the gaps between them too when the run is dense (dgsp->dense,
 * enum dgsm_fill): the memory system fetches short gaps from DRAM anyway, and a stream
 * with holes keeps stopping the hardware prefetcher where a contiguous one does not.
 * Measured (docs/dgsp.md 8.1, session 25; indexed, 32 MiB, ÷ memcpy): 512 B 0.64 →
 * 0.86, 2 KiB 0.68 → 0.85, 4 KiB 0.67 → 0.80. What bounds it, each measured slower
 * outside: blocks of 256 B - 1 KiB from density 2/5 (the gaps at most 1.5 times the
 * data), 1-4 KiB from density 1/2 and streamed, never above 4 KiB; every gap of a run
 * read or none (hence one decision per run, and a cap that grows with the block); not
 * from cache (no streaming). Regular chunks (MCOPY) of 256 B - 2 KiB from density 1/2
 * likewise (strided, 32 MiB, one binary switching per repetition: 256 B 0.75-0.81 →
 * 0.83-0.85, 512 B 0.72-0.78 → 0.86-0.90, 1 KiB 0.72-0.73 → 0.84-0.87, 2 KiB 0.80-0.85
 * → 0.89-0.92).
 */
#define DGSM_GAP_FILL_NUM 3
#define DGSM_GAP_FILL_DEN 2
#define DGSM_GAP_FILL_MAX 4096
/* 1-4 KiB blocks: from density 1/2 only, DGSM_GAP_FILL_SPAN of data ahead */
#define DGSM_GAP_FILL_LEN_MAX 4096
#define DGSM_GAP_FILL_SPAN 32768
#define DGSM_GAP_FILL_AHEAD_MAX 16
/* regular chunks (MCOPY, strided layouts): up to 2 KiB (4 KiB ones lost: 0.89 → 0.84) */
#define DGSM_GAP_FILL_REGULAR_MAX 2048
/* a run with more than one unread gap in this many blocks is scattered, not dense */
#define DGSM_GAP_UNREAD_MAX 8

/* The longest gap before a block of len bytes that is read with it. */
static inline uint64_t
dgsm_gap_cap(uint64_t len)
{
	return len > DGSM_GAP_FILL_MAX / 2 ? 2 * len : DGSM_GAP_FILL_MAX;
}

/* How densely gaps of gap_sum bytes between chunks holding data_sum bytes are read. */
enum dgsm_fill {
	DGSM_FILL_NONE,
	DGSM_FILL_SHORT,	/* density >= 2/5: chunks under DGSM_PF_MID_MAX */
	DGSM_FILL_ALL,		/* density >= 1/2: up to DGSM_GAP_FILL_LEN_MAX as well */
};

static inline enum dgsm_fill
dgsm_gap_fill(uint64_t gap_sum, uint64_t data_sum)
{
	if (gap_sum <= data_sum)
		return DGSM_FILL_ALL;
	return gap_sum / DGSM_GAP_FILL_NUM <= data_sum / DGSM_GAP_FILL_DEN ?
	       DGSM_FILL_SHORT : DGSM_FILL_NONE;
}

/*
 * Whether a gather from DRAM of a layout marked fill reads the gap before a block of len
 * bytes: from 1 KiB only in streaming activations (nt), whose stores stream too.
 */
static inline bool
dgsm_fill_block(enum dgsm_fill fill, uint64_t len, bool nt)
{
	if (len < DGSM_PF_MID_MIN)
		return false;
	if (len < DGSM_PF_MID_MAX)
		return fill != DGSM_FILL_NONE;
	return nt && fill == DGSM_FILL_ALL && len <= DGSM_GAP_FILL_LEN_MAX;
}

/* How many blocks of len bytes ahead such a gather prefetches. */
static inline uint32_t
dgsm_fill_ahead(uint64_t len)
{
	if (len < DGSM_PF_MID_MAX)
		return DGSM_PF_MID_AHEAD;
	return DGSM_GAP_FILL_SPAN / len > DGSM_GAP_FILL_AHEAD_MAX ?
	       DGSM_GAP_FILL_AHEAD_MAX : (uint32_t)(DGSM_GAP_FILL_SPAN / len);
}

/*
 * Prefetch every line from *cur up to the end of [a, a + len): the block and, when
 * *cur is at most dgsm_gap_cap(len) before it, the gap up to it. *cur moves past the
 * block's last line.
 */
static inline void
prefetch_span(uint64_t *cur, uint64_t a, uint64_t len)
{
	uint64_t pa = a & ~UINT64_C(63), end = a + len;

	if (*cur < pa && pa - *cur <= dgsm_gap_cap(len))
		pa = *cur;
	for (; pa < end; pa += 64)
		__builtin_prefetch((const char *)(uintptr_t)pa);
	*cur = pa;
}

/*
 * Streaming stores 32 bytes at a time where the CPU has AVX2 (detected when the
 * library loads), 16 otherwise. Returns the previous setting; turning it on is
 * refused (false kept) on a CPU without AVX2. Process-wide: tests run both paths.
 */
DGSP_INTERNAL bool dgsm_use_avx2(bool on);

/* DGSM core, inline so the DGS-RM loops avoid calls per chunk. */

static inline void
dgsm_frame_main(struct amrma_dgsm *m)
{
	struct amrma_dgsm_frame *f = &m->f[0];

	m->depth = 0;
	f->pc = 0;
	f->sub = 0;
	f->iter = 0;
	f->base0 = m->addr + m->elem * (uint64_t)m->prog->extent;
	f->base = f->base0;
}

/* Point the top frame at a COPY/MCOPY with bytes left. Needs pos < total. */
static inline void
dgsm_settle(struct amrma_dgsm *m)
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
				dgsm_frame_main(m);
			} else {
				m->depth--;
				m->f[m->depth].pc++;
			}
			break;
		}
	}
}

static inline int
dgsm_peek(struct amrma_dgsm *m, uint64_t *addr, uint64_t *len)
{
	const struct amrma_dgsm_frame *f;
	const struct dgsp_ins *in;

	if (m->pos >= m->total)
		return -ENODATA;
	dgsm_settle(m);
	f = &m->f[m->depth];
	in = &m->prog->ins[f->pc];
	*addr = f->base + (uint64_t)in->off + m->k * (uint64_t)in->stride +
		m->done;
	*len = in->len - m->done;
	return 0;
}

static inline void
dgsm_advance(struct amrma_dgsm *m, uint64_t n)
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

#endif /* DGSP_PRIV_H */
