/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Notified puts in the applications: each put goes through the injection FIFO, followed
 * by a REFLECT that the target's engine reflects back to us once the bytes are placed
 * (AMRMA_DESC_F_REMOTE). No application code runs for it on the target; its checksum
 * service then confirms the bytes.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_hash_crc.h>
#include <rte_malloc.h>

#include "app.h"

/* Notified puts at most per run: each one is checked with a round trip of its own. */
#define REFLECT_MAX 256

/* Poll until our reception FIFO holds a completion; -EINTR once stopped. */
static int
wait_completion(struct app *a, struct amrma_completion *c)
{
	while (amrma_reflect_completions(a->reflect, 0, c, 1) == 0) {
		if (app_stop)
			return -EINTR;
		app_poll(a);
	}
	return 0;
}

int
app_reflect_load(struct app *a, struct amrma_ep dst, uint64_t count,
		 struct app_reflect_result *r)
{
	struct amrma_ctx *ctx = amrma_node_ctx(a->node, 0);
	uint64_t key, rlen, max = 0, seed = 0x2545f4914f6cdd1dull, t = 0, i, n;
	uint64_t idx = a->cfg.target_region;
	uint8_t *src;
	unsigned int s;
	int ret;

	memset(r, 0, sizeof(*r));
	ret = app_region_info(a, ctx, dst, idx, &key, &rlen);
	if (ret != 0)
		return ret;
	for (s = 0; s < a->cfg.nb_sizes; s++)
		max = RTE_MAX(max, a->cfg.sizes[s]);
	max = RTE_MIN(max, rlen - 64);
	src = rte_malloc(NULL, max + 64, 64);
	if (src == NULL)
		return -ENOMEM;
	n = RTE_MIN(count, (uint64_t)REFLECT_MAX);
	r->min = UINT64_MAX;
	for (i = 0; i < n && ret == 0; i++) {
		uint64_t len = RTE_MIN(a->cfg.sizes[i % a->cfg.nb_sizes], max);
		uint64_t off = (app_xorshift(&seed) % (rlen - len - 32)) | 1, k, crc, t0;
		struct amrma_desc d;
		struct amrma_completion c;

		for (k = 0; k < len; k++)
			src[k] = (uint8_t)app_xorshift(&seed);
		memset(&d, 0, sizeof(d));
		d.op = AMRMA_DESC_PUT;
		d.peer = dst;
		d.key = key;
		d.offset = off;
		d.local = src;
		d.len = len;
		t0 = rte_rdtsc();
		ret = amrma_reflect_inject(a->reflect, 0, &d);
		memset(&d, 0, sizeof(d));
		d.op = AMRMA_DESC_REFLECT;
		d.flags = AMRMA_DESC_F_REMOTE;
		d.peer = dst;
		d.cn.to.node = a->cfg.node.node_id;
		d.cn.kind = AMRMA_CN_FIFO;
		d.cn.cookie = i;
		if (ret == 0)
			ret = amrma_reflect_inject(a->reflect, 0, &d);
		if (ret == 0)
			ret = wait_completion(a, &c);
		if (ret != 0)
			break;
		t += rte_rdtsc() - t0;
		r->count++;
		r->min = RTE_MIN(r->min, len);
		r->max = RTE_MAX(r->max, len);
		if (c.cookie != i || c.status != 0) {
			r->bad++;
			continue;
		}
		ret = app_region_crc(a, ctx, dst, idx, off, len, &crc);
		if (ret == 0 && crc == rte_hash_crc(src, len, 0))
			r->verified++;
		else if (ret == 0)
			r->bad++;
	}
	r->us = r->count ? (double)t * 1e6 / rte_get_tsc_hz() / r->count : 0;
	amrma_reflect_stats_get(a->reflect, 0, &r->st);
	if (ret == -EINTR)
		app_abandon(a, src);	/* the put may still read it */
	else
		rte_free(src);
	return ret;
}
