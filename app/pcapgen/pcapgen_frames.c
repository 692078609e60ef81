/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Frame catalogue. Bad frames start from a valid frame and break exactly one rule; headers
 * that the break does not target keep valid checksums, so the first check that fails in
 * amrma_wire_parse() (and in a dissector) is the intended one.
 */

#include <errno.h>
#include <netinet/in.h>

#include "pcapgen_frames.h"

#define HANDLER_CFG	0x10000		/* use cfg->handler */
#define PAYLOAD_MTU_MAX	(-1)		/* largest payload that fits PCAPGEN_MTU */
#define BAD_NARGS	2		/* base frame of the bad variants */
#define BAD_PAYLOAD	16

struct good_variant {
	enum pcapgen_class cls;
	uint8_t type;
	uint8_t nargs;
	int payload;
	uint32_t handler;
	int16_t status;
};

static const struct good_variant good_variants[] = {
	{ PCAPGEN_REQ_SHORT, AMRMA_WIRE_REQUEST, 0, 0, HANDLER_CFG, 0 },
	{ PCAPGEN_REQ_SHORT, AMRMA_WIRE_REQUEST, 1, 0, HANDLER_CFG, 0 },
	{ PCAPGEN_REQ_SHORT, AMRMA_WIRE_REQUEST, 8, 0, HANDLER_CFG, 0 },
	{ PCAPGEN_REQ_MEDIUM, AMRMA_WIRE_REQUEST, 2, 0, HANDLER_CFG, 0 },
	{ PCAPGEN_REQ_MEDIUM, AMRMA_WIRE_REQUEST, 2, 1, HANDLER_CFG, 0 },
	{ PCAPGEN_REQ_MEDIUM, AMRMA_WIRE_REQUEST, 2, 100, HANDLER_CFG, 0 },
	{ PCAPGEN_REQ_MEDIUM, AMRMA_WIRE_REQUEST, 0, 1024, HANDLER_CFG, 0 },
	{ PCAPGEN_REQ_MEDIUM, AMRMA_WIRE_REQUEST, 2, PAYLOAD_MTU_MAX, HANDLER_CFG, 0 },
	{ PCAPGEN_REQ_MEDIUM, AMRMA_WIRE_REQUEST, 8, PAYLOAD_MTU_MAX, HANDLER_CFG, 0 },
	{ PCAPGEN_REPLY, AMRMA_WIRE_REPLY, 1, 0, HANDLER_CFG, 0 },
	{ PCAPGEN_REPLY, AMRMA_WIRE_REPLY, 0, 512, HANDLER_CFG, 0 },
	/* automatic replies: unknown handler, access error */
	{ PCAPGEN_REPLY, AMRMA_WIRE_REPLY, 0, 0, AMRMA_WIRE_NO_HANDLER, -ENOENT },
	{ PCAPGEN_REPLY, AMRMA_WIRE_REPLY, 0, 0, AMRMA_WIRE_NO_HANDLER, -EACCES },
	{ PCAPGEN_ACK, AMRMA_WIRE_ACK, 0, 0, AMRMA_WIRE_NO_HANDLER, 0 },
	{ PCAPGEN_ACK, AMRMA_WIRE_ACK, 0, 0, AMRMA_WIRE_NO_HANDLER, 0 },
};

enum bad_id {
	BAD_SHORT_60, BAD_SHORT_MIN, BAD_IP_LEN_LONG,
	BAD_ETHERTYPE_IPV6, BAD_VLAN_TAG,
	BAD_IP_OPTIONS, BAD_IP_PROTO, BAD_IP_MF, BAD_IP_FRAG_OFF,
	BAD_IP_LEN_SHORT, BAD_IP_LEN_20,
	BAD_IP_CSUM,
	BAD_UDP_LEN_LONG, BAD_UDP_LEN_SHORT,
	BAD_DPORT_HIGH, BAD_DPORT_LOW, BAD_SPORT_HIGH,
	BAD_UDP_CSUM,
	BAD_VERSION_0, BAD_VERSION_2,
	BAD_TYPE_0, BAD_TYPE_5,
	BAD_FLAGS_BIT2, BAD_FLAGS_BIT7, BAD_MORE_EMPTY, BAD_MORE_ON_ACK,
	BAD_NARGS_9, BAD_NARGS_255,
	BAD_LEN_MISMATCH, BAD_LEN_PAYLOAD_MAX, BAD_LEN_ACK_ARGS,
	BAD_HANDLER_REQ_NONE, BAD_HANDLER_256, BAD_HANDLER_ACK,
	BAD_CTX_SRC, BAD_CTX_DST,
	BAD_NFU_MAC, BAD_NFU_NODE,
	BAD__MAX
};

static const struct {
	enum amrma_wire_err reason;
	const char *name;
} bad_variants[BAD__MAX] = {
	[BAD_SHORT_60] = { AMRMA_WIRE_ERR_TRUNCATED, "frame_60" },
	[BAD_SHORT_MIN] = { AMRMA_WIRE_ERR_TRUNCATED, "frame_min_minus_1" },
	[BAD_ETHERTYPE_IPV6] = { AMRMA_WIRE_ERR_NOT_IPV4, "ethertype_ipv6" },
	[BAD_VLAN_TAG] = { AMRMA_WIRE_ERR_NOT_IPV4, "vlan_tag" },
	[BAD_IP_OPTIONS] = { AMRMA_WIRE_ERR_BAD_IP_HDR, "ip_options" },
	[BAD_IP_PROTO] = { AMRMA_WIRE_ERR_BAD_IP_HDR, "proto_tcp" },
	[BAD_IP_MF] = { AMRMA_WIRE_ERR_BAD_IP_HDR, "more_fragments" },
	[BAD_IP_FRAG_OFF] = { AMRMA_WIRE_ERR_BAD_IP_HDR, "fragment_offset" },
	/* an IP length past the frame means the frame was cut short */
	[BAD_IP_LEN_LONG] = { AMRMA_WIRE_ERR_TRUNCATED, "ip_len_over_frame" },
	[BAD_IP_LEN_SHORT] = { AMRMA_WIRE_ERR_BAD_IP_LEN, "ip_len_under_headers" },
	[BAD_IP_LEN_20] = { AMRMA_WIRE_ERR_BAD_IP_LEN, "ip_len_20" },
	[BAD_IP_CSUM] = { AMRMA_WIRE_ERR_BAD_IP_CSUM, "ip_csum" },
	[BAD_UDP_LEN_LONG] = { AMRMA_WIRE_ERR_BAD_UDP_LEN, "udp_len_plus_1" },
	[BAD_UDP_LEN_SHORT] = { AMRMA_WIRE_ERR_BAD_UDP_LEN, "udp_len_minus_1" },
	[BAD_DPORT_HIGH] = { AMRMA_WIRE_ERR_BAD_PORT, "dst_port_over_nb_ctx" },
	[BAD_DPORT_LOW] = { AMRMA_WIRE_ERR_BAD_PORT, "dst_port_under_base" },
	[BAD_SPORT_HIGH] = { AMRMA_WIRE_ERR_BAD_PORT, "src_port_over_max_ctx" },
	[BAD_UDP_CSUM] = { AMRMA_WIRE_ERR_BAD_UDP_CSUM, "udp_csum" },
	[BAD_VERSION_0] = { AMRMA_WIRE_ERR_BAD_VERSION, "version_0" },
	[BAD_VERSION_2] = { AMRMA_WIRE_ERR_BAD_VERSION, "version_2" },
	[BAD_TYPE_0] = { AMRMA_WIRE_ERR_BAD_TYPE, "type_0" },
	[BAD_TYPE_5] = { AMRMA_WIRE_ERR_BAD_TYPE, "type_5" },
	[BAD_FLAGS_BIT2] = { AMRMA_WIRE_ERR_BAD_FLAGS, "flag_bit2" },
	[BAD_MORE_EMPTY] = { AMRMA_WIRE_ERR_BAD_LENGTH, "more_without_messages" },
	[BAD_MORE_ON_ACK] = { AMRMA_WIRE_ERR_BAD_FLAGS, "more_on_ack" },
	[BAD_FLAGS_BIT7] = { AMRMA_WIRE_ERR_BAD_FLAGS, "flag_bit7" },
	[BAD_NARGS_9] = { AMRMA_WIRE_ERR_TOO_MANY_ARGS, "nargs_9" },
	[BAD_NARGS_255] = { AMRMA_WIRE_ERR_TOO_MANY_ARGS, "nargs_255" },
	[BAD_LEN_MISMATCH] = { AMRMA_WIRE_ERR_BAD_LENGTH, "payload_len_plus_1" },
	[BAD_LEN_PAYLOAD_MAX] = { AMRMA_WIRE_ERR_BAD_LENGTH, "payload_9001" },
	[BAD_LEN_ACK_ARGS] = { AMRMA_WIRE_ERR_BAD_LENGTH, "ack_with_args" },
	[BAD_HANDLER_REQ_NONE] = { AMRMA_WIRE_ERR_BAD_HANDLER, "request_no_handler" },
	[BAD_HANDLER_256] = { AMRMA_WIRE_ERR_BAD_HANDLER, "handler_256" },
	[BAD_HANDLER_ACK] = { AMRMA_WIRE_ERR_BAD_HANDLER, "ack_with_handler" },
	[BAD_CTX_SRC] = { AMRMA_WIRE_ERR_BAD_CTX, "src_ctx_not_port" },
	[BAD_CTX_DST] = { AMRMA_WIRE_ERR_BAD_CTX, "dst_ctx_not_port" },
	[BAD_NFU_MAC] = { AMRMA_WIRE_ERR_NOT_FOR_US, "dst_mac" },
	[BAD_NFU_NODE] = { AMRMA_WIRE_ERR_NOT_FOR_US, "dst_node" },
};

static const char *const class_names[PCAPGEN_CLASS_MAX] = {
	[PCAPGEN_REQ_SHORT] = "request_short",
	[PCAPGEN_REQ_MEDIUM] = "request_medium",
	[PCAPGEN_REPLY] = "reply",
	[PCAPGEN_ACK] = "ack",
};

void
pcapgen_state_init(struct pcapgen_state *st, const struct pcapgen_cfg *cfg, uint64_t seed)
{
	memset(st, 0, sizeof(*st));
	st->cfg = cfg;
	st->rng = seed;
	st->token = 1;
}

/* splitmix64: tiny, seedable, same sequence on every platform */
uint64_t
pcapgen_rand(struct pcapgen_state *st)
{
	uint64_t z = (st->rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

unsigned int
pcapgen_nb_good(void)
{
	return RTE_DIM(good_variants);
}

enum pcapgen_class
pcapgen_good_class(unsigned int v)
{
	return good_variants[v % RTE_DIM(good_variants)].cls;
}

const char *
pcapgen_class_name(enum pcapgen_class c)
{
	return (unsigned int)c < PCAPGEN_CLASS_MAX ? class_names[c] : "unknown";
}

unsigned int
pcapgen_nb_bad(void)
{
	return BAD__MAX;
}

enum amrma_wire_err
pcapgen_bad_reason(unsigned int v)
{
	return bad_variants[v % BAD__MAX].reason;
}

const char *
pcapgen_bad_name(unsigned int v)
{
	return bad_variants[v % BAD__MAX].name;
}

/* Header fields of a frame on a random channel; seq is the channel's next, not consumed. */
static void
fill(struct pcapgen_state *st, struct pcapgen_frame *fr, uint8_t type, uint8_t nargs,
	uint16_t payload_len, uint16_t handler, int16_t status)
{
	const struct pcapgen_cfg *cfg = st->cfg;
	struct amrma_wire_fields *f = &fr->f;

	memset(f, 0, sizeof(*f));
	f->type = type;
	f->nargs = nargs;
	f->payload_len = payload_len;
	f->handler = handler;
	f->status = status;
	f->src_ctx = pcapgen_rand(st) % cfg->nb_ctx;
	f->dst_ctx = pcapgen_rand(st) % cfg->nb_ctx;
	f->src_node = cfg->src_node;
	f->dst_node = cfg->dst_node;
	f->src_epoch = cfg->src_epoch;
	f->dst_epoch = cfg->dst_epoch;
	/* ACKs always carry ack info; sequenced frames piggyback it half of the time */
	if (type == AMRMA_WIRE_ACK || (pcapgen_rand(st) & 1)) {
		f->flags = AMRMA_WIRE_F_ACK_VALID;
		f->ack = pcapgen_rand(st) % 4096;
		f->sack = (uint32_t)pcapgen_rand(st);
	}
	if (type != AMRMA_WIRE_ACK)
		f->seq = st->next_seq[f->src_ctx][f->dst_ctx];
	if (type == AMRMA_WIRE_REQUEST)
		f->token = st->token++;
	else if (type == AMRMA_WIRE_REPLY)
		f->token = (uint32_t)pcapgen_rand(st);
}

/* Random arguments and payload, then the complete frame with its UDP checksum. */
static int
emit(struct pcapgen_state *st, struct pcapgen_frame *fr)
{
	static uint8_t payload[AMRMA_WIRE_MAX_PAYLOAD];
	unsigned int i;
	int len;

	for (i = 0; i < fr->f.nargs; i++)
		fr->args[i] = pcapgen_rand(st);
	for (i = 0; i < fr->f.payload_len; i += 8) {
		uint64_t r = pcapgen_rand(st);

		memcpy(payload + i, &r, RTE_MIN(8u, fr->f.payload_len - i));
	}
	memset(fr->buf, 0, sizeof(fr->buf));
	len = amrma_wire_build(fr->buf, sizeof(fr->buf), &st->cfg->addr, &fr->f, fr->args,
			payload, true);
	if (len < 0)
		return len;
	fr->len = (size_t)len;
	return 0;
}

int
pcapgen_build_good(struct pcapgen_state *st, unsigned int v, struct pcapgen_frame *fr)
{
	const struct good_variant *g = &good_variants[v % RTE_DIM(good_variants)];
	uint16_t handler = g->handler == HANDLER_CFG ? st->cfg->handler : g->handler;
	int payload = g->payload;

	if (payload == PAYLOAD_MTU_MAX)
		payload = PCAPGEN_MTU - (int)(AMRMA_WIRE_HDR_LEN - sizeof(struct rte_ether_hdr)) -
			8 * g->nargs;
	fill(st, fr, g->type, g->nargs, (uint16_t)payload, handler, g->status);
	if (g->type != AMRMA_WIRE_ACK)
		st->next_seq[fr->f.src_ctx][fr->f.dst_ctx]++;
	return emit(st, fr);
}

static struct rte_ipv4_hdr *
ip_of(struct pcapgen_frame *fr)
{
	return (struct rte_ipv4_hdr *)(fr->buf + sizeof(struct rte_ether_hdr));
}

static struct rte_udp_hdr *
udp_of(struct pcapgen_frame *fr)
{
	return (struct rte_udp_hdr *)(ip_of(fr) + 1);
}

static void
fix_ip_csum(struct pcapgen_frame *fr)
{
	struct rte_ipv4_hdr *ip = ip_of(fr);

	ip->hdr_checksum = 0;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
}

/* Recomputed over the (possibly edited) IP length: the buffer past len is zeroed. */
static void
fix_udp_csum(struct pcapgen_frame *fr)
{
	amrma_wire_udp_csum_set(fr->buf, fr->len);
}

/* Frames that break a rule after the IP header: one edit, then a valid UDP checksum. */
static void
break_amrma(struct pcapgen_state *st, struct pcapgen_frame *fr, unsigned int v)
{
	struct amrma_wire_hdr *h = amrma_wire_hdr_of(fr->buf);
	struct rte_udp_hdr *udp = udp_of(fr);
	uint16_t base = st->cfg->addr.udp_base;

	switch (v) {
	case BAD_UDP_LEN_LONG:
		udp->dgram_len = rte_cpu_to_be_16(rte_be_to_cpu_16(udp->dgram_len) + 1);
		break;
	case BAD_UDP_LEN_SHORT:
		udp->dgram_len = rte_cpu_to_be_16(rte_be_to_cpu_16(udp->dgram_len) - 1);
		break;
	case BAD_DPORT_HIGH:
		udp->dst_port = rte_cpu_to_be_16(base + st->cfg->nb_ctx);
		break;
	case BAD_DPORT_LOW:
		udp->dst_port = rte_cpu_to_be_16(base - 1);
		break;
	case BAD_SPORT_HIGH:
		udp->src_port = rte_cpu_to_be_16(base + AMRMA_WIRE_MAX_CTX);
		break;
	case BAD_VERSION_0:
		h->version = 0;
		break;
	case BAD_VERSION_2:
		h->version = AMRMA_WIRE_VERSION + 1;
		break;
	case BAD_TYPE_0:
		h->type = 0;
		break;
	case BAD_TYPE_5:
		h->type = AMRMA_WIRE_SEND + 1;
		break;
	case BAD_FLAGS_BIT2:
		h->flags |= 0x04;	/* the lowest flag bit without a meaning */
		break;
	case BAD_MORE_EMPTY:
	case BAD_MORE_ON_ACK:
		h->flags |= AMRMA_WIRE_F_MORE;
		break;
	case BAD_FLAGS_BIT7:
		h->flags |= 0x80;
		break;
	case BAD_NARGS_9:
		/* built with 8 args + 8 payload bytes: lengths stay consistent */
		h->nargs = AMRMA_WIRE_MAX_ARGS + 1;
		h->payload_len = 0;
		break;
	case BAD_NARGS_255:
		h->nargs = 255;
		break;
	case BAD_LEN_MISMATCH:
		h->payload_len = rte_cpu_to_be_16(BAD_PAYLOAD + 1);
		break;
	case BAD_LEN_PAYLOAD_MAX:
		/* built with 1 arg + 8993 bytes: UDP length matches 32 + 9001 */
		h->nargs = 0;
		h->payload_len = rte_cpu_to_be_16(AMRMA_WIRE_MAX_PAYLOAD + 1);
		break;
	case BAD_CTX_SRC:
		h->src_ctx ^= 1;
		break;
	case BAD_CTX_DST:
		h->dst_ctx ^= 1;
		break;
	case BAD_NFU_NODE:
		h->dst_node = rte_cpu_to_be_16(st->cfg->dst_node + 1);
		break;
	default:
		break;	/* the fields given to fill() are the fault */
	}
	fix_udp_csum(fr);
}

/* Frames that break the Ethernet or IPv4 header or a checksum; false for other variants. */
static bool
break_l2l3(struct pcapgen_frame *fr, unsigned int v)
{
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)fr->buf;
	struct rte_ipv4_hdr *ip = ip_of(fr);
	struct rte_udp_hdr *udp = udp_of(fr);
	uint16_t csum;

	switch (v) {
	case BAD_SHORT_60:
		fr->len = RTE_ETHER_MIN_LEN - RTE_ETHER_CRC_LEN;
		break;
	case BAD_SHORT_MIN:
		fr->len = AMRMA_WIRE_MIN_FRAME - 1;
		break;
	case BAD_ETHERTYPE_IPV6:
		eth->ether_type = RTE_BE16(RTE_ETHER_TYPE_IPV6);
		break;
	case BAD_VLAN_TAG:
		memmove(fr->buf + 16, fr->buf + 12, fr->len - 12);
		eth->ether_type = RTE_BE16(RTE_ETHER_TYPE_VLAN);
		fr->buf[14] = 0;
		fr->buf[15] = 1;	/* VLAN 1 */
		fr->len += 4;
		break;
	case BAD_IP_OPTIONS:
		ip->version_ihl = RTE_IPV4_VHL_DEF + 1;
		fix_ip_csum(fr);
		break;
	case BAD_IP_PROTO:
		ip->next_proto_id = IPPROTO_TCP;
		fix_ip_csum(fr);
		break;
	case BAD_IP_MF:
		ip->fragment_offset = RTE_BE16(RTE_IPV4_HDR_MF_FLAG);
		fix_ip_csum(fr);
		break;
	case BAD_IP_FRAG_OFF:
		ip->fragment_offset = RTE_BE16(1);
		fix_ip_csum(fr);
		break;
	case BAD_IP_LEN_LONG:
		ip->total_length = rte_cpu_to_be_16(fr->len - sizeof(*eth) + 1);
		fix_ip_csum(fr);
		break;
	case BAD_IP_LEN_SHORT:
		ip->total_length = rte_cpu_to_be_16(sizeof(*ip) + sizeof(struct rte_udp_hdr) +
				sizeof(struct amrma_wire_hdr) - 1);
		fix_ip_csum(fr);
		break;
	case BAD_IP_LEN_20:
		ip->total_length = rte_cpu_to_be_16(sizeof(*ip));	/* no room for UDP */
		fix_ip_csum(fr);
		break;
	case BAD_IP_CSUM:
		/* any change of the field is detected: only 0 and 0xffff are equivalent */
		ip->hdr_checksum ^= RTE_BE16(0x1234);
		break;
	case BAD_UDP_CSUM:
		csum = udp->dgram_cksum ^ RTE_BE16(0x5555);
		/* 0 would mean "no checksum", accepted unless require_csum */
		udp->dgram_cksum = csum ? csum : (udp->dgram_cksum ^ RTE_BE16(0x0f0f));
		break;
	case BAD_NFU_MAC:
		eth->dst_addr.addr_bytes[5] ^= 0xff;
		break;
	default:
		return false;
	}
	return true;
}

int
pcapgen_build_bad(struct pcapgen_state *st, unsigned int v, struct pcapgen_frame *fr)
{
	uint16_t h = st->cfg->handler;
	int rc;

	v %= BAD__MAX;
	switch (v) {
	case BAD_NARGS_9:
		fill(st, fr, AMRMA_WIRE_REQUEST, AMRMA_WIRE_MAX_ARGS, 8, h, 0);
		break;
	case BAD_LEN_PAYLOAD_MAX:
		fill(st, fr, AMRMA_WIRE_REQUEST, 1, AMRMA_WIRE_MAX_PAYLOAD - 7, h, 0);
		break;
	case BAD_LEN_ACK_ARGS:
		fill(st, fr, AMRMA_WIRE_ACK, 1, 0, AMRMA_WIRE_NO_HANDLER, 0);
		break;
	case BAD_HANDLER_REQ_NONE:
		fill(st, fr, AMRMA_WIRE_REQUEST, BAD_NARGS, BAD_PAYLOAD, AMRMA_WIRE_NO_HANDLER, 0);
		break;
	case BAD_HANDLER_256:
		fill(st, fr, AMRMA_WIRE_REQUEST, BAD_NARGS, BAD_PAYLOAD,
			AMRMA_WIRE_MAX_HANDLERS, 0);
		break;
	case BAD_HANDLER_ACK:
		fill(st, fr, AMRMA_WIRE_ACK, 0, 0, h, 0);
		break;
	case BAD_MORE_ON_ACK:
		fill(st, fr, AMRMA_WIRE_ACK, 0, 0, AMRMA_WIRE_NO_HANDLER, 0);
		break;
	default:
		fill(st, fr, AMRMA_WIRE_REQUEST, BAD_NARGS, BAD_PAYLOAD, h, 0);
		break;
	}
	rc = emit(st, fr);
	if (rc < 0)
		return rc;
	if (!break_l2l3(fr, v))
		break_amrma(st, fr, v);
	return 0;
}
