/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DGS-RM: the master machine walks the master (exporter's) program and
 * yields contiguous chunks in the master's address space; each chunk is
 * translated through the currently attached segment (local = master +
 * relocation constant), cut at the segment end, and handed to the worker
 * machine, which walks the local program and copies straight between the
 * two layouts. A chunk crossing a segment boundary is finished after the
 * next segment is attached, exactly like any other fragment.
 */
#include <errno.h>
#include <string.h>

#include "dgsp_priv.h"

/* Defaults from amrma-dgsp-bench crossovers, see docs/dgsp.md section 8. */
#define DEF_MIN_AVG_CHUNK 1024
#define DEF_MIN_BYTES 1024

struct mseg {
	const struct amrma_dgsrm_attach_ops *ops;
	struct amrma_dgsrm_seg seg;
	bool have;
};

void
amrma_dgsrm_thresholds_default(struct amrma_dgsrm_thresholds *t)
{
	t->min_avg_chunk = DEF_MIN_AVG_CHUNK;
	t->min_bytes = DEF_MIN_BYTES;
}

enum amrma_dgsrm_method
amrma_dgsrm_choose(const struct amrma_dgsp *master,
		const struct amrma_dgsp *worker, uint64_t nbytes,
		const struct amrma_dgsrm_thresholds *t)
{
	struct amrma_dgsrm_thresholds d;

	if (t == NULL) {
		amrma_dgsrm_thresholds_default(&d);
		t = &d;
	}
	/* Regular pairs run pair_run(): no per-chunk machine overhead. */
	if (worker != NULL && master->info.mcopy_len != 0 &&
			master->info.mcopy_len == worker->info.mcopy_len)
		return AMRMA_DGSRM_DIRECT;
	/* Fine grained: per-chunk worker activations cost more than a copy. */
	if (master->info.avg_chunk <= t->min_avg_chunk)
		return AMRMA_DGSRM_STAGED;
	/* Small: attach setup/teardown costs more than the copy saved. */
	if (nbytes < t->min_bytes)
		return AMRMA_DGSRM_STAGED;
	return AMRMA_DGSRM_DIRECT;
}

static void
mseg_release(struct mseg *ms)
{
	if (ms->have)
		ms->ops->detach(ms->ops->arg, &ms->seg);
	ms->have = false;
}

/* Local pointer for master address a; *len is cut at the segment end. */
static int
xlate(struct mseg *ms, uint64_t a, uint64_t *len, uint8_t **local)
{
	int rc;

	if (ms->ops == NULL) {
		*local = (uint8_t *)(uintptr_t)a;
		return 0;
	}
	if (!ms->have || a < ms->seg.lo || a >= ms->seg.hi) {
		mseg_release(ms);
		rc = ms->ops->attach(ms->ops->arg, a, &ms->seg);
		if (rc != 0)
			return rc;
		ms->have = true;
		if (a < ms->seg.lo || a >= ms->seg.hi) {
			mseg_release(ms);
			return -EFAULT;
		}
	}
	if (*len > ms->seg.hi - a)
		*len = ms->seg.hi - a;
	*local = (uint8_t *)(uintptr_t)(a + (uint64_t)ms->seg.reloc);
	return 0;
}

/* Both machines over their sides, positioned at packed offset off for n bytes. */
int
dgsrm_start(struct amrma_dgsm *m, struct amrma_dgsm *w,
		const struct amrma_dgsrm_side *master,
		const struct amrma_dgsrm_side *worker, uint64_t off, uint64_t n)
{
	int rc;

	if (master == NULL || worker == NULL || master->prog == NULL ||
			worker->prog == NULL)
		return -EINVAL;
	rc = amrma_dgsm_init_addr(m, master->prog, master->addr, master->count);
	if (rc == 0)
		rc = amrma_dgsm_init_addr(w, worker->prog, worker->addr,
				worker->count);
	if (rc != 0)
		return rc;
	if (off > m->total || n > m->total - off || off > w->total ||
			n > w->total - off)
		return -ERANGE;
	amrma_dgsm_seek(m, off);
	amrma_dgsm_seek(w, off);
	return 0;
}

/*
 * Both machines sit at the start of equal-length MCOPY chunks (the common
 * regular case): copy the run pairwise without per-chunk bookkeeping.
 * Returns bytes moved, 0 when the fast path does not apply.
 */
static uint64_t
pair_run(struct amrma_dgsm *m, struct amrma_dgsm *w, uint64_t left, bool pull,
		const struct amrma_dgsrm_seg *seg)
{
	struct amrma_dgsm_frame *mf = &m->f[m->depth], *wf = &w->f[w->depth];
	const struct dgsp_ins *mi = &m->prog->ins[mf->pc];
	const struct dgsp_ins *wi = &w->prog->ins[wf->pc];
	uint64_t len = mi->len, nk, ma, wa, j;

	if (mi->op != AMRMA_DGSP_MCOPY || wi->op != AMRMA_DGSP_MCOPY ||
			wi->len != len || m->done != 0 || w->done != 0)
		return 0;
	nk = mi->count - m->k;
	if (wi->count - w->k < nk)
		nk = wi->count - w->k;
	if (left / len < nk)
		nk = left / len;
	ma = mf->base + (uint64_t)mi->off + m->k * (uint64_t)mi->stride;
	wa = wf->base + (uint64_t)wi->off + w->k * (uint64_t)wi->stride;
	if (seg != NULL) {
		/* Every master chunk of the run must lie in this segment. */
		int64_t st = mi->stride;
		uint64_t lim;

		if (ma < seg->lo || ma + len > seg->hi)
			return 0;
		if (st > 0)
			lim = (seg->hi - ma - len) / (uint64_t)st + 1;
		else if (st < 0)
			lim = (ma - seg->lo) / (0 - (uint64_t)st) + 1;
		else
			lim = nk;
		if (lim < nk)
			nk = lim;
		ma += (uint64_t)seg->reloc;
	}
	if (nk < 2)
		return 0;
	/* Constant lengths let the compiler inline the short copies. */
#define PAIR_LOOP(L) do {						\
	for (j = 0; j < nk; j++) {					\
		if (pull)						\
			memcpy((void *)(uintptr_t)wa,			\
				(void *)(uintptr_t)ma, (L));		\
		else							\
			memcpy((void *)(uintptr_t)ma,			\
				(void *)(uintptr_t)wa, (L));		\
		ma += (uint64_t)mi->stride;				\
		wa += (uint64_t)wi->stride;				\
	}								\
} while (0)
	switch (len) {
	case 4: PAIR_LOOP(4); break;
	case 8: PAIR_LOOP(8); break;
	case 16: PAIR_LOOP(16); break;
	case 32: PAIR_LOOP(32); break;
	case 64: PAIR_LOOP(64); break;
	default:
		if (len < 512) {
			PAIR_LOOP(len);
			break;
		}
		/* Page-sized gaps stall the stream prefetcher: lead it. */
		for (j = 0; j < nk; j++) {
			prefetch_head(ma + 2 * (uint64_t)mi->stride, len);
			prefetch_head(wa + 2 * (uint64_t)wi->stride, len);
			if (pull)
				memcpy((void *)(uintptr_t)wa,
					(void *)(uintptr_t)ma, len);
			else
				memcpy((void *)(uintptr_t)ma,
					(void *)(uintptr_t)wa, len);
			ma += (uint64_t)mi->stride;
			wa += (uint64_t)wi->stride;
		}
		break;
	}
#undef PAIR_LOOP
	m->k += nk;
	m->pos += nk * len;
	if (m->k == mi->count) {
		m->k = 0;
		mf->pc++;
	}
	w->k += nk;
	w->pos += nk * len;
	if (w->k == wi->count) {
		w->k = 0;
		wf->pc++;
	}
	return nk * len;
}

int64_t
amrma_dgsrm_direct(const struct amrma_dgsrm_side *master,
		const struct amrma_dgsrm_side *worker, enum amrma_dgsrm_mode mode,
		const struct amrma_dgsrm_attach_ops *ops, uint64_t off, uint64_t n)
{
	struct amrma_dgsm m, w;
	struct mseg ms = { ops, { 0, 0, 0, NULL }, false };
	uint64_t left = n;
	int rc;

	rc = dgsrm_start(&m, &w, master, worker, off, n);
	if (rc != 0)
		return rc;
	while (left > 0) {
		uint64_t ma = 0, ml = 0, wa = 0, wl = 0, done;
		uint8_t *lp;

		dgsm_peek(&m, &ma, &ml);
		if (ml > left)
			ml = left;
		rc = xlate(&ms, ma, &ml, &lp);
		if (rc != 0)
			break;
		dgsm_peek(&w, &wa, &wl);
		done = pair_run(&m, &w, left, mode == AMRMA_DGSRM_PULL,
				ops != NULL ? &ms.seg : NULL);
		if (done > 0) {
			left -= done;
			continue;
		}
		/* The worker fills/drains this master fragment chunk by chunk. */
		dgsm_advance(&m, ml);
		left -= ml;
		while (ml > 0) {
			dgsm_peek(&w, &wa, &wl);
			if (wl > ml)
				wl = ml;
			dgsm_advance(&w, wl);
			if (mode == AMRMA_DGSRM_PULL)
				memcpy((void *)(uintptr_t)wa, lp, wl);
			else
				memcpy(lp, (void *)(uintptr_t)wa, wl);
			lp += wl;
			ml -= wl;
		}
	}
	mseg_release(&ms);
	return rc != 0 ? rc : (int64_t)n;
}

/* Copy between the master layout and a contiguous buffer. */
static int
master_xfer(struct amrma_dgsm *m, struct mseg *ms, uint8_t *buf, uint64_t n,
		bool to_master)
{
	uint64_t a = 0, l = 0;
	uint8_t *lp;
	int rc;

	if (ms->ops == NULL) {
		if (to_master)
			amrma_dgsm_scatter(m, buf, n);
		else
			amrma_dgsm_gather(m, buf, n);
		return 0;
	}
	while (n > 0) {
		dgsm_peek(m, &a, &l);
		if (l > n)
			l = n;
		rc = xlate(ms, a, &l, &lp);
		if (rc != 0)
			return rc;
		if (to_master)
			memcpy(lp, buf, l);
		else
			memcpy(buf, lp, l);
		dgsm_advance(m, l);
		buf += l;
		n -= l;
	}
	return 0;
}

int64_t
amrma_dgsrm_staged(const struct amrma_dgsrm_side *master,
		const struct amrma_dgsrm_side *worker, enum amrma_dgsrm_mode mode,
		const struct amrma_dgsrm_attach_ops *ops, void *stage,
		size_t stage_len, uint64_t off, uint64_t n)
{
	struct amrma_dgsm m, w;
	struct mseg ms = { ops, { 0, 0, 0, NULL }, false };
	uint64_t left = n;
	int rc;

	if (stage == NULL || stage_len == 0)
		return -EINVAL;
	rc = dgsrm_start(&m, &w, master, worker, off, n);
	if (rc != 0)
		return rc;
	/* Fill-drain cycles over the one staging buffer. */
	while (left > 0 && rc == 0) {
		uint64_t c = left < stage_len ? left : stage_len;

		if (mode == AMRMA_DGSRM_PULL) {
			rc = master_xfer(&m, &ms, stage, c, false);
			amrma_dgsm_scatter(&w, stage, c);
		} else {
			amrma_dgsm_gather(&w, stage, c);
			rc = master_xfer(&m, &ms, stage, c, true);
		}
		left -= c;
	}
	mseg_release(&ms);
	return rc != 0 ? rc : (int64_t)n;
}

int64_t
amrma_dgsrm_copy(const struct amrma_dgsrm_side *master,
		const struct amrma_dgsrm_side *worker, enum amrma_dgsrm_mode mode,
		const struct amrma_dgsrm_attach_ops *ops,
		const struct amrma_dgsrm_thresholds *t, void *stage,
		size_t stage_len, uint64_t off, uint64_t n)
{
	if (master == NULL || master->prog == NULL)
		return -EINVAL;
	if (stage != NULL && stage_len > 0 &&
			amrma_dgsrm_choose(master->prog,
				worker != NULL ? worker->prog : NULL, n, t) ==
			AMRMA_DGSRM_STAGED)
		return amrma_dgsrm_staged(master, worker, mode, ops, stage,
				stage_len, off, n);
	return amrma_dgsrm_direct(master, worker, mode, ops, off, n);
}
