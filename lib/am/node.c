/* SPDX-License-Identifier: BSD-3-Clause */
/* Nodes, contexts, peers and the handler table. */

#include <stdio.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_service_component.h>
#include <rte_mbuf.h>

#include "am_priv.h"

RTE_LOG_REGISTER(amrma_am_logtype, lib.amrma.am, NOTICE);

void
amrma_node_conf_defaults(struct amrma_node_conf *c)
{
	memset(c, 0, sizeof(*c));
	c->max_nodes = 64;
	c->nb_ctx = 1;
	c->udp_base = 7000;
	c->nb_mbufs = 8191;
	c->window = 64;
	c->max_ops = 1024;
	c->rto_us = 2000;
	c->rto_max_us = 64000;
	c->max_retries = 8;
	c->ack_delay_us = 20;
	c->ack_every = 16;
	c->csum = AMRMA_CSUM_AUTO;
	c->coalesce_frame = RTE_ETHER_MAX_LEN - RTE_ETHER_CRC_LEN;
	c->tx_inline_max = TX_INLINE_MAX;
}

static uint64_t
us_to_tsc(uint64_t hz, uint64_t us)
{
	return hz / 1000000 * us + (hz % 1000000) * us / 1000000;
}

/* Wall-clock milliseconds: a restarted node gets a larger epoch (serial arithmetic). */
static uint32_t
new_epoch(void)
{
	static uint32_t last;
	struct timespec ts;
	uint32_t e;

	clock_gettime(CLOCK_REALTIME, &ts);
	e = (uint32_t)((uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000);
	/* several nodes created in one process within a millisecond stay distinct */
	if ((int32_t)(e - last) <= 0)
		e = last + 1;
	if (e == 0)
		e = 1;
	last = e;
	return e;
}

static int
ctx_init(struct amrma_node *node, uint16_t i)
{
	const struct amrma_node_conf *c = &node->conf;
	struct amrma_ctx *ctx = &node->ctx[i];
	int socket = node->dev->socket_id;
	char name[RTE_RING_NAMESIZE];
	uint32_t k;

	ctx->node = node;
	ctx->dev = node->dev;
	ctx->pool = node->pool;
	ctx->idx = i;
	ctx->max_ops = c->max_ops;
	ctx->now = rte_rdtsc();
	ctx->by_node = rte_zmalloc_socket(NULL, sizeof(*ctx->by_node) * c->max_nodes, 0, socket);
	ctx->peer_nb_ctx = rte_zmalloc_socket(NULL, c->max_nodes, 0, socket);
	ctx->ops = rte_zmalloc_socket(NULL, sizeof(*ctx->ops) * c->max_ops, 0, socket);
	ctx->op_free = rte_malloc_socket(NULL, sizeof(*ctx->op_free) * c->max_ops, 0, socket);
	snprintf(name, sizeof(name), "amrma_st_%u_%u_%p", c->node_id, i, (void *)ctx);
	ctx->steer = rte_ring_create(name, 1024, socket, RING_F_SC_DEQ);
	if (!ctx->by_node || !ctx->peer_nb_ctx || !ctx->ops || !ctx->op_free || !ctx->steer)
		return -ENOMEM;
	for (k = 0; k < c->max_ops; k++)
		ctx->op_free[k] = c->max_ops - 1 - k;
	ctx->nb_op_free = c->max_ops;

	ctx->rxp.mac = node->dev->mac;
	ctx->rxp.node_id = c->node_id;
	ctx->rxp.udp_base = c->udp_base;
	ctx->rxp.nb_ctx = (uint8_t)c->nb_ctx;
	ctx->rxp.require_csum = node->csum;
	ctx->rxp_nocsum = ctx->rxp;
	ctx->rxp_nocsum.skip_csum = true;
	/* a trusted link gains nothing from verifying the IP header checksum either */
	if (!node->csum)
		ctx->rxp.skip_csum = true;
	return 0;
}

static void
ctx_fini(struct amrma_ctx *ctx)
{
	struct rte_mbuf *m;
	uint32_t i;

	if (ctx->node == NULL)
		return;
	for (i = 0; i < ctx->nb_chan; i++)
		chan_fail(ctx, ctx->all[i], -ECANCELED);
	ctx_tx_flush(ctx);
	rte_pktmbuf_free_bulk(ctx->tx, ctx->nb_tx);	/* what the port never took */
	ctx->nb_tx = 0;
	rte_pktmbuf_free_bulk(ctx->reply_spare, ctx->nb_reply_spare);
	ctx->nb_reply_spare = 0;
	ctx->tx_pend_bytes = 0;
	while (ctx->steer != NULL && rte_ring_dequeue(ctx->steer, (void **)&m) == 0)
		rte_pktmbuf_free(m);
	rte_ring_free(ctx->steer);
	for (i = 0; ctx->by_node != NULL && i < ctx->node->conf.max_nodes; i++)
		rte_free(ctx->by_node[i]);
	rte_free(ctx->by_node);
	rte_free(ctx->peer_nb_ctx);
	rte_free(ctx->all);
	rte_free(ctx->ack_list);
	rte_free(ctx->open_list);
	rte_free(ctx->ops);
	rte_free(ctx->op_free);
}

int
amrma_node_create(const struct amrma_node_conf *c, struct amrma_node **out)
{
	struct amrma_node *node;
	uint32_t data_room;
	uint16_t i;
	int ret;

	if (c == NULL || out == NULL || c->dev == NULL || c->nb_ctx == 0 ||
	    c->nb_ctx > c->dev->nb_queues || c->nb_ctx > AMRMA_WIRE_MAX_CTX ||
	    c->node_id >= c->max_nodes ||
	    c->window == 0 || c->window > RCV_WIN || c->max_ops == 0 ||
	    c->rto_us == 0 || c->rto_max_us < c->rto_us ||
	    c->ack_every == 0 || (unsigned int)c->csum > AMRMA_CSUM_OFF ||
	    c->tx_inline_max > TX_INLINE_MAX)
		return -EINVAL;
	node = rte_zmalloc_socket("amrma_node", sizeof(*node), RTE_CACHE_LINE_SIZE,
				  c->dev->socket_id);
	if (node == NULL)
		return -ENOMEM;
	node->conf = *c;
	node->dev = c->dev;
	node->handlers[AMRMA_AM_H_LEAVE].fn = leave_handler;
	node->epoch = new_epoch();
	node->csum = c->csum == AMRMA_CSUM_ON ||
		     (c->csum == AMRMA_CSUM_AUTO && !c->dev->memory_link);
	node->hz = rte_get_tsc_hz();
	node->rto_tsc = us_to_tsc(node->hz, c->rto_us);
	node->rto_max_tsc = us_to_tsc(node->hz, c->rto_max_us);
	node->ack_delay_tsc = us_to_tsc(node->hz, c->ack_delay_us);
	/* a silent peer is dead after as long as the whole retransmit budget */
	node->dead_tsc = node->rto_max_tsc * (c->max_retries + 1);
	node->tick_tsc = RTE_MAX(node->rto_tsc / 8, node->ack_delay_tsc / 2);
	node->pool = c->pool;
	data_room = RTE_PKTMBUF_HEADROOM + RTE_ETHER_HDR_LEN + c->dev->mtu;
	if (node->pool == NULL) {
		char name[RTE_MEMPOOL_NAMESIZE];

		snprintf(name, sizeof(name), "amrma_tx_%u_%p", c->node_id, (void *)node);
		node->pool = rte_pktmbuf_pool_create(name, c->nb_mbufs, 256, 0,
						     (uint16_t)data_room, c->dev->socket_id);
		if (node->pool == NULL) {
			ret = -rte_errno;
			goto fail;
		}
		node->own_pool = true;
	}
	data_room = rte_pktmbuf_data_room_size(node->pool) - RTE_PKTMBUF_HEADROOM;
	data_room = RTE_MIN(data_room, (uint32_t)c->dev->mtu + RTE_ETHER_HDR_LEN);
	if (data_room < AMRMA_WIRE_HDR_LEN + 8 * AMRMA_WIRE_MAX_ARGS) {
		ret = -EINVAL;
		goto fail;
	}
	node->max_payload = (uint16_t)RTE_MIN(data_room - AMRMA_WIRE_HDR_LEN,
					      (uint32_t)AMRMA_WIRE_MAX_PAYLOAD);
	node->coalesce_max = (uint16_t)RTE_MIN((uint32_t)c->coalesce_frame, data_room);
	node->ctx = rte_zmalloc_socket(NULL, sizeof(*node->ctx) * c->nb_ctx,
				       RTE_CACHE_LINE_SIZE, c->dev->socket_id);
	node->peer_life = rte_zmalloc_socket(NULL, sizeof(*node->peer_life) * c->max_nodes,
					     RTE_CACHE_LINE_SIZE, c->dev->socket_id);
	if (node->ctx == NULL || node->peer_life == NULL) {
		ret = -ENOMEM;
		goto fail;
	}
	for (i = 0; i < c->nb_ctx; i++) {
		ret = ctx_init(node, i);
		if (ret != 0)
			goto fail;
	}
	*out = node;
	return 0;
fail:
	amrma_node_destroy(node);
	return ret;
}

void
amrma_node_destroy(struct amrma_node *node)
{
	uint16_t i;

	if (node == NULL)
		return;
	if (node->has_service) {
		rte_service_runstate_set(node->service_id, 0);
		rte_service_component_runstate_set(node->service_id, 0);
		/* an iteration under way on a service lcore still uses the node */
		while (rte_service_may_be_active(node->service_id) == 1)
			rte_pause();
		rte_service_component_unregister(node->service_id);
	}
	for (i = 0; node->ctx != NULL && i < node->conf.nb_ctx; i++)
		ctx_fini(&node->ctx[i]);
	rte_free(node->ctx);
	rte_free(node->peer_life);
	if (node->own_pool)
		rte_mempool_free(node->pool);
	rte_free(node);
}

/*
 * ctx's channels to a new peer, not yet linked in; NULL with *err on failure, leaving ctx
 * as it was (its channel lists may have grown, their contents kept).
 */
static struct channel *
ctx_peer_channels(struct amrma_ctx *ctx, uint16_t id, const struct rte_ether_addr *mac,
		  rte_be32_t ip, uint16_t nb_ctx, int *err)
{
	struct amrma_node *node = ctx->node;
	int socket = node->dev->socket_id;
	uint32_t n = ctx->nb_chan + nb_ctx;
	struct channel *arr, **all, **acks, **open;
	uint16_t k;

	*err = -ENOMEM;
	arr = rte_zmalloc_socket(NULL, sizeof(*arr) * nb_ctx, RTE_CACHE_LINE_SIZE, socket);
	all = rte_realloc_socket(ctx->all, sizeof(*all) * n, 0, socket);
	if (all != NULL)
		ctx->all = all;
	acks = rte_realloc_socket(ctx->ack_list, sizeof(*acks) * n, 0, socket);
	if (acks != NULL)
		ctx->ack_list = acks;
	open = rte_realloc_socket(ctx->open_list, sizeof(*open) * n, 0, socket);
	if (open != NULL)
		ctx->open_list = open;
	if (arr == NULL || all == NULL || acks == NULL || open == NULL) {
		rte_free(arr);
		return NULL;
	}
	for (k = 0; k < nb_ctx; k++) {
		struct channel *ch = &arr[k];
		struct amrma_wire_fields f = {
			.src_ctx = (uint8_t)ctx->idx, .dst_ctx = (uint8_t)k,
			.src_node = node->conf.node_id, .dst_node = id,
			.src_epoch = node->epoch,
		};

		ch->peer_node = id;
		ch->peer_ctx = (uint8_t)k;
		ch->rto = node->rto_tsc;
		ch->addr.src_mac = node->dev->mac;
		ch->addr.dst_mac = *mac;
		ch->addr.src_ip = node->conf.ip;
		ch->addr.dst_ip = ip;
		ch->addr.udp_base = node->conf.udp_base;
		if (amrma_wire_tmpl_init(&ch->tmpl, &ch->addr, &f) != 0) {
			rte_free(arr);
			*err = -EINVAL;
			return NULL;
		}
	}
	*err = 0;
	return arr;
}

int
amrma_node_add_peer(struct amrma_node *node, uint16_t id, const struct rte_ether_addr *mac,
		    rte_be32_t ip, uint16_t nb_ctx)
{
	struct channel **arr;
	uint16_t i, k;
	int ret = 0;

	if (node == NULL || mac == NULL || id >= node->conf.max_nodes ||
	    id == node->conf.node_id || nb_ctx == 0 || nb_ctx > AMRMA_WIRE_MAX_CTX)
		return -EINVAL;
	if (node->ctx[0].by_node[id] != NULL)
		return -EEXIST;
	arr = calloc(node->conf.nb_ctx, sizeof(*arr));
	if (arr == NULL)
		return -ENOMEM;
	/* every context's channels first: a failure leaves the node without the peer */
	for (i = 0; i < node->conf.nb_ctx && ret == 0; i++)
		arr[i] = ctx_peer_channels(&node->ctx[i], id, mac, ip, nb_ctx, &ret);
	for (i = 0; i < node->conf.nb_ctx; i++) {
		struct amrma_ctx *ctx = &node->ctx[i];

		if (ret != 0) {
			rte_free(arr[i]);
			continue;
		}
		for (k = 0; k < nb_ctx; k++)
			ctx->all[ctx->nb_chan++] = &arr[i][k];
		ctx->by_node[id] = arr[i];
		ctx->peer_nb_ctx[id] = (uint8_t)nb_ctx;
	}
	free(arr);
	return ret;
}

int
amrma_am_register(struct amrma_node *node, uint16_t index, amrma_am_handler_t fn, void *arg)
{
	if (node == NULL || index >= AMRMA_WIRE_MAX_HANDLERS || index == AMRMA_AM_H_LEAVE)
		return -EINVAL;
	node->handlers[index].arg = arg;
	node->handlers[index].fn = fn;
	return 0;
}

struct amrma_ctx *
amrma_node_ctx(struct amrma_node *node, uint16_t i)
{
	return (node != NULL && i < node->conf.nb_ctx) ? &node->ctx[i] : NULL;
}

bool
amrma_node_csum(const struct amrma_node *node)
{
	return node->csum;
}

uint16_t
amrma_node_nb_ctx(const struct amrma_node *node)
{
	return node->conf.nb_ctx;
}

uint16_t
amrma_node_id(const struct amrma_node *node)
{
	return node->conf.node_id;
}

uint32_t
amrma_node_epoch(const struct amrma_node *node)
{
	return node->epoch;
}

struct amrma_node *
amrma_ctx_node(struct amrma_ctx *ctx)
{
	return ctx->node;
}

uint16_t
amrma_ctx_index(const struct amrma_ctx *ctx)
{
	return ctx->idx;
}

unsigned int
amrma_ctx_outstanding(const struct amrma_ctx *ctx)
{
	return ctx->max_ops - ctx->nb_op_free;
}
