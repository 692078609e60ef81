/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Rendezvous over tagged messages, served through the RMA queue.
 *
 * put: initiator --RTS(key, offset, len, tag)--> target handler: validate, enqueue
 *      progress engine: post a tagged receive over the range, --CTS(tag, rx)--> initiator
 *      initiator: tagged send (TDATA chunks, zero-copy) to the target's progress context
 * get: initiator posts a tagged receive over its buffer, --RGET(key, offset, len, tag)-->
 *      target handler: validate, enqueue; progress engine: tagged send from the region
 * Handlers never send: they validate and enqueue (the RMA queue is an rte_ring).
 */

#include <errno.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_malloc.h>
#include <rte_service_component.h>

#include "rma_priv.h"

static int
rx_alloc(struct rma_ctx *rc)
{
	uint32_t i;

	for (i = 0; i < RMA_MAX_RX; i++)
		if (!rc->rx[i].used)
			return (int)i;
	return -ENOSPC;
}

static uint64_t
rx_id(const struct rma_ctx *rc, uint32_t i)
{
	return ((uint64_t)rc->rx[i].gen << 32) | i;
}

static void
rx_free(struct rma_ctx *rc, uint32_t i)
{
	struct rma_rx *rx = &rc->rx[i];

	if (rx->ref != NULL)
		amrma_region_put(rc->rma->regions, rx->ref);
	rx->ref = NULL;
	if (rx->used)
		rc->nb_rx_used--;
	rx->used = false;
	rx->gen++;
}

/* Withdraw a receive: cancel it, or end it with status once data matched it. */
static void
rx_abort(struct rma_ctx *rc, uint32_t i, int status)
{
	if (rc->rx[i].matched ||
	    amrma_tag_cancel(rc->tags, rc->rx[i].recv_id) == -EBUSY)
		amrma_tag_complete(rc->tags, rc->rx[i].recv_id, status);
	rx_free(rc, i);
}

/*
 * The tag engine matched data to receive id, not to the one they named: both were posted
 * with one (tag, source), which a peer reusing a tag can do. That receive is matched now
 * and its own data will skip matching; one not ours is ended, so no entry stays behind.
 */
static void
rx_matched_by_other(struct rma_ctx *rc, uint64_t id)
{
	uint32_t i;

	for (i = 0; i < RMA_MAX_RX; i++)
		if (rc->rx[i].used && !rc->rx[i].matched && rc->rx[i].recv_id == id) {
			rc->rx[i].matched = true;
			return;
		}
	amrma_tag_complete(rc->tags, id, -EPROTO);
}

/* Post a tagged receive over buf on rc for data from src; the rx slot or a negative errno. */
static int
post_recv(struct rma_ctx *rc, struct amrma_ep src, uint64_t tag, uint8_t *buf, uint64_t len)
{
	struct amrma_tag_recv r = {
		.tag = tag, .ignore = 0, .src = tag_src(src), .buf = buf, .len = len,
	};
	struct amrma_tag_match m;
	int i = rx_alloc(rc), ret;

	if (i < 0)
		return i;
	ret = amrma_tag_post_recv(rc->tags, &r, &rc->rx[i].recv_id, &m);
	if (ret < 0)
		return ret;
	rc->rx[i].used = true;
	rc->nb_rx_used++;
	rc->rx[i].matched = ret == 1;
	rc->rx[i].complete = false;
	rc->rx[i].status = 0;
	rc->rx[i].src = src;
	rc->rx[i].tag = tag;
	rc->rx[i].buf = buf;
	rc->rx[i].len = len;
	rc->rx[i].left = len;
	rc->rx[i].ref = NULL;
	rc->rx[i].deadline = rte_rdtsc() + rndv_timeout_tsc(rc->rma);
	return i;
}

static void
rts_done(struct amrma_ctx *ctx, void *arg, int status)
{
	struct rma_ctx *rc = amrma_ctx_priv(ctx);
	struct rma_op *op = rc ? op_from_handle(rc, (amrma_rma_req_t)(uintptr_t)arg) : NULL;

	/* accepted: the CTS follows; refused: the target's reason ends the operation */
	if (op == NULL || op->state != OP_WAIT_CTS)
		return;
	status = am_status(status);
	if (status != 0)
		op_fail(rc, op, status);
	else
		op_peer_owes(rc, op);
}

static void
rget_done(struct amrma_ctx *ctx, void *arg, int status)
{
	struct rma_ctx *rc = amrma_ctx_priv(ctx);
	struct rma_op *op = rc ? op_from_handle(rc, (amrma_rma_req_t)(uintptr_t)arg) : NULL;
	uint32_t i;

	if (op == NULL || op->state != OP_DRAINING)
		return;
	status = am_status(status);
	if (status == 0) {
		op_peer_owes(rc, op);	/* the data follow */
		return;
	}
	i = (uint32_t)op->rid;
	/* the data come from another context of the target: all of them may be in already
	 * (or one failed to be placed), the get then completes on the poll (withdrawn, its
	 * slot was reused before that) */
	if (rc->rx[i].complete)
		return;
	/* refused: no data will come; withdraw the receive */
	rx_abort(rc, i, status);
	op_packet_done(rc, op, 0, status);
}

int
rndv_start(struct rma_ctx *rc, struct rma_op *op)
{
	struct amrma_ctx *ctx = rc->ctx;
	amrma_rma_req_t h = op_handle(rc, op);
	uint64_t args[6];
	int ret, i;

	op->tag = h;
	op->deadline = rte_rdtsc() + rndv_timeout_tsc(rc->rma);
	args[0] = op->key;
	args[1] = op->offset;
	args[2] = op->len;
	args[3] = op->tag;
	if (op->kind == OP_PUT) {
		op->state = OP_WAIT_CTS;
		return amrma_am_request(ctx, op->dst, AMRMA_RMA_H_RTS, args, 4, NULL, 0, rts_done,
					(void *)(uintptr_t)h);
	}
	/* get: the receive is posted before the request leaves, so data always find it */
	i = post_recv(rc, op->dst, op->tag, op->buf, op->len);
	if (i < 0)
		return -EAGAIN;
	rc->rx[i].op = (uint32_t)(op - rc->ops);
	rc->rx[i].op_gen = op->gen;
	op->rid = (uint64_t)i;
	args[4] = amrma_ctx_index(ctx);
	args[5] = rx_id(rc, (uint32_t)i);
	op->state = OP_DRAINING;
	op->in_flight = 1;	/* the whole message is one completion */
	ret = amrma_am_request(ctx, op->dst, AMRMA_RMA_H_RGET, args, 6, NULL, 0, rget_done,
			       (void *)(uintptr_t)h);
	if (ret != 0)
		rx_abort(rc, (uint32_t)i, ret);
	return ret;
}

/* Handlers: validate, enqueue for the progress engine, nothing else. */
static int
enqueue(struct amrma_rma *rma, struct rma_ctx *rc, struct rq_item *tmpl)
{
	struct rq_item *it;

	if (rte_mempool_get(rma->rq_pool, (void **)&it) != 0) {
		rc->st.queue_full++;
		return -EBUSY;
	}
	*it = *tmpl;
	if (rte_ring_mp_enqueue(rma->queue, it) != 0) {
		rte_mempool_put(rma->rq_pool, it);
		rc->st.queue_full++;
		return -EBUSY;
	}
	return 0;
}

static int
rts_handler(struct amrma_ctx *ctx, amrma_am_token_t tok, const struct amrma_am_msg *msg,
	    void *arg)
{
	struct amrma_rma *rma = arg;
	struct rma_ctx *rc = amrma_ctx_priv(ctx);
	struct rq_item it = { .type = RQ_POST_RECV };
	void *ptr;
	int ret;

	RTE_SET_USED(tok);
	if (msg->nargs < 4)
		return -EPROTO;
	ret = amrma_region_check(rma->regions, msg->args[0], msg->args[1], msg->args[2],
				 AMRMA_REGION_WRITE, &ptr, &it.ref);
	if (ret != 0) {
		rc->st.access_errors++;
		return ret;
	}
	it.peer = msg->src;
	it.epoch = msg->src_epoch;
	it.tag = msg->args[3];
	it.ptr = ptr;
	it.len = msg->args[2];
	ret = enqueue(rma, rc, &it);
	if (ret != 0)
		amrma_region_put(rma->regions, it.ref);
	return ret;
}

static int
rget_handler(struct amrma_ctx *ctx, amrma_am_token_t tok, const struct amrma_am_msg *msg,
	     void *arg)
{
	struct amrma_rma *rma = arg;
	struct rma_ctx *rc = amrma_ctx_priv(ctx);
	struct rq_item it = { .type = RQ_SEND };
	void *ptr;
	int ret;

	RTE_SET_USED(tok);
	if (msg->nargs < 6 || msg->args[4] >= AMRMA_WIRE_MAX_CTX)
		return -EPROTO;
	ret = amrma_region_check(rma->regions, msg->args[0], msg->args[1], msg->args[2],
				 AMRMA_REGION_READ, &ptr, &it.ref);
	if (ret != 0) {
		rc->st.access_errors++;
		return ret;
	}
	it.peer.node = msg->src.node;
	it.peer.ctx = (uint8_t)msg->args[4];
	it.epoch = msg->src_epoch;
	it.tag = msg->args[3];
	it.ptr = ptr;
	it.len = msg->args[2];
	it.recv_id = msg->args[5];	/* the initiator's receive slot */
	ret = enqueue(rma, rc, &it);
	if (ret != 0)
		amrma_region_put(rma->regions, it.ref);
	return ret;
}

/* initiator of a rendezvous put: the target posted its receive */
static int
cts_handler(struct amrma_ctx *ctx, amrma_am_token_t tok, const struct amrma_am_msg *msg,
	    void *arg)
{
	struct rma_ctx *rc = amrma_ctx_priv(ctx);
	struct rma_op *op;

	RTE_SET_USED(tok);
	RTE_SET_USED(arg);
	if (msg->nargs < 2)
		return -EPROTO;
	op = op_from_handle(rc, msg->args[0]);
	if (op == NULL || op->kind != OP_PUT || op->state != OP_WAIT_CTS ||
	    op->dst.node != msg->src.node) {
		rc->st.bad_replies++;
		return -EPROTO;
	}
	op->rid = msg->args[1];
	op->dst = msg->src;		/* data go to the target's progress context */
	op->state = OP_ISSUING;
	TAILQ_INSERT_TAIL(&rc->active, op, next);	/* the poll hook sends */
	return 0;
}

/* tagged data: place the bytes into the matched receive */
static int
tdata_handler(struct amrma_ctx *ctx, amrma_am_token_t tok, const struct amrma_am_msg *msg,
	      void *arg)
{
	struct amrma_rma *rma = arg;
	struct rma_ctx *rc = amrma_ctx_priv(ctx);
	uint64_t tag, off, id;
	struct rma_rx *rx;
	uint32_t i;

	RTE_SET_USED(tok);
	if (msg->nargs < 4)
		return -EPROTO;
	tag = msg->args[0];
	off = msg->args[1];
	id = msg->args[3];
	i = (uint32_t)id;
	if (i >= RMA_MAX_RX)
		return -EPROTO;
	rx = &rc->rx[i];
	/* a put's data come from the initiator's context, a get's from the target's
	 * progress context, which the initiator does not know */
	if (!rx->used || rx->gen != (uint16_t)(id >> 32) || rx->tag != tag ||
	    rx->src.node != msg->src.node ||
	    (rx->ref != NULL && (rx->src.ctx != msg->src.ctx ||
				 rx->src_epoch != msg->src_epoch)) ||
	    msg->args[2] != rx->len || rx->complete) {
		/* the rest of a put its region's deregistration ended: refused as its
		 * first chunk was (the put reports the first refusal back, in any order) */
		if (dereg_end_match(&rx->dead, id, msg->src.node, tag)) {
			rc->st.access_errors++;
			return -ENOKEY;
		}
		rc->st.bad_replies++;
		return -EPROTO;
	}
	if (off > rx->len || msg->len > rx->len - off || msg->len > rx->left) {
		rc->st.bad_replies++;
		return -ERANGE;
	}
	if (rx->ref != NULL && !amrma_region_live(rx->ref)) {
		/* deregistered meanwhile: this and what follows is refused, as a lookup would
		 * be, and the region is released now */
		rc->st.access_errors++;
		dereg_end_set(&rx->dead, rx->gen, rx->src.node, tag);
		rx_abort(rc, i, -ENOKEY);
		return -ENOKEY;
	}
	if (!rx->matched) {
		struct amrma_tag_msg tm = { .tag = tag, .src = tag_src(rx->src), .len = rx->len };
		struct amrma_tag_match m;
		int ret;

		/* first packet: matching takes the oldest receive posted for (tag, source);
		 * ours is one of them, so it comes before anything is queued unexpected */
		while ((ret = amrma_tag_arrive(rc->tags, &tm, &m)) == 1 &&
		       m.recv_id != rx->recv_id)
			rx_matched_by_other(rc, m.recv_id);
		if (ret != 1) {
			if (ret == 0)	/* queued: only if the engine lost our receive */
				amrma_tag_unexpected_pop(rc->tags, &tm);
			rc->st.bad_replies++;
			return -EPROTO;
		}
		rx->matched = true;
	}
	if (msg->len != 0) {
		int ret = rma_place(rc, rx->buf + off, msg->payload, msg->len,
				    rx->buf + rx->len);

		if (ret != 0) {
			/* not placed: the sender sees -EIO, and the receive ends now rather
			 * than at its deadline. A put's initiator learns it from this reply;
			 * our get ends with the error on the poll (it calls back) */
			if (rx->ref != NULL) {
				rx_abort(rc, i, ret);
			} else {
				rx->status = ret;
				rx->complete = true;
				rc->rx_done[rc->nb_rx_done++] = i;
			}
			return -EIO;
		}
	}
	rx->left -= msg->len;
	/* progress: both sides' deadlines move on */
	/* the poll's clock: a handler runs inside a poll that has just read it */
	rx->deadline = amrma_ctx_now(ctx) + rndv_timeout_tsc(rma);
	if (rx->ref == NULL && rx->op < rma->conf.max_ops)
		rc->ops[rx->op].deadline = rx->deadline;
	if (rx->ref != NULL)
		rc->st.served_put_bytes += msg->len;
	if (rx->left == 0) {
		rx->complete = true;
		if (rx->ref != NULL) {
			struct rq_item it = { .type = RQ_RECV_DONE, .rx = i };

			/* a rendezvous put landed: the progress engine finishes it */
			if (enqueue(rma, rc, &it) != 0)
				rc->rx_done[rc->nb_rx_done++] = i;
		} else {
			rc->rx_done[rc->nb_rx_done++] = i;	/* our get: finish on poll */
		}
	}
	return 0;
}

/* Poll hook part: complete received tagged messages outside handler context. */
int
rndv_finish_rx(struct rma_ctx *rc)
{
	uint32_t n = rc->nb_rx_done, k;

	rc->nb_rx_done = 0;
	for (k = 0; k < n; k++) {
		uint32_t i = rc->rx_done[k];
		struct rma_rx *rx = &rc->rx[i];
		bool get = rx->ref == NULL;
		struct rma_op *op = get ? &rc->ops[rx->op] : NULL;
		int status;

		/* only the receive that completed, and only its own get */
		if (!rx->used || !rx->complete)
			continue;
		if (op != NULL && (op->gen != rx->op_gen || op->state != OP_DRAINING ||
				   op->kind != OP_GET))
			op = NULL;
		/* matched, so this ends it with its status (non-zero: a get's data could
		 * not be placed) */
		status = rx->status;
		rx_abort(rc, i, status);
		if (op != NULL)
			op_packet_done(rc, op, status != 0 ? 0 : op->len, status);
	}
	return (int)n;
}

/* Rendezvous waits that saw no progress in time: the peer died or lost interest. */
int
rndv_expire(struct rma_ctx *rc, uint64_t now)
{
	uint32_t i;
	int n = 0;

	for (i = 0; ops_in_use(rc) && i < rc->rma->conf.max_ops; i++) {
		struct rma_op *op = &rc->ops[i];
		int lost, status;

		if (op->proto != AMRMA_RMA_F_RENDEZVOUS && op->kind != OP_TSEND)
			continue;
		/* the target's life that owes the CTS or the data is gone: not waited for */
		lost = op_peer_lost(rc, op);
		if (lost == 0 && now < op->deadline)
			continue;
		status = lost != 0 ? lost : -ETIMEDOUT;
		if (op->state == OP_WAIT_CTS) {
			rc->st.rndv_timeouts += lost == 0;
			op_fail(rc, op, status);
			n++;
		} else if (op->kind == OP_GET && op->state == OP_DRAINING &&
			   op->rid < RMA_MAX_RX && rc->rx[op->rid].used &&
			   !rc->rx[op->rid].complete) {
			rc->st.rndv_timeouts += lost == 0;
			rx_abort(rc, (uint32_t)op->rid, status);
			op_packet_done(rc, op, 0, status);
			n++;
		} else if (lost != 0) {
			continue;	/* chunks in flight: the AM layer fails them */
		} else if (op->kind == OP_TSEND && op->status == 0 &&
			   (op->state == OP_ISSUING || op->state == OP_DRAINING)) {
			/* a get's initiator that takes no chunk (gone quiet, or -EAGAIN for
			 * ever): stop; the op and the region go once the chunks out are in */
			rc->st.rndv_timeouts++;
			op_fail(rc, op, -ETIMEDOUT);
			n++;
		}
	}
	/* target side: receives posted for a put whose data never came, or whose
	 * initiator's life is gone (no data will come: not waited for) */
	for (i = 0; rc->nb_rx_used != 0 && i < RMA_MAX_RX; i++) {
		struct rma_rx *rx = &rc->rx[i];
		int status;

		if (!rx->used || rx->ref == NULL || rx->complete)
			continue;
		status = target_wait_end(rc, now, rx->deadline, rx->src, rx->src_epoch);
		if (status != 0) {
			rx_abort(rc, i, status);
			n++;
		}
	}
	return n;
}

static void
cts_done(struct amrma_ctx *ctx, void *arg, int status)
{
	RTE_SET_USED(ctx);
	RTE_SET_USED(arg);
	RTE_SET_USED(status);	/* a lost initiator fails its own operation */
}

/* Serve one queue item; false when the AM layer is busy (keep it for later). */
static bool
serve(struct amrma_rma *rma, struct rq_item *it)
{
	struct rma_ctx *prc = &rma->rc[rma->conf.progress_ctx];
	struct rma_op *op;
	uint64_t args[2];
	int i;

	/* a request of an initiator's life that is gone: served, it would post a receive
	 * over the old range and tell the new life of it (which numbers its operations
	 * afresh: the tag may be one of its own), or send data nobody asked for */
	if (it->type != RQ_RECV_DONE && peer_life_gone(prc->ctx, it->peer, it->epoch)) {
		if (it->posted)
			rx_abort(prc, it->rx, -ECONNRESET);
		if (it->ref != NULL)
			amrma_region_put(rma->regions, it->ref);
		it->ref = NULL;
		prc->st.stale_requests++;
		return true;
	}
	switch (it->type) {
	case RQ_POST_RECV:
		if (!it->posted) {
			i = post_recv(prc, it->peer, it->tag, it->ptr, it->len);
			if (i < 0)
				return false;
			prc->rx[i].src_epoch = it->epoch;
			prc->rx[i].ref = it->ref;	/* the receive holds the region */
			it->ref = NULL;
			it->rx = (uint32_t)i;
			it->posted = true;
		}
		args[0] = it->tag;
		args[1] = rx_id(prc, it->rx);
		return amrma_am_request(prc->ctx, it->peer, AMRMA_RMA_H_CTS, args, 2, NULL, 0,
					cts_done, NULL) != -EAGAIN;
	case RQ_SEND: {
		int err;

		op = op_new(prc, OP_TSEND, 0, it->peer, 0, 0, it->ptr, it->len, NULL, NULL, false,
			    &err);
		if (op == NULL)
			return false;
		op->tag = it->tag;
		op->rid = it->recv_id;
		op->peer_epoch = it->epoch;	/* sent to that life only (op_issue) */
		/* each chunk the initiator takes moves it on (chunk_done) */
		op->deadline = rte_rdtsc() + rndv_timeout_tsc(rma);
		op->ref = it->ref;		/* released when the send completes */
		it->ref = NULL;
		op->zero_copy = rma->conf.zero_copy && op->len != 0;
		if (op->zero_copy)
			op_zero_copy_init(op);
		op->state = OP_ISSUING;
		TAILQ_INSERT_TAIL(&prc->active, op, next);
		return true;
	}
	case RQ_RECV_DONE:
		prc->rx_done[prc->nb_rx_done++] = it->rx;
		return true;
	}
	return true;
}

/* Serve the queue (amrma_rma_progress() found it not empty, or items refused before). */
static __rte_noinline int
progress_serve(struct amrma_rma *rma)
{
	struct rq_item *burst[32];
	uint32_t n, k, keep = 0, work = 0;

	/* what could not be served last time is tried first; each item names its own
	 * receive or op, so one refused again holds up none behind it (a RECV_DONE frees
	 * the receive a POST_RECV may be waiting for) */
	for (k = 0; k < rma->nb_pending; k++) {
		if (serve(rma, rma->pending[k])) {
			rte_mempool_put(rma->rq_pool, rma->pending[k]);
			work++;
		} else {
			rma->pending[keep++] = rma->pending[k];
		}
	}
	rma->nb_pending = keep;
	n = rte_ring_sc_dequeue_burst(rma->queue, (void **)burst,
				      RTE_MIN(RTE_DIM(burst), rma->conf.queue_size - keep), NULL);
	for (k = 0; k < n; k++) {
		if (keep == 0 && serve(rma, burst[k])) {
			rte_mempool_put(rma->rq_pool, burst[k]);
			work++;
		} else {
			rma->pending[rma->nb_pending++] = burst[k];
			keep++;
		}
	}
	return (int)work;
}

int
amrma_rma_progress(struct amrma_rma *rma)
{
	/* the common case, checked before anything is set up: nothing queued, nothing
	 * refused (a progress lcore spins on this) */
	if (rma->nb_pending == 0 && rte_ring_empty(rma->queue))
		return 0;
	return progress_serve(rma);
}

/* A cancel's receive id for a put that waits for its CTS (it has no receive yet). */
#define CANCEL_NO_RX UINT64_MAX

static void
cancel_sent(struct amrma_ctx *ctx, void *arg, int status)
{
	RTE_SET_USED(ctx);
	RTE_SET_USED(arg);
	RTE_SET_USED(status);	/* sent by an engine that is gone: nothing to count */
}

/*
 * The engine goes (amrma_rma_destroy) owing the initiator `to` the CTS or the data of
 * rendezvous operation tag: tell it, rather than let it wait out its rendezvous timeout.
 * Best effort: what the node cannot take now is lost, and that initiator times out.
 */
static void
cancel_send(struct amrma_ctx *ctx, struct amrma_ep to, uint32_t epoch, uint64_t tag,
	    uint64_t rx_id)
{
	const uint64_t args[3] = { tag, rx_id, (uint64_t)(int64_t)-ECANCELED };

	/* a life that is gone asked: the new one has nothing waiting */
	if (ctx != NULL && amrma_ctx_peer_epoch(ctx, to, NULL) == epoch)
		amrma_am_send(ctx, to, AMRMA_RMA_H_RNDV_CANCEL, args, RTE_DIM(args), NULL, 0,
			      cancel_sent, NULL);
}

/* destroy: a queued rendezvous request that will not be served */
static void
rndv_cancel_item(struct amrma_rma *rma, const struct rq_item *it)
{
	struct amrma_ctx *ctx = rma->rc != NULL ? rma->rc[rma->conf.progress_ctx].ctx : NULL;

	if (it->type == RQ_POST_RECV)
		cancel_send(ctx, it->peer, it->epoch, it->tag, CANCEL_NO_RX);
	else if (it->type == RQ_SEND)
		cancel_send(ctx, it->peer, it->epoch, it->tag, it->recv_id);
}

/*
 * destroy: a tagged send serving a rendezvous get, with data not yet handed to the node
 * (chunks left, or refused and due again); what the node holds arrives anyway
 */
void
rndv_cancel_tsend(struct rma_ctx *rc, const struct rma_op *op)
{
	if (op->kind == OP_TSEND && op->status == 0 &&
	    (op->state == OP_ISSUING || op->state == OP_DRAINING) &&
	    (op->next_chunk < op->nchunks || op->nb_retry != 0))
		cancel_send(rc->ctx, op->dst, op->peer_epoch, op->tag, op->rid);
}

/*
 * initiator: the target's engine went owing this rendezvous operation its CTS (a put) or
 * its data (a get). One-way, from any context of the target's node.
 */
static int
cancel_handler(struct amrma_ctx *ctx, amrma_am_token_t tok, const struct amrma_am_msg *msg,
	       void *arg)
{
	struct rma_ctx *rc = amrma_ctx_priv(ctx);
	struct rma_op *op;
	struct rma_rx *rx;
	uint64_t id;
	uint32_t i;
	int status;

	RTE_SET_USED(tok);
	RTE_SET_USED(arg);
	/* not a negative errno: nothing is ended by it */
	if (msg->nargs < 3 || !wire_status(msg->args[2], &status) || status == 0)
		goto bad;
	id = msg->args[1];
	if (id == CANCEL_NO_RX) {
		op = op_from_handle(rc, msg->args[0]);
		if (op == NULL || op->kind != OP_PUT || op->state != OP_WAIT_CTS ||
		    op->status != 0 || op->dst.node != msg->src.node)
			goto bad;
		op_end_later(rc, op, status);
	} else {
		i = (uint32_t)id;
		rx = i < RMA_MAX_RX ? &rc->rx[i] : NULL;
		/* our get's receive (no region), still waiting for data of that node */
		if (rx == NULL || !rx->used || rx->gen != (uint16_t)(id >> 32) ||
		    rx->tag != msg->args[0] || rx->ref != NULL ||
		    rx->src.node != msg->src.node || rx->complete)
			goto bad;
		/* ended on the poll, as a get whose data could not be placed */
		rx->status = status;
		rx->complete = true;
		rc->rx_done[rc->nb_rx_done++] = i;
	}
	rc->st.rndv_cancelled++;
	return 0;
bad:
	rc->st.bad_replies++;
	return 0;
}

/* destroy: a request that will not be served; its initiator is told, its region let go */
static void
item_drop(struct amrma_rma *rma, struct rq_item *it)
{
	rndv_cancel_item(rma, it);
	if (it->ref != NULL)
		amrma_region_put(rma->regions, it->ref);
	rte_mempool_put(rma->rq_pool, it);
}

void
rndv_drop_unserved(struct amrma_rma *rma)
{
	struct rq_item *it;
	uint32_t k;

	for (k = 0; rma->pending != NULL && k < rma->nb_pending; k++)
		item_drop(rma, rma->pending[k]);
	rma->nb_pending = 0;
	rte_free(rma->pending);
	rma->pending = NULL;
	while (rma->queue != NULL && rte_ring_dequeue(rma->queue, (void **)&it) == 0)
		item_drop(rma, it);
}

static int32_t
progress_service(void *arg)
{
	amrma_rma_progress(arg);
	return 0;
}

int
amrma_rma_service_register(struct amrma_rma *rma, uint32_t *service_id)
{
	struct rte_service_spec spec = { 0 };
	int ret;

	snprintf(spec.name, sizeof(spec.name), "amrma_rma_%u", amrma_node_id(rma->node));
	spec.callback = progress_service;
	spec.callback_userdata = rma;
	spec.socket_id = (int)rte_socket_id();
	ret = rte_service_component_register(&spec, &rma->service_id);
	if (ret != 0)
		return ret;
	rma->has_service = true;
	rte_service_component_runstate_set(rma->service_id, 1);
	if (service_id != NULL)
		*service_id = rma->service_id;
	return 0;
}

void
rndv_register(struct amrma_node *node, struct amrma_rma *rma)
{
	amrma_am_register(node, AMRMA_RMA_H_RTS, rts_handler, rma);
	amrma_am_register(node, AMRMA_RMA_H_RGET, rget_handler, rma);
	amrma_am_register(node, AMRMA_RMA_H_CTS, cts_handler, rma);
	amrma_am_register(node, AMRMA_RMA_H_TDATA, tdata_handler, rma);
	amrma_am_register(node, AMRMA_RMA_H_RNDV_CANCEL, cancel_handler, rma);
}
