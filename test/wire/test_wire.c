/* SPDX-License-Identifier: BSD-3-Clause */
/* Frame codec: round trip and every rejection reason. No EAL needed. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "amrma_wire.h"

static const struct amrma_wire_addr addr = {
	.src_mac = { .addr_bytes = { 0x02, 0, 0, 0, 0, 1 } },
	.dst_mac = { .addr_bytes = { 0x02, 0, 0, 0, 0, 2 } },
	.src_ip = RTE_BE32(0xc6120001),
	.dst_ip = RTE_BE32(0xc6120002),
	.udp_base = 7000,
};

static struct amrma_wire_rx_params rxp;

static uint8_t frame[2048];
static int flen;
static const uint64_t args[3] = { 1, UINT64_C(0x0123456789abcdef), UINT64_MAX };
static uint8_t payload[700];

static void
fields(struct amrma_wire_fields *f)
{
	memset(f, 0, sizeof(*f));
	f->type = AMRMA_WIRE_REQUEST;
	f->flags = AMRMA_WIRE_F_ACK_VALID;
	f->nargs = 3;
	f->src_ctx = 1;
	f->dst_ctx = 2;
	f->handler = 17;
	f->src_node = 1;
	f->dst_node = 2;
	f->payload_len = sizeof(payload);
	f->status = -13;
	f->seq = 0xfffffff0u;
	f->ack = 5;
	f->sack = 0x80000001u;
	f->token = 0xdeadbeefu;
	f->src_epoch = 0x01020304u;
	f->dst_epoch = 0xa0b0c0d0u;
}

static int
setup(void **state)
{
	struct amrma_wire_fields f;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 13 + 1);
	fields(&f);
	flen = amrma_wire_build(frame, sizeof(frame), &addr, &f, args, payload, true);
	assert_true(flen > 0);
	memset(&rxp, 0, sizeof(rxp));
	rxp.mac = addr.dst_mac;
	rxp.node_id = 2;
	rxp.udp_base = 7000;
	rxp.nb_ctx = 4;
	rxp.require_csum = true;
	return 0;
}

static enum amrma_wire_err
parse(const uint8_t *buf, size_t len)
{
	struct amrma_wire_view v;

	return amrma_wire_parse(buf, len, &rxp, &v);
}

static void
test_round_trip(void **state)
{
	struct amrma_wire_view v;
	unsigned int i;

	(void)state;
	assert_int_equal(flen, AMRMA_WIRE_HDR_LEN + 3 * 8 + sizeof(payload));
	assert_int_equal(amrma_wire_parse(frame, flen, &rxp, &v), AMRMA_WIRE_OK);
	assert_int_equal(v.hdr.type, AMRMA_WIRE_REQUEST);
	assert_int_equal(v.hdr.flags, AMRMA_WIRE_F_ACK_VALID);
	assert_int_equal(v.hdr.nargs, 3);
	assert_int_equal(v.hdr.src_ctx, 1);
	assert_int_equal(v.hdr.dst_ctx, 2);
	assert_int_equal(v.hdr.handler, 17);
	assert_int_equal(v.hdr.src_node, 1);
	assert_int_equal(v.hdr.dst_node, 2);
	assert_int_equal(v.hdr.payload_len, sizeof(payload));
	assert_int_equal(v.hdr.status, -13);
	assert_int_equal(v.hdr.seq, 0xfffffff0u);
	assert_int_equal(v.hdr.ack, 5);
	assert_int_equal(v.hdr.sack, 0x80000001u);
	assert_int_equal(v.hdr.token, 0xdeadbeefu);
	assert_int_equal(v.hdr.src_epoch, 0x01020304u);
	assert_int_equal(v.hdr.dst_epoch, 0xa0b0c0d0u);
	for (i = 0; i < 3; i++)
		assert_true(amrma_wire_arg(&v, i) == args[i]);
	assert_memory_equal(v.payload, payload, sizeof(payload));
	/* fixed offsets from docs/wire-format.md */
	assert_int_equal(frame[42], AMRMA_WIRE_VERSION);
	assert_int_equal(frame[43], AMRMA_WIRE_REQUEST);
	assert_int_equal((frame[46] << 8) | frame[47], 17);
	assert_int_equal(frame[54], 0xff);	/* seq, big-endian */
	assert_int_equal(frame[57], 0xf0);
	assert_int_equal(frame[74], 0x01);	/* src_epoch */
	assert_int_equal(frame[81], 0xd0);	/* dst_epoch low byte */
	assert_int_equal(frame[82 + 15], 0xef);	/* arg 1, low byte last */
	assert_int_equal(frame[82 + 24], payload[0]);
	/* Ethernet padding after the datagram is ignored */
	assert_int_equal(parse(frame, flen + 10), AMRMA_WIRE_OK);
}

static void
test_truncated_everywhere(void **state)
{
	int len;

	(void)state;
	for (len = 0; len < flen; len++) {
		enum amrma_wire_err e = parse(frame, len);

		if (e != AMRMA_WIRE_ERR_TRUNCATED)
			fail_msg("length %d: %s", len, amrma_wire_err_name(e));
	}
}

static void
fix_ip_csum(uint8_t *buf)
{
	struct rte_ipv4_hdr *ip = (void *)(buf + 14);

	ip->hdr_checksum = 0;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
}

/* Mutate a copy at offset with val (1 or 2 bytes), optionally fixing checksums. */
static enum amrma_wire_err
mutate(size_t off, unsigned int width, uint32_t val, bool fix_ip, bool fix_udp)
{
	static uint8_t b[2048];

	memcpy(b, frame, flen);
	if (width == 1) {
		b[off] = (uint8_t)val;
	} else {
		b[off] = (uint8_t)(val >> 8);
		b[off + 1] = (uint8_t)val;
	}
	if (fix_ip)
		fix_ip_csum(b);
	if (fix_udp)
		amrma_wire_udp_csum_set(b, flen);
	return parse(b, flen);
}

#define REJECT(reason, expr) assert_string_equal(amrma_wire_err_name(expr), \
						 amrma_wire_err_name(reason))

static void
test_each_rejection(void **state)
{
	(void)state;
	REJECT(AMRMA_WIRE_ERR_NOT_FOR_US, mutate(5, 1, 9, false, false));	/* dst MAC */
	REJECT(AMRMA_WIRE_ERR_NOT_IPV4, mutate(12, 2, 0x86dd, false, false));
	REJECT(AMRMA_WIRE_ERR_NOT_IPV4, mutate(12, 2, 0x8100, false, false));
	REJECT(AMRMA_WIRE_ERR_BAD_IP_HDR, mutate(14, 1, 0x46, true, false));	/* options */
	REJECT(AMRMA_WIRE_ERR_BAD_IP_HDR, mutate(14, 1, 0x65, true, false));	/* IPv6 vhl */
	REJECT(AMRMA_WIRE_ERR_BAD_IP_HDR, mutate(23, 1, 6, true, false));	/* TCP */
	REJECT(AMRMA_WIRE_ERR_BAD_IP_HDR, mutate(20, 2, 0x2000, true, false));	/* MF */
	REJECT(AMRMA_WIRE_ERR_BAD_IP_HDR, mutate(20, 2, 0x0001, true, false));	/* offset */
	REJECT(AMRMA_WIRE_ERR_BAD_IP_LEN, mutate(16, 2, 40, true, false));
	REJECT(AMRMA_WIRE_ERR_TRUNCATED, mutate(16, 2, 0xffff, true, false));
	REJECT(AMRMA_WIRE_ERR_BAD_IP_CSUM, mutate(24, 2, 0x1234, false, false));
	REJECT(AMRMA_WIRE_ERR_BAD_IP_CSUM, mutate(26, 1, 10, false, false));	/* src ip */
	REJECT(AMRMA_WIRE_ERR_BAD_UDP_LEN, mutate(38, 2, 100, false, true));
	REJECT(AMRMA_WIRE_ERR_BAD_PORT, mutate(36, 2, 7004, false, true));	/* nb_ctx 4 */
	REJECT(AMRMA_WIRE_ERR_BAD_PORT, mutate(36, 2, 6999, false, true));
	REJECT(AMRMA_WIRE_ERR_BAD_PORT, mutate(34, 2, 7064, false, true));
	REJECT(AMRMA_WIRE_ERR_BAD_UDP_CSUM, mutate(40, 2, 0x1111, false, false));
	REJECT(AMRMA_WIRE_ERR_BAD_UDP_CSUM, mutate(40, 2, 0, false, false));	/* required */
	REJECT(AMRMA_WIRE_ERR_BAD_UDP_CSUM, mutate(200, 1, frame[200] ^ 1, false, false));
	REJECT(AMRMA_WIRE_ERR_BAD_VERSION, mutate(42, 1, 2, false, true));
	REJECT(AMRMA_WIRE_ERR_BAD_VERSION, mutate(42, 1, 0, false, true));
	REJECT(AMRMA_WIRE_ERR_BAD_TYPE, mutate(43, 1, 0, false, true));
	REJECT(AMRMA_WIRE_ERR_BAD_TYPE, mutate(43, 1, 5, false, true));
	REJECT(AMRMA_WIRE_ERR_BAD_FLAGS, mutate(44, 1, 0x81, false, true));
	REJECT(AMRMA_WIRE_ERR_TOO_MANY_ARGS, mutate(45, 1, 9, false, true));
	REJECT(AMRMA_WIRE_ERR_TOO_MANY_ARGS, mutate(45, 1, 255, false, true));
	REJECT(AMRMA_WIRE_ERR_BAD_LENGTH, mutate(45, 1, 2, false, true));	/* nargs */
	REJECT(AMRMA_WIRE_ERR_BAD_LENGTH, mutate(70, 2, 699, false, true));	/* payload */
	REJECT(AMRMA_WIRE_ERR_BAD_LENGTH, mutate(70, 2, 0xffff, false, true));
	REJECT(AMRMA_WIRE_ERR_BAD_HANDLER, mutate(46, 2, 256, false, true));
	REJECT(AMRMA_WIRE_ERR_BAD_HANDLER, mutate(46, 2, AMRMA_WIRE_NO_HANDLER, false, true));
	REJECT(AMRMA_WIRE_ERR_BAD_CTX, mutate(49, 1, 3, false, true));
	REJECT(AMRMA_WIRE_ERR_BAD_CTX, mutate(48, 1, 0, false, true));
	REJECT(AMRMA_WIRE_ERR_NOT_FOR_US, mutate(53, 1, 3, false, true));	/* dst node */
	/* the unmodified frame still passes (the mutations worked on copies) */
	assert_int_equal(parse(frame, flen), AMRMA_WIRE_OK);
}

static void
test_ack_and_reply_rules(void **state)
{
	struct amrma_wire_fields f;
	struct amrma_wire_view v;
	uint8_t b[256];
	int n;

	(void)state;
	fields(&f);
	f.type = AMRMA_WIRE_ACK;
	f.nargs = 0;
	f.payload_len = 0;
	f.handler = AMRMA_WIRE_NO_HANDLER;
	n = amrma_wire_build(b, sizeof(b), &addr, &f, NULL, NULL, true);
	assert_int_equal(n, AMRMA_WIRE_MIN_FRAME);
	assert_int_equal(amrma_wire_parse(b, n, &rxp, &v), AMRMA_WIRE_OK);
	f.handler = 3;		/* an ACK names no handler */
	n = amrma_wire_build(b, sizeof(b), &addr, &f, NULL, NULL, true);
	assert_int_equal(amrma_wire_parse(b, n, &rxp, &v), AMRMA_WIRE_ERR_BAD_HANDLER);
	f.handler = AMRMA_WIRE_NO_HANDLER;
	f.nargs = 1;		/* and carries nothing */
	n = amrma_wire_build(b, sizeof(b), &addr, &f, args, NULL, true);
	assert_int_equal(amrma_wire_parse(b, n, &rxp, &v), AMRMA_WIRE_ERR_BAD_LENGTH);
	/* a one-way SEND needs a handler, like a request */
	f.type = AMRMA_WIRE_SEND;
	n = amrma_wire_build(b, sizeof(b), &addr, &f, args, NULL, true);
	assert_int_equal(amrma_wire_parse(b, n, &rxp, &v), AMRMA_WIRE_ERR_BAD_HANDLER);
	f.handler = 3;
	n = amrma_wire_build(b, sizeof(b), &addr, &f, args, NULL, true);
	assert_int_equal(amrma_wire_parse(b, n, &rxp, &v), AMRMA_WIRE_OK);
	assert_int_equal(v.hdr.type, AMRMA_WIRE_SEND);
	assert_int_equal(v.nb_req, 0);	/* nothing to reply: needs no reply room */
	f.handler = AMRMA_WIRE_NO_HANDLER;
	/* a reply may have no handler */
	f.type = AMRMA_WIRE_REPLY;
	n = amrma_wire_build(b, sizeof(b), &addr, &f, args, NULL, true);
	assert_int_equal(amrma_wire_parse(b, n, &rxp, &v), AMRMA_WIRE_OK);
	/* zero UDP checksum is accepted only when not required */
	b[40] = b[41] = 0;
	assert_int_equal(amrma_wire_parse(b, n, &rxp, &v), AMRMA_WIRE_ERR_BAD_UDP_CSUM);
	rxp.require_csum = false;
	assert_int_equal(amrma_wire_parse(b, n, &rxp, &v), AMRMA_WIRE_OK);
	rxp.require_csum = true;
	/* builder argument checks */
	f.nargs = 9;
	assert_int_equal(amrma_wire_build(b, sizeof(b), &addr, &f, args, NULL, true), -EINVAL);
	f.nargs = 0;
	f.payload_len = 100;
	assert_int_equal(amrma_wire_build(b, 120, &addr, &f, NULL, payload, true), -EMSGSIZE);
	assert_int_equal(amrma_wire_build_hdr(b, 10, &addr, &f, NULL), -EMSGSIZE);
	assert_string_equal(amrma_wire_err_name(AMRMA_WIRE_ERR__MAX), "unknown");
}

/*
 * A trusted link (rx skip_csum: what csum = off, and auto on net_memif/net_ring, resolve
 * to) verifies neither checksum, and every other rejection still applies.
 */
static void
test_trusted_link(void **state)
{
	int len;

	(void)state;
	rxp.skip_csum = true;
	assert_int_equal(mutate(24, 2, 0x1234, false, false), AMRMA_WIRE_OK);	/* IP csum */
	assert_int_equal(mutate(40, 2, 0x1111, false, false), AMRMA_WIRE_OK);	/* UDP csum */
	assert_int_equal(mutate(40, 2, 0, false, false), AMRMA_WIRE_OK);
	assert_int_equal(mutate(200, 1, frame[200] ^ 1, false, false), AMRMA_WIRE_OK);
	REJECT(AMRMA_WIRE_ERR_NOT_FOR_US, mutate(5, 1, 9, false, false));
	REJECT(AMRMA_WIRE_ERR_NOT_IPV4, mutate(12, 2, 0x86dd, false, false));
	REJECT(AMRMA_WIRE_ERR_BAD_IP_HDR, mutate(23, 1, 6, false, false));
	REJECT(AMRMA_WIRE_ERR_BAD_IP_LEN, mutate(16, 2, 40, false, false));
	REJECT(AMRMA_WIRE_ERR_BAD_UDP_LEN, mutate(38, 2, 100, false, false));
	REJECT(AMRMA_WIRE_ERR_BAD_PORT, mutate(36, 2, 7004, false, false));
	REJECT(AMRMA_WIRE_ERR_BAD_VERSION, mutate(42, 1, 2, false, false));
	REJECT(AMRMA_WIRE_ERR_BAD_TYPE, mutate(43, 1, 5, false, false));
	REJECT(AMRMA_WIRE_ERR_BAD_FLAGS, mutate(44, 1, 0x81, false, false));
	REJECT(AMRMA_WIRE_ERR_TOO_MANY_ARGS, mutate(45, 1, 9, false, false));
	REJECT(AMRMA_WIRE_ERR_BAD_LENGTH, mutate(70, 2, 0xffff, false, false));
	REJECT(AMRMA_WIRE_ERR_BAD_HANDLER, mutate(46, 2, 256, false, false));
	REJECT(AMRMA_WIRE_ERR_BAD_CTX, mutate(49, 1, 3, false, false));
	REJECT(AMRMA_WIRE_ERR_NOT_FOR_US, mutate(53, 1, 3, false, false));	/* dst node */
	for (len = 0; len < flen; len++) {
		enum amrma_wire_err e = parse(frame, (size_t)len);

		if (e != AMRMA_WIRE_ERR_TRUNCATED)
			fail_msg("trusted link, length %d: %s", len, amrma_wire_err_name(e));
	}
	rxp.skip_csum = false;
}

/* Header-only parsing for frames whose payload lives in another segment. */
static void
test_parse_hdr(void **state)
{
	struct amrma_wire_view v;
	size_t hl = amrma_wire_hdr_len(3);

	(void)state;
	assert_int_equal(amrma_wire_parse_hdr(frame, hl, flen, &rxp, &v), AMRMA_WIRE_OK);
	assert_int_equal(v.hdr.payload_len, sizeof(payload));
	assert_int_equal(amrma_wire_parse_hdr(frame, hl - 1, flen, &rxp, &v),
			 AMRMA_WIRE_ERR_TRUNCATED);
	assert_int_equal(amrma_wire_parse_hdr(frame, hl, flen - 1, &rxp, &v),
			 AMRMA_WIRE_ERR_TRUNCATED);
}

/* The one's complement sum the slow way: 16-bit words one by one. */
static uint16_t
ref_sum(const uint8_t *p, unsigned int len, uint64_t start)
{
	uint64_t ref = start;
	unsigned int k;

	for (k = 0; k + 1 < len; k += 2) {
		uint16_t w;

		memcpy(&w, p + k, 2);
		ref += w;
	}
	if (len & 1)
		ref += p[len - 1];	/* first byte of a zero-padded word */
	return amrma_wire_fold(ref);
}

/* amrma_wire_sum against ref_sum: every length, alignment, start, and the carries. */
static void
test_sum(void **state)
{
	uint8_t buf[320 + 8];
	unsigned int off, len, i;

	(void)state;
	srand(11);
	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)rand();
	memset(buf + 40, 0xff, 64);	/* long runs of ones: carries out of every width */
	for (off = 0; off < 8; off++) {
		for (len = 0; len <= 320; len++) {
			uint64_t start = (uint64_t)rand() << 1;
			const uint8_t *p = buf + off;

			assert_int_equal(amrma_wire_fold(amrma_wire_sum(p, len, start)),
					 ref_sum(p, len, start));
			assert_true(amrma_wire_sum(p, len, start) - start < (1ull << 40));
		}
	}
	/* 256 bytes of ones then a small word: the end-around carry out of the 64-bit fold */
	memset(buf, 0xff, 256);
	memset(buf + 256, 0, 8);
	buf[256] = 5;
	assert_int_equal(amrma_wire_fold(amrma_wire_sum(buf, 257, 0)), ref_sum(buf, 257, 0));
	assert_int_equal(amrma_wire_fold(amrma_wire_sum(buf, 256, 0)), 0xffff);
	assert_int_equal(amrma_wire_fold(amrma_wire_sum(buf, 0, 0)), 0);
}

/* The template path writes exactly what the full builder writes, and our checksum agrees
 * with DPDK's for every length and content. */
static void
test_template_and_checksum(void **state)
{
	const uint64_t eight[AMRMA_WIRE_MAX_ARGS] = { 1, 2, 3, UINT64_MAX, 5, 6, 7, 8 };
	struct amrma_wire_fields f;
	struct amrma_wire_tmpl t;
	uint8_t a[2048], b[2048];
	unsigned int n, len, k;
	uint64_t s = 12345;

	(void)state;
	fields(&f);
	assert_int_equal(amrma_wire_tmpl_init(&t, &addr, &f), 0);
	for (n = 0; n <= AMRMA_WIRE_MAX_ARGS; n++)
		for (len = 0; len < 1500; len += 97) {
			f.nargs = (uint8_t)n;
			f.payload_len = (uint16_t)len;
			f.seq = (uint32_t)(len * 31 + n);
			f.token = ~f.seq;
			assert_int_equal(amrma_wire_build_hdr(a, sizeof(a), &addr, &f, eight), (int)
					 amrma_wire_tmpl_build(b, &t, &f, eight));
			assert_memory_equal(a, b, amrma_wire_hdr_len(n));
		}
	/* checksums: ours against DPDK's reference over random frames of every length */
	for (len = 0; len < 300; len++) {
		struct rte_ipv4_hdr *ip = (void *)(a + 14);
		struct rte_udp_hdr *udp = (void *)(ip + 1);
		uint16_t ref;

		fields(&f);
		f.nargs = 0;
		f.payload_len = (uint16_t)len;
		for (k = 0; k < len; k++) {
			s = s * 6364136223846793005ull + 1;
			a[AMRMA_WIRE_HDR_LEN + k] = (uint8_t)(s >> 33);
		}
		amrma_wire_build_hdr(a, sizeof(a), &addr, &f, NULL);
		amrma_wire_udp_csum_set(a, AMRMA_WIRE_HDR_LEN + len);
		ref = udp->dgram_cksum;
		udp->dgram_cksum = 0;
		assert_int_equal(ref, rte_ipv4_udptcp_cksum(ip, udp));
		udp->dgram_cksum = ref;
		assert_int_equal(parse(a, AMRMA_WIRE_HDR_LEN + len), AMRMA_WIRE_OK);
		a[AMRMA_WIRE_HDR_LEN + len / 2] ^= 0x10;	/* any flipped bit is caught */
		if (len > 0)
			assert_int_equal(parse(a, AMRMA_WIRE_HDR_LEN + len),
					 AMRMA_WIRE_ERR_BAD_UDP_CSUM);
	}
}

/* Random garbage never crashes the parser and never passes it. */
/* A coalesced frame: a request with n_more further messages, every one distinct. */
static int
build_coalesced(uint8_t *buf, size_t cap, unsigned int n_more)
{
	struct amrma_wire_fields f;
	size_t len;
	unsigned int i;
	int h;

	fields(&f);
	f.nargs = 1;
	f.payload_len = 64;
	h = amrma_wire_build_hdr(buf, cap, &addr, &f, args);
	assert_true(h > 0);
	memcpy(buf + h, payload, 64);
	len = (size_t)h + 64;
	for (i = 0; i < n_more; i++) {
		f.type = (i & 1) ? AMRMA_WIRE_REPLY : AMRMA_WIRE_REQUEST;
		f.nargs = i % 3;
		f.handler = (i % 5 == 4 && f.type == AMRMA_WIRE_REPLY) ?
			    AMRMA_WIRE_NO_HANDLER : (uint16_t)(20 + i);
		f.payload_len = (uint16_t)(i * 7 % 50);
		f.status = (int16_t)-i;
		f.token = 1000 + i;
		if (len + amrma_wire_sub_len(f.nargs, f.payload_len) > cap)
			return -1;
		amrma_wire_sub_put(buf + len, f.type, f.handler, f.status, f.token, args, f.nargs,
				   payload + i, f.payload_len);
		len += amrma_wire_sub_len(f.nargs, f.payload_len);
	}
	if (n_more)
		amrma_wire_hdr_of(buf)->flags |= AMRMA_WIRE_F_MORE;
	amrma_wire_set_len(buf, len);
	amrma_wire_udp_csum_set(buf, len);
	return (int)len;
}

static void
test_coalesced(void **state)
{
	static uint8_t b[9000];
	struct amrma_wire_view v;
	unsigned int i, n = 12;
	int len;

	(void)state;
	len = build_coalesced(b, sizeof(b), n);
	assert_true(len > 0);
	assert_int_equal(amrma_wire_parse(b, len, &rxp, &v), AMRMA_WIRE_OK);
	assert_int_equal(v.nb_msgs, n + 1);
	assert_int_equal(v.nb_req, 1 + n / 2);
	assert_int_equal(v.hdr.type, AMRMA_WIRE_REQUEST);
	assert_int_equal(v.hdr.payload_len, 64);
	assert_memory_equal(v.payload, payload, 64);
	assert_int_equal(amrma_wire_arg(&v, 0), args[0]);
	for (i = 0; i < n; i++) {
		assert_true(v.more_len != 0);
		amrma_wire_next(&v);
		assert_int_equal(v.hdr.type, (i & 1) ? AMRMA_WIRE_REPLY : AMRMA_WIRE_REQUEST);
		assert_int_equal(v.hdr.nargs, i % 3);
		assert_int_equal(v.hdr.token, 1000 + i);
		assert_int_equal(v.hdr.status, -(int)i);
		assert_int_equal(v.hdr.payload_len, i * 7 % 50);
		assert_memory_equal(v.payload, payload + i, v.hdr.payload_len);
		if (v.hdr.nargs > 1)
			assert_true(amrma_wire_arg(&v, 1) == args[1]);
		/* frame-level fields are the header's */
		assert_int_equal(v.hdr.seq, 0xfffffff0u);
		assert_int_equal(v.hdr.src_node, 1);
	}
	assert_int_equal(v.more_len, 0);
	/* every cut of a coalesced frame is rejected */
	for (i = 0; i < (unsigned int)len; i++)
		assert_int_not_equal(amrma_wire_parse(b, i, &rxp, &v), AMRMA_WIRE_OK);
	/* most messages a frame may hold */
	len = build_coalesced(b, sizeof(b), AMRMA_WIRE_MAX_BUNDLE - 1);
	assert_true(len > 0);
	assert_int_equal(amrma_wire_parse(b, len, &rxp, &v), AMRMA_WIRE_OK);
	assert_int_equal(v.nb_msgs, AMRMA_WIRE_MAX_BUNDLE);
	len = build_coalesced(b, sizeof(b), AMRMA_WIRE_MAX_BUNDLE);
	assert_true(len > 0);
	REJECT(AMRMA_WIRE_ERR_BAD_LENGTH, amrma_wire_parse(b, len, &rxp, &v));
	/* headers-only parsing cannot see the further messages: it refuses them */
	len = build_coalesced(b, sizeof(b), 2);
	REJECT(AMRMA_WIRE_ERR_TRUNCATED, amrma_wire_parse_hdr(b, AMRMA_WIRE_HDR_LEN + 8, len,
								&rxp, &v));
}

/* Change byte off of a valid coalesced frame (checksums fixed) and parse it. */
static enum amrma_wire_err
mutate_coalesced(size_t off, uint8_t val, int grow)
{
	static uint8_t b[2048];
	struct amrma_wire_view v;
	int len = build_coalesced(b, sizeof(b), 3);

	b[off] = val;
	len += grow;
	amrma_wire_set_len(b, len);
	amrma_wire_udp_csum_set(b, len);
	return amrma_wire_parse(b, len, &rxp, &v);
}

static void
test_coalesced_rejections(void **state)
{
	/* the first further message starts after the header (82 + 8 args) and 64 bytes */
	const size_t s = AMRMA_WIRE_HDR_LEN + 8 + 64;
	static uint8_t b[2048];
	struct amrma_wire_view v;
	int len;

	(void)state;
	assert_int_equal(mutate_coalesced(s, AMRMA_WIRE_REQUEST, 0), AMRMA_WIRE_OK);
	assert_int_equal(mutate_coalesced(s, AMRMA_WIRE_SEND, 0), AMRMA_WIRE_OK);
	REJECT(AMRMA_WIRE_ERR_BAD_TYPE, mutate_coalesced(s, AMRMA_WIRE_SEND + 1, 0));
	REJECT(AMRMA_WIRE_ERR_BAD_TYPE, mutate_coalesced(s, AMRMA_WIRE_ACK, 0));
	REJECT(AMRMA_WIRE_ERR_BAD_TYPE, mutate_coalesced(s, 0, 0));
	REJECT(AMRMA_WIRE_ERR_TOO_MANY_ARGS, mutate_coalesced(s + 1, 9, 0));
	REJECT(AMRMA_WIRE_ERR_BAD_LENGTH, mutate_coalesced(s + 1, 8, 0));	/* runs over */
	REJECT(AMRMA_WIRE_ERR_BAD_LENGTH, mutate_coalesced(s + 4, 0xff, 0));	/* len */
	REJECT(AMRMA_WIRE_ERR_BAD_HANDLER, mutate_coalesced(s + 2, 0x01, 0));	/* 276 */
	REJECT(AMRMA_WIRE_ERR_BAD_HANDLER, mutate_coalesced(s + 2, 0xff, 0)); /* request: 0xff14 */
	/* no handler: only a reply may name none, a request or a one-way message may not */
	{
		static const uint8_t types[] = { AMRMA_WIRE_REPLY, AMRMA_WIRE_REQUEST,
						 AMRMA_WIRE_SEND };
		unsigned int k;

		for (k = 0; k < RTE_DIM(types); k++) {
			len = build_coalesced(b, sizeof(b), 3);
			b[s] = types[k];
			b[s + 2] = AMRMA_WIRE_NO_HANDLER >> 8;
			b[s + 3] = AMRMA_WIRE_NO_HANDLER & 0xff;
			amrma_wire_udp_csum_set(b, len);
			if (types[k] == AMRMA_WIRE_REPLY)
				assert_int_equal(amrma_wire_parse(b, len, &rxp, &v), AMRMA_WIRE_OK);
			else
				REJECT(AMRMA_WIRE_ERR_BAD_HANDLER,
				       amrma_wire_parse(b, len, &rxp, &v));
		}
	}
	REJECT(AMRMA_WIRE_ERR_BAD_LENGTH, mutate_coalesced(s, AMRMA_WIRE_REQUEST, 1));	/* tail */
	REJECT(AMRMA_WIRE_ERR_BAD_LENGTH, mutate_coalesced(s, AMRMA_WIRE_REQUEST, -1));
	/* F_MORE with nothing after the message, and on an ACK */
	len = build_coalesced(b, sizeof(b), 0);
	amrma_wire_hdr_of(b)->flags |= AMRMA_WIRE_F_MORE;
	amrma_wire_udp_csum_set(b, len);
	REJECT(AMRMA_WIRE_ERR_BAD_LENGTH, amrma_wire_parse(b, len, &rxp, &v));
	{
		struct amrma_wire_fields f;

		fields(&f);
		f.type = AMRMA_WIRE_ACK;
		f.nargs = 0;
		f.payload_len = 0;
		f.handler = AMRMA_WIRE_NO_HANDLER;
		len = amrma_wire_build_hdr(b, sizeof(b), &addr, &f, NULL);
		amrma_wire_udp_csum_set(b, len);
		assert_int_equal(amrma_wire_parse(b, len, &rxp, &v), AMRMA_WIRE_OK);
		f.type = AMRMA_WIRE_REQUEST;
		f.handler = 5;
		amrma_wire_sub_put(b + len, f.type, f.handler, f.status, f.token, NULL, 0, NULL, 0);
		len += (int)amrma_wire_sub_len(0, 0);
		amrma_wire_hdr_of(b)->flags |= AMRMA_WIRE_F_MORE;
		amrma_wire_set_len(b, len);
		amrma_wire_udp_csum_set(b, len);
		REJECT(AMRMA_WIRE_ERR_BAD_FLAGS, amrma_wire_parse(b, len, &rxp, &v));
	}
	/* further messages without F_MORE */
	len = build_coalesced(b, sizeof(b), 2);
	amrma_wire_hdr_of(b)->flags &= (uint8_t)~AMRMA_WIRE_F_MORE;
	amrma_wire_udp_csum_set(b, len);
	REJECT(AMRMA_WIRE_ERR_BAD_LENGTH, amrma_wire_parse(b, len, &rxp, &v));
	/* a flipped bit anywhere in them breaks the checksum */
	len = build_coalesced(b, sizeof(b), 2);
	b[len - 3] ^= 0x10;
	REJECT(AMRMA_WIRE_ERR_BAD_UDP_CSUM, amrma_wire_parse(b, len, &rxp, &v));
}

static void
test_garbage(void **state)
{
	uint64_t s = 0x9e3779b97f4a7c15ull;
	uint8_t b[512];
	int i, k;

	(void)state;
	for (i = 0; i < 200000; i++) {
		size_t len = 0;

		for (k = 0; k < (int)sizeof(b); k += 8) {
			s ^= s << 13; s ^= s >> 7; s ^= s << 17;
			memcpy(b + k, &s, 8);
		}
		len = s % sizeof(b);
		if (i & 1)	/* keep a valid prefix, damage the rest */
			memcpy(b, frame, RTE_MIN((size_t)(s >> 32) % 80, len));
		assert_int_not_equal(parse(b, len), AMRMA_WIRE_OK);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_truncated_everywhere),
		cmocka_unit_test(test_each_rejection),
		cmocka_unit_test(test_ack_and_reply_rules),
		cmocka_unit_test(test_trusted_link),
		cmocka_unit_test(test_parse_hdr),
		cmocka_unit_test(test_sum),
		cmocka_unit_test(test_template_and_checksum),
		cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_coalesced),
		cmocka_unit_test(test_coalesced_rejections),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
