/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One completion message per pipelined put (seed 000: "one or many completion replies").
 *
 * The put's chunks travel as one-way AM messages (amrma_am_send): each is placed, nothing
 * answers it. The target counts the bytes of the operation in a bounded table keyed by
 * (initiator endpoint, operation handle); when the last byte is in, it sends one PUT_DONE
 * carrying the first error, from the poll hook (handlers may not send). The initiator's
 * chunks complete when their frames are acknowledged, which frees the window; the
 * operation completes when every chunk is acknowledged and its PUT_DONE is in.
 *
 * The entry also holds the region the first chunk named, so the other chunks are placed
 * after a range check alone (no hash lookup, no reference count per chunk). A
 * deregistration meanwhile refuses the chunks that follow it, as a lookup would.
 * A table entry that sees no chunk for rndv_timeout_ms (the initiator died) is dropped; an
 * operation the table has no room for completes with -ENOSPC, and the rest of its chunks
 * are refused even when room frees up meanwhile. Entries name the initiator's life
 * (amrma_am_msg.src_epoch): one that restarted reuses its old handles.
 *
 * Nothing makes a one-way message's sender hold back, so a completion cannot wait for
 * queue room: an entry is held until its completion is sent (the table bounds those), and
 * the queue has room for one per entry plus RMA_MAX_REFUSED refusals (which hold none).
 */
#include <errno.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_malloc.h>

#include "rma_priv.h"

#define TRACK_PROBE 8	/* entries an operation may occupy from its hash */

static inline uint32_t
track_hash(const struct rma_ctx *rc, struct amrma_ep src, uint64_t handle)
{
	uint64_t k = handle ^ ((uint64_t)src.node << 48) ^ ((uint64_t)src.ctx << 40);

	k *= UINT64_C(0x9e3779b97f4a7c15);
	return (uint32_t)(k >> 32) & (rc->track_size - 1);
}

static void track_free(struct rma_ctx *rc, struct put_track *t);

/*
 * The entry of msg's (src, handle), or NULL and in *room a free one it may take (or NULL).
 * An entry of the initiator's earlier life is not returned (freed on the way, unless its
 * completion waits in the queue): a restarted initiator numbers its operations afresh,
 * and its new put must not be counted into the old one.
 */
static struct put_track *
track_find(struct rma_ctx *rc, const struct amrma_am_msg *msg, struct put_track **room)
{
	uint64_t handle = msg->args[3];
	uint32_t h = track_hash(rc, msg->src, handle), i;
	struct put_track *t;

	*room = NULL;
	for (i = 0; i < TRACK_PROBE; i++) {
		t = &rc->track[(h + i) & (rc->track_size - 1)];
		if (t->used && t->handle == handle && ep_same(t->src, msg->src)) {
			if (t->src_epoch == msg->src_epoch)
				return t;
			/* one whose completion is queued is freed when that is dropped */
			if (!t->done_queued)
				track_free(rc, t);
		}
		if (!t->used && *room == NULL)
			*room = t;
	}
	return NULL;
}

/* A new entry: counts total bytes to come, holds the region key names (one lookup). */
static struct put_track *
track_new(struct rma_ctx *rc, struct put_track *room, const struct amrma_am_msg *msg)
{
	room->used = true;
	room->src = msg->src;
	room->src_epoch = msg->src_epoch;
	room->handle = msg->args[3];
	room->total = msg->args[2];
	room->left = msg->args[2];
	room->status = 0;
	room->key = msg->args[0];
	room->ref = amrma_region_get(rc->rma->regions, room->key);
	rc->nb_track++;
	return room;
}

static void
track_release(struct rma_ctx *rc, struct put_track *t)
{
	if (t->ref != NULL)
		amrma_region_put(rc->rma->regions, t->ref);
	t->ref = NULL;
}

static void
track_free(struct rma_ctx *rc, struct put_track *t)
{
	track_release(rc, t);
	t->used = false;
	t->done_queued = false;
	rc->nb_track--;
}

/*
 * Place a chunk through the region the operation holds: a range check, no hash lookup
 * and no reference count per chunk. A chunk naming another key than the first goes the
 * long way.
 */
static int
place(struct rma_ctx *rc, struct put_track *t, const struct amrma_am_msg *msg)
{
	if (msg->args[0] != t->key)
		return rma_place_put(rc, msg->args[0], msg->args[1], msg);
	if (t->ref != NULL && !amrma_region_live(t->ref)) {
		/* deregistered meanwhile: what follows is refused, as a lookup would be, and
		 * the region is released now */
		amrma_region_put(rc->rma->regions, t->ref);
		t->ref = NULL;
	}
	return rma_place_held(rc, t->ref, msg->args[1], msg);
}

/*
 * A chunk of a put refused before: refused too, and counted off; the put is forgotten
 * when its last byte came (its handle may come back in a later generation) or when
 * none came for rndv_timeout_ms. False for a put not refused.
 */
static bool
refused_chunk(struct rma_ctx *rc, const struct amrma_am_msg *msg, uint64_t now)
{
	uint32_t i;

	for (i = 0; i < RMA_MAX_REFUSED; i++) {
		struct put_refused *r = &rc->refused[i];

		if (r->left == 0)
			continue;
		if (now >= r->deadline) {
			r->left = 0;
			rc->nb_refused--;
			continue;
		}
		if (r->handle != msg->args[3] || !ep_same(r->src, msg->src))
			continue;
		if (r->src_epoch != msg->src_epoch) {
			/* refused in the initiator's earlier life: forgotten */
			r->left = 0;
			rc->nb_refused--;
			continue;
		}
		rc->st.completion_full++;
		if (msg->len >= r->left) {
			r->left = 0;
			rc->nb_refused--;
		} else {
			r->left -= msg->len;
			r->deadline = now + rndv_timeout_tsc(rc->rma);
		}
		return true;
	}
	return false;
}

/* Remember a refused put whose other chunks are still to come (the oldest makes room). */
static void
refused_add(struct rma_ctx *rc, const struct amrma_am_msg *msg, uint64_t now)
{
	struct put_refused *r = &rc->refused[rc->refused_next];

	if (msg->args[2] <= msg->len)
		return;		/* all of it was in this chunk */
	rc->refused_next = (rc->refused_next + 1) % RMA_MAX_REFUSED;
	if (r->left == 0)
		rc->nb_refused++;
	r->src = msg->src;
	r->src_epoch = msg->src_epoch;
	r->handle = msg->args[3];
	r->left = msg->args[2] - msg->len;
	r->deadline = now + rndv_timeout_tsc(rc->rma);
}

/*
 * A completion for the poll hook to send. One of an entry (t) always has room: the entry
 * is held until it is sent, and freed then. A refusal (t NULL) is lost, and counted, only
 * beyond RMA_MAX_REFUSED queued.
 */
static void
done_push(struct rma_ctx *rc, struct amrma_ep to, uint32_t epoch, uint64_t handle, int status,
	  struct put_track *t)
{
	struct put_done *d;

	if (t == NULL) {
		if (rc->nb_done_refusals == RMA_MAX_REFUSED) {
			rc->st.completion_drops++;
			return;
		}
		rc->nb_done_refusals++;
	} else {
		/* no chunk is placed through it any more */
		track_release(rc, t);
		t->done_queued = true;
	}
	d = &rc->done[(rc->done_head + rc->nb_done++) & (rc->done_size - 1)];
	d->to = to;
	d->epoch = epoch;
	d->handle = handle;
	d->status = status;
	d->track = t != NULL ? (uint32_t)(t - rc->track) : UINT32_MAX;
}

/* target: one chunk of a pipelined put (one-way): place it, count it */
static int
put1_handler(struct amrma_ctx *ctx, amrma_am_token_t tok, const struct amrma_am_msg *msg,
	     void *arg)
{
	struct rma_ctx *rc = rc_of(ctx);
	struct put_track *t, *room;
	int status;

	RTE_SET_USED(tok);
	RTE_SET_USED(arg);
	if (msg->nargs < 4) {
		rc->st.bad_replies++;	/* no operation to answer */
		return 0;
	}
	t = track_find(rc, msg, &room);
	if (t == NULL) {
		/* a put refused before is refused to its end, room or not: its initiator
		 * was told it failed, and the entry would never see the refused bytes */
		if (rc->nb_refused != 0 && refused_chunk(rc, msg, amrma_ctx_now(ctx)))
			return 0;
		if (room == NULL) {
			/* not counted, so not placed either: the operation fails as a whole,
			 * told once (its other chunks in flight are refused quietly) */
			rc->st.completion_full++;
			refused_add(rc, msg, amrma_ctx_now(ctx));
			done_push(rc, msg->src, msg->src_epoch, msg->args[3], -ENOSPC, NULL);
			return 0;
		}
		t = track_new(rc, room, msg);
	}
	if (t->done_queued) {
		/* the operation was answered: a chunk beyond it is not placed */
		rc->st.bad_replies++;
		return 0;
	}
	if (t->total != msg->args[2] || msg->len > t->left) {
		/* chunks that do not add up to their operation: answer it now */
		rc->st.bad_replies++;
		done_push(rc, msg->src, msg->src_epoch, t->handle, -EPROTO, t);
		return 0;
	}
	status = place(rc, t, msg);
	t->left -= msg->len;
	if (status != 0 && t->status == 0)
		t->status = status;
	t->deadline = amrma_ctx_now(ctx) + rndv_timeout_tsc(rc->rma);
	if (t->left == 0)
		done_push(rc, msg->src, msg->src_epoch, t->handle, t->status, t);
	return 0;
}

static void
done_sent(struct amrma_ctx *ctx, void *arg, int status)
{
	struct rma_ctx *rc = rc_of(ctx);

	/* rc is gone when the node fails its channels after the RMA engine was destroyed,
	 * or is another engine's, created since: arg names the sender by its generations */
	if (status != 0 && rc != NULL && rc->rma->gen_base == (uint16_t)(uintptr_t)arg)
		rc->st.completion_drops++;	/* the initiator is gone */
}

int
completion_flush(struct rma_ctx *rc)
{
	int n = 0;

	while (rc->nb_done != 0) {
		struct put_done *d = &rc->done[rc->done_head];
		uint64_t args[2] = { d->handle, (uint64_t)(int64_t)d->status };
		int ret;

		/* its initiator restarted since (a new life may have the same handle in
		 * flight, the old one is gone): not sent */
		if (amrma_ctx_peer_epoch(rc->ctx, d->to, NULL) != d->epoch)
			ret = -ECONNRESET;
		else
			ret = amrma_am_send(rc->ctx, d->to, AMRMA_RMA_H_PUT_DONE, args, 2, NULL,
					    0, done_sent, (void *)(uintptr_t)rc->rma->gen_base);
		if (ret == -EAGAIN || ret == -ENOBUFS)
			break;		/* next poll */
		if (ret == -ECONNRESET)
			rc->st.stale_requests++;
		else if (ret == 0)
			rc->st.completions_sent++;
		else
			rc->st.completion_drops++;
		if (d->track != UINT32_MAX)
			track_free(rc, &rc->track[d->track]);
		else
			rc->nb_done_refusals--;
		rc->done_head = (rc->done_head + 1) & (rc->done_size - 1);
		rc->nb_done--;
		n++;
	}
	return n;
}

/*
 * The engine goes: each initiator it owes a completion is sent it now, rather than left
 * to wait out its rendezvous timeout (an engine created next on the same node knows
 * nothing of its put). A put whose bytes had not all come fails with -ECANCELED. What the
 * node cannot take now is lost, and that initiator times out as before. The messages'
 * callbacks count nothing: they name this engine (done_sent).
 */
void
completion_cancel(struct rma_ctx *rc)
{
	uint32_t i;

	for (i = 0; rc->track != NULL && i < rc->track_size; i++) {
		struct put_track *t = &rc->track[i];

		if (t->used && !t->done_queued)
			done_push(rc, t->src, t->src_epoch, t->handle,
				  t->status != 0 ? t->status : -ECANCELED, t);
	}
	if (rc->done != NULL)
		completion_flush(rc);
}

/* initiator: the one completion of a pipelined put */
static int
put_done_handler(struct amrma_ctx *ctx, amrma_am_token_t tok, const struct amrma_am_msg *msg,
		 void *arg)
{
	struct rma_ctx *rc = rc_of(ctx);
	struct rma_op *op;
	int status;

	RTE_SET_USED(tok);
	RTE_SET_USED(arg);
	op = msg->nargs >= 2 ? op_from_handle(rc, msg->args[0]) : NULL;
	if (op == NULL || op->kind != OP_PUT || !op->want_done || op->done_in ||
	    !ep_same(op->dst, msg->src)) {
		rc->st.bad_replies++;
		return 0;
	}
	if (!wire_status(msg->args[1], &status))
		status = -EPROTO;	/* not an errno: failed all the same */
	op->done_in = true;
	op_end_later(rc, op, status);	/* a failure stops the issuing now */
	return 0;
}

int
completion_expire(struct rma_ctx *rc, uint64_t now)
{
	uint32_t i;
	int n = 0;

	/* target: operations whose initiator stopped sending, or whose initiator's life
	 * is gone (its other chunks will not come: not waited for) */
	for (i = 0; rc->nb_track != 0 && i < rc->track_size; i++) {
		struct put_track *t = &rc->track[i];

		/* one whose completion waits to be sent is freed when it is sent */
		if (!t->used || t->done_queued ||
		    target_wait_end(rc, now, t->deadline, t->src, t->src_epoch) == 0)
			continue;
		track_free(rc, t);
		n++;
	}
	/* initiator: every chunk acknowledged, the completion never came */
	for (i = 0; ops_in_use(rc) && i < rc->rma->conf.max_ops; i++) {
		struct rma_op *op = &rc->ops[i];
		int lost;

		if (!op->want_done || op->done_in || op->state != OP_DRAINING ||
		    op->in_flight != 0)
			continue;
		/* the target's life that owes the completion is gone: not waited for */
		lost = op_peer_lost(rc, op);
		if (lost == 0 && now < op->deadline)
			continue;
		rc->st.rndv_timeouts += lost == 0;
		op_fail(rc, op, lost != 0 ? lost : -ETIMEDOUT);
		n++;
	}
	return n;
}

int
completion_init(struct rma_ctx *rc, uint32_t size, int socket)
{
	rc->track_size = size;
	rc->done_size = rte_align32pow2(size + RMA_MAX_REFUSED);
	rc->track = rte_zmalloc_socket(NULL, sizeof(*rc->track) * size, RTE_CACHE_LINE_SIZE,
				       socket);
	rc->done = rte_zmalloc_socket(NULL, sizeof(*rc->done) * rc->done_size,
				      RTE_CACHE_LINE_SIZE, socket);
	rc->refused = rte_zmalloc_socket(NULL, sizeof(*rc->refused) * RMA_MAX_REFUSED,
					 RTE_CACHE_LINE_SIZE, socket);
	return rc->track != NULL && rc->done != NULL && rc->refused != NULL ? 0 : -ENOMEM;
}

void
completion_cleanup(struct rma_ctx *rc)
{
	uint32_t i;

	for (i = 0; rc->track != NULL && i < rc->track_size; i++)
		if (rc->track[i].used)
			track_free(rc, &rc->track[i]);
	rte_free(rc->track);
	rte_free(rc->done);
	rte_free(rc->refused);
	rc->track = NULL;
	rc->done = NULL;
	rc->refused = NULL;
}

void
completion_register(struct amrma_node *node, struct amrma_rma *rma)
{
	/* RMA's handlers stay below the AM core's own, with one free after them (tests
	 * use it as a handler nobody registered) */
	RTE_BUILD_BUG_ON(AMRMA_RMA_H_LAST + 1 >= AMRMA_AM_H_LEAVE);
	amrma_am_register(node, AMRMA_RMA_H_PUT1, put1_handler, rma);
	amrma_am_register(node, AMRMA_RMA_H_PUT_DONE, put_done_handler, rma);
}
