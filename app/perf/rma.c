/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * amrma-perf RMA modes: put/get latency (one operation in flight) beside the AM round trip
 * measured in the same process, and put/get bandwidth (two operations in flight), with
 * --memcpy beside a plain memcpy of the same bytes (the memory's ceiling for that size).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_malloc.h>

#include "perf.h"

static uint32_t rma_flags;

static int
one_op(struct app *a, struct amrma_ctx *ctx, struct amrma_ep dst, bool put, uint64_t key,
       uint64_t off, uint8_t *buf, uint64_t len)
{
	amrma_rma_req_t req;
	int ret;

	do {
		ret = put ?
			amrma_rma_put(ctx, dst, key, off, buf, len, rma_flags, NULL, NULL, &req) :
			amrma_rma_get(ctx, dst, key, off, buf, len, rma_flags, NULL, NULL, &req);
		if (ret == -EAGAIN)
			app_poll(a);
	} while (ret == -EAGAIN && !app_stop);
	return ret == 0 ? app_rma_wait(a, ctx, req) : ret;
}

struct ping {
	bool done;
	int status;
};

static void
ping_done(struct amrma_ctx *ctx, void *arg, int status)
{
	struct ping *p = arg;

	(void)ctx;
	p->status = status;
	p->done = true;
}

/* the AM round trip of the same size, same processes, same moment: the ratio's base */
static int
am_ping(struct app *a, struct amrma_ctx *ctx, struct amrma_ep dst, uint8_t *buf, uint32_t len)
{
	struct ping p = { 0 };
	uint64_t id = 0;
	int ret;

	ret = amrma_am_request(ctx, dst, APP_H_ECHO, &id, 1, buf, (uint16_t)len, ping_done, &p);
	if (ret != 0)
		return ret;
	while (!p.done && !app_stop)
		app_poll(a);
	return p.status;
}

int
perf_rma_lat(struct app *a, const struct perf_opts *o)
{
	struct amrma_ctx *ctx = amrma_node_ctx(a->node, 0);
	struct amrma_ep dst = { .node = a->cfg.target, .ctx = 0 };
	uint64_t key, rlen, hz = rte_get_tsc_hz();
	uint64_t n = RTE_MAX(o->iters / 4, UINT64_C(100));
	double *t = malloc(sizeof(*t) * n), med[3][64], p99;
	uint8_t *buf = rte_malloc(NULL, 65536, 64);
	unsigned int s, r, k;
	int ret;

	if (t == NULL || buf == NULL) {
		ret = -ENOMEM;
		goto out;
	}
	rma_flags = o->rma_flags;
	ret = app_region_info(a, ctx, dst, 0, &key, &rlen);
	if (ret != 0) {
		fprintf(stderr, "rma-lat: no region at the peer (%s)\n", strerror(-ret));
		goto out;
	}
	memset(buf, 0x3c, 65536);
	for (s = 0; s < o->nb_sizes && !app_stop; s++) {
		uint32_t len = o->sizes[s];

		if (len > 65536 || len > rlen)
			continue;
		for (r = 0; r < o->repeat && !app_stop; r++) {
			/* k = 0 put, 1 get, 2 AM echo of the same payload */
			for (k = 0; k < 3; k++) {
				uint64_t i, t0;

				for (i = 0; i < n + n / 10 && !app_stop; i++) {
					t0 = rte_rdtsc();
					ret = k == 2 ? am_ping(a, ctx, dst, buf, RTE_MIN(len,
						(uint32_t)amrma_am_max_payload(ctx, 2))) :
						one_op(a, ctx, dst, k == 0, key, 64, buf, len);
					if (ret != 0)
						goto out;
					if (i >= n / 10)	/* the first tenth warms up */
						t[i - n / 10] =
							(double)(rte_rdtsc() - t0) * 1e6 / hz;
				}
				perf_summary(t, n, &med[k][r], &p99);
			}
			fprintf(stderr, "rma-lat size %u run %u: put %.2f us, get %.2f us, "
				"AM round trip %.2f us\n", len, r, med[0][r], med[1][r], med[2][r]);
		}
		if (app_stop)
			break;
		{
			char extra[128];

			snprintf(extra, sizeof(extra), "\"iters\":%" PRIu64, n);
			perf_emit(o, "rma_put_lat", "us", (int)len, med[0], r, extra);
			perf_emit(o, "rma_get_lat", "us", (int)len, med[1], r, extra);
			perf_emit(o, "rma_am_rtt", "us", (int)len, med[2], r, extra);
		}
	}
out:
	free(t);
	rte_free(buf);
	return ret;
}

struct bw {
	unsigned int inflight;
	int status;
};

static void
bw_done(struct amrma_ctx *ctx, void *arg, enum amrma_rma_event ev, int status)
{
	struct bw *b = arg;

	(void)ctx;
	if (ev != AMRMA_RMA_EV_DONE)
		return;
	b->inflight--;
	if (status != 0 && b->status == 0)
		b->status = status;
}

int
perf_rma_bw(struct app *a, const struct perf_opts *o)
{
	struct amrma_ctx *ctx = amrma_node_ctx(a->node, 0);
	struct amrma_ep dst = { .node = a->cfg.target, .ctx = 0 };
	uint64_t key, rlen, hz = rte_get_tsc_hz(), max = 0;
	double mbps[3][64];
	uint8_t *buf, *mdst = NULL;
	unsigned int s, k;
	int r, ret;

	ret = app_region_info(a, ctx, dst, 0, &key, &rlen);
	if (ret != 0) {
		fprintf(stderr, "rma-bw: no region at the peer (%s)\n", strerror(-ret));
		return ret;
	}
	for (s = 0; s < o->nb_sizes; s++)
		max = RTE_MAX(max, (uint64_t)o->sizes[s]);
	rma_flags = o->rma_flags;
	buf = rte_malloc(NULL, 2 * max, 4096);
	if (buf == NULL)
		return -ENOMEM;
	memset(buf, 0x5a, 2 * max);
	if (o->memcpy_too) {
		/* the memcpy's destination: plain memory, the EAL's may be small (-m) */
		mdst = aligned_alloc(4096, RTE_ALIGN_CEIL(2 * max, 4096));
		if (mdst == NULL) {
			rte_free(buf);
			return -ENOMEM;
		}
		memset(mdst, 0, 2 * max);
	}
	for (s = 0; s < o->nb_sizes && !app_stop; s++) {
		uint64_t len = o->sizes[s];
		/* about 64 MiB per run, at least 8 operations */
		uint64_t count = RTE_MAX(UINT64_C(8), (UINT64_C(64) << 20) / len);

		if (2 * len > rlen)
			continue;
		/* run -1 warms up (caches, TLBs, the peer's pages) and is not reported */
		for (r = -1; r < (int)o->repeat && !app_stop; r++) {
			for (k = 0; k < 2; k++) {
				struct bw b = { 0 };

				if (!(o->rma_ops & (1u << k))) {
					mbps[k][r < 0 ? 0 : r] = 0;
					continue;
				}
				uint64_t issued = 0, t0 = rte_rdtsc();
				uint64_t n = r < 0 ? 2 : count;

				/* two in flight: the next one starts while the last drains */
				while ((issued < n || b.inflight) && !app_stop) {
					while (issued < n && b.inflight < 2) {
						uint8_t *p = buf + (issued & 1) * len;
						uint64_t off = (issued & 1) * len;

						ret = k == 0 ?
							amrma_rma_put(ctx, dst, key, off, p, len,
								      rma_flags,
								      bw_done, &b, NULL) :
							amrma_rma_get(ctx, dst, key, off, p, len,
								      rma_flags, bw_done, &b, NULL);
						if (ret == -EAGAIN)
							break;
						if (ret != 0)
							goto out;
						b.inflight++;
						issued++;
					}
					app_poll(a);
				}
				if (b.status != 0) {
					ret = b.status;
					goto out;
				}
				if (r >= 0)
					mbps[k][r] = (double)len * count * hz /
						     (double)(rte_rdtsc() - t0) / 1e6;
			}
			if (mdst != NULL) {
				/* the same bytes moved by one memcpy each, in the same two
				 * buffers in turn: what memory allows this size, no link */
				uint64_t i, t0, n = r < 0 ? 2 : count;

				t0 = rte_rdtsc();
				for (i = 0; i < n; i++)
					memcpy(mdst + (i & 1) * len, buf + (i & 1) * len, len);
				if (r >= 0)
					mbps[2][r] = (double)len * count * hz /
						     (double)(rte_rdtsc() - t0) / 1e6;
			}
			if (r < 0)
				continue;
			fprintf(stderr, "rma-bw size %" PRIu64 " run %d: put %.0f MB/s, get %.0f "
				"MB/s", len, r, mbps[0][r], mbps[1][r]);
			if (mdst != NULL)
				fprintf(stderr, ", memcpy %.0f MB/s", mbps[2][r]);
			fprintf(stderr, "\n");
		}
		if (!app_stop) {
			char extra[128];

			snprintf(extra, sizeof(extra), "\"chunk\":%u,\"frame\":%u,\"proto\":\"%s\"",
				 amrma_am_max_payload(ctx, 4), a->cfg.mtu + 14,
				 rma_flags == AMRMA_RMA_F_PIPELINED ? "pipelined" :
				 rma_flags == AMRMA_RMA_F_RENDEZVOUS ? "rendezvous" :
				 rma_flags == AMRMA_RMA_F_SHORT ? "short" : "auto");
			if (o->rma_ops & 1)
				perf_emit(o, "rma_put_bw", "MB/s", (int)len, mbps[0], r, extra);
			if (o->rma_ops & 2)
				perf_emit(o, "rma_get_bw", "MB/s", (int)len, mbps[1], r, extra);
			if (mdst != NULL)
				perf_emit(o, "memcpy_bw", "MB/s", (int)len, mbps[2], r, NULL);
		}
	}
	ret = 0;
out:
	rte_free(buf);
	free(mdst);
	return ret;
}
