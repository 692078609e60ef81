/* SPDX-License-Identifier: BSD-3-Clause */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cfgfile.h>

#include "amrma_region.h"
#include "app_config.h"

const char *const app_role_names[APP_NB_ROLES] = {
	[ROLE_TARGET] = "target", [ROLE_INITIATOR] = "initiator", [ROLE_ECHO] = "echo",
	[ROLE_RMA] = "rma",
};

int
app_name_index(const char *v, const char *const *names, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (names[i] != NULL && strcmp(v, names[i]) == 0)
			return (int)i;
	return -1;
}

int
app_csum_parse(const char *v, enum amrma_csum *out)
{
	static const char *const names[] = {
		[AMRMA_CSUM_AUTO] = "auto", [AMRMA_CSUM_ON] = "on", [AMRMA_CSUM_OFF] = "off",
	};
	int i = app_name_index(v, names, RTE_DIM(names));

	if (i < 0)
		return -EINVAL;
	*out = (enum amrma_csum)i;
	return 0;
}

/* rte_cfgfile keeps no line numbers: find the key's line ourselves for messages. */
static int
line_of(const char *path, const char *section, const char *key)
{
	char line[512], sec[128] = "";
	int n = 0, found = 0;
	FILE *f = fopen(path, "r");

	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL) {
		char *p = line;

		n++;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '[') {
			char *e = strchr(p, ']');

			if (e != NULL) {
				*e = '\0';
				snprintf(sec, sizeof(sec), "%s", p + 1);
			}
			if (key == NULL && strcmp(sec, section) == 0) {
				found = n;
				break;
			}
		} else if (key != NULL && strcmp(sec, section) == 0 &&
			   strncmp(p, key, strlen(key)) == 0 &&
			   (p[strlen(key)] == ' ' || p[strlen(key)] == '=' ||
			    p[strlen(key)] == '\t')) {
			found = n;
			break;
		}
	}
	fclose(f);
	return found;
}

struct ctx_err {
	const char *path;
	char *buf;
	size_t len;
};

static int
bad(struct ctx_err *e, const char *section, const char *key, const char *val,
    const char *why)
{
	snprintf(e->buf, e->len, "%s:%d: [%s] %s = '%s': %s", e->path,
		 line_of(e->path, section, key), section, key, val, why);
	return -EINVAL;
}

int
app_parse_u64(const char *v, uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned long long x;
	char *end;

	errno = 0;
	x = strtoull(v, &end, 0);
	if (errno != 0 || end == v || *end != '\0' || strchr(v, '-') != NULL)
		return -EINVAL;
	if (x < min || x > max)
		return -ERANGE;
	*out = x;
	return 0;
}

int
app_parse_seconds(const char *v, double *out)
{
	char *end;
	double x;

	errno = 0;
	x = strtod(v, &end);
	if (errno != 0 || end == v || *end != '\0' || !(x >= 0 && x < 1e9))
		return -EINVAL;
	*out = x;
	return 0;
}

static int
get_u64(struct rte_cfgfile *c, struct ctx_err *e, const char *s, const char *k,
	uint64_t min, uint64_t max, uint64_t *out)
{
	const char *v = rte_cfgfile_get_entry(c, s, k);
	char why[96];
	int ret;

	if (v == NULL)
		return 0;
	ret = app_parse_u64(v, min, max, out);
	if (ret == -EINVAL)
		return bad(e, s, k, v, "not a number");
	if (ret != 0) {
		snprintf(why, sizeof(why), "out of range [%llu, %llu]",
			 (unsigned long long)min, (unsigned long long)max);
		return bad(e, s, k, v, why);
	}
	return 0;
}

/* on error: to the cleanup at `out` with ret set (the file and the names get freed) */
#define GET(c, e, s, k, min, max, dst) do {					\
	uint64_t v_ = (dst);							\
	ret = get_u64(c, e, s, k, min, max, &v_);				\
	if (ret != 0)								\
		goto out;							\
	(dst) = (__typeof__(dst))v_;						\
} while (0)

static int
get_ip(struct rte_cfgfile *c, struct ctx_err *e, const char *s, const char *k,
       rte_be32_t *out, bool required)
{
	const char *v = rte_cfgfile_get_entry(c, s, k);
	struct in_addr a;

	if (v == NULL)
		return required ? bad(e, s, k, "", "missing") : 0;
	if (inet_pton(AF_INET, v, &a) != 1)
		return bad(e, s, k, v, "not an IPv4 address");
	*out = a.s_addr;
	return 0;
}

static int
get_mac(struct rte_cfgfile *c, struct ctx_err *e, const char *s, const char *k,
	struct rte_ether_addr *out)
{
	const char *v = rte_cfgfile_get_entry(c, s, k);

	if (v == NULL)
		return bad(e, s, k, "", "missing");
	if (rte_ether_unformat_addr(v, out) != 0)
		return bad(e, s, k, v, "not a MAC address (xx:xx:xx:xx:xx:xx)");
	return 0;
}

static int
parse_role(const char *v, enum app_role *r)
{
	int i = app_name_index(v, app_role_names, APP_NB_ROLES);

	if (i < 0)
		return -EINVAL;
	*r = (enum app_role)i;
	return 0;
}

int
app_parse_list(const char *v, uint64_t *out, unsigned int cap, uint64_t max, bool suffixes)
{
	char buf[256], *tok, *save = NULL;
	unsigned int n = 0;

	if (strlen(v) >= sizeof(buf))
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%s", v);
	for (tok = strtok_r(buf, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
		char *end;
		unsigned long long x;

		errno = 0;
		x = strtoull(tok, &end, 10);
		if (end == tok || strchr(tok, '-') != NULL || errno != 0)
			return -EINVAL;
		if (suffixes && (*end == 'K' || *end == 'k') && x <= max >> 10)
			x <<= 10, end++;
		else if (suffixes && (*end == 'M' || *end == 'm') && x <= max >> 20)
			x <<= 20, end++;
		if (*end != '\0' || x > max || n == cap)
			return -EINVAL;
		out[n++] = x;
	}
	return n != 0 ? (int)n : -EINVAL;
}

static int
parse_lcores(const char *v, struct app_config *cfg)
{
	uint64_t lc[AMRMA_WIRE_MAX_CTX];
	int i, n = app_parse_list(v, lc, RTE_DIM(lc), APP_MAX_LCORES - 1, false);

	if (n < 0)
		return n;
	for (i = 0; i < n; i++)
		cfg->ctx_lcore[i] = (unsigned int)lc[i];
	cfg->nb_ctx_lcore = (unsigned int)n;
	return 0;
}

static int
parse_sizes(const char *v, struct app_config *cfg)
{
	int n = app_parse_list(v, cfg->sizes, APP_MAX_SIZES, UINT64_C(1) << 32, true);

	if (n < 0)
		return n;
	cfg->nb_sizes = (unsigned int)n;
	return 0;
}

static void
defaults(struct app_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	amrma_node_conf_defaults(&cfg->node);
	snprintf(cfg->port, sizeof(cfg->port), "0");
	cfg->mtu = 1500;
	cfg->layout = LAYOUT_COMPACT;
	cfg->idle_spin = 0;
	cfg->idle_sleep_us = 50;
	cfg->role = ROLE_TARGET;
	cfg->count = 100000;
	cfg->window = 32;
	cfg->size = 64;
	cfg->target = 1;
	amrma_rma_conf_defaults(&cfg->rma);
	parse_sizes("1,7,1400,1401,65536,1048576,4194304", cfg);
}

int
app_config_load(struct app_config *cfg, const char *path, char *err, size_t errlen)
{
	struct ctx_err e = { .path = path, .buf = err, .len = errlen };
	struct rte_cfgfile *c;
	const char *v;
	int nsec, i, ret = 0;
	char **names = NULL;

	defaults(cfg);
	if (path == NULL || path[0] == '\0')
		return 0;
	snprintf(cfg->path, sizeof(cfg->path), "%s", path);
	c = rte_cfgfile_load(path, 0);
	if (c == NULL) {
		snprintf(err, errlen, "%s: cannot read or parse (missing file, or a line that is "
			 "neither [section] nor key = value)", path);
		return -EINVAL;
	}
#define CHECK(x) do { ret = (x); if (ret != 0) goto out; } while (0)
	if (!rte_cfgfile_has_section(c, "node")) {
		snprintf(err, errlen, "%s: missing [node] section", path);
		ret = -EINVAL;
		goto out;
	}
	v = rte_cfgfile_get_entry(c, "node", "port");
	if (v != NULL)
		snprintf(cfg->port, sizeof(cfg->port), "%s", v);
	GET(c, &e, "node", "id", 0, cfg->node.max_nodes - 1, cfg->node.node_id);
	CHECK(get_ip(c, &e, "node", "ip", &cfg->node.ip, true));
	GET(c, &e, "node", "udp_base", 1, 65535 - AMRMA_WIRE_MAX_CTX, cfg->node.udp_base);
	GET(c, &e, "node", "contexts", 1, AMRMA_WIRE_MAX_CTX, cfg->node.nb_ctx);
	GET(c, &e, "node", "mtu", 576, 9000, cfg->mtu);
	GET(c, &e, "node", "mbufs", 1023, 1u << 22, cfg->node.nb_mbufs);
	GET(c, &e, "node", "idle_spin", 0, UINT32_MAX, cfg->idle_spin);
	GET(c, &e, "node", "idle_sleep_us", 0, 1000000, cfg->idle_sleep_us);
	v = rte_cfgfile_get_entry(c, "node", "layout");
	if (v != NULL) {
		static const char *const layouts[] = {
			[LAYOUT_COMPACT] = "compact", [LAYOUT_PRODUCTION] = "production",
		};
		int i = app_name_index(v, layouts, RTE_DIM(layouts));

		if (i < 0)
			CHECK(bad(&e, "node", "layout", v, "expected compact or production"));
		cfg->layout = (enum app_layout)i;
	}
	v = rte_cfgfile_get_entry(c, "node", "lcores");
	if (v != NULL && parse_lcores(v, cfg) != 0)
		CHECK(bad(&e, "node", "lcores", v, "expected a list of lcore ids"));

	GET(c, &e, "am", "window", 1, 64, cfg->node.window);
	GET(c, &e, "am", "max_ops", 1, 65535, cfg->node.max_ops);
	GET(c, &e, "am", "rto_us", 10, 10000000, cfg->node.rto_us);
	GET(c, &e, "am", "rto_max_us", 10, 60000000, cfg->node.rto_max_us);
	GET(c, &e, "am", "max_retries", 1, 1000, cfg->node.max_retries);
	GET(c, &e, "am", "ack_delay_us", 0, 100000, cfg->node.ack_delay_us);
	GET(c, &e, "am", "ack_every", 1, 64, cfg->node.ack_every);
	v = rte_cfgfile_get_entry(c, "am", "csum");
	if (v != NULL && app_csum_parse(v, &cfg->node.csum) != 0)
		CHECK(bad(&e, "am", "csum", v, "expected auto, on or off"));
	if (rte_cfgfile_has_entry(c, "am", "tx_csum"))
		CHECK(bad(&e, "am", "tx_csum", rte_cfgfile_get_entry(c, "am", "tx_csum"),
			  "replaced by csum = auto|on|off"));
	if (rte_cfgfile_has_entry(c, "am", "require_csum"))
		CHECK(bad(&e, "am", "require_csum", rte_cfgfile_get_entry(c, "am", "require_csum"),
			  "replaced by csum = auto|on|off"));
	GET(c, &e, "am", "coalesce_frame", 0, 9014, cfg->node.coalesce_frame);
	GET(c, &e, "am", "tx_inline_max", 0, 192, cfg->node.tx_inline_max);
	if (cfg->node.rto_max_us < cfg->node.rto_us)
		CHECK(bad(&e, "am", "rto_max_us", rte_cfgfile_get_entry(c, "am", "rto_max_us") ?
			  rte_cfgfile_get_entry(c, "am", "rto_max_us") : "", "below rto_us"));

	nsec = rte_cfgfile_num_sections(c, "peer.", strlen("peer."));
	if (nsec > APP_MAX_PEERS) {
		snprintf(err, errlen, "%s: %d [peer.N] sections, at most %d", path, nsec,
			 APP_MAX_PEERS);
		ret = -EINVAL;
		goto out;
	}
	nsec = rte_cfgfile_num_sections(c, NULL, 0);
	names = calloc(nsec + 1, sizeof(*names));
	/* rte_cfgfile_sections() writes into every name it is given: all must exist */
	for (i = 0; names != NULL && i < nsec; i++) {
		names[i] = calloc(1, CFG_NAME_LEN);
		if (names[i] == NULL)
			break;
	}
	if (names == NULL || i < nsec) {
		snprintf(err, errlen, "%s: out of memory", path);
		ret = -ENOMEM;
		goto out;
	}
	nsec = rte_cfgfile_sections(c, names, nsec);
	for (i = 0; i < nsec; i++) {
		struct app_peer *p;
		char *end;
		unsigned long id;

		if (strncmp(names[i], "region.", 7) == 0) {
			struct app_region *r;

			if (cfg->nb_region == APP_MAX_REGIONS) {
				snprintf(err, errlen, "%s: more than %d [region.NAME] sections",
					 path, APP_MAX_REGIONS);
				ret = -EINVAL;
				goto out;
			}
			r = &cfg->region[cfg->nb_region++];
			snprintf(r->name, sizeof(r->name), "%s", names[i] + 7);
			r->size = 1 << 20;
			r->perm = AMRMA_REGION_READ | AMRMA_REGION_WRITE;
			GET(c, &e, names[i], "size", 1, UINT64_C(1) << 40, r->size);
			v = rte_cfgfile_get_entry(c, names[i], "perm");
			if (v != NULL) {
				if (strcmp(v, "rw") == 0)
					r->perm = AMRMA_REGION_READ | AMRMA_REGION_WRITE;
				else if (strcmp(v, "r") == 0)
					r->perm = AMRMA_REGION_READ;
				else if (strcmp(v, "w") == 0)
					r->perm = AMRMA_REGION_WRITE;
				else
					CHECK(bad(&e, names[i], "perm", v, "expected r, w or rw"));
			}
			continue;
		}
		if (strncmp(names[i], "peer.", 5) != 0) {
			if (strcmp(names[i], "node") && strcmp(names[i], "am") &&
			    strcmp(names[i], "workload") && strcmp(names[i], "rma") &&
			    strncmp(names[i], "region.", 7)) {
				snprintf(err, errlen, "%s:%d: unknown section [%s]", path,
					 line_of(path, names[i], NULL), names[i]);
				ret = -EINVAL;
				goto out;
			}
			continue;
		}
		id = strtoul(names[i] + 5, &end, 10);
		if (*end != '\0' || id >= cfg->node.max_nodes || id == cfg->node.node_id) {
			snprintf(err, errlen, "%s:%d: [%s]: peer id must be a node id other than "
				 "ours, below %u", path, line_of(path, names[i], NULL), names[i],
				 cfg->node.max_nodes);
			ret = -EINVAL;
			goto out;
		}
		p = &cfg->peer[cfg->nb_peer++];
		p->id = (uint16_t)id;
		p->nb_ctx = 1;
		CHECK(get_mac(c, &e, names[i], "mac", &p->mac));
		CHECK(get_ip(c, &e, names[i], "ip", &p->ip, true));
		GET(c, &e, names[i], "contexts", 1, AMRMA_WIRE_MAX_CTX, p->nb_ctx);
	}

	GET(c, &e, "rma", "short_max", 0, 9000, cfg->rma.short_max);
	GET(c, &e, "rma", "rndv_threshold", 0, UINT64_MAX, cfg->rma.rndv_threshold);
	GET(c, &e, "rma", "rndv_put_threshold", 0, UINT64_MAX, cfg->rma.rndv_put_threshold);
	GET(c, &e, "rma", "pipeline_depth", 1, 4096, cfg->rma.pipeline_depth);
	GET(c, &e, "rma", "zero_copy", 0, 1, cfg->rma.zero_copy);
	GET(c, &e, "rma", "completion_slots", 1, 1u << 20, cfg->rma.completion_slots);
	GET(c, &e, "rma", "stream_min", 0, UINT64_MAX, cfg->rma.stream_min);
	if (!rte_is_power_of_2(cfg->rma.completion_slots)) {
		char v[16];

		snprintf(v, sizeof(v), "%u", cfg->rma.completion_slots);
		CHECK(bad(&e, "rma", "completion_slots", v, "not a power of two"));
	}
	GET(c, &e, "rma", "progress_ctx", 0, AMRMA_WIRE_MAX_CTX - 1, cfg->rma.progress_ctx);
	if (cfg->rma.progress_ctx >= cfg->node.nb_ctx) {
		char v[16];

		snprintf(v, sizeof(v), "%u", cfg->rma.progress_ctx);
		CHECK(bad(&e, "rma", "progress_ctx", v, "not one of this node's contexts"));
	}
	v = rte_cfgfile_get_entry(c, "workload", "sizes");
	if (v != NULL && parse_sizes(v, cfg) != 0)
		CHECK(bad(&e, "workload", "sizes", v, "expected a list of sizes (K/M suffixes)"));
	v = rte_cfgfile_get_entry(c, "workload", "role");
	if (v != NULL && parse_role(v, &cfg->role) != 0)
		CHECK(bad(&e, "workload", "role", v, "expected target, initiator, echo or rma"));
	GET(c, &e, "workload", "peer", 0, cfg->node.max_nodes - 1, cfg->target);
	GET(c, &e, "workload", "peer_ctx", 0, AMRMA_WIRE_MAX_CTX - 1, cfg->target_ctx);
	GET(c, &e, "workload", "region", 0, APP_MAX_REGIONS - 1, cfg->target_region);
	GET(c, &e, "workload", "count", 1, UINT64_MAX, cfg->count);
	GET(c, &e, "workload", "window", 1, 65535, cfg->window);
	GET(c, &e, "workload", "size", 0, AMRMA_WIRE_MAX_PAYLOAD, cfg->size);
	v = rte_cfgfile_get_entry(c, "workload", "duration");
	if (v != NULL && app_parse_seconds(v, &cfg->duration_s) != 0)
		CHECK(bad(&e, "workload", "duration", v, "expected seconds >= 0"));
out:
	if (names != NULL) {
		for (i = 0; i < rte_cfgfile_num_sections(c, NULL, 0); i++)
			free(names[i]);
		free(names);
	}
	rte_cfgfile_close(c);
	return ret;
#undef CHECK
}

void
app_config_usage(const char *prog)
{
	printf("usage: %s [EAL options] -- [--config FILE] [options]\n"
	       "  --config FILE     INI file (see config/*.ini)\n"
	       "  --role R          target | initiator | echo | rma\n"
	       "  --node-id N       our node id\n"
	       "  --peer N          node the initiator drives\n"
	       "  --count N         initiator: requests to complete\n"
	       "  --window N        initiator: requests in flight\n"
	       "  --size N          initiator: payload bytes per request\n"
	       "  --duration S      target/echo: stop after S seconds (0: at SIGINT/SIGTERM)\n"
	       "  --progress S      initiator: a progress line every S seconds\n"
	       "  --idle-sleep US   back off after empty polls (shared CPUs)\n"
	       "  --sizes LIST      rma: operation sizes, e.g. 1,4K,1M\n"
	       "  --rndv-threshold N  rma: bytes from which puts and gets use rendezvous\n"
	       "  --region N        rma: the target's region N (its [region.*] order)\n"
	       "  --json            print the summary as JSON\n", prog);
}

int
app_config_args(struct app_config *cfg, int argc, char **argv, char *err, size_t errlen)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "role", required_argument, NULL, 'r' },
		{ "node-id", required_argument, NULL, 'n' },
		{ "peer", required_argument, NULL, 'p' },
		{ "count", required_argument, NULL, 'N' },
		{ "window", required_argument, NULL, 'w' },
		{ "size", required_argument, NULL, 's' },
		{ "duration", required_argument, NULL, 'd' },
		{ "progress", required_argument, NULL, 'P' },
		{ "idle-sleep", required_argument, NULL, 'i' },
		{ "json", no_argument, NULL, 'j' },
		{ "sizes", required_argument, NULL, 'S' },
		{ "rndv-threshold", required_argument, NULL, 'T' },
		{ "region", required_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int opt, ret, li = 0;

	/* the config file first, so options override it wherever they appear */
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1)
		if (opt == 'c') {
			ret = app_config_load(cfg, optarg, err, errlen);
			if (ret != 0)
				return ret;
		}
	optind = 1;
	opterr = 1;
	while ((opt = getopt_long(argc, argv, "", opts, &li)) != -1) {
		switch (opt) {
		case 'c':
			break;
		case 'r':
			if (parse_role(optarg, &cfg->role) != 0)
				goto bad_opt;
			break;
		case 'n':
			APP_OPT_NUM(0, cfg->node.max_nodes - 1, cfg->node.node_id, bad_opt);
			break;
		case 'p':
			APP_OPT_NUM(0, cfg->node.max_nodes - 1, cfg->target, bad_opt);
			break;
		case 'N':
			APP_OPT_NUM(1, UINT64_MAX, cfg->count, bad_opt);
			break;
		case 'w':
			APP_OPT_NUM(1, 65535, cfg->window, bad_opt);
			break;
		case 's':
			APP_OPT_NUM(0, AMRMA_WIRE_MAX_PAYLOAD, cfg->size, bad_opt);
			break;
		case 'd':
			if (app_parse_seconds(optarg, &cfg->duration_s) != 0)
				goto bad_opt;
			break;
		case 'P':
			if (app_parse_seconds(optarg, &cfg->progress_s) != 0)
				goto bad_opt;
			break;
		case 'i':
			APP_OPT_NUM(0, 1000000, cfg->idle_sleep_us, bad_opt);
			if (cfg->idle_spin == 0)
				cfg->idle_spin = 1000;
			break;
		case 'j':
			cfg->json = true;
			break;
		case 'R':
			APP_OPT_NUM(0, APP_MAX_REGIONS - 1, cfg->target_region, bad_opt);
			break;
		case 'S':
			if (parse_sizes(optarg, cfg) != 0)
				goto bad_opt;
			break;
		case 'T':
			if (app_parse_list(optarg, &cfg->rma.rndv_threshold, 1, UINT64_MAX,
					   true) != 1)
				goto bad_opt;
			cfg->rma.rndv_put_threshold = cfg->rma.rndv_threshold;
			break;
		case 'h':
			return 1;
		default:
			snprintf(err, errlen, "unknown option %s", argv[optind - 1]);
			return -EINVAL;
		}
	}
	return 0;
bad_opt:
	snprintf(err, errlen, "bad value '%s' for --%s", optarg, opts[li].name);
	return -EINVAL;
}
