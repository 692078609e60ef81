/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * amrma-pcapgen: writes a pcap of amrma frames (valid ones, ones that break each rejection
 * rule, or both shuffled) and tells how many of each it wrote, so tests and replay runs
 * (testpmd / net_pcap) can assert the receiver's counters.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pcap_writer.h"
#include "pcapgen_frames.h"

enum gen_kind { KIND_GOOD, KIND_BAD, KIND_MIXED };
static const char *const kind_names[] = { "good", "bad", "mixed" };

#define PLAN_BAD	0x10000u	/* plan entry: bad variant flag | variant index */

struct opts {
	const char *out;
	const char *manifest;
	enum gen_kind kind;
	unsigned long count;
	uint64_t seed;
	struct pcapgen_cfg cfg;
};

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: amrma-pcapgen --out FILE [options]\n"
		"  --kind good|bad|mixed   frames to write (default good)\n"
		"  --count N               good frames (default one per good variant);\n"
		"                          bad frames: max(N, one per bad variant)\n"
		"  --seed S                seed of args, payloads, channels, order (default 1)\n"
		"  --src-mac / --dst-mac   xx:xx:xx:xx:xx:xx (02:00:00:00:00:01 / :02)\n"
		"  --src-ip / --dst-ip     dotted quad (10.0.0.1 / 10.0.0.2)\n"
		"  --src-node / --dst-node node ids (1 / 2)\n"
		"  --udp-base P            UDP port of context 0 (7000)\n"
		"  --nb-ctx N              receiver's contexts, 1..64 (4)\n"
		"  --handler H             handler of requests, 0..255 (1)\n"
		"  --src-epoch E           sender's incarnation, never 0 (1)\n"
		"  --dst-epoch E           receiver's incarnation as known, 0 = unknown (0)\n"
		"  --manifest FILE         also write the counts and every frame as JSON\n");
}

static int
parse_ulong(const char *s, unsigned long long max, unsigned long long *out)
{
	char *end;

	if (*s == '\0' || *s == '-')
		return -1;
	errno = 0;
	*out = strtoull(s, &end, 0);
	return (errno || *end || *out > max) ? -1 : 0;
}

static int
parse_mac(const char *s, struct rte_ether_addr *mac)
{
	uint8_t *b = mac->addr_bytes;
	int n = -1;

	if (sscanf(s, "%2hhx:%2hhx:%2hhx:%2hhx:%2hhx:%2hhx%n",
		   &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &n) != 6 || n != (int)strlen(s))
		return -1;
	return 0;
}

static int
parse_ip(const char *s, rte_be32_t *ip)
{
	struct in_addr a;

	if (inet_pton(AF_INET, s, &a) != 1)
		return -1;
	*ip = a.s_addr;
	return 0;
}

static int
parse_opts(int argc, char **argv, struct opts *o)
{
	enum { O_OUT = 256, O_KIND, O_SMAC, O_DMAC, O_SIP, O_DIP, O_SNODE, O_DNODE,
	       O_BASE, O_NBCTX, O_HANDLER, O_COUNT, O_SEED, O_MANIFEST, O_SEPOCH, O_DEPOCH,
	       O_HELP };
	static const struct option longopts[] = {
		{ "out", required_argument, NULL, O_OUT },
		{ "kind", required_argument, NULL, O_KIND },
		{ "src-mac", required_argument, NULL, O_SMAC },
		{ "dst-mac", required_argument, NULL, O_DMAC },
		{ "src-ip", required_argument, NULL, O_SIP },
		{ "dst-ip", required_argument, NULL, O_DIP },
		{ "src-node", required_argument, NULL, O_SNODE },
		{ "dst-node", required_argument, NULL, O_DNODE },
		{ "udp-base", required_argument, NULL, O_BASE },
		{ "nb-ctx", required_argument, NULL, O_NBCTX },
		{ "handler", required_argument, NULL, O_HANDLER },
		{ "count", required_argument, NULL, O_COUNT },
		{ "seed", required_argument, NULL, O_SEED },
		{ "manifest", required_argument, NULL, O_MANIFEST },
		{ "src-epoch", required_argument, NULL, O_SEPOCH },
		{ "dst-epoch", required_argument, NULL, O_DEPOCH },
		{ "help", no_argument, NULL, O_HELP },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long long v;
	int c, bad = 0;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case O_OUT:
			o->out = optarg;
			break;
		case O_MANIFEST:
			o->manifest = optarg;
			break;
		case O_KIND:
			if (!strcmp(optarg, "good"))
				o->kind = KIND_GOOD;
			else if (!strcmp(optarg, "bad"))
				o->kind = KIND_BAD;
			else if (!strcmp(optarg, "mixed"))
				o->kind = KIND_MIXED;
			else
				bad = 1;
			break;
		case O_SMAC:
			bad |= parse_mac(optarg, &o->cfg.addr.src_mac);
			break;
		case O_DMAC:
			bad |= parse_mac(optarg, &o->cfg.addr.dst_mac);
			break;
		case O_SIP:
			bad |= parse_ip(optarg, &o->cfg.addr.src_ip);
			break;
		case O_DIP:
			bad |= parse_ip(optarg, &o->cfg.addr.dst_ip);
			break;
		case O_SNODE:
		case O_DNODE:
			/* dst_node + 1 must fit: the not_for_us variant uses it */
			if (parse_ulong(optarg, UINT16_MAX - 1, &v))
				bad = 1;
			else if (c == O_SNODE)
				o->cfg.src_node = v;
			else
				o->cfg.dst_node = v;
			break;
		case O_BASE:
			/* bad_port variants use base - 1 and base + 64 */
			if (parse_ulong(optarg, UINT16_MAX - AMRMA_WIRE_MAX_CTX, &v) || v == 0)
				bad = 1;
			else
				o->cfg.addr.udp_base = v;
			break;
		case O_NBCTX:
			if (parse_ulong(optarg, AMRMA_WIRE_MAX_CTX, &v) || v == 0)
				bad = 1;
			else
				o->cfg.nb_ctx = v;
			break;
		case O_HANDLER:
			if (parse_ulong(optarg, AMRMA_WIRE_MAX_HANDLERS - 1, &v))
				bad = 1;
			else
				o->cfg.handler = v;
			break;
		case O_COUNT:
			/* bounded so the plan and the file stay reasonable */
			if (parse_ulong(optarg, 1000000, &v))
				bad = 1;
			else
				o->count = v;
			break;
		case O_SEED:
			if (parse_ulong(optarg, UINT64_MAX, &v))
				bad = 1;
			else
				o->seed = v;
			break;
		case O_SEPOCH:
			if (parse_ulong(optarg, UINT32_MAX, &v) || v == 0)
				bad = 1;
			else
				o->cfg.src_epoch = v;
			break;
		case O_DEPOCH:
			if (parse_ulong(optarg, UINT32_MAX, &v))
				bad = 1;
			else
				o->cfg.dst_epoch = v;
			break;
		case O_HELP:
			usage(stdout);
			exit(0);
		default:
			bad = 1;
			break;
		}
		if (bad) {
			if (c != '?')
				fprintf(stderr, "amrma-pcapgen: bad value for --%s: %s\n",
					longopts[c - O_OUT].name, optarg ? optarg : "");
			return -1;
		}
	}
	if (optind != argc || o->out == NULL) {
		fprintf(stderr, "amrma-pcapgen: --out FILE is required\n");
		return -1;
	}
	return 0;
}

static void
mac_str(const struct rte_ether_addr *m, char *s, size_t n)
{
	const uint8_t *b = m->addr_bytes;

	snprintf(s, n, "%02x:%02x:%02x:%02x:%02x:%02x", b[0], b[1], b[2], b[3], b[4], b[5]);
}

static void
manifest_head(FILE *m, const struct opts *o, size_t nb, const unsigned long *cls,
	const unsigned long *why)
{
	char mac[32];
	unsigned int i;
	unsigned long good = 0, bad = 0;

	for (i = 0; i < PCAPGEN_CLASS_MAX; i++)
		good += cls[i];
	for (i = AMRMA_WIRE_ERR_TRUNCATED; i < AMRMA_WIRE_ERR__MAX; i++)
		bad += why[i];
	mac_str(&o->cfg.addr.dst_mac, mac, sizeof(mac));
	fprintf(m, "{\n\"version\": 1,\n\"kind\": \"%s\",\n\"seed\": %" PRIu64 ",\n",
		kind_names[o->kind], o->seed);
	/* what amrma_wire_parse() must be given for the expectations to hold */
	fprintf(m, "\"rx\": {\"mac\": \"%s\", \"node\": %u, \"udp_base\": %u, \"nb_ctx\": %u, "
		"\"skip_csum\": false, \"epoch\": %u},\n", mac, o->cfg.dst_node,
		o->cfg.addr.udp_base, o->cfg.nb_ctx, o->cfg.dst_epoch);
	fprintf(m, "\"totals\": {\"frames\": %zu, \"good\": %lu, \"bad\": %lu},\n",
		nb, good, bad);
	fprintf(m, "\"good\": {");
	for (i = 0; i < PCAPGEN_CLASS_MAX; i++)
		fprintf(m, "%s\"%s\": %lu", i ? ", " : "", pcapgen_class_name(i), cls[i]);
	fprintf(m, "},\n\"bad\": {");
	for (i = AMRMA_WIRE_ERR_TRUNCATED; i < AMRMA_WIRE_ERR__MAX; i++)
		fprintf(m, "%s\"%s\": %lu", i > 1 ? ", " : "", amrma_wire_err_name(i), why[i]);
	fprintf(m, "},\n\"records\": [\n");
}

/* One line per frame so that line-oriented tools can read it too. */
static void
manifest_record(FILE *m, size_t i, uint32_t e, const struct pcapgen_frame *fr)
{
	const struct amrma_wire_fields *f = &fr->f;
	unsigned int a;

	fprintf(m, "%s{\"i\": %zu, ", i ? ",\n" : "", i);
	if (e & PLAN_BAD) {
		fprintf(m, "\"expect\": \"%s\", \"variant\": \"%s\", \"len\": %zu}",
			amrma_wire_err_name(pcapgen_bad_reason(e & ~PLAN_BAD)),
			pcapgen_bad_name(e & ~PLAN_BAD), fr->len);
		return;
	}
	fprintf(m, "\"expect\": \"ok\", \"variant\": \"%s\", \"len\": %zu, \"type\": %u, "
		"\"flags\": %u, \"nargs\": %u, \"handler\": %u, \"src_ctx\": %u, "
		"\"dst_ctx\": %u, \"src_node\": %u, \"dst_node\": %u, \"seq\": %u, "
		"\"ack\": %u, \"sack\": %u, \"token\": %u, \"payload_len\": %u, "
		"\"status\": %d, \"src_epoch\": %u, \"dst_epoch\": %u, \"args\": [",
		pcapgen_class_name(pcapgen_good_class(e)), fr->len, f->type, f->flags, f->nargs,
		f->handler, f->src_ctx, f->dst_ctx, f->src_node, f->dst_node, f->seq, f->ack,
		f->sack, f->token, f->payload_len, f->status, f->src_epoch, f->dst_epoch);
	for (a = 0; a < f->nargs; a++)
		fprintf(m, "%s\"0x%016" PRIx64 "\"", a ? ", " : "", fr->args[a]);
	fprintf(m, "]}");
}

/* Which variants, in which order; counts per class and reason. */
static uint32_t *
make_plan(const struct opts *o, struct pcapgen_state *st, size_t *nb, unsigned long *cls,
	unsigned long *why)
{
	unsigned long nb_good = 0, nb_bad = 0, i;
	uint32_t *plan;

	if (o->kind != KIND_BAD)
		nb_good = o->count ? o->count : pcapgen_nb_good();
	if (o->kind != KIND_GOOD)
		nb_bad = RTE_MAX(o->count, (unsigned long)pcapgen_nb_bad());
	*nb = nb_good + nb_bad;
	plan = calloc(*nb, sizeof(*plan));
	if (plan == NULL)
		return NULL;
	for (i = 0; i < nb_good; i++) {
		plan[i] = i % pcapgen_nb_good();
		cls[pcapgen_good_class(plan[i])]++;
	}
	for (i = 0; i < nb_bad; i++) {
		plan[nb_good + i] = PLAN_BAD | (i % pcapgen_nb_bad());
		why[pcapgen_bad_reason(i % pcapgen_nb_bad())]++;
	}
	if (o->kind == KIND_MIXED) {
		for (i = *nb - 1; i > 0; i--) {	/* Fisher-Yates */
			unsigned long j = pcapgen_rand(st) % (i + 1);
			uint32_t t = plan[i];

			plan[i] = plan[j];
			plan[j] = t;
		}
	}
	return plan;
}

static int
generate(const struct opts *o)
{
	unsigned long cls[PCAPGEN_CLASS_MAX] = { 0 }, why[AMRMA_WIRE_ERR__MAX] = { 0 };
	static struct pcapgen_frame fr;
	struct pcapgen_state st;
	struct pcapgen_pcap w = { NULL, 0, 0 };
	FILE *m = NULL;
	uint32_t *plan;
	size_t nb, i;
	int rc;

	pcapgen_state_init(&st, &o->cfg, o->seed);
	plan = make_plan(o, &st, &nb, cls, why);
	if (plan == NULL)
		return -ENOMEM;
	rc = pcapgen_pcap_open(&w, o->out);
	if (rc < 0)
		goto out;
	if (o->manifest) {
		m = fopen(o->manifest, "w");
		if (m == NULL) {
			rc = -errno;
			goto out;
		}
		manifest_head(m, o, nb, cls, why);
	}
	for (i = 0; i < nb && rc == 0; i++) {
		if (plan[i] & PLAN_BAD)
			rc = pcapgen_build_bad(&st, plan[i] & ~PLAN_BAD, &fr);
		else
			rc = pcapgen_build_good(&st, plan[i], &fr);
		if (rc == 0)
			rc = pcapgen_pcap_write(&w, fr.buf, fr.len);
		if (rc == 0 && m)
			manifest_record(m, i, plan[i], &fr);
	}
	if (m) {
		fprintf(m, "\n]\n}\n");
		if ((fclose(m) != 0) && rc == 0)
			rc = -EIO;
	}
out:
	if (pcapgen_pcap_close(&w) < 0 && rc == 0)
		rc = -EIO;
	free(plan);
	if (rc < 0)
		return rc;

	fprintf(stderr, "amrma-pcapgen: %s: %zu frames (%s, seed %" PRIu64 ")\n",
		o->out, nb, kind_names[o->kind], o->seed);
	for (i = 0; i < PCAPGEN_CLASS_MAX; i++)
		if (cls[i])
			fprintf(stderr, "  good %-16s %lu\n", pcapgen_class_name(i), cls[i]);
	for (i = AMRMA_WIRE_ERR_TRUNCATED; i < AMRMA_WIRE_ERR__MAX; i++)
		if (why[i])
			fprintf(stderr, "  bad  %-16s %lu\n", amrma_wire_err_name(i), why[i]);
	return 0;
}

int
main(int argc, char **argv)
{
	struct opts o = {
		.kind = KIND_GOOD,
		.seed = 1,
		.cfg = {
			.addr = {
				.src_mac = {{ 0x02, 0, 0, 0, 0, 0x01 }},
				.dst_mac = {{ 0x02, 0, 0, 0, 0, 0x02 }},
				.src_ip = RTE_BE32(RTE_IPV4(10, 0, 0, 1)),
				.dst_ip = RTE_BE32(RTE_IPV4(10, 0, 0, 2)),
				.udp_base = 7000,
			},
			.src_node = 1,
			.dst_node = 2,
			.nb_ctx = 4,
			.handler = 1,
			.src_epoch = 1,
		},
	};
	int rc;

	if (parse_opts(argc, argv, &o) < 0) {
		usage(stderr);
		return 2;
	}
	rc = generate(&o);
	if (rc < 0) {
		fprintf(stderr, "amrma-pcapgen: %s: %s\n", o.out, strerror(-rc));
		unlink(o.out);
		if (o.manifest)
			unlink(o.manifest);
		return 1;
	}
	return 0;
}
