/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RMA in the applications: regions from the config, a directory the initiator asks for
 * keys (APP_H_REGION_INFO), a checksum service so both sides verify (APP_H_REGION_CRC),
 * and the verifying put/get workload.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_hash_crc.h>
#include <rte_malloc.h>

#include "app.h"

/* request: {index} -> reply {key, length, permissions} */
static int
region_info_handler(struct amrma_ctx *ctx, amrma_am_token_t tok,
		    const struct amrma_am_msg *msg, void *arg)
{
	struct app *a = arg;
	uint64_t out[3];
	uint64_t i = msg->nargs ? msg->args[0] : UINT64_MAX;

	if (i >= a->nb_regions)
		return -ENOENT;
	out[0] = a->region_key[i];
	out[1] = a->cfg.region[i].size;
	out[2] = a->cfg.region[i].perm;
	return amrma_am_reply(ctx, tok, APP_H_REGION_REPLY, out, 3, NULL, 0, 0);
}

/* request: {index, offset, length} -> reply {crc32c of those bytes} */
static int
region_crc_handler(struct amrma_ctx *ctx, amrma_am_token_t tok,
		   const struct amrma_am_msg *msg, void *arg)
{
	struct app *a = arg;
	uint64_t crc;

	if (msg->nargs < 3 || msg->args[0] >= a->nb_regions)
		return -ENOENT;
	if (msg->args[1] > a->cfg.region[msg->args[0]].size ||
	    msg->args[2] > a->cfg.region[msg->args[0]].size - msg->args[1])
		return -ERANGE;
	crc = rte_hash_crc(a->region_mem[msg->args[0]] + msg->args[1], msg->args[2], 0);
	return amrma_am_reply(ctx, tok, APP_H_REGION_REPLY, &crc, 1, NULL, 0, 0);
}

struct sync_call {
	bool done;
	int status;
	uint64_t out[3];
};

/*
 * After a stop signal an operation still in flight gets this long to finish. One that
 * does not is left to the library, which writes its reply or failure later (at the latest
 * when the node is destroyed): what it writes into must stay allocated.
 */
#define STOP_GRACE_S 1.0

/* Memory an operation cut short may still use, for app_teardown() to free. */
void
app_abandon(struct app *a, void *p)
{
	if (p != NULL && a->nb_abandoned < RTE_DIM(a->abandoned))
		a->abandoned[a->nb_abandoned++] = p;
}

/* Whether the grace period after a stop signal is over (*end: 0 until it starts). */
static bool
grace_over(uint64_t *end)
{
	if (!app_stop)
		return false;
	if (*end == 0)
		*end = rte_rdtsc() + (uint64_t)(STOP_GRACE_S * rte_get_tsc_hz());
	return rte_rdtsc() >= *end;
}

/* Poll until *done or, once stopped, until the grace period is over. */
static bool
poll_until(struct app *a, const bool *done)
{
	uint64_t end = 0;

	while (!*done) {
		if (grace_over(&end))
			return false;
		app_poll(a);
	}
	return true;
}

static int
region_reply_handler(struct amrma_ctx *ctx, amrma_am_token_t tok,
		     const struct amrma_am_msg *msg, void *arg)
{
	struct sync_call *c = msg->op_arg;
	unsigned int i;

	(void)ctx;
	(void)tok;
	(void)arg;
	for (i = 0; i < msg->nargs && i < 3; i++)
		c->out[i] = msg->args[i];
	return 0;
}

static void
sync_done(struct amrma_ctx *ctx, void *arg, int status)
{
	struct sync_call *c = arg;

	(void)ctx;
	c->status = status;
	c->done = true;
}

/* Contexts the calling (main) lcore polls: all, or only context 0 while workers run. */
static uint16_t
own_contexts(const struct app *a)
{
	return a->workers ? 1 : amrma_node_nb_ctx(a->node);
}

int
app_poll(struct app *a)
{
	uint16_t i, n = own_contexts(a);
	int work = 0;

	for (i = 0; i < n; i++)
		work += amrma_ctx_poll(amrma_node_ctx(a->node, i), 32);
	/* the progress engine runs on the lcore of its context */
	if (a->rma != NULL && (!a->workers || a->cfg.rma.progress_ctx == 0))
		work += amrma_rma_progress(a->rma);
	return work;
}

int
app_settle(struct app *a, double timeout_s)
{
	uint64_t hz = rte_get_tsc_hz(), now = rte_rdtsc();
	uint64_t end = now + (uint64_t)(timeout_s * (double)hz);
	uint16_t i, n = own_contexts(a);
	unsigned int pending;

	do {
		pending = 0;
		app_poll(a);
		for (i = 0; i < n; i++)
			pending += amrma_ctx_outstanding(amrma_node_ctx(a->node, i));
		now = rte_rdtsc();
	} while (pending != 0 && now < end);
	if (pending != 0)
		return -ETIMEDOUT;
	/* quiescing polls the whole node: not while workers poll part of it */
	if (a->workers)
		return 0;
	return amrma_node_quiesce(a->node, now < end ? (end - now) * US_PER_S / hz : 0);
}

/*
 * A request whose reply (up to 3 arguments, into out) we wait for, outside handlers. Its
 * state is on the heap: a call cut short by a stop signal is abandoned to the library.
 */
static int
call(struct app *a, struct amrma_ctx *ctx, struct amrma_ep dst, uint16_t h,
     const uint64_t *args, unsigned int nargs, uint64_t out[3])
{
	struct sync_call *c = rte_zmalloc(NULL, sizeof(*c), 0);
	int ret;

	if (c == NULL)
		return -ENOMEM;
	while ((ret = amrma_am_request(ctx, dst, h, args, nargs, NULL, 0, sync_done, c)) ==
	       -EAGAIN && !app_stop)
		app_poll(a);
	if (ret != 0) {
		rte_free(c);
		return ret == -EAGAIN ? -EINTR : ret;
	}
	if (!poll_until(a, &c->done)) {
		app_abandon(a, c);	/* the request is still out */
		return -EINTR;
	}
	ret = c->status;
	memcpy(out, c->out, sizeof(c->out));
	rte_free(c);
	return ret;
}

int
app_region_crc(struct app *a, struct amrma_ctx *ctx, struct amrma_ep dst, uint64_t idx,
	       uint64_t off, uint64_t len, uint64_t *crc)
{
	uint64_t args[3] = { idx, off, len }, out[3];
	int ret = call(a, ctx, dst, APP_H_REGION_CRC, args, 3, out);

	if (ret == 0)
		*crc = out[0];
	return ret;
}

int
app_region_info(struct app *a, struct amrma_ctx *ctx, struct amrma_ep dst, uint64_t idx,
		uint64_t *key, uint64_t *len)
{
	uint64_t out[3];
	int ret = call(a, ctx, dst, APP_H_REGION_INFO, &idx, 1, out);

	if (ret == 0) {
		*key = out[0];
		*len = out[1];
	}
	return ret;
}

/*
 * Back every page now. Without hugepages (--no-huge) EAL memory is mapped but untouched,
 * and rte_zmalloc() skips clearing memory it knows is fresh: the first RMA write to each
 * 4 KiB page would take a page fault in the data path (measured: a first 64 MiB put at
 * 3.1 GB/s, later ones at 4.5).
 */
static void
prefault(void *mem, uint64_t len)
{
	volatile uint8_t *p = mem;
	uint64_t off;

	for (off = 0; off < len; off += 4096)
		p[off] = 0;	/* zeroed memory stays zero */
}

int
app_rma_setup(struct app *a)
{
	unsigned int i;
	int ret;

	ret = amrma_rma_create(a->node, &a->cfg.rma, &a->rma);
	if (ret != 0) {
		fprintf(stderr, "rma create: %s\n", strerror(-ret));
		return ret;
	}
	ret = amrma_reflect_create(a->rma, NULL, &a->reflect);
	if (ret == 0)
		ret = app_stripe_setup(a);
	if (ret != 0) {
		fprintf(stderr, "reflect create: %s\n", strerror(-ret));
		return ret;
	}
	for (i = 0; i < a->cfg.nb_region; i++) {
		const struct app_region *r = &a->cfg.region[i];

		/* DPDK memory: a NIC can DMA it, so zero-copy works on real ports too */
		a->region_mem[i] = rte_zmalloc_socket("amrma_region", r->size, 4096,
						      a->dev.socket_id);
		if (a->region_mem[i] == NULL) {
			fprintf(stderr, "region %s: cannot allocate %" PRIu64 " bytes\n", r->name,
				r->size);
			return -ENOMEM;
		}
		prefault(a->region_mem[i], r->size);
		ret = amrma_region_register(amrma_rma_regions(a->rma), a->region_mem[i], r->size,
					    r->perm, &a->region[i], &a->region_key[i]);
		if (ret != 0)
			return ret;
		a->nb_regions++;
		printf("region %u '%s': %" PRIu64 " bytes, %s%s\n", i, r->name, r->size,
		       r->perm & AMRMA_REGION_READ ? "r" : "",
		       r->perm & AMRMA_REGION_WRITE ? "w" : "");
	}
	amrma_am_register(a->node, APP_H_REGION_INFO, region_info_handler, a);
	amrma_am_register(a->node, APP_H_REGION_CRC, region_crc_handler, a);
	amrma_am_register(a->node, APP_H_REGION_REPLY, region_reply_handler, NULL);
	return 0;
}

void
app_rma_teardown(struct app *a)
{
	unsigned int i;

	for (i = 0; i < a->nb_regions; i++)
		amrma_region_deregister(amrma_rma_regions(a->rma), a->region[i], NULL, NULL);
	amrma_reflect_destroy(a->reflect);
	a->reflect = NULL;
	amrma_rma_destroy(a->rma);
	a->rma = NULL;
	for (i = 0; i < a->nb_regions; i++)
		rte_free(a->region_mem[i]);
	a->nb_regions = 0;
}

int
app_rma_wait(struct app *a, struct amrma_ctx *ctx, amrma_rma_req_t req)
{
	uint64_t end = 0;
	int status = 0, ret;

	while ((ret = amrma_rma_test(ctx, req, &status)) == 0) {
		if (grace_over(&end))
			return -EINTR;	/* still in flight: its buffers must stay */
		app_poll(a);
	}
	return ret == 1 ? status : ret;
}

int
app_rma_load(struct app *a, struct amrma_ctx *ctx, struct amrma_ep dst, uint64_t count,
	     struct app_rma_result *res, unsigned int *nb_res)
{
	uint64_t key, rlen, max = 0, seed = 0x9e3779b97f4a7c15ull, out[3];
	uint64_t idx = a->cfg.target_region;
	uint8_t *src, *back;
	unsigned int s;
	int ret;

	*nb_res = 0;
	ret = call(a, ctx, dst, APP_H_REGION_INFO, &idx, 1, out);
	if (ret != 0) {
		fprintf(stderr, "rma: the target has no region %" PRIu64 " (%s)\n", idx,
			strerror(-ret));
		return ret;
	}
	key = out[0];
	rlen = out[1];
	for (s = 0; s < a->cfg.nb_sizes; s++)
		max = RTE_MAX(max, a->cfg.sizes[s]);
	if (max + 64 > rlen) {
		fprintf(stderr, "rma: sizes up to %" PRIu64 " need a region larger than %" PRIu64
			"\n", max, rlen);
		return -ERANGE;
	}
	src = rte_malloc(NULL, max + 64, 64);
	back = rte_malloc(NULL, max + 64, 64);
	if (src == NULL || back == NULL) {
		rte_free(src);
		rte_free(back);
		return -ENOMEM;
	}
	for (s = 0; s < a->cfg.nb_sizes && !app_stop; s++) {
		struct app_rma_result *r = &res[(*nb_res)++];
		uint64_t len = a->cfg.sizes[s], n, i;
		uint64_t hz = rte_get_tsc_hz(), t_put = 0, t_get = 0;

		uint64_t t_last = rte_rdtsc();

		memset(r, 0, sizeof(*r));
		r->size = len;
		n = RTE_MAX(UINT64_C(1),
			    RTE_MIN(count, (UINT64_C(256) << 20) / RTE_MAX(len, UINT64_C(1))));
		for (i = 0; i < n && !app_stop; i++) {
			/* long runs: a line every --progress seconds */
			if (a->cfg.progress_s > 0 &&
			    rte_rdtsc() - t_last > a->cfg.progress_s * hz) {
				t_last = rte_rdtsc();
				fprintf(stderr, "progress: %" PRIu64 " B: %" PRIu64 "/%" PRIu64
					" put+get verified, %" PRIu64 " mismatched\n", len,
					r->verified, n, r->mismatches);
			}
			/* odd alignment on both sides, fresh data every time */
			uint64_t off = (app_xorshift(&seed) % (rlen - len - 32)) | 1;
			uint8_t *p = src + 3, *q = back + 5;
			uint64_t k, t0, args[3];
			uint32_t crc;
			amrma_rma_req_t req;

			/* filling and checking megabytes takes milliseconds without polling:
			 * the acks we owe leave first, or the target resends its last frames */
			app_settle(a, 0.1);
			for (k = 0; k < len; k++)
				p[k] = (uint8_t)app_xorshift(&seed);
			crc = rte_hash_crc(p, len, 0);
			t0 = rte_rdtsc();
			ret = amrma_rma_put(ctx, dst, key, off, p, len, 0, NULL, NULL, &req);
			if (ret == 0)
				ret = app_rma_wait(a, ctx, req);
			t_put += rte_rdtsc() - t0;
			if (ret != 0)
				break;
			args[0] = idx;
			args[1] = off;
			args[2] = len;
			ret = call(a, ctx, dst, APP_H_REGION_CRC, args, 3, out);
			if (ret != 0)
				break;
			if (out[0] != crc) {
				r->mismatches++;
				continue;
			}
			app_settle(a, 0.1);
			memset(q, 0, len);
			t0 = rte_rdtsc();
			ret = amrma_rma_get(ctx, dst, key, off, q, len, 0, NULL, NULL, &req);
			if (ret == 0)
				ret = app_rma_wait(a, ctx, req);
			t_get += rte_rdtsc() - t0;
			if (ret != 0)
				break;
			app_settle(a, 0.1);
			if (rte_hash_crc(q, len, 0) != crc || memcmp(p, q, len) != 0) {
				r->mismatches++;
				continue;
			}
			r->verified++;
		}
		r->count = n;
		r->status = ret;
		r->put_mbps = t_put ? (double)len * r->verified * hz / t_put / 1e6 : 0;
		r->get_mbps = t_get ? (double)len * r->verified * hz / t_get / 1e6 : 0;
		r->put_us = r->verified ? (double)t_put * 1e6 / hz / r->verified : 0;
		r->get_us = r->verified ? (double)t_get * 1e6 / hz / r->verified : 0;
		if (ret != 0)
			break;
	}
	/* a put or get cut short by a stop signal may still read src or place into back */
	if (ret == -EINTR) {
		app_abandon(a, src);
		app_abandon(a, back);
	} else {
		rte_free(src);
		rte_free(back);
	}
	return ret;
}
