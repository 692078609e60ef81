/* SPDX-License-Identifier: BSD-3-Clause */
/* Tag matching engine: pure unit tests, no EAL. */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "amrma_tag.h"
#include "tag_model.h"

/* Records completions in order. */
struct cq {
	struct amrma_tag_completion c[64];
	int n;
};

static void
record_cb(const struct amrma_tag_completion *c, void *arg)
{
	struct cq *q = arg;

	assert_true(q->n < 64);
	q->c[q->n++] = *c;
}

static struct amrma_tag_engine *
engine(uint32_t posted, uint32_t unexp, uint64_t bytes)
{
	struct amrma_tag_config cfg = {
		.max_posted = posted,
		.max_unexpected = unexp,
		.max_unexpected_bytes = bytes,
		.socket_id = -1,
	};
	struct amrma_tag_engine *e = amrma_tag_engine_create(&cfg);

	assert_non_null(e);
	return e;
}

static struct amrma_tag_recv
recv_desc(uint64_t tag, uint64_t ignore, uint32_t src, void *buf, uint64_t len, struct cq *q)
{
	struct amrma_tag_recv r = {
		.tag = tag, .ignore = ignore, .src = src, .buf = buf, .len = len,
		.cb = q != NULL ? record_cb : NULL, .cb_arg = q,
	};
	return r;
}

static struct amrma_tag_msg
msg_desc(uint64_t tag, uint32_t src, uint64_t len, uintptr_t cookie)
{
	struct amrma_tag_msg m = {
		.tag = tag, .src = src, .len = len, .held_bytes = len,
		.cookie = (void *)cookie,
	};
	return m;
}

/* A message of tag from src, len bytes (all held), named cookie, arrives: the result */
static int
arrive(struct amrma_tag_engine *e, uint64_t tag, uint32_t src, uint64_t len, uintptr_t cookie,
       struct amrma_tag_match *m)
{
	struct amrma_tag_msg msg = msg_desc(tag, src, len, cookie);

	return amrma_tag_arrive(e, &msg, m);
}

static void
test_create_invalid(void **state)
{
	struct amrma_tag_config cfg = { .max_posted = 1, .max_unexpected = 1,
					.max_unexpected_bytes = 0, .socket_id = -1 };

	(void)state;
	assert_null(amrma_tag_engine_create(NULL));
	assert_null(amrma_tag_engine_create(&cfg));
	assert_int_equal(errno, EINVAL);
	cfg.max_unexpected_bytes = 1;
	cfg.max_posted = 0;
	assert_null(amrma_tag_engine_create(&cfg));
	/* A NUMA node that probably exists, or falls back to calloc. */
	cfg.max_posted = 4;
	cfg.socket_id = 0;
	amrma_tag_engine_free(amrma_tag_engine_create(&cfg));
}

static void
test_predicate(void **state)
{
	(void)state;
	assert_true(amrma_tag_matches(0x1234, 0, 0x1234));
	assert_false(amrma_tag_matches(0x1234, 0, 0x1235));
	assert_true(amrma_tag_matches(0x1200, 0xff, 0x12ab));
	assert_false(amrma_tag_matches(0x1200, 0xff, 0x13ab));
	assert_true(amrma_tag_matches(0, AMRMA_TAG_ANY_TAG, UINT64_MAX));
	/* High bits take part too. */
	assert_false(amrma_tag_matches(1ull << 63, 0, 0));
	assert_true(amrma_tag_matches(1ull << 63, 1ull << 63, 0));
}

/* A message matches the FIRST posted receive that matches it. */
static void
test_first_posted_wins(void **state)
{
	struct amrma_tag_engine *e = engine(8, 8, 1024);
	struct amrma_tag_match m;
	struct amrma_tag_recv r;
	struct amrma_tag_msg msg;
	uint64_t id_a, id_b, id_c, id_d;
	char a[16], b[16], c[16], d[16];
	struct cq q = { .n = 0 };

	(void)state;
	r = recv_desc(7, 0, AMRMA_TAG_ANY_SRC, a, sizeof(a), &q);
	r.tag = 99; /* does not match 7 */
	assert_int_equal(amrma_tag_post_recv(e, &r, &id_a, &m), 0);
	r = recv_desc(7, 0, 3, b, sizeof(b), &q);	/* exact tag, source 3 only */
	assert_int_equal(amrma_tag_post_recv(e, &r, &id_b, &m), 0);
	r = recv_desc(0, AMRMA_TAG_ANY_TAG, AMRMA_TAG_ANY_SRC, c, sizeof(c), &q);
	assert_int_equal(amrma_tag_post_recv(e, &r, &id_c, &m), 0);
	r = recv_desc(7, 0, AMRMA_TAG_ANY_SRC, d, sizeof(d), &q);
	assert_int_equal(amrma_tag_post_recv(e, &r, &id_d, &m), 0);
	assert_true(id_a != 0 && id_a != id_b && id_b != id_c && id_c != id_d);

	/* From source 5: b filters on source 3, so the wildcard c (posted before d) wins. */
	assert_int_equal(arrive(e, 7, 5, 10, 0x100, &m), 1);
	assert_true(m.recv_id == id_c);
	assert_ptr_equal(m.buf, c);
	assert_int_equal(m.copy_len, 10);
	assert_int_equal(m.status, 0);
	assert_ptr_equal(m.msg.cookie, (void *)0x100);

	/* From source 3: b is first. */
	assert_int_equal(arrive(e, 7, 3, 4, 0x200, &m), 1);
	assert_true(m.recv_id == id_b);
	/* Next tag-7 message from anyone: d (a never matches 7). */
	msg = msg_desc(7, 3, 4, 0x300);
	assert_int_equal(amrma_tag_arrive(e, &msg, &m), 1);
	assert_true(m.recv_id == id_d);
	/* Nothing left for tag 7: unexpected. */
	assert_int_equal(amrma_tag_arrive(e, &msg, &m), 0);

	/* Completion runs the callback with the message's identity. */
	assert_int_equal(amrma_tag_complete(e, id_b, 0), 0);
	assert_int_equal(q.n, 1);
	assert_true(q.c[0].recv_id == id_b);
	assert_int_equal(q.c[0].tag, 7);
	assert_int_equal(q.c[0].src, 3);
	assert_int_equal(q.c[0].len, 4);
	assert_int_equal(q.c[0].msg_len, 4);
	assert_ptr_equal(q.c[0].buf, b);
	assert_int_equal(q.c[0].status, 0);
	/* Completing twice, or an unmatched receive, is refused. */
	assert_int_equal(amrma_tag_complete(e, id_b, 0), -ENOENT);
	assert_int_equal(amrma_tag_complete(e, id_a, 0), -ENOENT);
	assert_int_equal(amrma_tag_complete(e, id_c, 0), 0);
	assert_int_equal(amrma_tag_complete(e, id_d, 0), 0);
	assert_int_equal(q.n, 3);
	amrma_tag_engine_free(e);
	/* a was still posted: cancelled at free. */
	assert_int_equal(q.n, 4);
	assert_true(q.c[3].recv_id == id_a);
	assert_int_equal(q.c[3].status, -ECANCELED);
}

/* A newly posted receive matches the OLDEST matching unexpected message. */
static void
test_oldest_unexpected_wins(void **state)
{
	struct amrma_tag_engine *e = engine(8, 8, 1024);
	struct amrma_tag_match m;
	struct amrma_tag_recv r;
	struct amrma_tag_msg msg;
	struct amrma_tag_stats st;
	char buf[64];
	uint64_t id;
	struct cq q = { .n = 0 };

	(void)state;
	assert_int_equal(arrive(e, 0x10, 1, 8, 1, &m), 0);
	assert_int_equal(arrive(e, 0x21, 2, 8, 2, &m), 0);
	assert_int_equal(arrive(e, 0x22, 1, 8, 3, &m), 0);
	assert_int_equal(arrive(e, 0x21, 1, 8, 4, &m), 0);

	/* Probe does not consume. */
	assert_int_equal(amrma_tag_probe(e, 0x20, 0xf, AMRMA_TAG_ANY_SRC, &msg), 1);
	assert_ptr_equal(msg.cookie, (void *)2);
	assert_int_equal(amrma_tag_probe(e, 0x30, 0xf, AMRMA_TAG_ANY_SRC, &msg), 0);

	/* 0x2? from source 1: the oldest such is cookie 3 (cookie 2 is from source 2). */
	r = recv_desc(0x20, 0xf, 1, buf, sizeof(buf), &q);
	assert_int_equal(amrma_tag_post_recv(e, &r, &id, &m), 1);
	assert_true(m.recv_id == id);
	assert_ptr_equal(m.msg.cookie, (void *)3);
	assert_int_equal(amrma_tag_complete(e, id, 0), 0);
	/* Any tag, any source: the oldest of all, cookie 1. */
	r = recv_desc(0, AMRMA_TAG_ANY_TAG, AMRMA_TAG_ANY_SRC, buf, sizeof(buf), &q);
	assert_int_equal(amrma_tag_post_recv(e, &r, &id, &m), 1);
	assert_ptr_equal(m.msg.cookie, (void *)1);
	assert_int_equal(amrma_tag_complete(e, id, 0), 0);
	/* Exact 0x21: cookie 2 is older than 4. */
	r = recv_desc(0x21, 0, AMRMA_TAG_ANY_SRC, buf, sizeof(buf), &q);
	assert_int_equal(amrma_tag_post_recv(e, &r, &id, &m), 1);
	assert_ptr_equal(m.msg.cookie, (void *)2);
	assert_int_equal(amrma_tag_complete(e, id, 0), 0);
	assert_int_equal(amrma_tag_post_recv(e, &r, &id, &m), 1);
	assert_ptr_equal(m.msg.cookie, (void *)4);
	assert_int_equal(amrma_tag_complete(e, id, 0), 0);
	/* Queue empty now: the receive is posted. */
	assert_int_equal(amrma_tag_post_recv(e, &r, &id, &m), 0);

	amrma_tag_stats_get(e, &st);
	assert_int_equal(st.unexpected, 0);
	assert_int_equal(st.unexpected_bytes, 0);
	assert_int_equal(st.unexpected_hwm, 4);
	assert_int_equal(st.matched_unexpected, 4);
	assert_int_equal(st.posted, 1);
	assert_int_equal(st.completed, 4);
	amrma_tag_engine_free(e);
}

/* Same-tag messages from one source are received in arrival order (non-overtaking). */
static void
test_non_overtaking(void **state)
{
	struct amrma_tag_engine *e = engine(64, 64, 1 << 20);
	struct amrma_tag_match m;
	struct amrma_tag_recv r;
	uint64_t ids[32];
	char buf[8];
	int i;

	(void)state;
	/* Half the messages arrive first, then receives, then the other half. */
	for (i = 0; i < 16; i++)
		assert_int_equal(arrive(e, 5, 9, 1, (uintptr_t)i + 1, &m), 0);
	r = recv_desc(5, 0, 9, buf, sizeof(buf), NULL);
	r.cb = NULL;
	for (i = 0; i < 32; i++) {
		int ret = amrma_tag_post_recv(e, &r, &ids[i], &m);

		if (i < 16) {
			assert_int_equal(ret, 1);
			assert_ptr_equal(m.msg.cookie, (void *)((uintptr_t)i + 1));
			assert_int_equal(amrma_tag_complete(e, ids[i], 0), 0);
		} else {
			assert_int_equal(ret, 0);
		}
	}
	for (i = 16; i < 32; i++) {
		assert_int_equal(arrive(e, 5, 9, 1, (uintptr_t)i + 1, &m), 1);
		assert_true(m.recv_id == ids[i]);
		assert_int_equal(amrma_tag_complete(e, ids[i], 0), 0);
	}
	amrma_tag_engine_free(e);
}

/* Unexpected queue bounds: entries and bytes, -ENOBUFS, recovery after draining. */
static void
test_unexpected_bounds(void **state)
{
	struct amrma_tag_engine *e = engine(4, 3, 100);
	struct amrma_tag_match m;
	struct amrma_tag_recv r;
	struct amrma_tag_msg msg;
	struct amrma_tag_stats st;
	char buf[128];
	uint64_t id;
	int i;

	(void)state;
	/* Entry limit (3), bytes well below the limit. */
	for (i = 0; i < 3; i++)
		assert_int_equal(arrive(e, 1, 1, 10, (uintptr_t)i + 1, &m), 0);
	assert_int_equal(arrive(e, 1, 1, 10, 4, &m), -ENOBUFS);
	/* A refused message is not queued: still 3, still the same ones. */
	amrma_tag_stats_get(e, &st);
	assert_int_equal(st.unexpected, 3);
	assert_int_equal(st.unexpected_bytes, 30);
	assert_int_equal(st.refused, 1);
	/* A posted receive still matches while the unexpected queue is full. */
	r = recv_desc(2, 0, AMRMA_TAG_ANY_SRC, buf, sizeof(buf), NULL);
	assert_int_equal(amrma_tag_post_recv(e, &r, &id, &m), 0);
	assert_int_equal(arrive(e, 2, 1, 10, 50, &m), 1);
	assert_int_equal(amrma_tag_complete(e, id, 0), 0);

	/* Drain one by receiving it: room for exactly one more. */
	r = recv_desc(1, 0, AMRMA_TAG_ANY_SRC, buf, sizeof(buf), NULL);
	assert_int_equal(amrma_tag_post_recv(e, &r, &id, &m), 1);
	assert_ptr_equal(m.msg.cookie, (void *)1);
	assert_int_equal(amrma_tag_complete(e, id, 0), 0);
	msg = msg_desc(1, 1, 10, 4);
	assert_int_equal(amrma_tag_arrive(e, &msg, &m), 0);
	assert_int_equal(amrma_tag_arrive(e, &msg, &m), -ENOBUFS);

	/* Drain everything with pop (teardown path): order preserved. */
	for (i = 2; i <= 4; i++) {
		assert_int_equal(amrma_tag_unexpected_pop(e, &msg), 1);
		assert_ptr_equal(msg.cookie, (void *)(uintptr_t)i);
	}
	assert_int_equal(amrma_tag_unexpected_pop(e, &msg), 0);

	/* Byte limit (100): 60 + 40 fits exactly, one more byte does not. */
	assert_int_equal(arrive(e, 1, 1, 60, 5, &m), 0);
	assert_int_equal(arrive(e, 1, 1, 40, 6, &m), 0);
	assert_int_equal(arrive(e, 1, 1, 1, 7, &m), -ENOBUFS);
	/* A rendezvous announcement holding no bytes still fits (entry limit allows it). */
	msg = msg_desc(1, 1, 1 << 20, 8);
	msg.held_bytes = 0;
	assert_int_equal(amrma_tag_arrive(e, &msg, &m), 0);
	/* A huge held_bytes cannot overflow the accounting. */
	assert_int_equal(amrma_tag_unexpected_pop(e, &msg), 1);
	msg = msg_desc(1, 1, 1, 9);
	msg.held_bytes = UINT64_MAX;
	assert_int_equal(amrma_tag_arrive(e, &msg, &m), -ENOBUFS);
	/* Receiving the 40-byte one (oldest left) frees its bytes: 60 bytes fit again. */
	assert_int_equal(amrma_tag_post_recv(e, &r, &id, &m), 1);
	assert_ptr_equal(m.msg.cookie, (void *)6);
	assert_int_equal(amrma_tag_complete(e, id, 0), 0);
	assert_int_equal(arrive(e, 1, 1, 60, 10, &m), 0);
	amrma_tag_stats_get(e, &st);
	assert_int_equal(st.unexpected_bytes, 60);
	assert_int_equal(st.unexpected, 2);
	assert_int_equal(st.refused, 4);
	amrma_tag_engine_free(e);
}

/* Posted-receive pool limit: -ENOSPC, and entries come back after completion/cancel. */
static void
test_posted_limit(void **state)
{
	struct amrma_tag_engine *e = engine(2, 2, 100);
	struct amrma_tag_match m;
	struct amrma_tag_recv r;
	uint64_t id1, id2, id3;
	char buf[8];

	(void)state;
	r = recv_desc(1, 0, AMRMA_TAG_ANY_SRC, buf, sizeof(buf), NULL);
	assert_int_equal(amrma_tag_post_recv(e, &r, &id1, &m), 0);
	assert_int_equal(amrma_tag_post_recv(e, &r, &id2, &m), 0);
	assert_int_equal(amrma_tag_post_recv(e, &r, &id3, &m), -ENOSPC);
	/* A matched but uncompleted receive still occupies its entry. */
	assert_int_equal(arrive(e, 1, 1, 1, 1, &m), 1);
	assert_int_equal(amrma_tag_post_recv(e, &r, &id3, &m), -ENOSPC);
	assert_int_equal(amrma_tag_complete(e, id1, 0), 0);
	assert_int_equal(amrma_tag_post_recv(e, &r, &id3, &m), 0);
	/* The recycled entry has a new id: the old one is dead. */
	assert_true(id3 != id1);
	assert_int_equal(amrma_tag_cancel(e, id1), -ENOENT);
	assert_int_equal(amrma_tag_complete(e, id1, 0), -ENOENT);
	assert_int_equal(amrma_tag_cancel(e, 0), -ENOENT);
	assert_int_equal(amrma_tag_cancel(e, UINT64_MAX), -ENOENT);
	amrma_tag_engine_free(e);
}

static void
test_cancel(void **state)
{
	struct amrma_tag_engine *e = engine(4, 4, 100);
	struct amrma_tag_match m;
	struct amrma_tag_recv r;
	struct amrma_tag_stats st;
	uint64_t id1, id2;
	char b1[8], b2[8];
	struct cq q = { .n = 0 };

	(void)state;
	r = recv_desc(3, 0, AMRMA_TAG_ANY_SRC, b1, sizeof(b1), &q);
	assert_int_equal(amrma_tag_post_recv(e, &r, &id1, &m), 0);
	r.buf = b2;
	assert_int_equal(amrma_tag_post_recv(e, &r, &id2, &m), 0);
	/* Cancelling the first lets the message go to the second. */
	assert_int_equal(amrma_tag_cancel(e, id1), 0);
	assert_int_equal(q.n, 1);
	assert_true(q.c[0].recv_id == id1);
	assert_int_equal(q.c[0].status, -ECANCELED);
	assert_int_equal(q.c[0].len, 0);
	assert_ptr_equal(q.c[0].buf, b1);
	assert_int_equal(amrma_tag_cancel(e, id1), -ENOENT);
	assert_int_equal(arrive(e, 3, 1, 8, 1, &m), 1);
	assert_true(m.recv_id == id2);
	/* Matched: too late to cancel, it completes normally. */
	assert_int_equal(amrma_tag_cancel(e, id2), -EBUSY);
	/* A transfer failure reported by the protocol reaches the callback. */
	assert_int_equal(amrma_tag_complete(e, id2, -EIO), 0);
	assert_int_equal(q.n, 2);
	assert_int_equal(q.c[1].status, -EIO);
	assert_int_equal(q.c[1].len, 0);
	assert_int_equal(q.c[1].msg_len, 8);
	amrma_tag_stats_get(e, &st);
	assert_int_equal(st.cancelled, 1);
	assert_int_equal(st.posted, 0);
	assert_int_equal(st.in_progress, 0);
	amrma_tag_engine_free(e);
	assert_int_equal(q.n, 2);
}

/* Truncation: a longer message still matches; copy_len is the buffer, status -EMSGSIZE. */
static void
test_truncation(void **state)
{
	struct amrma_tag_engine *e = engine(4, 4, 1000);
	struct amrma_tag_match m;
	struct amrma_tag_recv r;
	struct amrma_tag_msg msg;
	struct amrma_tag_stats st;
	char buf[16];
	uint64_t id;
	struct cq q = { .n = 0 };

	(void)state;
	/* Expected path. */
	r = recv_desc(4, 0, AMRMA_TAG_ANY_SRC, buf, sizeof(buf), &q);
	assert_int_equal(amrma_tag_post_recv(e, &r, &id, &m), 0);
	msg = msg_desc(4, 2, 100, 1);
	assert_int_equal(amrma_tag_arrive(e, &msg, &m), 1);
	assert_int_equal(m.copy_len, 16);
	assert_int_equal(m.status, -EMSGSIZE);
	assert_int_equal(amrma_tag_complete(e, id, 0), 0);
	assert_int_equal(q.c[0].status, -EMSGSIZE);
	assert_int_equal(q.c[0].len, 16);
	assert_int_equal(q.c[0].msg_len, 100);
	/* Unexpected path. */
	assert_int_equal(amrma_tag_arrive(e, &msg, &m), 0);
	assert_int_equal(amrma_tag_post_recv(e, &r, &id, &m), 1);
	assert_int_equal(m.copy_len, 16);
	assert_int_equal(m.status, -EMSGSIZE);
	assert_int_equal(amrma_tag_complete(e, id, 0), 0);
	assert_int_equal(q.c[1].status, -EMSGSIZE);
	/* Exact fit and zero-length receive of a zero-length message are fine. */
	msg.len = 16;
	assert_int_equal(amrma_tag_post_recv(e, &r, &id, &m), 0);
	assert_int_equal(amrma_tag_arrive(e, &msg, &m), 1);
	assert_int_equal(m.status, 0);
	assert_int_equal(m.copy_len, 16);
	assert_int_equal(amrma_tag_complete(e, id, 0), 0);
	r.buf = NULL;
	r.len = 0;
	msg.len = 0;
	assert_int_equal(amrma_tag_post_recv(e, &r, &id, &m), 0);
	assert_int_equal(amrma_tag_arrive(e, &msg, &m), 1);
	assert_int_equal(m.status, 0);
	assert_int_equal(amrma_tag_complete(e, id, 0), 0);
	amrma_tag_stats_get(e, &st);
	assert_int_equal(st.truncated, 2);
	amrma_tag_engine_free(e);
}

/* A completion callback may post the next receive (entry released before the callback). */
static struct amrma_tag_engine *cb_engine;
static int cb_reposted;

static void
repost_cb(const struct amrma_tag_completion *c, void *arg)
{
	struct amrma_tag_recv r = { .tag = c->tag, .src = AMRMA_TAG_ANY_SRC, .buf = arg,
				    .len = 8, .cb = NULL };
	struct amrma_tag_match m;
	uint64_t id;

	assert_int_equal(amrma_tag_post_recv(cb_engine, &r, &id, &m), 0);
	cb_reposted++;
}

static void
test_callback_reposts(void **state)
{
	char buf[8];
	struct amrma_tag_recv r = { .tag = 6, .src = AMRMA_TAG_ANY_SRC, .buf = buf, .len = 8,
				    .cb = repost_cb, .cb_arg = buf };
	struct amrma_tag_match m;
	struct amrma_tag_msg msg = msg_desc(6, 1, 8, 1);
	uint64_t id;

	(void)state;
	cb_engine = engine(1, 1, 8);	/* one entry: the repost must reuse it */
	assert_int_equal(amrma_tag_post_recv(cb_engine, &r, &id, &m), 0);
	assert_int_equal(amrma_tag_arrive(cb_engine, &msg, &m), 1);
	assert_int_equal(amrma_tag_complete(cb_engine, id, 0), 0);
	assert_int_equal(cb_reposted, 1);
	assert_int_equal(amrma_tag_arrive(cb_engine, &msg, &m), 1);
	assert_true(m.recv_id != id);
	amrma_tag_engine_free(cb_engine);
}

static void
test_invalid_args(void **state)
{
	struct amrma_tag_engine *e = engine(2, 2, 10);
	struct amrma_tag_recv r = { .tag = 1, .buf = NULL, .len = 4 };
	struct amrma_tag_msg msg = msg_desc(1, AMRMA_TAG_ANY_SRC, 1, 1);
	struct amrma_tag_match m;

	(void)state;
	assert_int_equal(amrma_tag_post_recv(e, &r, NULL, &m), -EINVAL);
	assert_int_equal(amrma_tag_post_recv(NULL, &r, NULL, &m), -EINVAL);
	assert_int_equal(amrma_tag_arrive(e, &msg, &m), -EINVAL);
	assert_int_equal(amrma_tag_arrive(e, NULL, &m), -EINVAL);
	amrma_tag_engine_free(e);
	amrma_tag_engine_free(NULL);
}

static void
count_msg_cb(const struct amrma_tag_msg *msg, void *arg)
{
	uintptr_t *sum = arg;

	*sum += (uintptr_t)msg->cookie;
}

/* A dead peer's unexpected messages and source-specific receives go; others stay. */
static void
test_purge_src(void **state)
{
	struct amrma_tag_engine *e = engine(8, 8, 1000);
	struct amrma_tag_match m;
	struct amrma_tag_recv r;
	struct amrma_tag_msg msg;
	struct amrma_tag_stats st;
	struct cq q = { .n = 0 };
	uint64_t id_src2, id_any, id_src3;
	uintptr_t sum = 0;
	char buf[64];

	(void)state;
	assert_int_equal(arrive(e, 1, 2, 10, 1, &m), 0);
	assert_int_equal(arrive(e, 1, 3, 10, 2, &m), 0);
	assert_int_equal(arrive(e, 5, 2, 10, 4, &m), 0);
	r = recv_desc(9, 0, 2, buf, sizeof(buf), &q);
	assert_int_equal(amrma_tag_post_recv(e, &r, &id_src2, &m), 0);
	r = recv_desc(0x90, 0xf, 2, buf, sizeof(buf), &q);	/* wildcard tag, source 2 */
	assert_int_equal(amrma_tag_post_recv(e, &r, &id_src2, &m), 0);
	r = recv_desc(9, 0, AMRMA_TAG_ANY_SRC, buf, sizeof(buf), &q);
	assert_int_equal(amrma_tag_post_recv(e, &r, &id_any, &m), 0);
	r = recv_desc(9, 0, 3, buf, sizeof(buf), &q);
	assert_int_equal(amrma_tag_post_recv(e, &r, &id_src3, &m), 0);

	assert_int_equal(amrma_tag_purge_src(e, 2, count_msg_cb, &sum), 4);
	assert_int_equal(sum, 1 + 4);
	assert_int_equal(q.n, 2);
	assert_int_equal(q.c[0].status, -ECANCELED);
	assert_int_equal(q.c[1].status, -ECANCELED);
	amrma_tag_stats_get(e, &st);
	assert_int_equal(st.unexpected, 1);
	assert_int_equal(st.unexpected_bytes, 10);
	assert_int_equal(st.posted, 2);
	/* The survivors still match. */
	assert_int_equal(amrma_tag_probe(e, 1, 0, 3, &msg), 1);
	assert_ptr_equal(msg.cookie, (void *)2);
	assert_int_equal(arrive(e, 9, 7, 1, 8, &m), 1);
	assert_true(m.recv_id == id_any);
	assert_int_equal(amrma_tag_purge_src(e, 2, NULL, NULL), 0);
	assert_int_equal(amrma_tag_purge_src(e, AMRMA_TAG_ANY_SRC, NULL, NULL), -EINVAL);
	amrma_tag_engine_free(e);
}

/* What a purge callback does to the engine, and what it saw. */
struct reenter {
	struct amrma_tag_engine *e;
	bool nest;		/* purge the same source again, rather than post a receive */
	int calls;
	int matched;		/* the receive posted from the callback matched at once */
	int nested;		/* what the nested purge returned */
	struct amrma_tag_match m;
	uintptr_t cookies;
	char buf[16];
};

static void
reenter_msg_cb(const struct amrma_tag_msg *msg, void *arg)
{
	struct reenter *x = arg;
	struct amrma_tag_recv r = recv_desc(0, AMRMA_TAG_ANY_TAG, AMRMA_TAG_ANY_SRC, x->buf,
					     sizeof(x->buf), NULL);

	x->cookies += (uintptr_t)msg->cookie;
	if (x->calls++ != 0)
		return;
	if (x->nest)
		x->nested = amrma_tag_purge_src(x->e, 2, reenter_msg_cb, x);
	else
		x->matched = amrma_tag_post_recv(x->e, &r, NULL, &x->m);
}

/*
 * The queue holds the n messages of cookies[] (oldest first) out of cap: it takes exactly
 * cap - n more, then gives everything back in arrival order and is empty (a free entry
 * listed twice, or a queued one lost, shows here).
 */
static void
assert_queue_sound(struct amrma_tag_engine *e, const uintptr_t *cookies, int n, int cap)
{
	struct amrma_tag_stats st;
	struct amrma_tag_msg msg;
	struct amrma_tag_match m;
	int i;

	for (i = 0; i < cap - n; i++) {
		msg = msg_desc(1000 + i, 9, 1, 1000 + i);
		assert_int_equal(amrma_tag_arrive(e, &msg, &m), 0);
	}
	assert_int_equal(amrma_tag_arrive(e, &msg, &m), -ENOBUFS);
	for (i = 0; i < cap; i++) {
		assert_int_equal(amrma_tag_unexpected_pop(e, &msg), 1);
		assert_ptr_equal(msg.cookie, (void *)(i < n ? cookies[i] : 1000u + i - n));
	}
	assert_int_equal(amrma_tag_unexpected_pop(e, &msg), 0);
	amrma_tag_stats_get(e, &st);
	assert_int_equal(st.unexpected, 0);
	assert_int_equal(st.unexpected_bytes, 0);
}

/*
 * A purge callback may call into the engine: a wildcard receive it posts takes the message
 * the walk would visit next, a nested purge of the same source takes the rest, and the
 * queue and counters stay consistent (the walk used to follow the taken message onto the
 * free list and unlink free entries).
 */
static void
test_purge_src_reentrant(void **state)
{
	static const uintptr_t left_post[] = { 8 }, left_nest[] = { 4 };
	struct reenter x = { .nest = false };
	struct amrma_tag_stats st;
	struct amrma_tag_match m;
	int i;

	(void)state;
	/* A(src 2) B(3) C(2) D(3); the callback for A posts a receive that takes B. */
	x.e = engine(4, 8, 1000);
	for (i = 0; i < 4; i++)
		assert_int_equal(arrive(x.e, i, 2 + i % 2, 10, 1u << i, &m), 0);
	assert_int_equal(amrma_tag_purge_src(x.e, 2, reenter_msg_cb, &x), 2);
	assert_int_equal(x.calls, 2);
	assert_int_equal(x.cookies, 1 + 4);
	assert_int_equal(x.matched, 1);
	assert_ptr_equal(x.m.msg.cookie, (void *)2);
	amrma_tag_stats_get(x.e, &st);
	assert_int_equal(st.unexpected, 1);
	assert_int_equal(st.unexpected_bytes, 10);
	assert_int_equal(st.in_progress, 1);
	assert_int_equal(amrma_tag_complete(x.e, x.m.recv_id, 0), 0);
	assert_queue_sound(x.e, left_post, 1, 8);
	amrma_tag_engine_free(x.e);

	/* A(2) C(2) B(3); the callback for A purges source 2 again, which takes C. */
	memset(&x, 0, sizeof(x));
	x.nest = true;
	x.e = engine(4, 4, 1000);
	for (i = 0; i < 3; i++)
		assert_int_equal(arrive(x.e, i, i < 2 ? 2 : 3, 10, 1u << i, &m), 0);
	assert_int_equal(amrma_tag_purge_src(x.e, 2, reenter_msg_cb, &x) + x.nested, 2);
	assert_int_equal(x.calls, 2);
	assert_int_equal(x.cookies, 1 + 2);
	amrma_tag_stats_get(x.e, &st);
	assert_int_equal(st.unexpected, 1);
	assert_int_equal(st.unexpected_bytes, 10);
	assert_queue_sound(x.e, left_nest, 1, 4);
	amrma_tag_engine_free(x.e);
}

/*
 * Differential test: random bytes decoded into posts (exact and wildcard), arrivals,
 * cancels and drains; the binned engine must agree with a naive in-order model on every
 * step (tag_model.c, shared with the libFuzzer harness).
 */
static void
test_differential(void **state)
{
	static uint8_t bytes[200000];
	uint64_t x = 0x9e3779b97f4a7c15ull;
	struct tag_model_counts c;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bytes); i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		bytes[i] = (uint8_t)(x >> 24);
	}
	tag_model_run(bytes, sizeof(bytes), &c);
	print_message("differential: %lu matched, %lu queued, %lu refused, %lu cancelled, "
		      "%lu drained, %lu purged\n", c.matched, c.queued, c.refused, c.cancelled,
		      c.drained, c.purged);
	/* Every path was exercised. */
	assert_true(c.matched > 1000 && c.queued > 1000 && c.refused > 100 &&
		    c.cancelled > 100 && c.drained > 100 && c.purged > 100);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_invalid),
		cmocka_unit_test(test_predicate),
		cmocka_unit_test(test_first_posted_wins),
		cmocka_unit_test(test_oldest_unexpected_wins),
		cmocka_unit_test(test_non_overtaking),
		cmocka_unit_test(test_unexpected_bounds),
		cmocka_unit_test(test_posted_limit),
		cmocka_unit_test(test_cancel),
		cmocka_unit_test(test_truncation),
		cmocka_unit_test(test_callback_reposts),
		cmocka_unit_test(test_invalid_args),
		cmocka_unit_test(test_purge_src),
		cmocka_unit_test(test_purge_src_reentrant),
		cmocka_unit_test(test_differential),
	};

	return cmocka_run_group_tests_name("tag", tests, NULL, NULL);
}
