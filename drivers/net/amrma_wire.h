/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef AMRMA_WIRE_H
#define AMRMA_WIRE_H

/**
 * @file
 * amrma frame codec: Ethernet / IPv4 / UDP / amrma header / arguments / payload.
 *
 * Pure functions over (buffer, length): no EAL, no mbufs, so they are unit-testable and
 * fuzzable. Buffers must be 2-byte aligned (mbuf data is). The layout is specified in
 * docs/wire-format.md; this header is its C form.
 */

#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_udp.h>

#ifdef __cplusplus
extern "C" {
#endif

#define AMRMA_WIRE_VERSION	1
#define AMRMA_WIRE_MAX_ARGS	8
#define AMRMA_WIRE_MAX_HANDLERS	256
#define AMRMA_WIRE_NO_HANDLER	0xffff
#define AMRMA_WIRE_MAX_CTX	64
#define AMRMA_WIRE_MAX_PAYLOAD	9000
#define AMRMA_WIRE_SACK_BITS	32

/** Bytes of Ethernet + IPv4 + UDP in front of the amrma header. */
#define AMRMA_WIRE_L2L4_LEN \
	(sizeof(struct rte_ether_hdr) + sizeof(struct rte_ipv4_hdr) + sizeof(struct rte_udp_hdr))

/** Frame types. */
enum amrma_wire_type {
	AMRMA_WIRE_REQUEST = 1,
	AMRMA_WIRE_REPLY = 2,
	AMRMA_WIRE_ACK = 3,
	AMRMA_WIRE_SEND = 4,	/**< one-way: a handler runs, nothing is replied */
};

/** Header flag: ack and sack fields carry information. */
#define AMRMA_WIRE_F_ACK_VALID	0x01
/**
 * Header flag: more messages follow this one's payload, each behind a struct
 * amrma_wire_sub, up to the end of the UDP datagram (a coalesced frame).
 */
#define AMRMA_WIRE_F_MORE	0x02
#define AMRMA_WIRE_F_ALL	(AMRMA_WIRE_F_ACK_VALID | AMRMA_WIRE_F_MORE)
/** Most messages in one frame (the header's own message included). */
#define AMRMA_WIRE_MAX_BUNDLE	64

/** The amrma header as it is on the wire (big-endian fields). */
struct amrma_wire_hdr {
	uint8_t version;
	uint8_t type;
	uint8_t flags;
	uint8_t nargs;
	rte_be16_t handler;
	uint8_t src_ctx;
	uint8_t dst_ctx;
	rte_be16_t src_node;
	rte_be16_t dst_node;
	rte_be32_t seq;
	rte_be32_t ack;
	rte_be32_t sack;
	rte_be32_t token;
	rte_be16_t payload_len;
	rte_be16_t status;
	rte_be32_t src_epoch;
	rte_be32_t dst_epoch;
} __rte_packed;

/**
 * Header of each further message of a coalesced frame (AMRMA_WIRE_F_MORE); its arguments
 * and payload follow. Addresses, sequence number and acks are the frame's.
 */
struct amrma_wire_sub {
	uint8_t type;		/**< AMRMA_WIRE_REQUEST, AMRMA_WIRE_REPLY or AMRMA_WIRE_SEND */
	uint8_t nargs;
	rte_be16_t handler;
	rte_be16_t payload_len;
	rte_be16_t status;
	rte_be32_t token;
} __rte_packed;

/** Bytes a further message of a coalesced frame takes. */
static inline size_t
amrma_wire_sub_len(unsigned int nargs, size_t payload_len)
{
	return sizeof(struct amrma_wire_sub) + 8u * nargs + payload_len;
}

/** Total header bytes in front of the arguments. */
#define AMRMA_WIRE_HDR_LEN (AMRMA_WIRE_L2L4_LEN + sizeof(struct amrma_wire_hdr))
/** Smallest valid frame (an ACK). */
#define AMRMA_WIRE_MIN_FRAME AMRMA_WIRE_HDR_LEN

/** Reasons a frame is rejected; each has a counter in the receiving context. */
enum amrma_wire_err {
	AMRMA_WIRE_OK = 0,
	AMRMA_WIRE_ERR_TRUNCATED,
	AMRMA_WIRE_ERR_NOT_IPV4,
	AMRMA_WIRE_ERR_BAD_IP_HDR,
	AMRMA_WIRE_ERR_BAD_IP_LEN,
	AMRMA_WIRE_ERR_BAD_IP_CSUM,
	AMRMA_WIRE_ERR_BAD_UDP_LEN,
	AMRMA_WIRE_ERR_BAD_PORT,
	AMRMA_WIRE_ERR_BAD_UDP_CSUM,
	AMRMA_WIRE_ERR_BAD_VERSION,
	AMRMA_WIRE_ERR_BAD_TYPE,
	AMRMA_WIRE_ERR_BAD_FLAGS,
	AMRMA_WIRE_ERR_TOO_MANY_ARGS,
	AMRMA_WIRE_ERR_BAD_LENGTH,
	AMRMA_WIRE_ERR_BAD_HANDLER,
	AMRMA_WIRE_ERR_BAD_CTX,
	AMRMA_WIRE_ERR_NOT_FOR_US,
	AMRMA_WIRE_ERR__MAX
};

/** Short stable name of a rejection reason ("truncated", "bad_version", ...). */
const char *amrma_wire_err_name(enum amrma_wire_err err);

/** What the receiver knows about itself; frames are checked against it. */
struct amrma_wire_rx_params {
	struct rte_ether_addr mac;	/**< our port MAC */
	uint16_t node_id;		/**< our node id */
	uint16_t udp_base;		/**< UDP port of context 0 */
	uint8_t nb_ctx;			/**< contexts on this node */
	bool require_csum;		/**< reject a zero UDP checksum */
	bool skip_csum;			/**< checksums already verified (RX offload) */
};

/** The header fields of a frame (host order): what a builder writes, what a parse reads. */
struct amrma_wire_fields {
	uint8_t type;
	uint8_t flags;
	uint8_t nargs;
	uint8_t src_ctx;
	uint8_t dst_ctx;
	uint16_t handler;
	uint16_t src_node;
	uint16_t dst_node;
	uint16_t payload_len;
	int16_t status;
	uint32_t seq;
	uint32_t ack;
	uint32_t sack;
	uint32_t token;
	uint32_t src_epoch;	/**< sender's incarnation */
	uint32_t dst_epoch;	/**< receiver's incarnation as the sender knows it; 0 unknown */
};

/** A validated frame: its header in host order plus pointers into the buffer. */
struct amrma_wire_view {
	struct amrma_wire_fields hdr;	/**< of the current message, see amrma_wire_next() */
	const uint8_t *args;		/**< nargs big-endian 64-bit words, unaligned */
	const uint8_t *payload;		/**< payload_len bytes */
	const uint8_t *more;		/**< AMRMA_WIRE_F_MORE: the further messages */
	uint16_t more_len;		/**< their bytes (0 without AMRMA_WIRE_F_MORE) */
	uint8_t nb_msgs;		/**< messages in the frame (0 for an ACK) */
	uint8_t nb_req;			/**< how many of them are requests */
};

/**
 * Validate a frame held contiguously in (buf, len) and decode its header.
 *
 * @return AMRMA_WIRE_OK, or the reason it was rejected (view is then undefined).
 */
enum amrma_wire_err amrma_wire_parse(const void *buf, size_t len,
		const struct amrma_wire_rx_params *rx, struct amrma_wire_view *view);

/**
 * Validate only the headers of a frame whose payload may lie outside (buf, len):
 * buf holds at least the headers and arguments, frame_len is the whole frame length.
 * The UDP checksum is not checked (the caller checks it over all segments);
 * view->payload points into buf only for the bytes present there.
 */
enum amrma_wire_err amrma_wire_parse_hdr(const void *buf, size_t len, size_t frame_len,
		const struct amrma_wire_rx_params *rx, struct amrma_wire_view *view);

/**
 * Step to the next message of a validated coalesced frame: overwrite the per-message
 * fields of v (type, nargs, handler, payload_len, status, token, args, payload) from the
 * message at v->more and advance v->more / v->more_len past it.
 * Only call while v->more_len != 0; the frame-level fields stay as they are.
 */
static inline void
amrma_wire_next(struct amrma_wire_view *v)
{
	const struct amrma_wire_sub *s = (const struct amrma_wire_sub *)v->more;
	size_t n;

	v->hdr.type = s->type;
	v->hdr.nargs = s->nargs;
	v->hdr.handler = rte_be_to_cpu_16(s->handler);
	v->hdr.payload_len = rte_be_to_cpu_16(s->payload_len);
	v->hdr.status = (int16_t)rte_be_to_cpu_16(s->status);
	v->hdr.token = rte_be_to_cpu_32(s->token);
	v->args = v->more + sizeof(*s);
	v->payload = v->args + 8u * v->hdr.nargs;
	n = amrma_wire_sub_len(v->hdr.nargs, v->hdr.payload_len);
	v->more += n;
	v->more_len = (uint16_t)(v->more_len - n);
}

/** Read argument i (host order) of a parsed frame. */
static inline uint64_t
amrma_wire_arg(const struct amrma_wire_view *v, unsigned int i)
{
	uint64_t x;

	memcpy(&x, v->args + 8 * i, sizeof(x));
	return rte_be_to_cpu_64(x);
}

/** Addresses of one direction of a channel. */
struct amrma_wire_addr {
	struct rte_ether_addr src_mac;
	struct rte_ether_addr dst_mac;
	rte_be32_t src_ip;
	rte_be32_t dst_ip;
	uint16_t udp_base;	/**< same base on both nodes */
};

/**
 * Write all headers and the arguments into buf. The payload (f->payload_len bytes) is
 * not written: it follows at offset amrma_wire_hdr_len(nargs), in buf or in another
 * segment. The UDP checksum is left 0; see amrma_wire_udp_csum_set().
 *
 * @return header length in bytes, or -EINVAL / -EMSGSIZE (cap too small).
 */
int amrma_wire_build_hdr(void *buf, size_t cap, const struct amrma_wire_addr *a,
		const struct amrma_wire_fields *f, const uint64_t *args);

/**
 * Build a complete contiguous frame with its payload copied in and the UDP checksum set
 * when csum is true.
 *
 * @return frame length, or a negative errno.
 */
int amrma_wire_build(void *buf, size_t cap, const struct amrma_wire_addr *a,
		const struct amrma_wire_fields *f, const uint64_t *args,
		const void *payload, bool csum);

/** Header length for a frame with nargs arguments. */
static inline size_t
amrma_wire_hdr_len(unsigned int nargs)
{
	return AMRMA_WIRE_HDR_LEN + 8u * nargs;
}

/**
 * Write a further message of a coalesced frame at buf, which has room for
 * amrma_wire_sub_len(nargs, len) bytes: type (AMRMA_WIRE_REQUEST or AMRMA_WIRE_REPLY),
 * handler, status, token, nargs arguments and len payload bytes. The frame's header needs
 * AMRMA_WIRE_F_MORE and amrma_wire_set_len() afterwards. Inline: it runs once per
 * coalesced message.
 */
static inline void
amrma_wire_sub_put(void *buf, uint8_t type, uint16_t handler, int16_t status, uint32_t token,
		   const uint64_t *args, unsigned int nargs, const void *payload, uint16_t len)
{
	struct amrma_wire_sub *s = (struct amrma_wire_sub *)buf;
	uint8_t *p = (uint8_t *)(s + 1);
	unsigned int i;

	s->type = type;
	s->nargs = (uint8_t)nargs;
	s->handler = rte_cpu_to_be_16(handler);
	s->payload_len = rte_cpu_to_be_16(len);
	s->status = rte_cpu_to_be_16((uint16_t)status);
	s->token = rte_cpu_to_be_32(token);
	for (i = 0; i < nargs; i++, p += 8) {
		uint64_t be = rte_cpu_to_be_64(args[i]);

		memcpy(p, &be, sizeof(be));
	}
	if (len != 0)
		memcpy(p, payload, len);
}

/**
 * Set the IPv4 and UDP lengths of a frame that is now len bytes long (Ethernet header
 * included) and recompute the IPv4 header checksum. The UDP checksum is left alone.
 */
void amrma_wire_set_len(void *frame, size_t len);

/** Compute and store the UDP checksum of a contiguous frame of len bytes. */
void amrma_wire_udp_csum_set(void *frame, size_t len);

/**
 * One's complement sum of len bytes added to sum (not folded, not complemented): 32-bit
 * words into a 64-bit accumulator, twice as fast as summing 16-bit words.
 */
uint64_t amrma_wire_sum(const void *buf, size_t len, uint64_t sum);

/** Fold a 64-bit one's complement accumulator to 16 bits. */
static inline uint16_t
amrma_wire_fold(uint64_t sum)
{
	sum = (sum & 0xffffffff) + (sum >> 32);
	sum = (sum & 0xffffffff) + (sum >> 32);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

/**
 * The UDP pseudo header's part of the checksum (addresses, protocol, UDP length, each as
 * network-order words), for amrma_wire_sum() over the datagram to continue.
 */
static inline uint64_t
amrma_wire_phdr_sum(const struct rte_ipv4_hdr *ip, const struct rte_udp_hdr *udp)
{
	return (uint64_t)ip->src_addr + ip->dst_addr + rte_cpu_to_be_16(IPPROTO_UDP) +
	       udp->dgram_len;
}

/**
 * Headers of one channel direction built once: addresses, ports, contexts, nodes and the
 * sender's epoch are constant, so a frame costs a copy and a few stores.
 */
struct amrma_wire_tmpl {
	uint8_t hdr[AMRMA_WIRE_HDR_LEN];	/**< total/UDP lengths 0, checksums of that */
};

/**
 * Build the template from the constant fields of f (src/dst ctx and node, src_epoch).
 * @return 0 or -EINVAL.
 */
int amrma_wire_tmpl_init(struct amrma_wire_tmpl *t, const struct amrma_wire_addr *a,
			 const struct amrma_wire_fields *f);

/**
 * Write the headers and arguments of a frame from a template and the per-frame fields of f
 * (type, flags, nargs, handler, payload_len, status, seq, ack, sack, token, dst_epoch);
 * byte-identical to amrma_wire_build_hdr(). UDP checksum left 0.
 * @return header length.
 */
size_t amrma_wire_tmpl_build(void *buf, const struct amrma_wire_tmpl *t,
			     const struct amrma_wire_fields *f, const uint64_t *args);

/** The amrma header inside a frame that starts with its Ethernet header. */
static inline struct amrma_wire_hdr *
amrma_wire_hdr_of(void *frame)
{
	return (struct amrma_wire_hdr *)((uint8_t *)frame + AMRMA_WIRE_L2L4_LEN);
}

#ifdef __cplusplus
}
#endif

#endif /* AMRMA_WIRE_H */
