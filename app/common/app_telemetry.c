/* SPDX-License-Identifier: BSD-3-Clause */
/* rte_telemetry commands: read with dpdk-telemetry.py (e.g. /amrma/stats). */
#include <assert.h>
#include <inttypes.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_telemetry.h>

#include "app.h"

/*
 * The commands run on DPDK's telemetry threads, which outlive the node (22.11 cannot
 * unregister a command): each reads the app under tel_lock, and app_telemetry_detach()
 * takes it to clear tel_app before anything is destroyed. The lcores need no lock: the
 * commands read what setup fixed (configuration, context array, region table) and counters,
 * never a list the lcores change.
 */
static pthread_mutex_t tel_lock = PTHREAD_MUTEX_INITIALIZER;
static struct app *tel_app;

typedef int (*tel_read_t)(struct app *a, const char *params, struct rte_tel_data *d);

static int
tel_locked(tel_read_t fn, const char *params, struct rte_tel_data *d)
{
	int ret = 0;

	rte_tel_data_start_dict(d);
	pthread_mutex_lock(&tel_lock);
	if (tel_app != NULL)
		ret = fn(tel_app, params, d);
	pthread_mutex_unlock(&tel_lock);
	return ret;
}

static void
add_stat(const char *name, uint64_t v, void *arg)
{
	rte_tel_data_add_dict_u64(arg, name, v);
}

static int
read_stats(struct app *a, const char *params, struct rte_tel_data *d)
{
	struct amrma_am_stats st;

	if (a->node == NULL)
		return 0;
	if (params != NULL && *params != '\0') {
		struct amrma_ctx *ctx = amrma_node_ctx(a->node, (uint16_t)strtoul(params, NULL, 0));

		if (ctx == NULL)
			return -EINVAL;
		amrma_ctx_stats_get(ctx, &st);
	} else {
		amrma_node_stats_get(a->node, &st);
	}
	amrma_am_stats_foreach(&st, add_stat, d);
	return 0;
}

static int
read_contexts(struct app *a, const char *params, struct rte_tel_data *d)
{
	uint16_t i;

	(void)params;
	if (a->node == NULL)
		return 0;
	rte_tel_data_add_dict_u64(d, "node_id", amrma_node_id(a->node));
	rte_tel_data_add_dict_u64(d, "contexts", amrma_node_nb_ctx(a->node));
	rte_tel_data_add_dict_u64(d, "port", a->port_id);
	rte_tel_data_add_dict_u64(d, "hw_steering", a->dev.hw_steering);
	rte_tel_data_add_dict_u64(d, "udp_csum", amrma_node_csum(a->node));
	for (i = 0; i < amrma_node_nb_ctx(a->node); i++) {
		char key[32];

		snprintf(key, sizeof(key), "ctx%u_outstanding", i);
		rte_tel_data_add_dict_u64(d, key,
			amrma_ctx_outstanding(amrma_node_ctx(a->node, i)));
	}
	return 0;
}

static int
read_peers(struct app *a, const char *params, struct rte_tel_data *d)
{
	unsigned int i;

	(void)params;
	for (i = 0; i < a->cfg.nb_peer; i++) {
		const struct app_peer *p = &a->cfg.peer[i];
		char key[32], val[64], mac[RTE_ETHER_ADDR_FMT_SIZE];
		const uint8_t *ip = (const uint8_t *)&p->ip;

		rte_ether_format_addr(mac, sizeof(mac), &p->mac);
		snprintf(key, sizeof(key), "node%u", p->id);
		snprintf(val, sizeof(val), "%s %u.%u.%u.%u ctx=%u", mac, ip[0], ip[1], ip[2],
			 ip[3], p->nb_ctx);
		rte_tel_data_add_dict_string(d, key, val);
	}
	return 0;
}

static int
read_regions(struct app *a, const char *params, struct rte_tel_data *d)
{
	struct amrma_region_stats rs;
	unsigned int i;

	(void)params;
	if (a->rma == NULL)
		return 0;
	for (i = 0; i < a->nb_regions; i++) {
		const struct app_region *r = &a->cfg.region[i];
		char key[48], val[96];

		/* keys are secrets: telemetry shows that a region exists, not its key */
		snprintf(key, sizeof(key), "region%u", i);
		snprintf(val, sizeof(val), "%s %" PRIu64 " bytes %s%s", r->name, r->size,
			 r->perm & AMRMA_REGION_READ ? "r" : "",
			 r->perm & AMRMA_REGION_WRITE ? "w" : "");
		rte_tel_data_add_dict_string(d, key, val);
	}
	amrma_region_stats_get(amrma_rma_regions(a->rma), &rs);
	rte_tel_data_add_dict_u64(d, "lookups", rs.lookups);
	rte_tel_data_add_dict_u64(d, "bad_key", rs.bad_key);
	rte_tel_data_add_dict_u64(d, "out_of_range", rs.out_of_range);
	rte_tel_data_add_dict_u64(d, "wrap", rs.wrap);
	rte_tel_data_add_dict_u64(d, "denied", rs.perm_denied);
	return 0;
}

struct tel_field {
	const char *name;
	size_t off;
};

/* every counter of struct amrma_rma_stats, by name (checked to be all of them below) */
#define RMA_FIELD(x) { #x, offsetof(struct amrma_rma_stats, x) }
static const struct tel_field rma_fields[] = {
	RMA_FIELD(puts), RMA_FIELD(gets), RMA_FIELD(put_bytes), RMA_FIELD(get_bytes),
	RMA_FIELD(chunks), RMA_FIELD(zero_copy_chunks), RMA_FIELD(rndv_ops),
	RMA_FIELD(op_errors), RMA_FIELD(served_put_bytes), RMA_FIELD(served_get_bytes),
	RMA_FIELD(access_errors), RMA_FIELD(bad_replies), RMA_FIELD(queue_full),
	RMA_FIELD(tag_retries), RMA_FIELD(rndv_timeouts), RMA_FIELD(dt_ops),
	RMA_FIELD(dt_rejected), RMA_FIELD(completions_sent), RMA_FIELD(completion_full),
	RMA_FIELD(completion_drops), RMA_FIELD(stale_requests), RMA_FIELD(rndv_cancelled),
};
#undef RMA_FIELD
static_assert(RTE_DIM(rma_fields) == sizeof(struct amrma_rma_stats) / sizeof(uint64_t),
	      "a counter of struct amrma_rma_stats is missing from rma_fields");

/* the same for struct amrma_reflect_stats */
#define RF_FIELD(x) { #x, offsetof(struct amrma_reflect_stats, x) }
static const struct tel_field reflect_fields[] = {
	RF_FIELD(injected), RF_FIELD(inject_full), RF_FIELD(data_started),
	RF_FIELD(data_errors), RF_FIELD(reflects_sent), RF_FIELD(reflect_refused),
	RF_FIELD(cn_injected), RF_FIELD(cn_full), RF_FIELD(notifies_sent),
	RF_FIELD(notify_failed), RF_FIELD(completions), RF_FIELD(words), RF_FIELD(rx_full),
	RF_FIELD(word_refused), RF_FIELD(bad_requests), RF_FIELD(stripes_sent),
	RF_FIELD(stripes_failed), RF_FIELD(stripe_recvs), RF_FIELD(stripe_refused),
	RF_FIELD(stripe_parts), RF_FIELD(stripe_stale), RF_FIELD(stripe_read_wait),
};
#undef RF_FIELD
static_assert(RTE_DIM(reflect_fields) ==
	      sizeof(struct amrma_reflect_stats) / sizeof(uint64_t),
	      "a counter of struct amrma_reflect_stats is missing from reflect_fields");

/* Add to sum[] the counters (a struct of uint64_t) at st, by fields. */
static void
add_fields(uint64_t *sum, const void *st, const struct tel_field *f, size_t n)
{
	size_t k;

	for (k = 0; k < n; k++)
		sum[k] += *(const uint64_t *)((const uint8_t *)st + f[k].off);
}

static void
put_fields(struct rte_tel_data *d, const uint64_t *sum, const struct tel_field *f, size_t n)
{
	size_t k;

	for (k = 0; k < n; k++)
		rte_tel_data_add_dict_u64(d, f[k].name, sum[k]);
}

static int
read_rma(struct app *a, const char *params, struct rte_tel_data *d)
{
	struct amrma_rma_stats st;
	uint64_t sum[RTE_DIM(rma_fields)] = { 0 };
	uint16_t i;

	(void)params;
	if (a->node == NULL)
		return 0;
	for (i = 0; i < amrma_node_nb_ctx(a->node); i++) {
		amrma_rma_stats_get(amrma_node_ctx(a->node, i), &st);
		add_fields(sum, &st, rma_fields, RTE_DIM(rma_fields));
	}
	put_fields(d, sum, rma_fields, RTE_DIM(rma_fields));
	return 0;
}

static int
read_reflect(struct app *a, const char *params, struct rte_tel_data *d)
{
	struct amrma_reflect_stats st;
	uint64_t sum[RTE_DIM(reflect_fields)] = { 0 };
	uint16_t i;

	(void)params;
	if (a->node == NULL || a->reflect == NULL)
		return 0;
	for (i = 0; i < amrma_node_nb_ctx(a->node); i++) {
		amrma_reflect_stats_get(a->reflect, i, &st);
		add_fields(sum, &st, reflect_fields, RTE_DIM(reflect_fields));
	}
	put_fields(d, sum, reflect_fields, RTE_DIM(reflect_fields));
	return 0;
}

static const struct {
	const char *cmd;
	tel_read_t read;
	const char *help;
} tel_cmds[] = {
	{ "/amrma/stats", read_stats,
	  "amrma AM counters, summed over contexts. Parameters: int context (optional)" },
	{ "/amrma/contexts", read_contexts,
	  "amrma node: contexts, port, steering, outstanding operations" },
	{ "/amrma/peers", read_peers, "amrma peers" },
	{ "/amrma/regions", read_regions, "amrma exposed regions (no keys) and access checks" },
	{ "/amrma/rma", read_rma, "amrma RMA counters" },
	{ "/amrma/reflect", read_reflect,
	  "amrma injection FIFOs and completion by reflection: counters" },
};

/* every command: its reader, under tel_lock */
static int
tel_cmd(const char *cmd, const char *params, struct rte_tel_data *d)
{
	unsigned int i;

	for (i = 0; i < RTE_DIM(tel_cmds); i++)
		if (strcmp(cmd, tel_cmds[i].cmd) == 0)
			return tel_locked(tel_cmds[i].read, params, d);
	return -EINVAL;
}

int
app_telemetry_init(struct app *a)
{
	unsigned int i;
	int ret = 0;

	pthread_mutex_lock(&tel_lock);
	tel_app = a;
	pthread_mutex_unlock(&tel_lock);
	for (i = 0; i < RTE_DIM(tel_cmds); i++)
		ret |= rte_telemetry_register_cmd(tel_cmds[i].cmd, tel_cmd, tel_cmds[i].help);
	return ret;
}

void
app_telemetry_detach(void)
{
	pthread_mutex_lock(&tel_lock);
	tel_app = NULL;
	pthread_mutex_unlock(&tel_lock);
}
