/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * amrma-dgsp-bench: DGSM gather/scatter throughput beside memcpy of the
 * same bytes, and DGS-RM direct vs staged, in one address space and across
 * processes (memfd attach and process_vm). JSON lines on stdout; every
 * value is the median of several repetitions.
 */
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "amrma_dgsp.h"
#include "bench_median.h"
#include "amrma_xmem.h"

#define STAGE (64 * 1024)
#define MAXREP 41

enum layout { L_STRIDED, L_INDEXED, L_STRUCTVEC, L_NLAYOUT };
static const char *const lname[] = { "strided", "indexed", "struct_vector" };

static const char *const iname[] = { "inproc", "inproc_indexed", "" };
static int reps = 5;

static double
now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/*
 * Single-threaded sections time this thread's CPU: on a shared box the
 * thread is often descheduled mid-copy and wall time then measures the
 * neighbours. Cross-process sections need wall time (two processes work
 * at once) and say so in their layout names.
 */
static double
cpu_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static void
emit(const char *name, double value, const char *unit, uint64_t size,
		const char *layout, uint64_t bytes)
{
	printf("{\"name\":\"%s\",\"value\":%.4f,\"unit\":\"%s\",\"size\":%llu,"
		"\"layout\":\"%s\",\"bytes\":%llu,\"reps\":%d}\n", name, value,
		unit, (unsigned long long)size, layout,
		(unsigned long long)bytes, reps);
	fflush(stdout);
}

static void
die(const char *what, int rc)
{
	fprintf(stderr, "amrma-dgsp-bench: %s: %s\n", what, strerror(-rc));
	exit(1);
}

/*
 * A layout of chunk length c moving about `want` bytes; all displacements
 * are >= 0, the buffer needs *span bytes.
 */
static struct amrma_dgsp_type *
mk_layout(enum layout l, uint64_t c, uint64_t want, int64_t stride_mul,
		uint64_t *count, uint64_t *span)
{
	struct amrma_dgsp_type *b, *t = NULL, *v, *s, *parts[2];
	uint64_t n, i, bl[2] = { 1, 1 };
	int64_t *d, disp[2];
	int rc;

	amrma_dgsp_type_basic(1, &b);
	*count = 1;
	switch (l) {
	case L_STRIDED:
		n = want / c ? want / c : 1;
		rc = amrma_dgsp_type_hvector(n, c, (int64_t)c * stride_mul, b, &t);
		*span = n * c * (uint64_t)stride_mul;
		break;
	case L_INDEXED:
		/* Irregular gaps; blocks capped so the program stays small. */
		n = want / c ? want / c : 1;
		if (n > (1u << 18))
			n = 1u << 18;
		d = malloc(n * sizeof(*d));
		for (i = 0; i < n; i++)
			d[i] = (int64_t)(i * 2 * c +
				((i * 2654435761u >> 7) % (c / 8 + 1)) * 8 / 2);
		rc = amrma_dgsp_type_hindexed_block((uint32_t)n, c, d, b, &t);
		free(d);
		*span = n * 2 * c + c;
		break;
	default:
		/* struct of two interleaved 16-chunk vectors, 48c extent */
		amrma_dgsp_type_hvector(16, c, 3 * (int64_t)c, b, &v);
		parts[0] = v;
		parts[1] = v;
		disp[0] = 0;
		disp[1] = (int64_t)c;
		amrma_dgsp_type_struct(2, bl, disp, parts, &s);
		rc = amrma_dgsp_type_resized(s, 0, 48 * (int64_t)c, &t);
		amrma_dgsp_type_free(s);
		amrma_dgsp_type_free(v);
		*count = want / (32 * c) ? want / (32 * c) : 1;
		*span = *count * 48 * c;
		break;
	}
	amrma_dgsp_type_free(b);
	if (rc != 0)
		die("type", rc);
	rc = amrma_dgsp_type_commit(t);
	if (rc != 0)
		die("commit", rc);
	return t;
}

static void *
xalloc(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap", -errno);
	memset(p, 0x5a, len);	/* fault in */
	return p;
}

/* ---------------- gather / scatter vs memcpy ---------------- */

/* The layout's pieces (address, length) in order, listed before any clock runs. */
static uint64_t
list_pieces(const struct amrma_dgsp *p, uint8_t *disc, uint64_t count, uint64_t **pa,
	    uint64_t **pl)
{
	uint64_t n = 0, cap = 1024, addr, len;
	struct amrma_dgsm m;

	*pa = malloc(cap * sizeof(**pa));
	*pl = malloc(cap * sizeof(**pl));
	amrma_dgsm_init(&m, p, disc, count);
	while (*pa != NULL && *pl != NULL && amrma_dgsm_peek(&m, &addr, &len) == 0 && len != 0) {
		if (n == cap) {
			cap *= 2;
			*pa = realloc(*pa, cap * sizeof(**pa));
			*pl = realloc(*pl, cap * sizeof(**pl));
			if (*pa == NULL || *pl == NULL)
				break;
		}
		(*pa)[n] = addr;
		(*pl)[n++] = len;
		amrma_dgsm_advance(&m, len);
	}
	if (*pa == NULL || *pl == NULL)
		die("list pieces", -ENOMEM);
	return n;
}

/* where the reads' sum goes, so the compiler keeps the reads */
static volatile uint64_t read_sink;

/*
 * What reading only the layout's bytes costs: the time to read one word of every cache
 * line the layout touches, in the layout's order, over the time to read one word of every
 * line of its span in address order. At 1 or more with gaps in the layout, the memory
 * system fetches the gaps too (prefetchers work in lines, pairs of lines and pages) or
 * the order defeats its stream prefetch, and a gather pays for the whole span where
 * memcpy reads only its bytes.
 */
static double
read_pattern_vs_span(const struct amrma_dgsp *p, uint8_t *disc, uint64_t count, uint64_t span)
{
	uint64_t *pa, *pl, n = list_pieces(p, disc, count, &pa, &pl), i, a;
	double ts[MAXREP], tp[MAXREP], t0;
	int r;

	for (r = 0; r < reps; r++) {
		uint64_t s = 0;

		t0 = cpu_ns();
		for (a = 0; a < span; a += 64)
			s += *(const uint64_t *)(disc + a);
		ts[r] = cpu_ns() - t0;
		t0 = cpu_ns();
		for (i = 0; i < n; i++)
			for (a = pa[i] & ~UINT64_C(63); a < pa[i] + pl[i]; a += 64)
				s += *(const uint64_t *)(uintptr_t)a;
		tp[r] = cpu_ns() - t0;
		read_sink += s;
	}
	free(pa);
	free(pl);
	return bench_median(tp, reps) / bench_median(ts, reps);
}

/*
 * Copy whole 64-byte lines with streaming stores, the rest with memcpy: the partial
 * first line through memcpy, then whole lines from the first line boundary.
 */
static void
copy_stream(uint8_t *d, const uint8_t *s, uint64_t n)
{
#ifdef __SSE2__
	uint64_t head = (64 - ((uintptr_t)d & 63)) & 63;

	if (n >= head + 64) {
		memcpy(d, s, head);
		d += head;
		s += head;
		n -= head;
	}
	for (; n >= 64 && ((uintptr_t)d & 63) == 0; n -= 64, d += 64, s += 64) {
		__m128i x0 = _mm_loadu_si128((const __m128i *)s);
		__m128i x1 = _mm_loadu_si128((const __m128i *)(s + 16));
		__m128i x2 = _mm_loadu_si128((const __m128i *)(s + 32));
		__m128i x3 = _mm_loadu_si128((const __m128i *)(s + 48));

		_mm_stream_si128((__m128i *)d, x0);
		_mm_stream_si128((__m128i *)(d + 16), x1);
		_mm_stream_si128((__m128i *)(d + 32), x2);
		_mm_stream_si128((__m128i *)(d + 48), x3);
	}
#endif
	memcpy(d, s, n);
}

/* An operation that fills or empties pk[0, bytes), timed against memcpy of those bytes. */
typedef void (*bytes_op_t)(void *arg, uint8_t *pk, uint64_t bytes);

/*
 * reps runs of op, each timed right after a memcpy of the same bytes: tm[r] and top[r]
 * their times (when not NULL), ratio[r] memcpy's over op's.
 */
static void
time_vs_memcpy(bytes_op_t op, void *arg, uint8_t *pk, const uint8_t *ref, uint64_t bytes,
	       double *tm, double *top, double *ratio)
{
	double t0, t1, t2;
	int r;

	for (r = -1; r < reps; r++) {
		/* r == -1 warms caches and TLBs and is not recorded */
		t0 = cpu_ns();
		memcpy(pk, ref, bytes);
		t1 = cpu_ns();
		op(arg, pk, bytes);
		t2 = cpu_ns();
		if (r < 0)
			continue;
		if (tm != NULL) {
			tm[r] = t1 - t0;
			top[r] = t2 - t1;
		}
		ratio[r] = (t1 - t0) / (t2 - t1);
	}
}

/* A whole gather or scatter of the layout by the DGSM. */
struct dgsm_op {
	const struct amrma_dgsp *p;
	uint8_t *disc;
	uint64_t count;
	bool scatter;
};

static void
dgsm_run(void *arg, uint8_t *pk, uint64_t bytes)
{
	const struct dgsm_op *o = arg;
	struct amrma_dgsm m;

	amrma_dgsm_init(&m, o->p, o->disc, o->count);
	if (o->scatter)
		amrma_dgsm_scatter(&m, pk, bytes);
	else
		amrma_dgsm_gather(&m, pk, bytes);
}

/*
 * A simple gather or scatter: memcpy or streaming stores per piece, with or without
 * fetching the pieces SIMPLE_AHEAD ahead (for a scatter: for writing).
 */
#define SIMPLE_AHEAD 4
struct simple_op {
	const uint64_t *pa, *pl;	/* the pieces: addresses, lengths */
	uint64_t n;
	int how;			/* bit 0: streaming stores, bit 1: read ahead */
	bool scatter;
};

static void
simple_run(void *arg, uint8_t *pk, uint64_t bytes)
{
	const struct simple_op *o = arg;
	uint64_t i, a;

	(void)bytes;	/* the pieces add up to it */
	for (i = 0; i < o->n; i++) {
		uint8_t *piece = (uint8_t *)(uintptr_t)o->pa[i];

		if ((o->how & 2) && i + SIMPLE_AHEAD < o->n)
			for (a = 0; a < o->pl[i + SIMPLE_AHEAD] + 63 && a < 1024; a += 64) {
				const void *line = (const void *)(uintptr_t)
						   (o->pa[i + SIMPLE_AHEAD] + a);

				if (o->scatter)
					__builtin_prefetch(line, 1);
				else
					__builtin_prefetch(line);
			}
		if (o->how & 1)
			copy_stream(o->scatter ? piece : pk, o->scatter ? pk : piece, o->pl[i]);
		else
			memcpy(o->scatter ? piece : pk, o->scatter ? pk : piece, o->pl[i]);
		pk += o->pl[i];
	}
#ifdef __SSE2__
	_mm_sfence();
#endif
}

/*
 * The best of the simple gathers (or scatters) of the layout (memcpy per piece, with and
 * without fetching 4 pieces ahead; from AMRMA_DGSM_NT_DEFAULT bytes, as the DGSM, also
 * streaming stores per piece) over memcpy of the same bytes, paired per repetition as in
 * bench_dgsm(): what straightforward code gets from this memory system for this layout,
 * the yardstick for gather_vs_memcpy and scatter_vs_memcpy. Below that size the
 * streaming kinds are not a fair entry: they push the destination out of the cache and
 * the memcpy timed next pays for it. Measured (1 MiB, indexed gathers, 3 alternating
 * runs, with them → without): 512 B 1.17-1.18 → 0.87, 4 KiB 1.13-1.15 → 0.97.
 */
static double
simple_vs_memcpy(const struct amrma_dgsp *p, uint8_t *disc, uint64_t count, bool scatter,
		 uint8_t *pk, const uint8_t *ref, uint64_t bytes)
{
	uint64_t *pa, *pl, n = list_pieces(p, disc, count, &pa, &pl);
	struct simple_op o = { .pa = pa, .pl = pl, .n = n, .scatter = scatter };
	double best = 0, rr[MAXREP], x;

	for (o.how = 0; o.how < 4; o.how++) {
		if ((o.how & 1) && bytes < AMRMA_DGSM_NT_DEFAULT)
			continue;
		time_vs_memcpy(simple_run, &o, pk, ref, bytes, NULL, NULL, rr);
		x = bench_median(rr, reps);
		if (x > best)
			best = x;
	}
	free(pa);
	free(pl);
	return best;
}

/*
 * Gathers and scatters of less than 8 MiB are timed over proportionally more repetitions
 * (up to MAXREP): one of 1 MiB takes tens of microseconds, and a slow spell of the shared
 * machine, in which the DGSM and a plain memcpy loop both fall to 0.4 of memcpy for a few
 * iterations, would decide a median of 5.
 */
static int
reps_for(uint64_t bytes)
{
	uint64_t n = (uint64_t)reps * ((8u << 20) / (bytes ? bytes : 1));

	if (n < (uint64_t)reps)
		n = (uint64_t)reps;
	return n > MAXREP ? MAXREP : (int)n;
}

static void
bench_dgsm(enum layout l, uint64_t c, uint64_t want)
{
	struct amrma_dgsp_type *t;
	const struct amrma_dgsp *p;
	struct amrma_dgsm m;
	uint64_t count, span, bytes, off;
	double tm[2 * MAXREP], tg[MAXREP], ts[MAXREP], tp[MAXREP];
	double rg[MAXREP], rs[MAXREP], t0, t1;
	uint8_t *disc, *pk, *ref;
	struct dgsm_op gop;
	int r, reps_saved = reps;

	t = mk_layout(l, c, want, 2, &count, &span);
	p = amrma_dgsp_type_program(t);
	amrma_dgsm_init(&m, p, NULL, count);
	bytes = m.total;
	reps = reps_for(bytes);	/* for this layout's results, the helpers' and emit()'s */
	disc = xalloc(span);
	pk = xalloc(bytes);
	ref = xalloc(bytes);
	/*
	 * Each gather/scatter is timed right after its own memcpy and the ratio is taken per
	 * repetition: on a shared machine bandwidth swings by 3x between milliseconds, and
	 * pairing cancels most of it. Gathers, scatters and the packet path each run in
	 * their own loop: strided 512 B-1 KiB gathers timed after a scatter of the same
	 * buffer measured 0.67-0.74 of memcpy, on their own 0.76-0.86 (most likely the
	 * scatter's dirty lines being written back during the gather).
	 */
	gop = (struct dgsm_op){ .p = p, .disc = disc, .count = count, .scatter = false };
	time_vs_memcpy(dgsm_run, &gop, pk, ref, bytes, tm, tg, rg);
	gop.scatter = true;
	time_vs_memcpy(dgsm_run, &gop, pk, ref, bytes, tm + reps, ts, rs);
	for (r = -1; r < reps; r++) {
		/* Packet path: 1500-byte activations, as the NIC would. */
		t0 = cpu_ns();
		amrma_dgsm_init(&m, p, disc, count);
		for (off = 0; off < bytes; off += 1500)
			amrma_dgsm_gather(&m, pk + off, 1500);
		t1 = cpu_ns();
		if (r >= 0)
			tp[r] = t1 - t0;
	}
	{
		double bm = (double)bytes / bench_median(tm, 2 * reps);
		double bg = (double)bytes / bench_median(tg, reps);
		double bs = (double)bytes / bench_median(ts, reps);
		double bp = (double)bytes / bench_median(tp, reps);

		emit("memcpy_gbps", bm, "GB/s", c, lname[l], bytes);
		emit("gather_gbps", bg, "GB/s", c, lname[l], bytes);
		emit("scatter_gbps", bs, "GB/s", c, lname[l], bytes);
		emit("gather_mtu1500_gbps", bp, "GB/s", c, lname[l], bytes);
		emit("gather_vs_memcpy", bench_median(rg, reps), "ratio", c,
			lname[l], bytes);
		emit("scatter_vs_memcpy", bench_median(rs, reps), "ratio", c,
			lname[l], bytes);
	}
	if (c >= 256) {
		emit("read_pattern_vs_span", read_pattern_vs_span(p, disc, count, span), "ratio",
		     c, lname[l], bytes);
		emit("simple_gather_vs_memcpy",
		     simple_vs_memcpy(p, disc, count, false, pk, ref, bytes), "ratio", c,
		     lname[l], bytes);
		emit("simple_scatter_vs_memcpy",
		     simple_vs_memcpy(p, disc, count, true, pk, ref, bytes), "ratio", c,
		     lname[l], bytes);
	}
	munmap(disc, span);
	munmap(pk, bytes);
	munmap(ref, bytes);
	amrma_dgsp_type_free(t);
	reps = reps_saved;
}

/* ---------------- DGS-RM in one address space ---------------- */

static double
bench_inproc(uint64_t c, uint64_t want, enum layout wl)
{
	struct amrma_dgsp_type *ts, *td;
	struct amrma_dgsrm_side ms, ws;
	uint64_t cs, cd, ss, sd, bytes;
	double td_[MAXREP], tst[MAXREP], rr[MAXREP], t0, t1, t2, dg, sg, ratio;
	uint8_t *src, *dst, *stage;
	struct amrma_dgsm m;
	int r, rc;

	ts = mk_layout(L_STRIDED, c, want, 2, &cs, &ss);
	td = mk_layout(wl, c, want, 3, &cd, &sd);
	src = xalloc(ss);
	dst = xalloc(sd);
	stage = xalloc(STAGE);
	ms.prog = amrma_dgsp_type_program(ts);
	ms.addr = (uint64_t)(uintptr_t)src;
	ms.count = cs;
	ws.prog = amrma_dgsp_type_program(td);
	ws.addr = (uint64_t)(uintptr_t)dst;
	ws.count = cd;
	amrma_dgsm_init(&m, ms.prog, NULL, cs);
	bytes = m.total;
	amrma_dgsm_init(&m, ws.prog, NULL, cd);
	if (m.total < bytes)
		bytes = m.total;
	for (r = -1; r < reps; r++) {
		t0 = cpu_ns();
		rc = (int)amrma_dgsrm_direct(&ms, &ws, AMRMA_DGSRM_PULL, NULL, 0,
				bytes);
		if (rc < 0)
			die("direct", rc);
		t1 = cpu_ns();
		amrma_dgsrm_staged(&ms, &ws, AMRMA_DGSRM_PULL, NULL, stage,
				STAGE, 0, bytes);
		t2 = cpu_ns();
		if (r < 0)
			continue;
		td_[r] = t1 - t0;
		tst[r] = t2 - t1;
		rr[r] = (t2 - t1) / (t1 - t0);	/* paired, as in bench_dgsm */
	}
	dg = (double)bytes / bench_median(td_, reps);
	sg = (double)bytes / bench_median(tst, reps);
	ratio = bench_median(rr, reps);
	emit("direct_gbps", dg, "GB/s", c, iname[wl], bytes);
	emit("staged_gbps", sg, "GB/s", c, iname[wl], bytes);
	emit("direct_vs_staged", ratio, "ratio", c, iname[wl], bytes);
	munmap(src, ss);
	munmap(dst, sd);
	munmap(stage, STAGE);
	amrma_dgsp_type_free(ts);
	amrma_dgsp_type_free(td);
	return ratio;
}

/* ---------------- across processes ---------------- */

enum { CMD_EXPORT = 1, CMD_STAGE, CMD_QUIT };

/* Shared by parent and exporter child (MAP_SHARED before fork). */
struct ctl {
	_Atomic uint64_t cmd_seq, done_seq;
	_Atomic uint64_t filled, drained;
	uint64_t cmd, c, n;
	uint8_t stage[2][STAGE];
};

static void
spin_until(_Atomic uint64_t *v, uint64_t want)
{
	int i = 0;

	while (atomic_load_explicit(v, memory_order_acquire) < want)
		if (++i % 64 == 0)
			sched_yield();
}

static void
child(int sock, struct ctl *cl, uint64_t want)
{
	struct amrma_xmem_region *reg;
	struct amrma_dgsp_type *t = NULL;
	struct amrma_xmem_export ex;
	uint64_t seq = 0, count = 0, span, k;
	struct amrma_dgsm m;
	uint8_t *mem;
	int rc;

	/* Strided source: chunk c every 2c, all inside the region. */
	rc = amrma_xmem_region_create(2 * want + 2 * 65536, 0, &reg);
	if (rc != 0)
		die("region", rc);
	mem = amrma_xmem_region_addr(reg);
	memset(mem, 0x33, amrma_xmem_region_len(reg));
	for (;;) {
		spin_until(&cl->cmd_seq, ++seq);
		switch (cl->cmd) {
		case CMD_EXPORT:
			amrma_dgsp_type_free(t);
			t = mk_layout(L_STRIDED, cl->c, want, 2, &count, &span);
			memset(&ex, 0, sizeof(ex));
			ex.backend = AMRMA_XMEM_MEMFD;
			ex.region = reg;
			ex.prog = amrma_dgsp_type_program(t);
			ex.addr = (uint64_t)(uintptr_t)mem;
			ex.count = count;
			if (amrma_xmem_export_send(sock, &ex) != 0)
				_exit(2);
			ex.backend = AMRMA_XMEM_PVM;
			ex.base = (uint64_t)(uintptr_t)mem;
			ex.len = amrma_xmem_region_len(reg);
			if (amrma_xmem_export_send(sock, &ex) != 0)
				_exit(2);
			break;
		case CMD_STAGE:
			/* Fill side of the fill/drain cycle, two slots, over the last
			 * export's layout */
			if (t == NULL)
				_exit(3);
			amrma_dgsm_init(&m, amrma_dgsp_type_program(t), mem,
					count);
			for (k = 0; k * STAGE < cl->n; k++) {
				uint64_t len = cl->n - k * STAGE;

				if (k >= 2)
					spin_until(&cl->drained, k - 1);
				amrma_dgsm_gather(&m, cl->stage[k % 2],
						len < STAGE ? len : STAGE);
				atomic_store_explicit(&cl->filled, k + 1,
						memory_order_release);
			}
			break;
		default:
			amrma_dgsp_type_free(t);
			amrma_xmem_region_free(reg);
			_exit(0);
		}
		atomic_store_explicit(&cl->done_seq, seq, memory_order_release);
	}
}

struct xp {
	struct ctl *cl;
	int sock;
	uint64_t seq;
	pid_t pid;
};

static void
command(struct xp *x, uint64_t cmd)
{
	x->cl->cmd = cmd;
	atomic_store_explicit(&x->cl->cmd_seq, ++x->seq, memory_order_release);
}

/* Importer side of a staged transfer of n bytes into w. */
static void
staged_xfer(struct xp *x, struct amrma_dgsm *w, uint64_t n)
{
	uint64_t k;

	atomic_store(&x->cl->filled, 0);
	atomic_store(&x->cl->drained, 0);
	x->cl->n = n;
	command(x, CMD_STAGE);
	for (k = 0; k * STAGE < n; k++) {
		uint64_t len = n - k * STAGE;

		spin_until(&x->cl->filled, k + 1);
		amrma_dgsm_scatter(w, x->cl->stage[k % 2],
				len < STAGE ? len : STAGE);
		atomic_store_explicit(&x->cl->drained, k + 1,
				memory_order_release);
	}
	spin_until(&x->cl->done_seq, x->seq);
}

struct xres {
	double warm, cold, pvm, staged;	/* GB/s */
};

/* One exported layout of chunk c; transfers of n bytes (0: all). */
static void
bench_xmem(struct xp *x, uint64_t c, uint64_t want, const uint64_t *sizes,
		int nsizes, struct xres *res)
{
	struct amrma_xmem_import *mi, *pi;
	struct amrma_dgsp_type *td;
	struct amrma_dgsrm_side ws;
	enum amrma_dgsp_reason why;
	double tw[MAXREP], tc[MAXREP], tp[MAXREP], tsg[MAXREP], t0;
	uint64_t cd, sd, total, n;
	struct amrma_dgsm w;
	uint8_t *dst;
	int r, si, rc;

	x->cl->c = c;
	command(x, CMD_EXPORT);
	rc = amrma_xmem_import_recv(x->sock, NULL, &mi, &why);
	if (rc != 0)
		die(amrma_dgsp_reason_str(why), rc);
	rc = amrma_xmem_import_recv(x->sock, NULL, &pi, &why);
	if (rc != 0)
		die(amrma_dgsp_reason_str(why), rc);
	spin_until(&x->cl->done_seq, x->seq);
	td = mk_layout(L_STRIDED, c, want, 3, &cd, &sd);
	dst = xalloc(sd);
	ws.prog = amrma_dgsp_type_program(td);
	ws.addr = (uint64_t)(uintptr_t)dst;
	ws.count = cd;
	total = amrma_xmem_import_total(mi);
	for (si = 0; si < nsizes; si++) {
		n = sizes[si] && sizes[si] < total ? sizes[si] : total;
		for (r = -1; r < reps; r++) {
			/* Cold: attach (mmap), copy, detach (munmap). */
			amrma_xmem_import_unmap(mi);
			t0 = now_ns();
			amrma_xmem_copy(mi, &ws, AMRMA_DGSRM_PULL, 0, n);
			amrma_xmem_import_unmap(mi);
			if (r >= 0)
				tc[r] = now_ns() - t0;
			/* Warm: segments stay attached from the previous copy. */
			amrma_xmem_copy(mi, &ws, AMRMA_DGSRM_PULL, 0, n);
			t0 = now_ns();
			amrma_xmem_copy(mi, &ws, AMRMA_DGSRM_PULL, 0, n);
			if (r >= 0)
				tw[r] = now_ns() - t0;
			t0 = now_ns();
			rc = (int)amrma_xmem_copy(pi, &ws, AMRMA_DGSRM_PULL,
					0, n);
			if (r >= 0)
				tp[r] = now_ns() - t0;
			if (rc < 0)
				die("process_vm", rc);
			amrma_dgsm_init(&w, ws.prog, dst, cd);
			t0 = now_ns();
			staged_xfer(x, &w, n);
			if (r >= 0)
				tsg[r] = now_ns() - t0;
		}
		res[si].warm = (double)n / bench_median(tw, reps);
		res[si].cold = (double)n / bench_median(tc, reps);
		res[si].pvm = (double)n / bench_median(tp, reps);
		res[si].staged = (double)n / bench_median(tsg, reps);
		emit("xmem_memfd_gbps", res[si].warm, "GB/s", c, "xmem", n);
		emit("xmem_memfd_cold_gbps", res[si].cold, "GB/s", c, "xmem", n);
		emit("xmem_pvm_gbps", res[si].pvm, "GB/s", c, "xmem", n);
		emit("xmem_staged_gbps", res[si].staged, "GB/s", c, "xmem", n);
		emit("direct_vs_staged", res[si].cold / res[si].staged, "ratio",
			c, "xmem_memfd_cold", n);
		emit("direct_vs_staged", res[si].warm / res[si].staged, "ratio",
			c, "xmem_memfd_warm", n);
		emit("direct_vs_staged", res[si].pvm / res[si].staged, "ratio",
			c, "xmem_pvm", n);
		emit("memfd_vs_pvm", res[si].warm / res[si].pvm, "ratio", c,
			"xmem", n);
	}
	munmap(dst, sd);
	amrma_dgsp_type_free(td);
	amrma_xmem_import_close(mi);
	amrma_xmem_import_close(pi);
}

/* Smallest x[i] with r[j] >= 1 for all j >= i; 0 when r[n-1] < 1. */
static uint64_t
crossover(const uint64_t *x, const double *r, int n)
{
	uint64_t c = 0;
	int i;

	for (i = n - 1; i >= 0 && r[i] >= 1.0; i--)
		c = x[i];
	return c;
}

int
main(int argc, char **argv)
{
	static const uint64_t full_chunks[] = { 8, 16, 32, 64, 128, 256, 512,
		1024, 4096, 16384, 65536 };
	static const uint64_t quick_chunks[] = { 8, 64, 256, 4096, 65536 };
	static const uint64_t sweep[] = { 1024, 4096, 16384, 65536, 262144,
		1 << 20, 4 << 20 };
	const uint64_t *chunks = full_chunks;
	uint64_t want = 32u << 20, xwant, in_chunk = 0;
	uint64_t cc_cold = 0, cc_warm = 0, cb_cold = 0, cb_warm = 0;
	int nchunks = sizeof(full_chunks) / sizeof(full_chunks[0]);
	double ratio[16], ratio2[16];
	struct xres xr[8];
	struct xp x;
	int i, sv[2], st;
	enum layout l, only = L_NLAYOUT;
	static uint64_t own_chunks[16];
	bool want_set = false;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--quick") == 0) {
			if (chunks == full_chunks) {
				chunks = quick_chunks;
				nchunks = sizeof(quick_chunks) / sizeof(quick_chunks[0]);
			}
			if (!want_set)
				want = 8u << 20;
			reps = 3;
		} else if (strcmp(argv[i], "--layout") == 0 && i + 1 < argc) {
			for (only = 0; only < L_NLAYOUT; only++)
				if (strcmp(argv[i + 1], lname[only]) == 0)
					break;
			if (only == L_NLAYOUT)
				goto usage;
			i++;
		} else if (strcmp(argv[i], "--bytes") == 0 && i + 1 < argc) {
			char *end;

			want = strtoull(argv[++i], &end, 0);
			if (*end != '\0' || want < 65536 || want > (UINT64_C(1) << 32))
				goto usage;
			want_set = true;
		} else if (strcmp(argv[i], "--chunks") == 0 && i + 1 < argc) {
			char *p = argv[++i], *end;

			chunks = own_chunks;
			for (nchunks = 0; *p != '\0' &&
			     nchunks < (int)(sizeof(own_chunks) / sizeof(own_chunks[0]));
			     nchunks++) {
				own_chunks[nchunks] = strtoull(p, &end, 0);
				if (end == p || own_chunks[nchunks] == 0 ||
				    (*end != ',' && *end != '\0'))
					goto usage;
				p = *end == ',' ? end + 1 : end;
			}
			if (nchunks == 0 || *p != '\0')
				goto usage;
		} else {
			goto usage;
		}
	}
	for (l = 0; l < L_NLAYOUT; l++)
		for (i = 0; i < nchunks; i++)
			if (only == L_NLAYOUT || only == l)
				bench_dgsm(l, chunks[i], want);
	if (only != L_NLAYOUT)
		return 0;	/* one layout's gather/scatter only */
	/*
	 * Crossover = smallest chunk from which direct is at least as fast
	 * as staged at every larger chunk measured (0: never), so one noisy
	 * point does not move it.
	 */
	for (i = 0; i < nchunks; i++)
		ratio[i] = bench_inproc(chunks[i], want, L_STRIDED);
	in_chunk = crossover(chunks, ratio, nchunks);
	emit("crossover_avg_chunk", (double)in_chunk, "B", in_chunk, "inproc",
		want);
	/* Irregular worker: no paired fast path, per-chunk costs show. */
	for (i = 0; i < nchunks; i++)
		ratio[i] = bench_inproc(chunks[i], want, L_INDEXED);
	in_chunk = crossover(chunks, ratio, nchunks);
	emit("crossover_avg_chunk", (double)in_chunk, "B", in_chunk,
		"inproc_indexed", want);

	/* Cross-process: exporter child, shared control + stage. */
	xwant = want / 2;
	x.cl = mmap(NULL, sizeof(*x.cl), PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (x.cl == MAP_FAILED || socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		die("setup", -errno);
	memset(x.cl, 0, sizeof(*x.cl));
	x.seq = 0;
	x.pid = fork();
	if (x.pid == 0) {
		close(sv[0]);
		child(sv[1], x.cl, xwant);
	}
	close(sv[1]);
	x.sock = sv[0];
	/* Granularity: whole transfers at every chunk size. */
	for (i = 0; i < nchunks; i++) {
		uint64_t all = 0;

		bench_xmem(&x, chunks[i], xwant, &all, 1, xr);
		ratio[i] = xr[0].cold / xr[0].staged;
		ratio2[i] = xr[0].warm / xr[0].staged;
	}
	cc_cold = crossover(chunks, ratio, nchunks);
	cc_warm = crossover(chunks, ratio2, nchunks);
	/* Size: coarse 4 KiB chunks, growing transfers. */
	bench_xmem(&x, 4096, xwant, sweep, 7, xr);
	for (i = 0; i < 7; i++) {
		ratio[i] = xr[i].cold / xr[i].staged;
		ratio2[i] = xr[i].warm / xr[i].staged;
	}
	cb_cold = crossover(sweep, ratio, 7);
	cb_warm = crossover(sweep, ratio2, 7);
	/* 0 means: direct never caught up in the range measured. */
	emit("crossover_avg_chunk", (double)cc_cold, "B", cc_cold,
		"xmem_memfd_cold", xwant);
	emit("crossover_avg_chunk", (double)cc_warm, "B", cc_warm,
		"xmem_memfd_warm", xwant);
	emit("crossover_bytes", (double)cb_cold, "B", 4096,
		"xmem_memfd_cold", cb_cold);
	emit("crossover_bytes", (double)cb_warm, "B", 4096,
		"xmem_memfd_warm", cb_warm);
	command(&x, CMD_QUIT);
	waitpid(x.pid, &st, 0);
	return 0;
usage:
	fprintf(stderr, "usage: %s [--quick] [--layout strided|indexed|struct_vector]"
		" [--chunks N,N,...] [--bytes N]\n"
		"  --layout: that layout's gather/scatter only (no DGS-RM runs)\n"
		"  --bytes: bytes each gather/scatter moves (default 32 MiB, 8 MiB with --quick;\n"
		"           the discontiguous side spans about twice as much)\n", argv[0]);
	return 2;
}
