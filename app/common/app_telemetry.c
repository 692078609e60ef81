/* SPDX-License-Identifier: BSD-3-Clause */
/* rte_telemetry commands: read with dpdk-telemetry.py (e.g. /amrma/stats). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_telemetry.h>

#include "app.h"

static struct app *tel_app;

static void
add_stat(const char *name, uint64_t v, void *arg)
{
	rte_tel_data_add_dict_u64(arg, name, v);
}

static int
tel_stats(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct amrma_am_stats st;

	(void)cmd;
	rte_tel_data_start_dict(d);
	if (tel_app == NULL || tel_app->node == NULL)
		return 0;
	if (params != NULL && *params != '\0') {
		struct amrma_ctx *ctx = amrma_node_ctx(tel_app->node,
						       (uint16_t)strtoul(params, NULL, 0));

		if (ctx == NULL)
			return -EINVAL;
		amrma_ctx_stats_get(ctx, &st);
	} else {
		amrma_node_stats_get(tel_app->node, &st);
	}
	amrma_am_stats_foreach(&st, add_stat, d);
	return 0;
}

static int
tel_contexts(const char *cmd, const char *params, struct rte_tel_data *d)
{
	uint16_t i;

	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	if (tel_app == NULL || tel_app->node == NULL)
		return 0;
	rte_tel_data_add_dict_u64(d, "node_id", amrma_node_id(tel_app->node));
	rte_tel_data_add_dict_u64(d, "contexts", amrma_node_nb_ctx(tel_app->node));
	rte_tel_data_add_dict_u64(d, "port", tel_app->port_id);
	rte_tel_data_add_dict_u64(d, "hw_steering", tel_app->dev.hw_steering);
	for (i = 0; i < amrma_node_nb_ctx(tel_app->node); i++) {
		char key[32];

		snprintf(key, sizeof(key), "ctx%u_outstanding", i);
		rte_tel_data_add_dict_u64(d, key,
			amrma_ctx_outstanding(amrma_node_ctx(tel_app->node, i)));
	}
	return 0;
}

static int
tel_peers(const char *cmd, const char *params, struct rte_tel_data *d)
{
	unsigned int i;

	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	if (tel_app == NULL)
		return 0;
	for (i = 0; i < tel_app->cfg.nb_peer; i++) {
		const struct app_peer *p = &tel_app->cfg.peer[i];
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

int
app_telemetry_init(struct app *a)
{
	int ret;

	tel_app = a;
	ret = rte_telemetry_register_cmd("/amrma/stats", tel_stats,
		"amrma AM counters, summed over contexts. Parameters: int context (optional)");
	ret |= rte_telemetry_register_cmd("/amrma/contexts", tel_contexts,
		"amrma node: contexts, port, steering, outstanding operations");
	ret |= rte_telemetry_register_cmd("/amrma/peers", tel_peers, "amrma peers");
	return ret;
}
