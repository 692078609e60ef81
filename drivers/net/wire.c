/* SPDX-License-Identifier: BSD-3-Clause */
/* Frame codec: builds and validates amrma frames (docs/wire-format.md). */

#include <errno.h>
#include <string.h>

#include "amrma_wire.h"

static const char *const err_names[AMRMA_WIRE_ERR__MAX] = {
	[AMRMA_WIRE_OK] = "ok",
	[AMRMA_WIRE_ERR_TRUNCATED] = "truncated",
	[AMRMA_WIRE_ERR_NOT_IPV4] = "not_ipv4",
	[AMRMA_WIRE_ERR_BAD_IP_HDR] = "bad_ip_hdr",
	[AMRMA_WIRE_ERR_BAD_IP_LEN] = "bad_ip_len",
	[AMRMA_WIRE_ERR_BAD_IP_CSUM] = "bad_ip_csum",
	[AMRMA_WIRE_ERR_BAD_UDP_LEN] = "bad_udp_len",
	[AMRMA_WIRE_ERR_BAD_PORT] = "bad_port",
	[AMRMA_WIRE_ERR_BAD_UDP_CSUM] = "bad_udp_csum",
	[AMRMA_WIRE_ERR_BAD_VERSION] = "bad_version",
	[AMRMA_WIRE_ERR_BAD_TYPE] = "bad_type",
	[AMRMA_WIRE_ERR_BAD_FLAGS] = "bad_flags",
	[AMRMA_WIRE_ERR_TOO_MANY_ARGS] = "too_many_args",
	[AMRMA_WIRE_ERR_BAD_LENGTH] = "bad_length",
	[AMRMA_WIRE_ERR_BAD_HANDLER] = "bad_handler",
	[AMRMA_WIRE_ERR_BAD_CTX] = "bad_ctx",
	[AMRMA_WIRE_ERR_NOT_FOR_US] = "not_for_us",
};

const char *
amrma_wire_err_name(enum amrma_wire_err err)
{
	if ((unsigned int)err >= AMRMA_WIRE_ERR__MAX)
		return "unknown";
	return err_names[err];
}

uint64_t
amrma_wire_sum(const void *buf, size_t len, uint64_t sum)
{
	const uint8_t *p = buf;
	uint32_t w;
	uint16_t h;

	/* native-order words: the one's complement sum does not care about byte order as
	 * long as the result is stored the same way */
	for (; len >= 16; len -= 16, p += 16) {
		uint64_t a, b;

		memcpy(&a, p, 8);
		memcpy(&b, p + 8, 8);
		sum += (a & 0xffffffff) + (a >> 32) + (b & 0xffffffff) + (b >> 32);
	}
	for (; len >= 4; len -= 4, p += 4) {
		memcpy(&w, p, 4);
		sum += w;
	}
	if (len >= 2) {
		memcpy(&h, p, 2);
		sum += h;
		p += 2;
		len -= 2;
	}
	if (len)
		sum += *p;	/* the odd last byte is the first byte of a zero-padded word */
	return sum;
}

/* UDP checksum over pseudo header, header and payload (contiguous frame). */
static uint16_t
udp_sum(const struct rte_ipv4_hdr *ip, const struct rte_udp_hdr *udp)
{
	return amrma_wire_fold(amrma_wire_sum(udp, rte_be_to_cpu_16(udp->dgram_len),
					      amrma_wire_phdr_sum(ip, udp)));
}

/* The further messages of a coalesced frame: each whole, well-formed, none left over. */
static enum amrma_wire_err
check_more(struct amrma_wire_view *v)
{
	const uint8_t *p = v->more;
	size_t rem = v->more_len;

	if (rem == 0)
		return AMRMA_WIRE_ERR_BAD_LENGTH;	/* F_MORE and nothing more */
	while (rem != 0) {
		const struct amrma_wire_sub *s = (const void *)p;
		uint16_t handler, plen;
		size_t n;

		if (rem < sizeof(*s))
			return AMRMA_WIRE_ERR_BAD_LENGTH;
		if (s->type != AMRMA_WIRE_REQUEST && s->type != AMRMA_WIRE_REPLY &&
		    s->type != AMRMA_WIRE_SEND)
			return AMRMA_WIRE_ERR_BAD_TYPE;
		if (s->nargs > AMRMA_WIRE_MAX_ARGS)
			return AMRMA_WIRE_ERR_TOO_MANY_ARGS;
		plen = rte_be_to_cpu_16(s->payload_len);
		n = amrma_wire_sub_len(s->nargs, plen);
		if (plen > AMRMA_WIRE_MAX_PAYLOAD || n > rem)
			return AMRMA_WIRE_ERR_BAD_LENGTH;
		handler = rte_be_to_cpu_16(s->handler);
		if (handler == AMRMA_WIRE_NO_HANDLER ? s->type != AMRMA_WIRE_REPLY :
		    handler >= AMRMA_WIRE_MAX_HANDLERS)
			return AMRMA_WIRE_ERR_BAD_HANDLER;
		if (v->nb_msgs == AMRMA_WIRE_MAX_BUNDLE)
			return AMRMA_WIRE_ERR_BAD_LENGTH;
		v->nb_msgs++;
		v->nb_req += s->type == AMRMA_WIRE_REQUEST;
		p += n;
		rem -= n;
	}
	return AMRMA_WIRE_OK;
}

/* Checks every layer; the UDP checksum only when with_csum (payload contiguous). */
static enum amrma_wire_err
parse(const uint8_t *p, size_t len, size_t frame_len, bool with_csum,
	const struct amrma_wire_rx_params *rx, struct amrma_wire_view *v)
{
	const struct rte_ether_hdr *eth = (const void *)p;
	const struct rte_ipv4_hdr *ip;
	const struct rte_udp_hdr *udp;
	const struct amrma_wire_hdr *h;
	size_t ip_len, udp_len, am_len;
	uint16_t dport, sport;

	if (len < AMRMA_WIRE_HDR_LEN || frame_len < len)
		return AMRMA_WIRE_ERR_TRUNCATED;
	if (eth->ether_type != RTE_BE16(RTE_ETHER_TYPE_IPV4))
		return AMRMA_WIRE_ERR_NOT_IPV4;
	if (!rte_is_same_ether_addr(&eth->dst_addr, &rx->mac))
		return AMRMA_WIRE_ERR_NOT_FOR_US;

	ip = (const void *)(eth + 1);
	if (ip->version_ihl != RTE_IPV4_VHL_DEF || ip->next_proto_id != IPPROTO_UDP ||
	    (ip->fragment_offset & RTE_BE16(RTE_IPV4_HDR_MF_FLAG | RTE_IPV4_HDR_OFFSET_MASK)))
		return AMRMA_WIRE_ERR_BAD_IP_HDR;
	ip_len = rte_be_to_cpu_16(ip->total_length);
	if (ip_len < sizeof(*ip) + sizeof(*udp) + sizeof(*h))
		return AMRMA_WIRE_ERR_BAD_IP_LEN;
	if (ip_len > frame_len - sizeof(*eth))
		return AMRMA_WIRE_ERR_TRUNCATED;	/* the datagram was cut short */
	/* the complemented sum over a correct header, checksum included, is 0 */
	if (!rx->skip_csum && rte_ipv4_cksum(ip) != 0)
		return AMRMA_WIRE_ERR_BAD_IP_CSUM;

	udp = (const void *)(ip + 1);
	udp_len = rte_be_to_cpu_16(udp->dgram_len);
	if (udp_len != ip_len - sizeof(*ip))
		return AMRMA_WIRE_ERR_BAD_UDP_LEN;
	dport = rte_be_to_cpu_16(udp->dst_port);
	sport = rte_be_to_cpu_16(udp->src_port);
	if (dport < rx->udp_base || dport - rx->udp_base >= rx->nb_ctx ||
	    sport < rx->udp_base || sport - rx->udp_base >= AMRMA_WIRE_MAX_CTX)
		return AMRMA_WIRE_ERR_BAD_PORT;

	h = (const void *)(udp + 1);
	if (h->version != AMRMA_WIRE_VERSION)
		return AMRMA_WIRE_ERR_BAD_VERSION;
	if (h->type < AMRMA_WIRE_REQUEST || h->type > AMRMA_WIRE_SEND)
		return AMRMA_WIRE_ERR_BAD_TYPE;
	if (h->flags & ~AMRMA_WIRE_F_ALL)
		return AMRMA_WIRE_ERR_BAD_FLAGS;
	if (h->nargs > AMRMA_WIRE_MAX_ARGS)
		return AMRMA_WIRE_ERR_TOO_MANY_ARGS;

	v->hdr.type = h->type;
	v->hdr.flags = h->flags;
	v->hdr.nargs = h->nargs;
	v->hdr.payload_len = rte_be_to_cpu_16(h->payload_len);
	am_len = sizeof(*h) + 8u * v->hdr.nargs + v->hdr.payload_len;
	if (v->hdr.payload_len > AMRMA_WIRE_MAX_PAYLOAD || udp_len - sizeof(*udp) < am_len)
		return AMRMA_WIRE_ERR_BAD_LENGTH;
	v->more_len = (uint16_t)(udp_len - sizeof(*udp) - am_len);
	if (!(h->flags & AMRMA_WIRE_F_MORE) && v->more_len != 0)
		return AMRMA_WIRE_ERR_BAD_LENGTH;
	if (len < AMRMA_WIRE_HDR_LEN + 8u * v->hdr.nargs)
		return AMRMA_WIRE_ERR_TRUNCATED;

	v->hdr.handler = rte_be_to_cpu_16(h->handler);
	if (v->hdr.handler == AMRMA_WIRE_NO_HANDLER) {
		if (v->hdr.type == AMRMA_WIRE_REQUEST || v->hdr.type == AMRMA_WIRE_SEND)
			return AMRMA_WIRE_ERR_BAD_HANDLER;
	} else if (v->hdr.handler >= AMRMA_WIRE_MAX_HANDLERS || v->hdr.type == AMRMA_WIRE_ACK) {
		return AMRMA_WIRE_ERR_BAD_HANDLER;
	}
	if (v->hdr.type == AMRMA_WIRE_ACK && (v->hdr.nargs || v->hdr.payload_len))
		return AMRMA_WIRE_ERR_BAD_LENGTH;
	v->nb_msgs = v->hdr.type != AMRMA_WIRE_ACK;
	v->nb_req = v->hdr.type == AMRMA_WIRE_REQUEST;
	v->args = (const uint8_t *)(h + 1);
	v->payload = v->args + 8u * v->hdr.nargs;
	v->more = v->payload + v->hdr.payload_len;
	if (h->flags & AMRMA_WIRE_F_MORE) {
		enum amrma_wire_err err;

		/* the further messages must all be in buf: coalesced frames are contiguous */
		if (v->hdr.type == AMRMA_WIRE_ACK)
			return AMRMA_WIRE_ERR_BAD_FLAGS;
		if (len != frame_len)
			return AMRMA_WIRE_ERR_TRUNCATED;
		err = check_more(v);
		if (err != AMRMA_WIRE_OK)
			return err;
	}

	v->hdr.src_ctx = h->src_ctx;
	v->hdr.dst_ctx = h->dst_ctx;
	if (v->hdr.dst_ctx != dport - rx->udp_base || v->hdr.src_ctx != sport - rx->udp_base)
		return AMRMA_WIRE_ERR_BAD_CTX;
	v->hdr.src_node = rte_be_to_cpu_16(h->src_node);
	v->hdr.dst_node = rte_be_to_cpu_16(h->dst_node);
	if (v->hdr.dst_node != rx->node_id)
		return AMRMA_WIRE_ERR_NOT_FOR_US;

	if (with_csum && !rx->skip_csum) {
		if (udp->dgram_cksum == 0) {
			if (rx->require_csum)
				return AMRMA_WIRE_ERR_BAD_UDP_CSUM;
		} else if (udp_sum(ip, udp) != 0xffff) {
			/* the sum over everything, checksum included, is all ones */
			return AMRMA_WIRE_ERR_BAD_UDP_CSUM;
		}
	}

	v->hdr.status = (int16_t)rte_be_to_cpu_16(h->status);
	v->hdr.seq = rte_be_to_cpu_32(h->seq);
	v->hdr.ack = rte_be_to_cpu_32(h->ack);
	v->hdr.sack = rte_be_to_cpu_32(h->sack);
	v->hdr.token = rte_be_to_cpu_32(h->token);
	v->hdr.src_epoch = rte_be_to_cpu_32(h->src_epoch);
	v->hdr.dst_epoch = rte_be_to_cpu_32(h->dst_epoch);
	return AMRMA_WIRE_OK;
}

enum amrma_wire_err
amrma_wire_parse(const void *buf, size_t len, const struct amrma_wire_rx_params *rx,
		 struct amrma_wire_view *view)
{
	return parse(buf, len, len, true, rx, view);
}

enum amrma_wire_err
amrma_wire_parse_hdr(const void *buf, size_t len, size_t frame_len,
		     const struct amrma_wire_rx_params *rx, struct amrma_wire_view *view)
{
	return parse(buf, len, frame_len, false, rx, view);
}

/* The amrma header fields that change from frame to frame, and the arguments. */
static __rte_always_inline void
put_frame_fields(struct amrma_wire_hdr *h, const struct amrma_wire_fields *f,
		 const uint64_t *args)
{
	unsigned int i;

	h->type = f->type;
	h->flags = f->flags;
	h->nargs = f->nargs;
	h->handler = rte_cpu_to_be_16(f->handler);
	h->seq = rte_cpu_to_be_32(f->seq);
	h->ack = rte_cpu_to_be_32(f->ack);
	h->sack = rte_cpu_to_be_32(f->sack);
	h->token = rte_cpu_to_be_32(f->token);
	h->payload_len = rte_cpu_to_be_16(f->payload_len);
	h->status = rte_cpu_to_be_16((uint16_t)f->status);
	h->dst_epoch = rte_cpu_to_be_32(f->dst_epoch);
	for (i = 0; i < f->nargs; i++) {
		uint64_t be = rte_cpu_to_be_64(args[i]);

		memcpy((uint8_t *)(h + 1) + 8 * i, &be, sizeof(be));
	}
}

int
amrma_wire_build_hdr(void *buf, size_t cap, const struct amrma_wire_addr *a,
		     const struct amrma_wire_fields *f, const uint64_t *args)
{
	struct rte_ether_hdr *eth = buf;
	struct rte_ipv4_hdr *ip = (void *)(eth + 1);
	struct rte_udp_hdr *udp = (void *)(ip + 1);
	struct amrma_wire_hdr *h = (void *)(udp + 1);
	size_t hlen = amrma_wire_hdr_len(f->nargs);
	size_t am_len = sizeof(*h) + 8u * f->nargs + f->payload_len;

	if (f->nargs > AMRMA_WIRE_MAX_ARGS || f->payload_len > AMRMA_WIRE_MAX_PAYLOAD ||
	    f->dst_ctx >= AMRMA_WIRE_MAX_CTX || f->src_ctx >= AMRMA_WIRE_MAX_CTX)
		return -EINVAL;
	if (cap < hlen)
		return -EMSGSIZE;

	rte_ether_addr_copy(&a->dst_mac, &eth->dst_addr);
	rte_ether_addr_copy(&a->src_mac, &eth->src_addr);
	eth->ether_type = RTE_BE16(RTE_ETHER_TYPE_IPV4);

	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->type_of_service = 0;
	ip->total_length = rte_cpu_to_be_16(sizeof(*ip) + sizeof(*udp) + am_len);
	ip->packet_id = 0;
	ip->fragment_offset = 0;
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_UDP;
	ip->hdr_checksum = 0;
	ip->src_addr = a->src_ip;
	ip->dst_addr = a->dst_ip;
	ip->hdr_checksum = rte_ipv4_cksum(ip);

	udp->src_port = rte_cpu_to_be_16(a->udp_base + f->src_ctx);
	udp->dst_port = rte_cpu_to_be_16(a->udp_base + f->dst_ctx);
	udp->dgram_len = rte_cpu_to_be_16(sizeof(*udp) + am_len);
	udp->dgram_cksum = 0;

	h->version = AMRMA_WIRE_VERSION;
	h->src_ctx = f->src_ctx;
	h->dst_ctx = f->dst_ctx;
	h->src_node = rte_cpu_to_be_16(f->src_node);
	h->dst_node = rte_cpu_to_be_16(f->dst_node);
	h->src_epoch = rte_cpu_to_be_32(f->src_epoch);
	put_frame_fields(h, f, args);
	return (int)hlen;
}

void
amrma_wire_set_len(void *frame, size_t len)
{
	struct rte_ipv4_hdr *ip = (void *)((uint8_t *)frame + sizeof(struct rte_ether_hdr));
	struct rte_udp_hdr *udp = (void *)(ip + 1);

	ip->total_length = rte_cpu_to_be_16((uint16_t)(len - sizeof(struct rte_ether_hdr)));
	udp->dgram_len = rte_cpu_to_be_16((uint16_t)(len - sizeof(struct rte_ether_hdr) -
						     sizeof(*ip)));
	ip->hdr_checksum = 0;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
}

void
amrma_wire_udp_csum_set(void *frame, size_t len)
{
	struct rte_ipv4_hdr *ip = (void *)((uint8_t *)frame + sizeof(struct rte_ether_hdr));
	struct rte_udp_hdr *udp = (void *)(ip + 1);
	uint16_t cksum;

	RTE_SET_USED(len);
	udp->dgram_cksum = 0;
	cksum = (uint16_t)~udp_sum(ip, udp);
	/* RFC 768: a computed 0 is sent as all ones (0 means "no checksum") */
	udp->dgram_cksum = cksum == 0 ? 0xffff : cksum;
}

int
amrma_wire_tmpl_init(struct amrma_wire_tmpl *t, const struct amrma_wire_addr *a,
		     const struct amrma_wire_fields *f)
{
	struct amrma_wire_fields c = {
		.src_ctx = f->src_ctx, .dst_ctx = f->dst_ctx,
		.src_node = f->src_node, .dst_node = f->dst_node,
		.src_epoch = f->src_epoch,
	};
	struct rte_ipv4_hdr *ip = (void *)(t->hdr + sizeof(struct rte_ether_hdr));
	struct rte_udp_hdr *udp = (void *)(ip + 1);
	int ret = amrma_wire_build_hdr(t->hdr, sizeof(t->hdr), a, &c, NULL);

	if (ret < 0)
		return ret;
	/* lengths 0 in the template: per frame they are added to the checksum */
	ip->total_length = 0;
	udp->dgram_len = 0;
	ip->hdr_checksum = 0;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	return 0;
}

size_t
amrma_wire_tmpl_build(void *buf, const struct amrma_wire_tmpl *t,
		      const struct amrma_wire_fields *f, const uint64_t *args)
{
	struct rte_ipv4_hdr *ip = (void *)((uint8_t *)buf + sizeof(struct rte_ether_hdr));
	struct rte_udp_hdr *udp = (void *)(ip + 1);
	struct amrma_wire_hdr *h = (void *)(udp + 1);
	uint16_t am_len = (uint16_t)(sizeof(*h) + 8u * f->nargs + f->payload_len);
	rte_be16_t tot = rte_cpu_to_be_16((uint16_t)(sizeof(*ip) + sizeof(*udp) + am_len));

	memcpy(buf, t->hdr, AMRMA_WIRE_HDR_LEN);
	ip->total_length = tot;
	/* RFC 1624: the field went from 0 to tot */
	ip->hdr_checksum = (uint16_t)~amrma_wire_fold((uint16_t)~ip->hdr_checksum + (uint64_t)tot);
	udp->dgram_len = rte_cpu_to_be_16((uint16_t)(sizeof(*udp) + am_len));
	put_frame_fields(h, f, args);
	return AMRMA_WIRE_HDR_LEN + 8u * f->nargs;
}

int
amrma_wire_build(void *buf, size_t cap, const struct amrma_wire_addr *a,
		 const struct amrma_wire_fields *f, const uint64_t *args,
		 const void *payload, bool csum)
{
	int hlen = amrma_wire_build_hdr(buf, cap, a, f, args);

	if (hlen < 0)
		return hlen;
	if (cap - (size_t)hlen < f->payload_len)
		return -EMSGSIZE;
	if (f->payload_len)
		memcpy((uint8_t *)buf + hlen, payload, f->payload_len);
	if (csum)
		amrma_wire_udp_csum_set(buf, (size_t)hlen + f->payload_len);
	return hlen + f->payload_len;
}
