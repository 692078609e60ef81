/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Noncontiguous RMA: datatypes on both sides, the target's program shipped and verified,
 * packets gathered from and scattered into place. Checked against a reference built with
 * the DGSM alone (pack locally, unpack locally), over the whole region, so a byte written
 * outside the target layout is caught.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "amrma_dgsp.h"
#include "amrma_rma.h"
#include "harness.h"
#include "rma_events.h"
#include "rma_nodes.h"

#define RLEN (8u << 20)

static struct h_rma H;		/* region at node 1: H.reg, H.key */
static uint8_t *region, *expect, *local, *packed;

static int
wait_req(amrma_rma_req_t req)
{
	int status = 0, ret;

	ret = h_rma_wait(&H, h_ctx(&H.h, 0, 0), req, 30000, &status);
	if (ret == 0)
		fail_msg("operation did not complete");
	assert_int_equal(ret, 1);
	return status;
}

static int
setup(void **state)
{
	(void)state;
	assert_int_equal(h_rma_create(&H, 2, 1, NULL, NULL, H_RMA_ALL), 0);
	region = aligned_alloc(4096, RLEN);
	expect = aligned_alloc(4096, RLEN);
	local = aligned_alloc(4096, RLEN);
	packed = aligned_alloc(4096, RLEN);
	assert_int_equal(h_rma_register(&H, region, RLEN,
					AMRMA_REGION_READ | AMRMA_REGION_WRITE), 0);
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	h_rma_destroy(&H);
	free(region);
	free(expect);
	free(local);
	free(packed);
	return 0;
}

static struct amrma_dgsp_type *
committed(struct amrma_dgsp_type *t)
{
	assert_non_null(t);
	assert_int_equal(amrma_dgsp_type_commit(t), 0);
	return t;
}

static struct amrma_dgsp_type *
vec(uint64_t count, uint64_t blocklen, int64_t stride, size_t elem)
{
	struct amrma_dgsp_type *b, *t;

	assert_int_equal(amrma_dgsp_type_basic(elem, &b), 0);
	assert_int_equal(amrma_dgsp_type_vector(count, blocklen, stride, b, &t), 0);
	amrma_dgsp_type_free(b);
	return committed(t);
}

/* expected region after put: scatter (gather(src)) locally */
static void
reference_put(const struct amrma_dgsp *sp, uint64_t sc, const struct amrma_dgsp *dp,
	      uint64_t dc, uint64_t off)
{
	struct amrma_dgsm m;
	uint64_t total;

	assert_int_equal(amrma_dgsm_init(&m, sp, local, sc), 0);
	total = m.total;
	assert_int_equal(amrma_dgsm_gather(&m, packed, total), total);
	assert_int_equal(amrma_dgsm_init(&m, dp, expect + off, dc), 0);
	assert_int_equal(amrma_dgsm_scatter(&m, packed, total), total);
}

struct layout {
	const char *name;
	struct amrma_dgsp_type *src, *dst;
	uint64_t sc, dc, off;
};

static void
run_layout(struct layout *l)
{
	const struct amrma_dgsp *sp = amrma_dgsp_type_program(l->src);
	const struct amrma_dgsp *dp = amrma_dgsp_type_program(l->dst);
	amrma_rma_req_t req;
	struct amrma_dgsm m;
	uint8_t *back = malloc(RLEN);

	print_message("%s\n", l->name);
	h_fill(region, RLEN, 1);
	memcpy(expect, region, RLEN);
	h_fill(local, RLEN, 2);
	reference_put(sp, l->sc, dp, l->dc, l->off);
	assert_int_equal(amrma_rma_put_dt(h_ctx(&H.h, 0, 0), (struct amrma_ep){ .node = 1 }, H.key,
		l->off, local, sp, l->sc, dp, l->dc, 0, NULL, NULL, &req), 0);
	assert_int_equal(wait_req(req), 0);
	/* the whole region: placed bytes right, every other byte untouched */
	assert_memory_equal(region, expect, RLEN);

	/* get it back into the source layout: the selected bytes equal the packed stream */
	memset(back, 0, RLEN);
	assert_int_equal(amrma_rma_get_dt(h_ctx(&H.h, 0, 0), (struct amrma_ep){ .node = 1 }, H.key,
		l->off, dp, l->dc, back, sp, l->sc, 0, NULL, NULL, &req), 0);
	assert_int_equal(wait_req(req), 0);
	assert_int_equal(amrma_dgsm_init(&m, sp, back, l->sc), 0);
	{
		uint64_t total = m.total;
		uint8_t *p2 = malloc(total ? total : 1);

		assert_int_equal(amrma_dgsm_gather(&m, p2, total), total);
		assert_memory_equal(p2, packed, total);
		free(p2);
	}
	free(back);
}

static void
test_layouts(void **state)
{
	struct amrma_dgsp_type *b4, *b8, *t, *v, *sub, *types[2];
	uint64_t bl[3] = { 5, 1, 40 }, sizes[3] = { 64, 64, 64 }, subs[3] = { 64, 64, 1 },
		 starts[3] = { 0, 0, 17 }, bl2[2] = { 1, 1 };
	int64_t disps[3] = { 100, 3, 1000 }, sd[2] = { 0, 16 };
	struct layout ls[6];
	unsigned int i;

	(void)state;
	assert_int_equal(amrma_dgsp_type_basic(4, &b4), 0);
	assert_int_equal(amrma_dgsp_type_basic(8, &b8), 0);
	/* strided -> differently strided, same packed size */
	ls[0] = (struct layout){ "vector 1000x3/7 -> vector 500x6/11", vec(1000, 3, 7, 4),
				 vec(500, 6, 11, 4), 1, 1, 4099 };
	/* many packets: 1.6 MB packed */
	ls[1] = (struct layout){ "vector 100000x2/3 doubles -> contiguous", vec(100000, 2, 3, 8),
				 vec(1, 200000, 1, 8), 1, 1, 13 };
	/* indexed with out-of-order blocks, several elements */
	assert_int_equal(amrma_dgsp_type_indexed(3, bl, disps, b4, &t), 0);
	ls[2] = (struct layout){ "indexed x50 -> vector", committed(t), vec(460, 5, 9, 4), 50, 1,
				 777 };
	/* a face of a 3-D array (C order) -> strided doubles */
	assert_int_equal(amrma_dgsp_type_subarray(3, sizes, subs, starts, AMRMA_DGSP_ORDER_C, b8,
						  &sub), 0);
	ls[3] = (struct layout){ "subarray face -> vector", committed(sub), vec(1024, 4, 5, 8),
				 1, 1, 64 };
	/* struct of vectors (as in halo exchanges) */
	v = vec(200, 2, 4, 8);
	types[0] = v;
	types[1] = b4;
	assert_int_equal(amrma_dgsp_type_struct(2, bl2, sd, types, &t), 0);
	amrma_dgsp_type_free(v);
	ls[4] = (struct layout){ "struct{vector, int} x30 -> vector", committed(t),
				 vec(30, 801, 900, 4), 30, 1, 8 };
	/* zero elements: completes, touches nothing */
	ls[5] = (struct layout){ "zero count", vec(10, 1, 2, 4), vec(10, 1, 2, 4), 0, 0, 0 };
	for (i = 0; i < RTE_DIM(ls); i++) {
		run_layout(&ls[i]);
		amrma_dgsp_type_free(ls[i].src);
		amrma_dgsp_type_free(ls[i].dst);
	}
	amrma_dgsp_type_free(b4);
	amrma_dgsp_type_free(b8);
}

static void
test_faults(void **state)
{
	struct layout l = { "vector under loss", vec(50000, 3, 5, 8), vec(30000, 5, 6, 8),
			    1, 1, 3 };

	(void)state;
	h_faults(&H.h, 0, 5, 3, 5, 0, 11);
	h_faults(&H.h, 1, 5, 3, 5, 0, 12);
	run_layout(&l);
	H.h.n[0].fault.drop_pct = H.h.n[0].fault.dup_pct = H.h.n[0].fault.reorder_pct = 0;
	H.h.n[1].fault.drop_pct = H.h.n[1].fault.dup_pct = H.h.n[1].fault.reorder_pct = 0;
	amrma_dgsp_type_free(l.src);
	amrma_dgsp_type_free(l.dst);
}

/* The target refuses programs that reach outside the region, before any byte moves. */
static void
test_refusals(void **state)
{
	struct amrma_dgsp_type *src = vec(100, 1, 1, 8), *wide = vec(100, 1, 1000, 8);
	struct amrma_dgsp_type *neg, *big, *b1;
	const struct amrma_dgsp *sp = amrma_dgsp_type_program(src);
	struct amrma_rma_stats st;
	amrma_rma_req_t req;
	int64_t d[600];
	uint64_t bl[600];
	unsigned int i;

	(void)state;
	h_fill(region, RLEN, 9);
	memcpy(expect, region, RLEN);
	/* footprint 792 KB from an offset 100 KB before the end: outside */
	assert_int_equal(amrma_rma_put_dt(h_ctx(&H.h, 0, 0), (struct amrma_ep){ .node = 1 }, H.key,
		RLEN - 100000, local, sp, 1, amrma_dgsp_type_program(wide), 1, 0, NULL, NULL,
		&req), 0);
	assert_int_equal(wait_req(req), -ERANGE);
	/* negative stride from offset 0: bytes before the region */
	assert_int_equal(amrma_dgsp_type_basic(8, &b1), 0);
	assert_int_equal(amrma_dgsp_type_hvector(100, 1, -16, b1, &neg), 0);
	committed(neg);
	assert_int_equal(amrma_rma_put_dt(h_ctx(&H.h, 0, 0), (struct amrma_ep){ .node = 1 }, H.key,
		0, local, sp, 1, amrma_dgsp_type_program(neg), 1, 0, NULL, NULL, &req), 0);
	assert_int_equal(wait_req(req), -ERANGE);
	/* a bad key */
	assert_int_equal(amrma_rma_get_dt(h_ctx(&H.h, 0, 0), (struct amrma_ep){ .node = 1 },
		H.key ^ 3, 0, sp, 1, local, sp, 1, 0, NULL, NULL, &req), 0);
	assert_int_equal(wait_req(req), -ENOKEY);
	assert_memory_equal(region, expect, RLEN);
	amrma_rma_stats_get(h_ctx(&H.h, 1, 0), &st);
	assert_true(st.dt_rejected >= 2);
	/* locally refused: packed sizes differ; program larger than a frame */
	assert_int_equal(amrma_rma_put_dt(h_ctx(&H.h, 0, 0), (struct amrma_ep){ .node = 1 }, H.key,
		0, local, sp, 2, sp, 1, 0, NULL, NULL, &req), -EINVAL);
	for (i = 0; i < 600; i++) {
		bl[i] = 1 + i % 3;
		d[i] = (int64_t)i * 7 + (i % 5) * 1000;
	}
	assert_int_equal(amrma_dgsp_type_hindexed(600, bl, d, b1, &big), 0);
	committed(big);
	assert_int_equal(amrma_rma_put_dt(h_ctx(&H.h, 0, 0), (struct amrma_ep){ .node = 1 }, H.key,
		0, local, amrma_dgsp_type_program(big), 1, amrma_dgsp_type_program(big), 1, 0,
		NULL, NULL, &req), -EMSGSIZE);
	amrma_dgsp_type_free(src);
	amrma_dgsp_type_free(wide);
	amrma_dgsp_type_free(neg);
	amrma_dgsp_type_free(big);
	amrma_dgsp_type_free(b1);
}

static void
setup_done(struct amrma_ctx *ctx, void *arg, int status)
{
	(void)ctx;
	*(int *)arg = status;
}

static void
region_released(void *arg, void *addr, uint64_t len)
{
	(void)addr;
	(void)len;
	*(bool *)arg = true;
}

/*
 * A target (node 1, its engine of conf rc) holding a program slot that nobody follows
 * up: node 0, which runs no RMA layer, installs a program by hand for a put of 800 bytes
 * into 64 KiB at mem, registered for it; node 1 replies to a handler node 0 does not
 * have. The region is then deregistered: the slot holds it until it goes (*released).
 */
static void
abandon_slot(struct h_rma *p, const struct amrma_rma_conf *rc, uint8_t *mem, bool *released)
{
	struct amrma_dgsp_type *t = vec(100, 1, 2, 8);
	/* key, offset, count, permission (put), packed bytes */
	uint64_t args[5] = { 0, 0, 1, 1, 800 };
	uint8_t prog[1024];
	ssize_t n = amrma_dgsp_serialize(amrma_dgsp_type_program(t), prog, sizeof(prog));
	int status = 1;

	assert_true(n > 0);
	assert_int_equal(h_rma_create(p, 2, 1, NULL, rc, H_RMA_NODE(1)), 0);
	assert_int_equal(h_rma_register(p, mem, 1 << 16, AMRMA_REGION_WRITE), 0);
	args[0] = p->key;
	assert_int_equal(amrma_am_request(h_ctx(&p->h, 0, 0), (struct amrma_ep){ .node = 1 },
		AMRMA_RMA_H_DT_SETUP, args, 5, prog, (uint16_t)n, setup_done, &status), 0);
	H_UNTIL(status != 1, 5000, h_step(&p->h));
	assert_int_equal(status, -ENOENT);
	assert_int_equal(h_rma_deregister(p, region_released, released), 1);
	amrma_dgsp_type_free(t);
}

/*
 * An initiator that installs a program and then sends no data: the target's slot expires
 * after rndv_timeout_ms and lets go of the region.
 */
static void
test_abandoned_slot(void **state)
{
	uint8_t *mem = calloc(1, 1 << 16);
	struct amrma_rma_conf rc;
	struct amrma_rma_stats st;
	struct h_rma p;
	bool released = false;

	(void)state;
	assert_non_null(mem);
	amrma_rma_conf_defaults(&rc);
	rc.rndv_timeout_ms = 50;
	abandon_slot(&p, &rc, mem, &released);
	/* the slot holds the region until it expires */
	H_UNTIL(released, 5000, h_rma_step(&p));
	assert_true(released);
	amrma_rma_stats_get(h_ctx(&p.h, 1, 0), &st);
	assert_int_equal(st.rndv_timeouts, 1);
	h_rma_destroy(&p);
	free(mem);
}

/*
 * The same slot, but its initiator restarts and speaks to the target again: its new life
 * will send nothing for the old program, so the slot goes, and with it the region, as
 * soon as the target hears from that life. Before, both stayed until the rendezvous
 * timeout (10 s by default here).
 */
static void
test_slot_dropped_on_initiator_restart(void **state)
{
	uint8_t *mem = calloc(1, 1 << 16);
	struct amrma_rma_stats st;
	struct h_rma p;
	int status = 1;
	bool released = false;

	(void)state;
	assert_non_null(mem);
	abandon_slot(&p, NULL, mem, &released);
	/* node 0 restarts and asks node 1 something (a handler it does not have) */
	assert_int_equal(h_restart_node(&p.h, 0), 0);
	assert_int_equal(amrma_am_request(h_ctx(&p.h, 0, 0), (struct amrma_ep){ .node = 1 },
		AMRMA_RMA_H_LAST + 1, NULL, 0, NULL, 0, setup_done, &status), 0);
	H_UNTIL(released && status != 1, 2000, h_rma_step(&p));
	assert_int_equal(status, -ENOENT);
	assert_true(released);
	amrma_rma_stats_get(h_ctx(&p.h, 1, 0), &st);
	assert_int_equal(st.rndv_timeouts, 0);
	assert_int_equal(st.stale_requests, 1);
	h_rma_destroy(&p);
	free(mem);
}

/* n 8-byte elements packed, and every other one of a region of 16 n bytes */
struct wide {
	uint64_t n;
	struct amrma_dgsp_type *flat, *every_other;
	uint8_t *mem;		/* the region's */
};

static void
wide_make(struct wide *w, uint64_t n)
{
	w->n = n;
	w->flat = vec(1, n, 1, 8);
	w->every_other = vec(n, 1, 2, 8);
	w->mem = aligned_alloc(4096, 16 * n);
	assert_non_null(w->mem);
}

static void
wide_free(struct wide *w)
{
	amrma_dgsp_type_free(w->flat);
	amrma_dgsp_type_free(w->every_other);
	free(w->mem);
}

/*
 * Register w's memory at node 1 (*r) and start a put (get: a get; flags, cb, arg and req
 * as for amrma_rma_put_dt()) of its elements from (into) local: the bytes to move have
 * pattern seed, the ones they are to overwrite are 0xa5. Returns where they land.
 */
static uint8_t *
wide_start(const struct wide *w, bool get, uint32_t flags, amrma_rma_cb_t cb, void *arg,
	   amrma_rma_req_t *req, struct amrma_region **r, uint32_t seed)
{
	const struct amrma_dgsp *flat = amrma_dgsp_type_program(w->flat);
	const struct amrma_dgsp *every_other = amrma_dgsp_type_program(w->every_other);
	const uint64_t n = w->n;
	uint8_t *moved = get ? local : w->mem;
	uint64_t k;

	memset(moved, 0xa5, get ? 8 * n : 16 * n);
	h_fill(get ? w->mem : local, get ? 16 * n : 8 * n, seed);
	assert_int_equal(amrma_region_register(amrma_rma_regions(H.r[1]), w->mem, 16 * n,
		get ? AMRMA_REGION_READ : AMRMA_REGION_WRITE, r, &k), 0);
	if (get)
		assert_int_equal(amrma_rma_get_dt(h_ctx(&H.h, 0, 0), (struct amrma_ep){ .node = 1 },
			k, 0, every_other, 1, local, flat, 1, flags, cb, arg, req), 0);
	else
		assert_int_equal(amrma_rma_put_dt(h_ctx(&H.h, 0, 0), (struct amrma_ep){ .node = 1 },
			k, 0, local, flat, 1, every_other, 1, flags, cb, arg, req), 0);
	return moved;
}

/*
 * A program slot holds its region for the whole operation: deregistered meanwhile, the
 * packets after it are refused (-ENOKEY, as a lookup would) and the region is let go, for
 * puts and gets alike.
 */
static void
test_deregister_slot(void **state)
{
	const uint64_t n = 512 * 1024;		/* 8-byte elements: 4 MiB packed */
	struct amrma_region *r;
	amrma_rma_req_t req;
	unsigned int get, i;
	struct wide w;
	bool released;

	(void)state;
	wide_make(&w, n);
	for (get = 0; get < 2; get++) {
		uint8_t *moved = wide_start(&w, get, 0, NULL, NULL, &req, &r, 7);

		/* until the first packet moved */
		for (i = 0; i < 10000 && moved[0] == 0xa5; i++)
			h_rma_step(&H);
		assert_int_not_equal(moved[0], 0xa5);
		released = false;
		assert_int_equal(amrma_region_deregister(amrma_rma_regions(H.r[1]), r,
							 region_released, &released), 1);
		assert_int_equal(wait_req(req), -ENOKEY);
		assert_true(released);
		/* the last element did not move */
		assert_int_equal(moved[get ? 8 * n - 1 : 16 * (n - 1)], 0xa5);
	}
	wide_free(&w);
}

/*
 * Every packet after a deregistration is refused with -ENOKEY (docs/rma.md), not only
 * the first: that one freed the slot, and the packets in flight behind it found none and
 * were refused with -ENOENT, which the operation reported when such a refusal came in
 * first (reordered). Puts and gets, each packet reported (AMRMA_RMA_F_PER_PACKET).
 */
static void
test_deregister_slot_every_packet(void **state)
{
	struct amrma_region *r;
	unsigned int get;
	struct wide w;

	(void)state;
	wide_make(&w, 256 * 1024);
	for (get = 0; get < 2; get++) {
		struct h_rma_events e = { 0 };
		const char *why;

		wide_start(&w, get, AMRMA_RMA_F_PER_PACKET, h_rma_events_cb, &e, NULL, &r, 8);
		why = h_rma_events_dereg_midway(&H, &e, r);
		if (why != NULL)
			fail_msg("%s: %s", get ? "get" : "put", why);
	}
	wide_free(&w);
}

struct local_events {
	unsigned int n;
	enum amrma_rma_event seq[8];
	int local_done;		/* amrma_rma_local_done() when EV_LOCAL came */
	amrma_rma_req_t req;
};

static void
local_cb(struct amrma_ctx *ctx, void *arg, enum amrma_rma_event ev, int status)
{
	struct local_events *e = arg;

	assert_int_equal(status, 0);
	if (ev == AMRMA_RMA_EV_LOCAL)
		e->local_done = amrma_rma_local_done(ctx, e->req);
	if (e->n < RTE_DIM(e->seq))
		e->seq[e->n] = ev;
	e->n++;
}

/*
 * A noncontiguous put follows amrma_rma_put()'s conventions: with AMRMA_RMA_F_LOCAL_CB it
 * reports EV_LOCAL once every packet is gathered (its source is copied), before DONE, and
 * amrma_rma_local_done() says so; it reported nothing, and local_done said 0 until the
 * end. Several packets, and none (a zero count).
 */
static void
test_put_dt_local_cb(void **state)
{
	struct amrma_dgsp_type *src = vec(3000, 2, 3, 8), *dst = vec(1000, 6, 7, 8);
	const uint64_t counts[] = { 1, 0 };
	unsigned int k;

	(void)state;
	for (k = 0; k < RTE_DIM(counts); k++) {
		struct local_events e = { .local_done = -1 };
		int status = 1, ret;

		h_fill(local, RLEN, 30 + k);
		assert_int_equal(amrma_rma_put_dt(h_ctx(&H.h, 0, 0), (struct amrma_ep){ .node = 1 },
			H.key, 512, local, amrma_dgsp_type_program(src), counts[k],
			amrma_dgsp_type_program(dst), counts[k], AMRMA_RMA_F_LOCAL_CB, local_cb,
			&e, &e.req), 0);
		ret = h_rma_wait(&H, h_ctx(&H.h, 0, 0), e.req, 30000, &status);
		assert_int_equal(ret, 1);
		assert_int_equal(status, 0);
		assert_int_equal(e.n, 2);
		assert_int_equal(e.seq[0], AMRMA_RMA_EV_LOCAL);
		assert_int_equal(e.seq[1], AMRMA_RMA_EV_DONE);
		assert_int_equal(e.local_done, 1);
	}
	amrma_dgsp_type_free(src);
	amrma_dgsp_type_free(dst);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layouts),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_faults),
		cmocka_unit_test(test_abandoned_slot),
		cmocka_unit_test(test_slot_dropped_on_initiator_restart),
		cmocka_unit_test(test_deregister_slot),
		cmocka_unit_test(test_put_dt_local_cb),
		cmocka_unit_test(test_deregister_slot_every_packet),
	};

	h_eal_init("amrma_test_rma_dt");
	return cmocka_run_group_tests(tests, setup, teardown);
}
