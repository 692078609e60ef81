/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Noncontiguous RMA (seed 004): the target's datatype travels as a serialized DGSP in a
 * setup request and is verified there against the region before it is used; packets are
 * gathered straight from the source layout into the frame and scattered straight into the
 * target layout (no packing pass), each at its packed offset.
 *
 *   initiator --DT_SETUP(key, offset, count, perm, total) + program--> target
 *   target: load + verify (footprint inside the region), install in a slot
 *   initiator <--DT_SETUP_REPLY(slot)--
 *   put: --DT_PUT(slot, packed off) + gathered bytes--> scatter at off
 *   get: --DT_GET(slot, packed off, len)--> gather at off --DT_REPLY + bytes--> scatter
 * A slot frees itself once `total` bytes moved (each packet arrives exactly once).
 */

#include <errno.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_malloc.h>

#include "amrma_dgsp.h"
#include "rma_priv.h"

#define DT_PERM_PUT 1
#define DT_PERM_GET 2

static uint64_t
slot_id(const struct rma_ctx *rc, uint32_t i)
{
	return ((uint64_t)rc->dt[i].gen << 32) | i;
}

static struct rma_dt *
slot_of(struct rma_ctx *rc, uint64_t id, uint16_t src_node)
{
	uint32_t i = (uint32_t)id;

	if (i >= RMA_MAX_DT || !rc->dt[i].used || rc->dt[i].gen != (uint16_t)(id >> 32) ||
	    rc->dt[i].src.node != src_node)
		return NULL;
	return &rc->dt[i];
}

static void
slot_free(struct rma_ctx *rc, struct rma_dt *d)
{
	amrma_dgsp_free(d->prog);
	d->prog = NULL;
	if (d->ref != NULL)
		amrma_region_put(rc->rma->regions, d->ref);
	d->ref = NULL;
	if (d->used)
		rc->nb_dt_used--;
	d->used = false;
	d->gen++;
}

/* target: verify the shipped program against the region and install it */
static int
setup_handler(struct amrma_ctx *ctx, amrma_am_token_t tok, const struct amrma_am_msg *msg,
	      void *arg)
{
	struct amrma_rma *rma = arg;
	struct rma_ctx *rc = amrma_ctx_priv(ctx);
	struct amrma_dgsp_limits lim;
	enum amrma_dgsp_reason why;
	struct amrma_dgsp_info info;
	struct amrma_region *ref;
	struct amrma_dgsp *prog;
	uint64_t off, count, total, len, id;
	struct rma_dt *d;
	void *base;
	uint32_t perm, i;
	int ret;

	if (msg->nargs < 5 || (msg->args[3] != DT_PERM_PUT && msg->args[3] != DT_PERM_GET))
		return -EPROTO;
	off = msg->args[1];
	count = msg->args[2];
	perm = msg->args[3] == DT_PERM_PUT ? AMRMA_REGION_WRITE : AMRMA_REGION_READ;
	total = msg->args[4];
	ret = amrma_region_check(rma->regions, msg->args[0], off, 0, perm, &base, &ref);
	if (ret != 0) {
		rc->st.access_errors++;
		return ret;
	}
	len = amrma_region_len(ref);
	/* the whole footprint of `count` elements must lie inside the region */
	amrma_dgsp_limits_default(&lim);
	lim.check_window = true;
	lim.count = count;
	lim.win_lo = -(int64_t)off;
	lim.win_hi = (int64_t)(len - off);
	lim.max_bytes = len;
	ret = amrma_dgsp_load(msg->payload, msg->len, &lim, &prog, &why);
	if (ret != 0) {
		amrma_region_put(rma->regions, ref);
		rc->st.dt_rejected++;
		rc->st.access_errors++;
		return why == AMRMA_DGSP_E_WINDOW ? -ERANGE : -EINVAL;
	}
	amrma_dgsp_get_info(prog, &info);
	if (info.size * count != total || (count != 0 && info.size != total / count)) {
		amrma_dgsp_free(prog);
		amrma_region_put(rma->regions, ref);
		rc->st.dt_rejected++;
		return -EINVAL;	/* both sides must agree on the packed size */
	}
	if (total == 0) {
		amrma_dgsp_free(prog);
		amrma_region_put(rma->regions, ref);
		id = UINT64_MAX;	/* nothing to move: no slot */
		return amrma_am_reply(ctx, tok, AMRMA_RMA_H_DT_SETUP_REPLY, &id, 1, NULL, 0, 0);
	}
	for (i = 0; i < RMA_MAX_DT && rc->dt[i].used; i++)
		;
	if (i == RMA_MAX_DT) {
		amrma_dgsp_free(prog);
		amrma_region_put(rma->regions, ref);
		return -EBUSY;
	}
	d = &rc->dt[i];
	d->used = true;
	rc->nb_dt_used++;
	d->perm = perm;
	d->src = msg->src;
	d->src_epoch = msg->src_epoch;
	d->prog = prog;
	d->ref = ref;
	d->total = total;
	d->moved = 0;
	d->deadline = rte_rdtsc() + rndv_timeout_tsc(rma);
	amrma_dgsm_init(&d->m, prog, base, count);
	id = slot_id(rc, i);
	return amrma_am_reply(ctx, tok, AMRMA_RMA_H_DT_SETUP_REPLY, &id, 1, NULL, 0, 0);
}

static void
moved(struct rma_ctx *rc, struct rma_dt *d, uint64_t n)
{
	d->moved += n;
	/* per packet, from a handler: the poll's clock (rdtsc is slow on VMs) */
	d->deadline = amrma_ctx_now(rc->ctx) + rndv_timeout_tsc(rc->rma);
	if (d->moved == d->total)
		slot_free(rc, d);
}

/*
 * A slot's region deregistered meanwhile: the slot goes, and with it the region; the
 * operation's packets still to come are refused with -ENOKEY too (slot_gone).
 */
static bool
slot_dead(struct rma_ctx *rc, struct rma_dt *d)
{
	if (amrma_region_live(d->ref))
		return false;
	rc->st.access_errors++;
	dereg_end_set(&d->dead, d->gen, d->src.node, 0);
	slot_free(rc, d);
	return true;
}

/*
 * Why a packet names no slot: -ENOKEY for one whose slot its region's deregistration
 * ended (the operation reports the first refusal that comes back, in any order), else
 * -ENOENT.
 */
static int
slot_gone(struct rma_ctx *rc, uint64_t id, uint16_t src_node)
{
	uint32_t i = (uint32_t)id;
	const struct rma_dt *d = i < RMA_MAX_DT ? &rc->dt[i] : NULL;

	if (d != NULL && dereg_end_match(&d->dead, id, src_node, 0)) {
		rc->st.access_errors++;
		return -ENOKEY;
	}
	return -ENOENT;
}

static int
put_handler(struct amrma_ctx *ctx, amrma_am_token_t tok, const struct amrma_am_msg *msg,
	    void *arg)
{
	struct rma_ctx *rc = amrma_ctx_priv(ctx);
	struct rma_dt *d;

	RTE_SET_USED(tok);
	RTE_SET_USED(arg);
	if (msg->nargs < 3)
		return -EPROTO;
	d = slot_of(rc, msg->args[0], msg->src.node);
	if (d == NULL)
		return slot_gone(rc, msg->args[0], msg->src.node);
	if (d->perm != AMRMA_REGION_WRITE)
		return -ENOENT;
	if (slot_dead(rc, d))
		return -ENOKEY;
	if (msg->args[1] > d->total || msg->len > d->total - msg->args[1])
		return -ERANGE;
	/* the verified program keeps every byte inside the region */
	if (amrma_dgsm_scatter_at(&d->m, msg->args[1], msg->payload, msg->len) != msg->len)
		return -ERANGE;
	rc->st.served_put_bytes += msg->len;
	moved(rc, d, msg->len);
	return 0;
}

static int
get_handler(struct amrma_ctx *ctx, amrma_am_token_t tok, const struct amrma_am_msg *msg,
	    void *arg)
{
	struct rma_ctx *rc = amrma_ctx_priv(ctx);
	struct rma_dt *d;
	uint64_t off, len;
	int ret;

	RTE_SET_USED(arg);
	if (msg->nargs < 3)
		return -EPROTO;
	d = slot_of(rc, msg->args[0], msg->src.node);
	off = msg->args[1];
	len = msg->args[2];
	if (d == NULL)
		return slot_gone(rc, msg->args[0], msg->src.node);
	if (d->perm != AMRMA_REGION_READ)
		return -ENOENT;
	if (slot_dead(rc, d))
		return -ENOKEY;
	if (off > d->total || len > d->total - off || len > amrma_am_max_payload(ctx, 0))
		return -ERANGE;
	if (amrma_dgsm_gather_at(&d->m, off, rc->scratch, len) != (ssize_t)len)
		return -ERANGE;
	ret = amrma_am_reply(ctx, tok, AMRMA_RMA_H_DT_REPLY, NULL, 0, rc->scratch,
			     (uint16_t)len, 0);
	if (ret == 0) {
		rc->st.served_get_bytes += len;
		moved(rc, d, len);
	}
	return ret;
}

/* initiator: get data, scattered into the local layout at its packed offset */
static int
reply_handler(struct amrma_ctx *ctx, amrma_am_token_t tok, const struct amrma_am_msg *msg,
	      void *arg)
{
	struct rma_ctx *rc = amrma_ctx_priv(ctx);
	struct rma_op *op;
	uint64_t off, want;
	uint32_t chunk;

	RTE_SET_USED(tok);
	RTE_SET_USED(arg);
	op = reply_op(rc, msg, OP_GET_DT, &chunk);
	if (op == NULL)
		return -EPROTO;
	off = (uint64_t)chunk * op->chunk;
	want = op->len > off ? RTE_MIN((uint64_t)op->chunk, op->len - off) : 0;
	if (msg->len != want ||
	    amrma_dgsm_scatter_at(op->dgsm, off, msg->payload, msg->len) != (ssize_t)want) {
		rc->st.bad_replies++;
		return -EPROTO;
	}
	return 0;
}

static int
setup_reply_handler(struct amrma_ctx *ctx, amrma_am_token_t tok,
		    const struct amrma_am_msg *msg, void *arg)
{
	struct rma_ctx *rc = amrma_ctx_priv(ctx);
	struct rma_op *op = op_from_handle(rc, (amrma_rma_req_t)(uintptr_t)msg->op_arg);

	RTE_SET_USED(tok);
	RTE_SET_USED(arg);
	/* not a reply (op_arg NULL is no handle), or not from where the setup went */
	if (op == NULL || op->state != OP_WAIT_CTS || msg->nargs < 1 ||
	    !ep_same(op->dst, msg->src)) {
		rc->st.bad_replies++;
		return -EPROTO;
	}
	op->slot = msg->args[0];
	return 0;
}

static void
setup_done(struct amrma_ctx *ctx, void *arg, int status)
{
	struct rma_ctx *rc = amrma_ctx_priv(ctx);
	struct rma_op *op = rc ? op_from_handle(rc, (amrma_rma_req_t)(uintptr_t)arg) : NULL;

	if (op == NULL || op->state != OP_WAIT_CTS)
		return;
	status = am_status(status);
	if (status != 0) {
		op_fail(rc, op, status);	/* refused by the target's verifier */
		return;
	}
	if (op->len == 0) {
		op->state = OP_DRAINING;
		op_fail(rc, op, 0);		/* nothing to move: complete */
		return;
	}
	op->state = OP_ISSUING;
	TAILQ_INSERT_TAIL(&rc->active, op, next);
}

int
dt_send_chunk(struct rma_ctx *rc, struct rma_op *op, uint32_t chunk, uint32_t len,
	      uint64_t off, void *arg)
{
	struct amrma_ctx *ctx = rc->ctx;
	uint64_t args[3] = { op->slot, off, op->kind == OP_PUT_DT ? op->len : len };
	struct rte_mbuf *m;
	char *p;

	RTE_SET_USED(chunk);
	if (op->kind == OP_GET_DT)
		return amrma_am_request(ctx, op->dst, AMRMA_RMA_H_DT_GET, args, 3, NULL, 0,
					chunk_done, arg);
	/* gather straight into the packet: the only copy on this side */
	m = rte_pktmbuf_alloc(amrma_ctx_pool(ctx));
	if (m == NULL)
		return -EAGAIN;
	p = rte_pktmbuf_append(m, len);
	if (p == NULL || amrma_dgsm_gather_at(op->dgsm, off, p, len) != (ssize_t)len) {
		rte_pktmbuf_free(m);
		return p == NULL ? -EAGAIN : -EINVAL;
	}
	return amrma_am_request_mbuf(ctx, op->dst, AMRMA_RMA_H_DT_PUT, args, 3, m, chunk_done,
				     arg);
}

static int
start_dt(struct amrma_ctx *ctx, uint8_t kind, struct amrma_ep dst, uint64_t key,
	 uint64_t offset, void *local, const struct amrma_dgsp *local_type,
	 uint64_t local_count, const struct amrma_dgsp *remote_type, uint64_t remote_count,
	 uint32_t flags, amrma_rma_cb_t cb, void *arg, amrma_rma_req_t *req)
{
	struct rma_ctx *rc = amrma_ctx_priv(ctx);
	struct amrma_dgsp_info li, ri;
	uint8_t prog[AMRMA_WIRE_MAX_PAYLOAD];
	uint64_t args[5], total;
	struct rma_op *op;
	ssize_t n;
	int ret;

	if (rc == NULL || local_type == NULL || remote_type == NULL)
		return -EINVAL;
	amrma_dgsp_get_info(local_type, &li);
	amrma_dgsp_get_info(remote_type, &ri);
	total = li.size * local_count;
	if (total != ri.size * remote_count || (local_count && total / local_count != li.size) ||
	    (total != 0 && local == NULL))
		return -EINVAL;
	n = amrma_dgsp_serialize(remote_type, NULL, 0);
	if (n < 0 || (size_t)n > amrma_am_max_payload(ctx, 5))
		return -EMSGSIZE;
	amrma_dgsp_serialize(remote_type, prog, sizeof(prog));
	op = op_new(rc, kind, flags, dst, key, offset, NULL, total, cb, arg, req != NULL, &ret);
	if (op == NULL)
		return ret;
	op->dgsm = rte_malloc(NULL, sizeof(*op->dgsm), 0);
	if (op->dgsm == NULL ||
	    amrma_dgsm_init(op->dgsm, local_type, local, local_count) != 0) {
		rte_free(op->dgsm);
		op->dgsm = NULL;
		op_release(rc, op);
		return -ENOMEM;
	}
	args[0] = key;
	args[1] = offset;
	args[2] = remote_count;
	args[3] = kind == OP_PUT_DT ? DT_PERM_PUT : DT_PERM_GET;
	args[4] = total;
	op->state = OP_WAIT_CTS;
	ret = amrma_am_request(ctx, dst, AMRMA_RMA_H_DT_SETUP, args, 5, prog, (uint16_t)n,
			       setup_done, (void *)(uintptr_t)op_handle(rc, op));
	if (ret != 0) {
		dt_op_release(op);
		op_release(rc, op);
		return ret;
	}
	op_count(rc, kind, total);
	rc->st.dt_ops++;
	if (req != NULL)
		*req = op_handle(rc, op);
	return 0;
}

int
amrma_rma_put_dt(struct amrma_ctx *ctx, struct amrma_ep dst, uint64_t key, uint64_t offset,
		 const void *src, const struct amrma_dgsp *src_type, uint64_t src_count,
		 const struct amrma_dgsp *dst_type, uint64_t dst_count, uint32_t flags,
		 amrma_rma_cb_t cb, void *arg, amrma_rma_req_t *req)
{
	return start_dt(ctx, OP_PUT_DT, dst, key, offset, (void *)(uintptr_t)src, src_type,
			src_count, dst_type, dst_count, flags, cb, arg, req);
}

int
amrma_rma_get_dt(struct amrma_ctx *ctx, struct amrma_ep dst, uint64_t key, uint64_t offset,
		 const struct amrma_dgsp *src_type, uint64_t src_count, void *buf,
		 const struct amrma_dgsp *buf_type, uint64_t buf_count, uint32_t flags,
		 amrma_rma_cb_t cb, void *arg, amrma_rma_req_t *req)
{
	return start_dt(ctx, OP_GET_DT, dst, key, offset, buf, buf_type, buf_count, src_type,
			src_count, flags, cb, arg, req);
}

void
dt_op_release(struct rma_op *op)
{
	rte_free(op->dgsm);
	op->dgsm = NULL;
}

/* target: slots whose initiator stopped sending, or is gone (not waited for) */
int
dt_expire(struct rma_ctx *rc, uint64_t now)
{
	uint32_t i;
	int n = 0;

	for (i = 0; rc->nb_dt_used != 0 && i < RMA_MAX_DT; i++) {
		struct rma_dt *d = &rc->dt[i];

		if (!d->used || target_wait_end(rc, now, d->deadline, d->src, d->src_epoch) == 0)
			continue;
		slot_free(rc, d);
		n++;
	}
	return n;
}

void
dt_cleanup(struct amrma_rma *rma, struct rma_ctx *rc)
{
	uint32_t i;

	RTE_SET_USED(rma);
	for (i = 0; i < RMA_MAX_DT; i++)
		if (rc->dt[i].used)
			slot_free(rc, &rc->dt[i]);
}

void
dt_register(struct amrma_node *node, struct amrma_rma *rma)
{
	amrma_am_register(node, AMRMA_RMA_H_DT_SETUP, setup_handler, rma);
	amrma_am_register(node, AMRMA_RMA_H_DT_PUT, put_handler, rma);
	amrma_am_register(node, AMRMA_RMA_H_DT_GET, get_handler, rma);
	amrma_am_register(node, AMRMA_RMA_H_DT_REPLY, reply_handler, rma);
	amrma_am_register(node, AMRMA_RMA_H_DT_SETUP_REPLY, setup_reply_handler, rma);
}
