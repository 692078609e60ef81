/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Striped sends in the applications. A node lands an arriving one in its exposed
 * region named by the tag (region index in the top byte, offset below), if that region
 * is writable and holds it; the initiator sends fresh data to a random place and checks
 * it there with the target's checksum service.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_hash_crc.h>
#include <rte_malloc.h>

#include "app.h"

#define TAG_REGION_SHIFT 56

static void *
stripe_alloc(struct amrma_ctx *ctx, void *arg, struct amrma_ep src, uint64_t tag,
	     uint64_t len)
{
	struct app *a = arg;
	uint64_t idx = tag >> TAG_REGION_SHIFT;
	uint64_t off = tag & ((UINT64_C(1) << TAG_REGION_SHIFT) - 1);

	RTE_SET_USED(ctx);
	RTE_SET_USED(src);
	if (idx >= a->nb_regions || !(a->cfg.region[idx].perm & AMRMA_REGION_WRITE) ||
	    len > a->cfg.region[idx].size || off > a->cfg.region[idx].size - len)
		return NULL;
	return a->region_mem[idx] + off;
}

static void
stripe_done(struct amrma_ctx *ctx, void *arg, struct amrma_ep src, uint64_t tag, void *buf,
	    uint64_t len, int status)
{
	struct app *a = arg;

	RTE_SET_USED(ctx);
	RTE_SET_USED(src);
	RTE_SET_USED(tag);
	RTE_SET_USED(buf);
	RTE_SET_USED(len);
	a->stripes_in++;
	if (status != 0)
		a->stripes_in_failed++;
}

int
app_stripe_setup(struct app *a)
{
	const struct amrma_stripe_listener l = { stripe_alloc, stripe_done, a };

	return amrma_stripe_listen(a->reflect, &l);
}

struct stripe_wait {
	bool done;
	int status;
};

static void
sent(struct amrma_ctx *ctx, void *arg, int status)
{
	struct stripe_wait *w = arg;

	RTE_SET_USED(ctx);
	w->status = status;
	w->done = true;
}

int
app_stripe_load(struct app *a, struct amrma_ep dst, uint64_t count,
		struct app_stripe_result *res, unsigned int *nb_res)
{
	struct amrma_ctx *ctx = amrma_node_ctx(a->node, 0);
	uint64_t idx = a->cfg.target_region, key, rlen, max = 0, seed = 0x5851f42d4c957f2dull;
	struct stripe_wait *w;
	unsigned int s;
	uint8_t *src;
	int ret;

	*nb_res = 0;
	ret = app_region_info(a, ctx, dst, idx, &key, &rlen);
	if (ret != 0)
		return ret;
	for (s = 0; s < a->cfg.nb_sizes; s++)
		max = RTE_MAX(max, a->cfg.sizes[s]);
	if (max > rlen)
		return -ERANGE;
	src = rte_malloc(NULL, max + 1, 64);
	/* on the heap: a send cut short by a stop signal is abandoned to the library */
	w = rte_zmalloc(NULL, sizeof(*w), 0);
	if (src == NULL || w == NULL) {
		rte_free(src);
		rte_free(w);
		return -ENOMEM;
	}
	for (s = 0; s < a->cfg.nb_sizes && ret == 0 && !app_stop; s++) {
		struct app_stripe_result *r = &res[(*nb_res)++];
		uint64_t len = RTE_MAX(a->cfg.sizes[s], UINT64_C(1)), i, t = 0;

		memset(r, 0, sizeof(*r));
		r->size = len;
		for (i = 0; i < count && ret == 0 && !app_stop; i++) {
			uint64_t off = app_xorshift(&seed) % (rlen - len + 1), k, crc, t0;

			for (k = 0; k < len; k++)
				src[k] = (uint8_t)app_xorshift(&seed);
			app_settle(a, 0.1);
			w->done = false;
			t0 = rte_rdtsc();
			while ((ret = amrma_stripe_send(a->reflect, ctx, dst, src, len,
							idx << TAG_REGION_SHIFT | off, sent, w)) ==
			       -EAGAIN && !app_stop)
				app_poll(a);
			while (ret == 0 && !w->done && !app_stop)
				app_poll(a);
			if (ret == 0 && !w->done)
				ret = -EINTR;
			if (ret != 0)
				break;
			t += rte_rdtsc() - t0;
			r->count++;
			if (w->status != 0) {
				r->status = w->status;
				continue;
			}
			ret = app_region_crc(a, ctx, dst, idx, off, len, &crc);
			if (ret == 0 && crc == rte_hash_crc(src, len, 0))
				r->verified++;
		}
		r->us = r->count ? (double)t * 1e6 / rte_get_tsc_hz() / r->count : 0;
		r->mbps = t ? (double)len * r->count * rte_get_tsc_hz() / t / 1e6 : 0;
	}
	if (ret == -EINTR) {
		app_abandon(a, src);	/* the target may still pull from it */
		app_abandon(a, w);
	} else {
		rte_free(src);
		rte_free(w);
	}
	return ret;
}
