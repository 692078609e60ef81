/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tag matching engine. Entries live in fixed arrays with free lists (no allocation after
 * creation). The common case - an exact tag from a known source, as in every RMA
 * rendezvous - is found by hashing (tag, src) into bins, so it costs O(1) rather than a
 * scan of the whole queue:
 * - expected: exact receives sit in bin h(tag, src), wildcard receives (any ignore bit or
 *   any source) in one list; each receive has a post sequence number. An arrival takes
 *   the first exact match of its bin and the first match of the wildcard list, and keeps
 *   the one posted first: bins and the wildcard list are each in post order, so that is
 *   the first matching receive overall.
 * - unexpected: every message is in the global arrival-order list AND in its bin. An exact
 *   receive only needs its bin (all messages it can match are there, oldest first); a
 *   wildcard receive scans the global list.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include <numa.h>
#include <rte_log.h>

#include "amrma_tag.h"

RTE_LOG_REGISTER(amrma_tag_logtype, lib.amrma.tag, NOTICE);
#define TAG_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, amrma_tag_logtype, "tag: " fmt "\n", ##__VA_ARGS__)

enum recv_state { RECV_FREE, RECV_POSTED, RECV_MATCHED };

struct recv_entry {
	TAILQ_ENTRY(recv_entry) next;	/* its expected bin, wildcard list or free list */
	struct amrma_tag_recv r;
	uint64_t seq;			/* post order */
	uint32_t gen;			/* upper half of the id; bumped on each use */
	enum recv_state state;
	bool wild;			/* on the wildcard list rather than a bin */
	/* filled at match time for the completion */
	uint64_t msg_tag;
	uint64_t msg_len;
	uint64_t copy_len;
	uint32_t msg_src;
	int status;
};

struct unexp_entry {
	TAILQ_ENTRY(unexp_entry) next;	/* global arrival order, or free list */
	TAILQ_ENTRY(unexp_entry) bin;	/* arrival order within its bin */
	struct amrma_tag_msg msg;
};

TAILQ_HEAD(recv_list, recv_entry);
TAILQ_HEAD(unexp_list, unexp_entry);

struct amrma_tag_engine {
	struct amrma_tag_config cfg;
	struct recv_list *exp_bins;
	struct recv_list exp_wild;
	struct recv_list recv_free;
	struct unexp_list *unexp_bins;
	struct unexp_list unexpected;
	struct unexp_list unexp_free;
	struct recv_entry *recvs;
	struct unexp_entry *unexps;
	size_t recvs_sz, unexps_sz, exp_bins_sz, unexp_bins_sz;
	uint32_t exp_mask, unexp_mask;	/* bin count - 1 (powers of 2) */
	uint64_t post_seq;
	bool numa;			/* arrays from numa_alloc_onnode */
	struct amrma_tag_stats st;
};

static void *
tag_alloc(struct amrma_tag_engine *e, size_t sz)
{
	void *p;

	if (e->numa) {
		p = numa_alloc_onnode(sz, e->cfg.socket_id);
		if (p != NULL)
			memset(p, 0, sz);
		return p;
	}
	return calloc(1, sz);
}

static void
tag_free(struct amrma_tag_engine *e, void *p, size_t sz)
{
	if (p == NULL)
		return;
	if (e->numa)
		numa_free(p, sz);
	else
		free(p);
}

/* Bins: the next power of 2 >= n, at most 64 Ki (a hint: bins only affect speed). */
static uint32_t
bin_count(uint32_t n)
{
	uint32_t b = 1;

	while (b < n && b < (1u << 16))
		b <<= 1;
	return b;
}

/* (tag, src) -> bin. Multiplicative mixing: tags often differ only in low or high bits. */
static inline uint32_t
bin_of(uint64_t tag, uint32_t src, uint32_t mask)
{
	uint64_t h = (tag ^ ((uint64_t)src * 0x9e3779b97f4a7c15ull)) * 0xff51afd7ed558ccdull;

	return (uint32_t)(h >> 32) & mask;
}

struct amrma_tag_engine *
amrma_tag_engine_create(const struct amrma_tag_config *cfg)
{
	struct amrma_tag_engine *e;
	uint32_t i;

	if (cfg == NULL || cfg->max_posted == 0 || cfg->max_unexpected == 0 ||
	    cfg->max_unexpected_bytes == 0 || cfg->max_posted == UINT32_MAX) {
		errno = EINVAL;
		return NULL;
	}
	e = calloc(1, sizeof(*e));
	if (e == NULL)
		return NULL;
	e->cfg = *cfg;
	e->numa = cfg->socket_id >= 0 && numa_available() >= 0 &&
		cfg->socket_id <= numa_max_node();
	e->exp_mask = bin_count(cfg->max_posted) - 1;
	e->unexp_mask = bin_count(cfg->max_unexpected) - 1;
	e->recvs_sz = sizeof(*e->recvs) * cfg->max_posted;
	e->unexps_sz = sizeof(*e->unexps) * cfg->max_unexpected;
	e->exp_bins_sz = sizeof(*e->exp_bins) * (e->exp_mask + 1);
	e->unexp_bins_sz = sizeof(*e->unexp_bins) * (e->unexp_mask + 1);
	e->recvs = tag_alloc(e, e->recvs_sz);
	e->unexps = tag_alloc(e, e->unexps_sz);
	e->exp_bins = tag_alloc(e, e->exp_bins_sz);
	e->unexp_bins = tag_alloc(e, e->unexp_bins_sz);
	TAILQ_INIT(&e->exp_wild);
	TAILQ_INIT(&e->recv_free);
	TAILQ_INIT(&e->unexpected);
	TAILQ_INIT(&e->unexp_free);
	if (e->recvs == NULL || e->unexps == NULL || e->exp_bins == NULL ||
	    e->unexp_bins == NULL) {
		amrma_tag_engine_free(e);
		errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i <= e->exp_mask; i++)
		TAILQ_INIT(&e->exp_bins[i]);
	for (i = 0; i <= e->unexp_mask; i++)
		TAILQ_INIT(&e->unexp_bins[i]);
	for (i = 0; i < cfg->max_posted; i++)
		TAILQ_INSERT_TAIL(&e->recv_free, &e->recvs[i], next);
	for (i = 0; i < cfg->max_unexpected; i++)
		TAILQ_INSERT_TAIL(&e->unexp_free, &e->unexps[i], next);
	return e;
}

static uint64_t
recv_id(const struct amrma_tag_engine *e, const struct recv_entry *re)
{
	return ((uint64_t)re->gen << 32) | (uint64_t)(re - e->recvs);
}

/* Entry for an id, or NULL if the id is stale or was never issued. */
static struct recv_entry *
recv_lookup(const struct amrma_tag_engine *e, uint64_t id)
{
	uint32_t idx = (uint32_t)id;
	struct recv_entry *re;

	if (idx >= e->cfg.max_posted)
		return NULL;
	re = &e->recvs[idx];
	if (re->state == RECV_FREE || re->gen != (uint32_t)(id >> 32))
		return NULL;
	return re;
}

static void
recv_release(struct amrma_tag_engine *e, struct recv_entry *re)
{
	re->state = RECV_FREE;
	/* Head insertion keeps recently used (cache-warm) entries in use. */
	TAILQ_INSERT_HEAD(&e->recv_free, re, next);
}

static void
recv_callback(const struct amrma_tag_engine *e, const struct recv_entry *re, int status,
	      uint64_t len)
{
	struct amrma_tag_completion c = {
		.recv_id = recv_id(e, re),
		.tag = re->msg_tag,
		.src = re->msg_src,
		.msg_len = re->msg_len,
		.len = len,
		.buf = re->r.buf,
		.status = status,
	};

	if (re->r.cb != NULL)
		re->r.cb(&c, re->r.cb_arg);
}

/* The list a posted receive is on. */
static inline struct recv_list *
exp_list(struct amrma_tag_engine *e, const struct recv_entry *re)
{
	return re->wild ? &e->exp_wild : &e->exp_bins[bin_of(re->r.tag, re->r.src, e->exp_mask)];
}

/* Take a message off the unexpected queue (both of its lists) and uncharge it. */
static void
unexp_unlink(struct amrma_tag_engine *e, struct unexp_entry *ue)
{
	TAILQ_REMOVE(&e->unexpected, ue, next);
	TAILQ_REMOVE(&e->unexp_bins[bin_of(ue->msg.tag, ue->msg.src, e->unexp_mask)], ue, bin);
	e->st.unexpected--;
	e->st.unexpected_bytes -= ue->msg.held_bytes;
}

static inline bool
recv_matches(const struct amrma_tag_recv *r, const struct amrma_tag_msg *msg)
{
	return amrma_tag_matches(r->tag, r->ignore, msg->tag) &&
		(r->src == AMRMA_TAG_ANY_SRC || r->src == msg->src);
}

/* Turn a receive into MATCHED with msg and describe the match to the protocol. */
static void
do_match(struct amrma_tag_engine *e, struct recv_entry *re,
	 const struct amrma_tag_msg *msg, struct amrma_tag_match *m)
{
	re->state = RECV_MATCHED;
	re->msg_tag = msg->tag;
	re->msg_src = msg->src;
	re->msg_len = msg->len;
	if (msg->len > re->r.len) {
		re->copy_len = re->r.len;
		re->status = -EMSGSIZE;
		e->st.truncated++;
	} else {
		re->copy_len = msg->len;
		re->status = 0;
	}
	e->st.in_progress++;
	m->recv_id = recv_id(e, re);
	m->buf = re->r.buf;
	m->copy_len = re->copy_len;
	m->status = re->status;
	m->msg = *msg;
}

int
amrma_tag_post_recv(struct amrma_tag_engine *e, const struct amrma_tag_recv *r,
		    uint64_t *id, struct amrma_tag_match *m)
{
	struct recv_entry *re;
	struct unexp_entry *ue;

	if (e == NULL || r == NULL || m == NULL || (r->buf == NULL && r->len != 0))
		return -EINVAL;
	re = TAILQ_FIRST(&e->recv_free);
	if (re == NULL)
		return -ENOSPC;
	TAILQ_REMOVE(&e->recv_free, re, next);
	re->gen++;
	if (re->gen == 0)	/* ids are never 0 */
		re->gen = 1;
	re->r = *r;
	if (id != NULL)
		*id = recv_id(e, re);

	re->wild = r->ignore != 0 || r->src == AMRMA_TAG_ANY_SRC;

	if (re->wild) {
		TAILQ_FOREACH(ue, &e->unexpected, next)
			if (recv_matches(r, &ue->msg))
				break;
	} else {
		TAILQ_FOREACH(ue, &e->unexp_bins[bin_of(r->tag, r->src, e->unexp_mask)], bin)
			if (ue->msg.tag == r->tag && ue->msg.src == r->src)
				break;
	}
	if (ue != NULL) {
		unexp_unlink(e, ue);
		e->st.matched_unexpected++;
		do_match(e, re, &ue->msg, m);
		TAILQ_INSERT_HEAD(&e->unexp_free, ue, next);
		return 1;
	}
	re->state = RECV_POSTED;
	re->seq = e->post_seq++;
	TAILQ_INSERT_TAIL(exp_list(e, re), re, next);
	e->st.posted++;
	return 0;
}

int
amrma_tag_arrive(struct amrma_tag_engine *e, const struct amrma_tag_msg *msg,
		 struct amrma_tag_match *m)
{
	struct recv_entry *re, *wre;
	struct unexp_entry *ue;

	if (e == NULL || msg == NULL || m == NULL || msg->src == AMRMA_TAG_ANY_SRC)
		return -EINVAL;
	TAILQ_FOREACH(re, &e->exp_bins[bin_of(msg->tag, msg->src, e->exp_mask)], next)
		if (re->r.tag == msg->tag && re->r.src == msg->src)
			break;
	TAILQ_FOREACH(wre, &e->exp_wild, next)
		if (recv_matches(&wre->r, msg))
			break;
	if (re == NULL || (wre != NULL && wre->seq < re->seq))
		re = wre;
	if (re != NULL) {
		TAILQ_REMOVE(exp_list(e, re), re, next);
		e->st.posted--;
		e->st.arrivals++;
		e->st.matched_posted++;
		do_match(e, re, msg, m);
		return 1;
	}

	ue = TAILQ_FIRST(&e->unexp_free);
	/* Written so that held_bytes near UINT64_MAX cannot overflow the sum. */
	if (ue == NULL || msg->held_bytes >
	    e->cfg.max_unexpected_bytes - e->st.unexpected_bytes) {
		e->st.refused++;
		TAG_LOG(DEBUG, "unexpected queue full (%u msgs, %" PRIu64 " bytes): refusing",
			e->st.unexpected, e->st.unexpected_bytes);
		return -ENOBUFS;
	}
	TAILQ_REMOVE(&e->unexp_free, ue, next);
	ue->msg = *msg;
	TAILQ_INSERT_TAIL(&e->unexpected, ue, next);
	TAILQ_INSERT_TAIL(&e->unexp_bins[bin_of(msg->tag, msg->src, e->unexp_mask)], ue, bin);
	e->st.unexpected++;
	e->st.unexpected_bytes += msg->held_bytes;
	if (e->st.unexpected > e->st.unexpected_hwm)
		e->st.unexpected_hwm = e->st.unexpected;
	e->st.arrivals++;
	e->st.queued_unexpected++;
	return 0;
}

int
amrma_tag_complete(struct amrma_tag_engine *e, uint64_t id, int status)
{
	struct recv_entry *re;

	if (e == NULL)
		return -EINVAL;
	re = recv_lookup(e, id);
	if (re == NULL || re->state != RECV_MATCHED)
		return -ENOENT;
	/* Released before the callback so that the callback may post a new receive. */
	recv_release(e, re);
	e->st.in_progress--;
	e->st.completed++;
	recv_callback(e, re, status != 0 ? status : re->status,
		      status != 0 ? 0 : re->copy_len);
	return 0;
}

int
amrma_tag_cancel(struct amrma_tag_engine *e, uint64_t id)
{
	struct recv_entry *re;

	if (e == NULL)
		return -EINVAL;
	re = recv_lookup(e, id);
	if (re == NULL)
		return -ENOENT;
	if (re->state == RECV_MATCHED)
		return -EBUSY;
	TAILQ_REMOVE(exp_list(e, re), re, next);
	e->st.posted--;
	e->st.cancelled++;
	re->msg_tag = 0;
	re->msg_src = 0;
	re->msg_len = 0;
	recv_release(e, re);
	recv_callback(e, re, -ECANCELED, 0);
	return 0;
}

int
amrma_tag_probe(const struct amrma_tag_engine *e, uint64_t tag, uint64_t ignore,
		uint32_t src, struct amrma_tag_msg *msg)
{
	const struct amrma_tag_recv r = { .tag = tag, .ignore = ignore, .src = src };
	const struct unexp_entry *ue;

	if (e == NULL)
		return 0;
	TAILQ_FOREACH(ue, &e->unexpected, next) {
		if (recv_matches(&r, &ue->msg)) {
			if (msg != NULL)
				*msg = ue->msg;
			return 1;
		}
	}
	return 0;
}

int
amrma_tag_unexpected_pop(struct amrma_tag_engine *e, struct amrma_tag_msg *msg)
{
	struct unexp_entry *ue;

	if (e == NULL || (ue = TAILQ_FIRST(&e->unexpected)) == NULL)
		return 0;
	unexp_unlink(e, ue);
	if (msg != NULL)
		*msg = ue->msg;
	TAILQ_INSERT_HEAD(&e->unexp_free, ue, next);
	return 1;
}

int
amrma_tag_purge_src(struct amrma_tag_engine *e, uint32_t src, amrma_tag_msg_cb_t msg_cb,
		    void *arg)
{
	struct unexp_list purged = TAILQ_HEAD_INITIALIZER(purged);
	struct unexp_entry *ue, *next;
	struct amrma_tag_msg msg;
	int n = 0;
	uint32_t i;

	if (e == NULL || src == AMRMA_TAG_ANY_SRC)
		return -EINVAL;
	/*
	 * Unlink them all before any callback runs: a callback may call into the engine and
	 * take or drop the message a walk would visit next.
	 */
	for (ue = TAILQ_FIRST(&e->unexpected); ue != NULL; ue = next) {
		next = TAILQ_NEXT(ue, next);
		if (ue->msg.src != src)
			continue;
		unexp_unlink(e, ue);
		TAILQ_INSERT_TAIL(&purged, ue, next);
		n++;
	}
	/* Each entry is free again before its callback, which may queue a new message. */
	while ((ue = TAILQ_FIRST(&purged)) != NULL) {
		TAILQ_REMOVE(&purged, ue, next);
		msg = ue->msg;
		TAILQ_INSERT_HEAD(&e->unexp_free, ue, next);
		if (msg_cb != NULL)
			msg_cb(&msg, arg);
	}
	/* By index, not by list: receive callbacks may post or cancel receives. */
	for (i = 0; i < e->cfg.max_posted; i++)
		if (e->recvs[i].state == RECV_POSTED && e->recvs[i].r.src == src) {
			amrma_tag_cancel(e, recv_id(e, &e->recvs[i]));
			n++;
		}
	return n;
}

void
amrma_tag_engine_free(struct amrma_tag_engine *e)
{
	uint32_t i;

	if (e == NULL)
		return;
	if (e->recvs != NULL && e->exp_bins != NULL)
		for (i = 0; i < e->cfg.max_posted; i++)
			if (e->recvs[i].state == RECV_POSTED)
				amrma_tag_cancel(e, recv_id(e, &e->recvs[i]));
	tag_free(e, e->recvs, e->recvs_sz);
	tag_free(e, e->unexps, e->unexps_sz);
	tag_free(e, e->exp_bins, e->exp_bins_sz);
	tag_free(e, e->unexp_bins, e->unexp_bins_sz);
	free(e);
}

void
amrma_tag_stats_get(const struct amrma_tag_engine *e, struct amrma_tag_stats *s)
{
	*s = e->st;
}
