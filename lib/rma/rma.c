/* SPDX-License-Identifier: BSD-3-Clause */
/* RMA operations: the operation table, short and pipelined put/get, their target handlers. */

#include <errno.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_memory.h>

#include "rma_ext.h"
#include "rma_priv.h"

RTE_LOG_REGISTER(amrma_rma_logtype, lib.amrma.rma, NOTICE);

struct rma_op *
op_alloc(struct rma_ctx *rc)
{
	struct rma_op *op;
	uint16_t gen;

	if (rc->nb_free == 0)
		return NULL;
	op = &rc->ops[rc->free[--rc->nb_free]];
	gen = op->gen;
	memset(op, 0, offsetof(struct rma_op, shinfo));
	op->gen = gen;
	op->ext_released = 0;
	return op;
}


struct rma_op *
op_new(struct rma_ctx *rc, uint8_t kind, uint32_t flags, struct amrma_ep dst, uint64_t key,
       uint64_t offset, uint8_t *buf, uint64_t len, amrma_rma_cb_t cb, void *arg,
       bool user_holds, int *err)
{
	/* a chunk carries 4 arguments (put, tagged data) or none (get reply) */
	uint32_t max = amrma_am_max_payload(rc->ctx, 4);
	struct rma_op *op = op_alloc(rc);

	if (op == NULL) {
		*err = -EAGAIN;
		return NULL;
	}
	op->kind = kind;
	op->flags = flags;
	op->dst = dst;
	op->ep = dst;
	op->key = key;
	op->offset = offset;
	op->buf = buf;
	op->len = len;
	op->chunk = max;
	op->nchunks = len == 0 ? 1 : (uint32_t)((len + max - 1) / max);
	if ((uint64_t)op->nchunks * max < len) {	/* more than 2^32 packets */
		op_release(rc, op);
		*err = -EINVAL;
		return NULL;
	}
	op->cb = cb;
	op->arg = arg;
	op->user_holds = user_holds;
	return op;
}

void
op_count(struct rma_ctx *rc, uint8_t kind, uint64_t len)
{
	if (kind == OP_PUT || kind == OP_PUT_DT) {
		rc->st.puts++;
		rc->st.put_bytes += len;
	} else {
		rc->st.gets++;
		rc->st.get_bytes += len;
	}
}

void
op_release(struct rma_ctx *rc, struct rma_op *op)
{
	dt_op_release(op);
	op->state = OP_FREE;
	op->gen++;
	rc->free[rc->nb_free++] = (uint32_t)(op - rc->ops);
}

/* Last step: report DONE; free the op unless the user holds a handle. */
void
op_complete(struct rma_ctx *rc, struct rma_op *op)
{
	struct amrma_region_table *regions = rc->rma->regions;

	if (op->ref != NULL) {
		amrma_region_put(regions, op->ref);
		op->ref = NULL;
	}
	if (op->status != 0)
		rc->st.op_errors++;
	op->state = OP_COMPLETE;
	if (op->cb != NULL && op->kind != OP_TSEND) {
		if ((op->flags & AMRMA_RMA_F_LOCAL_CB) && !op->local_reported &&
		    (op->kind == OP_PUT || op->kind == OP_PUT_DT))
			op->cb(rc->ctx, op->arg, AMRMA_RMA_EV_LOCAL, 0);
		op->local_reported = true;
		op->cb(rc->ctx, op->arg, AMRMA_RMA_EV_DONE, op->status);
	}
	if (!op->user_holds)
		op_release(rc, op);
}

/* Replies are in; a zero-copy source may still be referenced by a frame in flight. */
void
op_finish(struct rma_ctx *rc, struct rma_op *op)
{
	if (op->zero_copy &&
	    rte_mbuf_ext_refcnt_update(&op->shinfo, -1) != 0) {
		op->state = OP_FINISHING;
		TAILQ_INSERT_TAIL(&rc->finishing, op, next);
		return;
	}
	op_complete(rc, op);
}

static void
ext_free(void *addr, void *opaque)
{
	struct rma_op *op = opaque;

	RTE_SET_USED(addr);
	/* may run on another lcore (the one that freed the last frame) */
	__atomic_store_n(&op->ext_released, 1, __ATOMIC_RELEASE);
}

/* One shared info for all chunks attached to the op's buffer. */
void
op_zero_copy_init(struct rma_op *op)
{
	op->shinfo.free_cb = ext_free;
	op->shinfo.fcb_opaque = op;
	/* the op's own reference: dropped when every chunk's reply is in */
	rte_mbuf_ext_refcnt_set(&op->shinfo, 1);
}

void
op_packet_done(struct rma_ctx *rc, struct rma_op *op, uint64_t bytes, int status)
{
	op->in_flight--;
	op->done += bytes;
	if (status != 0 && op->status == 0)
		op->status = status;
	if ((op->flags & AMRMA_RMA_F_PER_PACKET) && op->cb != NULL && op->kind != OP_TSEND)
		op->cb(rc->ctx, op->arg, AMRMA_RMA_EV_PACKET, status);
	if (op->want_done && !op->done_in && op->status == 0) {
		/* PUT_DONE finishes it, due within the timeout of the last acknowledgement */
		if (op->in_flight == 0) {
			op->deadline = amrma_ctx_now(rc->ctx) + rndv_timeout_tsc(rc->rma);
			op_peer_owes(rc, op);
		}
		return;
	}
	if (op->in_flight == 0 && (op->state == OP_DRAINING ||
				   (op->state == OP_ISSUING && op->status != 0))) {
		if (op->state == OP_ISSUING)
			TAILQ_REMOVE(&rc->active, op, next);
		op_finish(rc, op);
	}
}

/* The first error is status; a failed op sends no chunk more. */
static void
op_stop(struct rma_ctx *rc, struct rma_op *op, int status)
{
	if (status != 0 && op->status == 0)
		op->status = status;
	if (op->status != 0 && op->state == OP_ISSUING) {
		TAILQ_REMOVE(&rc->active, op, next);
		op->state = OP_DRAINING;
	}
}

/* An op whose chunks are all in finishes: drained, or failed before its CTS. */
static void
op_finish_if_done(struct rma_ctx *rc, struct rma_op *op)
{
	if (op->in_flight == 0 && (op->state == OP_DRAINING ||
				   (op->state == OP_WAIT_CTS && op->status != 0)))
		op_finish(rc, op);
}

/*
 * A one-way message (PUT_DONE, RNDV_CANCEL) ended op, with status when not 0: it is
 * finished by the poll hook (ops_ended), so that its callback runs outside the AM handler
 * and may start operations (the AM layer refuses a handler's requests). A handler lists
 * a live op once at most (it checks the op was not ended before), and the list is
 * emptied every poll, so it has room; should it not, the op finishes at once.
 */
void
op_end_later(struct rma_ctx *rc, struct rma_op *op, int status)
{
	op_stop(rc, op, status);
	if (likely(rc->nb_ended < rc->rma->conf.max_ops))
		rc->ended[rc->nb_ended++] = op_handle(rc, op);
	else
		op_finish_if_done(rc, op);
}

/* hook: finish what op_end_later() listed (an op may have finished or gone since) */
static int
ops_ended(struct rma_ctx *rc)
{
	uint32_t n = rc->nb_ended, k;

	rc->nb_ended = 0;
	for (k = 0; k < n; k++) {
		struct rma_op *op = op_from_handle(rc, rc->ended[k]);

		if (op != NULL)
			op_finish_if_done(rc, op);
	}
	return (int)n;
}

void
op_fail(struct rma_ctx *rc, struct rma_op *op, int status)
{
	op_stop(rc, op, status);
	op_finish_if_done(rc, op);
}

void
chunk_done(struct amrma_ctx *ctx, void *arg, int status)
{
	struct rma_ctx *rc = rc_of(ctx);
	struct rma_op *op;
	uint32_t chunk;
	uint64_t off, bytes;

	if (rc == NULL)
		return;		/* the RMA engine was destroyed before the AM layer */
	status = am_status(status);
	op = op_of_arg(rc, arg, &chunk);
	if (op == NULL)
		return;
	off = (uint64_t)chunk * op->chunk;
	bytes = op->len > off ? RTE_MIN((uint64_t)op->chunk, op->len - off) : 0;
	/* a tagged receiver that has not posted yet: send this chunk again later */
	if (status == -EAGAIN && op->kind == OP_TSEND && op->nb_retry < RETRY_MAX &&
	    op->status == 0) {
		op->in_flight--;
		op->retry[op->nb_retry++] = chunk;
		rc->st.tag_retries++;
		if (op->state == OP_DRAINING) {
			op->state = OP_ISSUING;
			TAILQ_INSERT_TAIL(&rc->active, op, next);
		}
		return;
	}
	/* a tagged send's progress: its deadline moves on (rndv_expire) */
	if (status == 0 && op->kind == OP_TSEND)
		op->deadline = amrma_ctx_now(ctx) + rndv_timeout_tsc(rc->rma);
	/* refused (e.g. the region went away): the chunks after it would be refused too */
	if (status != 0 && op->state == OP_ISSUING) {
		TAILQ_REMOVE(&rc->active, op, next);
		op->state = OP_DRAINING;
	}
	op_packet_done(rc, op, bytes, status);
}

/*
 * The IOVA of [p, p + len) if a port may read it in place, else RTE_BAD_IOVA (the chunk is
 * then copied into the frame). Only memory EAL knows qualifies: rte_malloc'd, hugepages, or
 * registered with rte_extmem_register(). A NIC needs its IOVA (and an IOMMU a mapping), and
 * memif zero-copy passes it as an offset into the EAL memory it shares; plain heap memory
 * has neither. In VA mode a whole memseg list is one IOVA range; in PA mode one page is.
 * The op remembers the range of its last chunk, so a lookup is rare.
 */
static rte_iova_t
chunk_iova(const struct rma_ctx *rc, struct rma_op *op, const uint8_t *p, uint32_t len)
{
	uintptr_t a = (uintptr_t)p;

	if (a - op->seg_va >= op->seg_len) {
		op->seg_len = 0;
		if (rc->rma->iova_va) {
			const struct rte_memseg_list *msl = rte_mem_virt2memseg_list(p);

			if (msl == NULL)
				return RTE_BAD_IOVA;
			op->seg_va = (uintptr_t)msl->base_va;
			op->seg_iova = (rte_iova_t)op->seg_va;
			op->seg_len = msl->len;
		} else {
			const struct rte_memseg *ms = rte_mem_virt2memseg(p, NULL);

			if (ms == NULL || ms->iova == RTE_BAD_IOVA)
				return RTE_BAD_IOVA;
			op->seg_va = (uintptr_t)ms->addr;
			op->seg_iova = ms->iova;
			op->seg_len = ms->len;
		}
	}
	if (a - op->seg_va + len > op->seg_len)
		return RTE_BAD_IOVA;	/* runs past the range: copied */
	return op->seg_iova + (a - op->seg_va);
}

/* An mbuf whose data is the caller's memory (no copy). */
static struct rte_mbuf *
attach(struct rma_ctx *rc, struct rma_op *op, uint8_t *p, rte_iova_t iova, uint32_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(rc->rma->ext_pool);

	if (m == NULL)
		return NULL;
	rte_mbuf_ext_refcnt_update(&op->shinfo, 1);
	rte_pktmbuf_attach_extbuf(m, p, iova, (uint16_t)len, &op->shinfo);
	m->data_off = 0;
	m->data_len = (uint16_t)len;
	m->pkt_len = len;
	return m;
}

/*
 * The remote offset of the chunk at off. A range past 2^64 is refused whole: its chunks
 * name the last offset, which the target refuses with -EOVERFLOW as it would the range;
 * offset + off would wrap around to the region's first bytes, outside the range.
 */
static inline uint64_t
chunk_offset(const struct rma_op *op, uint64_t off)
{
	return op->len > UINT64_MAX - op->offset ? UINT64_MAX : op->offset + off;
}

/* Send one chunk; returns 0, -EAGAIN (try later) or a hard error. */
static int
send_chunk(struct rma_ctx *rc, struct rma_op *op, uint32_t chunk)
{
	uint64_t off = (uint64_t)chunk * op->chunk;
	uint32_t len = (uint32_t)RTE_MIN((uint64_t)op->chunk, op->len - off);
	struct amrma_ctx *ctx = rc->ctx;
	uint64_t args[4];
	int ret;

	switch (op->kind) {
	case OP_PUT_DT:
	case OP_GET_DT:
		ret = dt_send_chunk(rc, op, chunk, len, off, op_arg(rc, op, chunk));
		break;
	case OP_GET:
		args[0] = op->key;
		args[1] = chunk_offset(op, off);
		args[2] = len;
		ret = amrma_am_request(ctx, op->dst, AMRMA_RMA_H_GET, args, 3, NULL, 0,
				       chunk_done, op_arg(rc, op, chunk));
		break;
	case OP_PUT:
	case OP_TSEND: {
		/* a tagged send from a region (rendezvous get): deregistered meanwhile, the
		 * rest is not read, as a lookup would refuse it */
		if (op->ref != NULL && !amrma_region_live(op->ref))
			return -ENOKEY;
		/* rendezvous puts and tagged sends carry the tag, not the region; pipelined
		 * puts with one completion go one-way and name their operation */
		bool tagged = op->kind == OP_TSEND || op->proto == AMRMA_RMA_F_RENDEZVOUS;
		uint16_t h = tagged ? AMRMA_RMA_H_TDATA :
			     op->want_done ? AMRMA_RMA_H_PUT1 : AMRMA_RMA_H_PUT;

		args[0] = tagged ? op->tag : op->key;
		args[1] = tagged ? off : chunk_offset(op, off);
		args[2] = op->len;
		args[3] = op->want_done ? op_handle(rc, op) : op->rid;
		rte_iova_t iova = op->zero_copy && len != 0 ?
				  chunk_iova(rc, op, op->buf + off, len) : RTE_BAD_IOVA;

		if (iova != RTE_BAD_IOVA) {
			struct rte_mbuf *m = attach(rc, op, op->buf + off, iova, len);

			if (m == NULL)
				return -EAGAIN;
			ret = op->want_done ?
				amrma_am_send_mbuf(ctx, op->dst, h, args, 4, m, chunk_done,
						   op_arg(rc, op, chunk)) :
				amrma_am_request_mbuf(ctx, op->dst, h, args, 4, m, chunk_done,
						      op_arg(rc, op, chunk));
			if (ret == 0)
				rc->st.zero_copy_chunks++;
		} else if (op->want_done) {
			ret = amrma_am_send(ctx, op->dst, h, args, 4, op->buf + off, (uint16_t)len,
					    chunk_done, op_arg(rc, op, chunk));
		} else {
			ret = amrma_am_request(ctx, op->dst, h, args, 4, op->buf + off,
					       (uint16_t)len, chunk_done, op_arg(rc, op, chunk));
		}
		break;
	}
	default:
		return -EINVAL;
	}
	if (ret == -ENOBUFS)
		ret = -EAGAIN;
	if (ret == 0) {
		op->in_flight++;
		rc->st.chunks++;
		if (op->kind == OP_PUT || op->kind == OP_TSEND)
			rma_send_ahead(rc, op, off, len);
	}
	return ret;
}

/*
 * Issue as many chunks as the window allows (resends first). Returns chunks sent. Called
 * from start (in_poll false) it reports nothing: callbacks run inside the context's poll.
 */
int
op_issue(struct rma_ctx *rc, struct rma_op *op, bool in_poll)
{
	bool local_due;
	uint32_t depth = rc->rma->conf.pipeline_depth;
	int sent = 0, ret;

	/* a tagged send's data were asked for by a life of the initiator that is gone: its
	 * new one may have a receive of the same name. Checked once per burst, not per chunk */
	if (op->kind == OP_TSEND && op->in_flight < depth &&
	    op_peer_lost(rc, op) == -ECONNRESET) {
		op_fail(rc, op, -ECONNRESET);	/* may complete and free op */
		return 0;
	}
	while (op->in_flight < depth && (op->nb_retry > 0 || op->next_chunk < op->nchunks)) {
		bool resend = op->nb_retry > 0;
		uint32_t chunk = resend ? op->retry[op->nb_retry - 1] : op->next_chunk;

		ret = send_chunk(rc, op, chunk);
		if (ret == -EAGAIN)
			break;
		if (ret != 0) {
			op_fail(rc, op, ret);	/* may complete and free op */
			return sent;
		}
		if (resend)
			op->nb_retry--;
		else
			op->next_chunk++;
		sent++;
	}
	/* copied puts (noncontiguous ones gather into each packet) no longer need the
	 * source once every chunk is out */
	local_due = (op->kind == OP_PUT || op->kind == OP_PUT_DT) && !op->zero_copy &&
		    op->cb != NULL && (op->flags & AMRMA_RMA_F_LOCAL_CB) && !op->local_reported;
	if (op->next_chunk == op->nchunks && op->nb_retry == 0 && op->state == OP_ISSUING &&
	    (in_poll || !local_due)) {
		/* (an op whose EV_LOCAL is due stays listed: the poll hook reports it) */
		TAILQ_REMOVE(&rc->active, op, next);
		op->state = OP_DRAINING;
		if (local_due) {
			op->local_reported = true;
			op->cb(rc->ctx, op->arg, AMRMA_RMA_EV_LOCAL, 0);
		}
		if (op->in_flight == 0 && (!op->want_done || op->done_in))
			op_finish(rc, op);
	}
	return sent;
}

/* At most this often per second the port is asked to free held frames (5 us apart). */
#define CLEANUP_PER_S 200000

/* The poll hook's work, when there is any (rma_poll). */
static __rte_noinline int
rma_poll_work(struct amrma_ctx *ctx, struct rma_ctx *rc)
{
	struct rma_op *op, *tmp;
	int work = 0;

	RTE_TAILQ_FOREACH_SAFE(op, &rc->active, next, tmp)
		work += op_issue(rc, op, true);
	if (rc->nb_done != 0)
		work += completion_flush(rc);
	if (rc->nb_rx_done != 0)
		work += rndv_finish_rx(rc);
	if (rc->nb_ended != 0)
		work += ops_ended(rc);
	{
		uint64_t now = amrma_ctx_now(ctx);

		/* rendezvous deadlines: a coarse scan is plenty */
		if (now >= rc->next_scan) {
			rc->next_scan = now + rte_get_tsc_hz() / 100;
			work += rndv_expire(rc, now);
			work += dt_expire(rc, now);
			work += completion_expire(rc, now);
		}
		/* zero-copy operations whose frames the port still holds: make it let go,
		 * unless chunks of other operations are leaving (their TX calls do it);
		 * every few microseconds, not every poll, in case asking costs a syscall */
		if (!TAILQ_EMPTY(&rc->finishing) && TAILQ_EMPTY(&rc->active) &&
		    now >= rc->next_cleanup) {
			rc->next_cleanup = now + rte_get_tsc_hz() / CLEANUP_PER_S;
			amrma_ctx_tx_cleanup(ctx);
		}
	}
	RTE_TAILQ_FOREACH_SAFE(op, &rc->finishing, next, tmp) {
		if (!__atomic_load_n(&op->ext_released, __ATOMIC_ACQUIRE))
			continue;
		TAILQ_REMOVE(&rc->finishing, op, next);
		op_complete(rc, op);
		work++;
	}
	return work;
}

/*
 * Poll hook: push chunks of active operations, finish released zero-copy ones, expire
 * what timed out. Called on every poll, also idle ones: the common case is one test.
 */
int
rma_poll(struct amrma_ctx *ctx, void *arg)
{
	struct rma_ctx *rc = arg;
	int work = 0;

	/* first: operations the layer above starts are pushed by the work below */
	if (rc->ext_fn != NULL)
		work = rc->ext_fn(ctx, rc->ext_arg);
	if (likely(TAILQ_EMPTY(&rc->active) && rc->nb_done == 0 && rc->nb_rx_done == 0 &&
		   rc->nb_ended == 0 && TAILQ_EMPTY(&rc->finishing) &&
		   amrma_ctx_now(ctx) < rc->next_scan))
		return work;
	return work + rma_poll_work(ctx, rc);
}

int
rma_ext_set(struct amrma_ctx *ctx, amrma_ctx_hook_t fn, void *arg)
{
	struct rma_ctx *rc = rc_of(ctx);

	if (rc == NULL)
		return -EINVAL;
	if (fn != NULL && rc->ext_fn != NULL)
		return -EEXIST;
	rc->ext_fn = fn;
	rc->ext_arg = fn != NULL ? arg : NULL;
	return 0;
}

struct amrma_node *
rma_node(const struct amrma_rma *rma)
{
	return rma->node;
}

void *
rma_ext_arg(const struct amrma_ctx *ctx)
{
	const struct rma_ctx *rc = rc_of(ctx);

	return rc != NULL ? rc->ext_arg : NULL;
}

/*
 * start: the first window. A first chunk the AM layer refuses outright (-EPERM in a reply
 * handler, -EINVAL for an unknown endpoint, -ENOTCONN for a dead peer) is the caller's
 * error, returned with nothing sent, rather than the operation's, reported by callback.
 */
static int
op_issue_first(struct rma_ctx *rc, struct rma_op *op)
{
	int ret = send_chunk(rc, op, 0);

	if (ret != 0 && ret != -EAGAIN)
		return ret;
	if (ret == 0)
		op->next_chunk++;
	op_issue(rc, op, false);
	return 0;
}

static int
start(struct amrma_ctx *ctx, uint8_t kind, struct amrma_ep dst, uint64_t key,
      uint64_t offset, void *buf, size_t len, uint32_t flags, amrma_rma_cb_t cb, void *arg,
      amrma_rma_req_t *req)
{
	struct rma_ctx *rc = rc_of(ctx);
	const struct amrma_rma_conf *c;
	uint16_t max;
	struct rma_op *op;
	uint32_t proto;
	int ret;

	if (rc == NULL || (len != 0 && buf == NULL))
		return -EINVAL;
	c = &rc->rma->conf;
	/* a chunk carries 4 arguments (put) or none (get reply) */
	max = amrma_am_max_payload(ctx, 4);
	proto = flags & (AMRMA_RMA_F_SHORT | AMRMA_RMA_F_PIPELINED | AMRMA_RMA_F_RENDEZVOUS);
	if (proto == 0) {
		uint64_t rndv_from = kind == OP_PUT ? c->rndv_put_threshold : c->rndv_threshold;
		size_t short_max = RTE_MIN((size_t)(c->short_max ? c->short_max : max),
					   (size_t)max);

		proto = len >= rndv_from ? AMRMA_RMA_F_RENDEZVOUS :
			len <= short_max ? AMRMA_RMA_F_SHORT : AMRMA_RMA_F_PIPELINED;
	}
	if (__builtin_popcount(proto) != 1 || (proto == AMRMA_RMA_F_SHORT && len > max))
		return -EINVAL;
	op = op_new(rc, kind, flags, dst, key, offset, buf, len, cb, arg, req != NULL, &ret);
	if (op == NULL)
		return ret;
	op->proto = (uint8_t)proto;
	op->zero_copy = kind == OP_PUT && c->zero_copy && proto != AMRMA_RMA_F_SHORT &&
			!(flags & AMRMA_RMA_F_COPY);
	/* one completion per pipelined put, unless each packet is to be reported */
	op->want_done = kind == OP_PUT && proto == AMRMA_RMA_F_PIPELINED &&
			!(flags & AMRMA_RMA_F_PER_PACKET);
	if (op->zero_copy)
		op_zero_copy_init(op);
	if (req != NULL)
		*req = op_handle(rc, op);
	if (proto == AMRMA_RMA_F_RENDEZVOUS) {
		ret = rndv_start(rc, op);
	} else {
		op->state = OP_ISSUING;
		TAILQ_INSERT_TAIL(&rc->active, op, next);
		ret = op_issue_first(rc, op);	/* the first window leaves at once */
	}
	if (ret != 0) {
		/* nothing was sent: the op never existed */
		if (op->state == OP_ISSUING)
			TAILQ_REMOVE(&rc->active, op, next);
		op_release(rc, op);
		if (req != NULL)
			*req = 0;
		return ret;
	}
	op_count(rc, kind, len);
	if (proto == AMRMA_RMA_F_RENDEZVOUS)
		rc->st.rndv_ops++;
	return 0;
}

int
amrma_rma_put(struct amrma_ctx *ctx, struct amrma_ep dst, uint64_t key, uint64_t offset,
	      const void *src, size_t len, uint32_t flags, amrma_rma_cb_t cb, void *arg,
	      amrma_rma_req_t *req)
{
	return start(ctx, OP_PUT, dst, key, offset, (void *)(uintptr_t)src, len, flags, cb,
		     arg, req);
}

int
amrma_rma_get(struct amrma_ctx *ctx, struct amrma_ep dst, uint64_t key, uint64_t offset,
	      void *buf, size_t len, uint32_t flags, amrma_rma_cb_t cb, void *arg,
	      amrma_rma_req_t *req)
{
	return start(ctx, OP_GET, dst, key, offset, buf, len, flags, cb, arg, req);
}

int
amrma_rma_test(struct amrma_ctx *ctx, amrma_rma_req_t req, int *status)
{
	struct rma_ctx *rc = rc_of(ctx);
	struct rma_op *op = rc ? op_from_handle(rc, req) : NULL;

	if (op == NULL || !op->user_holds)
		return -EINVAL;
	if (op->state != OP_COMPLETE)
		return 0;
	if (status != NULL)
		*status = op->status;
	op_release(rc, op);
	return 1;
}

int
amrma_rma_local_done(struct amrma_ctx *ctx, amrma_rma_req_t req)
{
	struct rma_ctx *rc = rc_of(ctx);
	struct rma_op *op = rc ? op_from_handle(rc, req) : NULL;

	if (op == NULL)
		return -EINVAL;
	if (op->state == OP_COMPLETE)
		return 1;
	/* replies are in, but frames the port holds may still point into the source:
	 * reusable once they are freed, when EV_LOCAL is reported too */
	if (op->state == OP_FINISHING)
		return __atomic_load_n(&op->ext_released, __ATOMIC_ACQUIRE) != 0;
	if (op->zero_copy)
		return 0;
	return (op->kind == OP_PUT || op->kind == OP_PUT_DT) && op->next_chunk == op->nchunks &&
	       op->state != OP_WAIT_CTS;
}

/*
 * One step of a blocking call: poll ctx, and serve the RMA queue if ctx is the progress
 * context. -EPERM from inside a poll of ctx (a handler, a callback): it could only spin.
 */
static int
poll_step(struct amrma_ctx *ctx, struct amrma_rma *rma)
{
	if (amrma_ctx_poll(ctx, 32) < 0)
		return -EPERM;
	if (rma->conf.progress_ctx == amrma_ctx_index(ctx))
		amrma_rma_progress(rma);
	return 0;
}

int
amrma_rma_wait(struct amrma_ctx *ctx, amrma_rma_req_t req)
{
	int status = 0, ret;

	while ((ret = amrma_rma_test(ctx, req, &status)) == 0)
		if (poll_step(ctx, amrma_rma_of(ctx)) != 0)
			return -EPERM;
	return ret < 0 ? ret : status;
}

int
amrma_rma_flush(struct amrma_ctx *ctx, struct amrma_ep dst)
{
	struct rma_ctx *rc = ctx != NULL ? rc_of(ctx) : NULL;
	bool pending;
	uint32_t i;

	if (rc == NULL)
		return -EINVAL;
	do {
		pending = false;
		for (i = 0; i < rc->rma->conf.max_ops && !pending; i++) {
			const struct rma_op *op = &rc->ops[i];

			pending = op->state != OP_FREE && op->state != OP_COMPLETE &&
				  op->kind != OP_TSEND && ep_same(op->ep, dst);
		}
		if (pending && poll_step(ctx, rc->rma) != 0)
			return -EPERM;
	} while (pending);
	return 0;
}

unsigned int
amrma_rma_outstanding(const struct amrma_ctx *ctx)
{
	const struct rma_ctx *rc = rc_of(ctx);

	return rc ? rc->rma->conf.max_ops - rc->nb_free : 0;
}

void
amrma_rma_stats_get(const struct amrma_ctx *ctx, struct amrma_rma_stats *out)
{
	const struct rma_ctx *rc = rc_of(ctx);

	if (rc != NULL)
		*out = rc->st;
	else
		memset(out, 0, sizeof(*out));
}

/* ---- target side ---- */

int
rma_place_held(struct rma_ctx *rc, const struct amrma_region *ref, uint64_t off,
	       const struct amrma_am_msg *msg)
{
	void *dst;
	int ret;

	ret = ref == NULL ? -ENOKEY :
	      amrma_region_validate(rc->rma->regions, ref, off, msg->len, AMRMA_REGION_WRITE,
				    &dst);
	if (ret != 0) {
		rc->st.access_errors++;
		return ret;
	}
	if (msg->len == 0)
		return 0;
	/* the next chunks of the put most likely follow this one, up to the region's end */
	ret = rma_place(rc, dst, msg->payload, msg->len,
			(const uint8_t *)amrma_region_addr(ref) + amrma_region_len(ref));
	if (ret != 0)
		return ret;
	rc->st.served_put_bytes += msg->len;
	return 0;
}

int
rma_place_put(struct rma_ctx *rc, uint64_t key, uint64_t off,
	      const struct amrma_am_msg *msg)
{
	struct amrma_region *ref = amrma_region_get(rc->rma->regions, key);
	int ret = rma_place_held(rc, ref, off, msg);

	if (ref != NULL)
		amrma_region_put(rc->rma->regions, ref);
	return ret;
}

static int
put_handler(struct amrma_ctx *ctx, amrma_am_token_t tok, const struct amrma_am_msg *msg,
	    void *arg)
{
	RTE_SET_USED(tok);
	RTE_SET_USED(arg);
	if (msg->nargs < 2)
		return -EPROTO;
	/* an error goes back in the automatic reply */
	return rma_place_put(rc_of(ctx), msg->args[0], msg->args[1], msg);
}

static int
get_handler(struct amrma_ctx *ctx, amrma_am_token_t tok, const struct amrma_am_msg *msg,
	    void *arg)
{
	struct amrma_rma *rma = arg;
	struct rma_ctx *rc = rc_of(ctx);
	struct amrma_region *ref;
	void *src;
	int ret;

	if (msg->nargs < 3 || msg->args[2] > amrma_am_max_payload(ctx, 0))
		return -EPROTO;
	ret = amrma_region_check(rma->regions, msg->args[0], msg->args[1], msg->args[2],
				 AMRMA_REGION_READ, &src, &ref);
	if (ret != 0) {
		rc->st.access_errors++;
		return ret;
	}
	ret = amrma_am_reply(ctx, tok, AMRMA_RMA_H_GET_REPLY, NULL, 0, src,
			     (uint16_t)msg->args[2], 0);
	amrma_region_put(rma->regions, ref);
	if (ret == 0)
		rc->st.served_get_bytes += msg->args[2];
	return ret;
}

struct rma_op *
reply_op(struct rma_ctx *rc, const struct amrma_am_msg *msg, uint8_t kind, uint32_t *chunk)
{
	struct rma_op *op = msg->op_arg != NULL ? op_of_arg(rc, msg->op_arg, chunk) : NULL;

	if (op == NULL || op->kind != kind || !ep_same(op->dst, msg->src) ||
	    (op->state != OP_ISSUING && op->state != OP_DRAINING)) {
		rc->st.bad_replies++;
		return NULL;
	}
	return op;
}

/* initiator: data of a get chunk; placed at the chunk's place in the buffer */
static int
get_reply_handler(struct amrma_ctx *ctx, amrma_am_token_t tok, const struct amrma_am_msg *msg,
		  void *arg)
{
	struct rma_ctx *rc = rc_of(ctx);
	struct rma_op *op;
	uint32_t chunk;
	uint64_t off, want;

	RTE_SET_USED(tok);
	RTE_SET_USED(arg);
	op = reply_op(rc, msg, OP_GET, &chunk);
	if (op == NULL)
		return -EPROTO;
	off = (uint64_t)chunk * op->chunk;
	want = op->len > off ? RTE_MIN((uint64_t)op->chunk, op->len - off) : 0;
	if (msg->len != want) {
		rc->st.bad_replies++;
		return -EPROTO;
	}
	return want != 0 ? rma_place(rc, op->buf + off, msg->payload, (uint32_t)want,
				     op->buf + op->len) : 0;
}

void
rma_register(struct amrma_node *node, struct amrma_rma *rma)
{
	amrma_am_register(node, AMRMA_RMA_H_PUT, put_handler, rma);
	amrma_am_register(node, AMRMA_RMA_H_GET, get_handler, rma);
	amrma_am_register(node, AMRMA_RMA_H_GET_REPLY, get_reply_handler, rma);
}
