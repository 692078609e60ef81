/* SPDX-License-Identifier: BSD-3-Clause */
/* Configuration of the amrma applications: an INI file (rte_cfgfile) plus options. */
#ifndef AMRMA_APP_CONFIG_H
#define AMRMA_APP_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>

#include "amrma_am.h"
#include "amrma_rma.h"

#define APP_MAX_PEERS 16
#define APP_MAX_LCORES 64

enum app_role { ROLE_TARGET, ROLE_INITIATOR, ROLE_ECHO, ROLE_RMA, APP_NB_ROLES };

/** "target", "initiator", ... by enum app_role. */
extern const char *const app_role_names[APP_NB_ROLES];

#define APP_MAX_REGIONS 8
#define APP_MAX_SIZES 16

struct app_region {
	char name[32];
	uint64_t size;
	uint32_t perm;			/* AMRMA_REGION_READ | AMRMA_REGION_WRITE */
};
enum app_layout { LAYOUT_COMPACT, LAYOUT_PRODUCTION };

struct app_peer {
	uint16_t id;
	struct rte_ether_addr mac;
	rte_be32_t ip;
	uint16_t nb_ctx;
};

struct app_config {
	char path[256];
	/* [node] */
	char port[64];			/* ethdev name (e.g. net_memif0) or port id */
	struct amrma_node_conf node;	/* dev, pool filled at setup */
	uint16_t mtu;
	enum app_layout layout;
	unsigned int ctx_lcore[AMRMA_WIRE_MAX_CTX];	/* production: lcore per context */
	unsigned int nb_ctx_lcore;
	uint32_t idle_spin;		/* empty polls before yielding; 0 = never */
	uint32_t idle_sleep_us;
	/* [peer.N] */
	struct app_peer peer[APP_MAX_PEERS];
	unsigned int nb_peer;
	/* [region.NAME] */
	struct app_region region[APP_MAX_REGIONS];
	unsigned int nb_region;
	/* [rma]: the lcore polling rma.progress_ctx also runs the progress engine */
	struct amrma_rma_conf rma;
	/* [workload] */
	uint64_t sizes[APP_MAX_SIZES];	/* rma: operation sizes */
	unsigned int nb_sizes;
	enum app_role role;
	uint16_t target;		/* peer node the initiator drives */
	uint8_t target_ctx;
	uint8_t target_region;		/* rma: index of the target's region it uses */
	uint64_t count;
	uint32_t window;
	uint32_t size;
	double duration_s;		/* target/echo: exit after this long; 0 = until signal */
	double progress_s;		/* initiator: progress line period; 0 = none */
	bool json;
};

/** Index of v in names[0..n) (NULL entries skipped), or -1. */
int app_name_index(const char *v, const char *const *names, unsigned int n);

/** "auto", "on" or "off" to an amrma_csum; -EINVAL otherwise. */
int app_csum_parse(const char *v, enum amrma_csum *out);

/**
 * One number (decimal, 0x hexadecimal or 0 octal) in [min, max]. 0, -EINVAL (not a
 * number, or negative) or -ERANGE.
 */
int app_parse_u64(const char *v, uint64_t min, uint64_t max, uint64_t *out);

/**
 * In a getopt loop: the option's argument as a number in [min, max] (app_parse_u64)
 * stored in dst, or a jump to fail.
 */
#define APP_OPT_NUM(min, max, dst, fail) do {					\
	uint64_t v_;								\
	if (app_parse_u64(optarg, min, max, &v_) != 0)				\
		goto fail;							\
	(dst) = (__typeof__(dst))v_;						\
} while (0)

/** A non-negative number of seconds (strtod syntax): 0 or -EINVAL. */
int app_parse_seconds(const char *v, double *out);

/**
 * A list of decimal numbers separated by commas or spaces, each at most max; with
 * suffixes, a K or M after a number multiplies it by 2^10 or 2^20. Returns how many
 * (1 to cap) were stored in out, or -EINVAL (empty, malformed, too many, too large).
 */
int app_parse_list(const char *v, uint64_t *out, unsigned int cap, uint64_t max,
		   bool suffixes);

/** Defaults, then the file (if path non-empty); errors name file, line, key and reason. */
int app_config_load(struct app_config *cfg, const char *path, char *err, size_t errlen);

/** Parse "--key value" options after the EAL ones; they override the file. */
int app_config_args(struct app_config *cfg, int argc, char **argv, char *err, size_t errlen);

/** Usage text for the options. */
void app_config_usage(const char *prog);

#endif
