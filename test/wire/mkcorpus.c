/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Writes the wire fuzz corpus: frames that must parse (accept_*.bin) and frames with
 * exactly one broken rule and valid checksums (reject_<reason>_<n>.bin), coalesced frames
 * first among them. Run by hand after a codec change: wire_mkcorpus test/wire/corpus
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_wire.h"

static const struct amrma_wire_addr addr = {
	.src_mac = { .addr_bytes = { 0x02, 0, 0, 0, 0, 1 } },
	.dst_mac = { .addr_bytes = { 0x02, 0, 0, 0, 0, 2 } },
	.src_ip = RTE_BE32(0xc6120001),
	.dst_ip = RTE_BE32(0xc6120002),
	.udp_base = FUZZ_WIRE_BASE,
};

static const uint64_t args[AMRMA_WIRE_MAX_ARGS] = { 1, 2, 3, 4, 5, 6, 7, UINT64_MAX };
static uint8_t payload[1500];
static const char *dir;
static unsigned int seq_no;

/* The header message and n further ones: types alternate, sizes vary with i. */
static size_t
build(uint8_t *buf, size_t cap, uint8_t type, unsigned int n)
{
	struct amrma_wire_fields f = {
		.type = type, .flags = AMRMA_WIRE_F_ACK_VALID, .src_ctx = 1, .dst_ctx = 2,
		.src_node = 1, .dst_node = FUZZ_WIRE_NODE, .seq = 9, .ack = 4, .sack = 5,
		.token = 0x10001, .src_epoch = 77, .dst_epoch = 0,
	};
	unsigned int i;
	size_t len;
	int h;

	if (type == AMRMA_WIRE_ACK) {
		f.handler = AMRMA_WIRE_NO_HANDLER;
	} else {
		f.handler = 16;
		f.nargs = 2;
		f.payload_len = 64;
	}
	h = amrma_wire_build_hdr(buf, cap, &addr, &f, args);
	if (h < 0)
		abort();
	memcpy(buf + h, payload, f.payload_len);
	len = (size_t)h + f.payload_len;
	for (i = 0; i < n; i++) {
		uint8_t t = (i & 1) ? AMRMA_WIRE_REPLY : AMRMA_WIRE_REQUEST;
		uint16_t plen = (uint16_t)(i * 13 % 40);

		if (len + amrma_wire_sub_len(i % 3, plen) > cap)
			abort();
		amrma_wire_sub_put(buf + len, t, (uint16_t)(20 + i % 200), 0, 0x20000 + i, args,
				   i % 3, payload + i, plen);
		len += amrma_wire_sub_len(i % 3, plen);
	}
	if (n)
		amrma_wire_hdr_of(buf)->flags |= AMRMA_WIRE_F_MORE;
	return len;
}

/* Lengths and checksums of a frame of len bytes, as a sender would set them. */
static void
seal(uint8_t *buf, size_t len)
{
	amrma_wire_set_len(buf, len);
	amrma_wire_udp_csum_set(buf, len);
}

static void
out(const char *prefix, enum amrma_wire_err want, const uint8_t *buf, size_t len)
{
	char path[4096];
	FILE *f;

	if (want == AMRMA_WIRE_OK)
		snprintf(path, sizeof(path), "%s/%s_%02u.bin", dir, prefix, seq_no++);
	else
		snprintf(path, sizeof(path), "%s/reject_%s_%02u.bin", dir,
			 amrma_wire_err_name(want), seq_no++);
	if (fuzz_wire_one(buf, len) != want) {
		fprintf(stderr, "%s: the codec says %s\n", path,
			amrma_wire_err_name(fuzz_wire_one(buf, len)));
		exit(1);
	}
	f = fopen(path, "wb");
	if (f == NULL || fwrite(buf, 1, len, f) != len || fclose(f) != 0) {
		perror(path);
		exit(1);
	}
}

/* A frame of build(type, n), sealed, written with its expected verdict. */
static void
out_built(uint8_t *b, size_t cap, uint8_t type, unsigned int n, enum amrma_wire_err want)
{
	size_t len = build(b, cap, type, n);

	seal(b, len);
	out(want == AMRMA_WIRE_OK ? "accept" : "reject", want, b, len);
}

int
main(int argc, char **argv)
{
	/* the further messages start behind the header message: header, 2 args, 64 bytes */
	const size_t s = AMRMA_WIRE_HDR_LEN + 16 + 64;
	static uint8_t b[16384];
	size_t len;
	unsigned int i;

	if (argc != 2) {
		fprintf(stderr, "usage: %s corpus-dir\n", argv[0]);
		return 2;
	}
	dir = argv[1];
	for (i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 7 + 3);

	/* accepted: one message of each type, coalesced frames up to the most messages */
	out_built(b, sizeof(b), AMRMA_WIRE_REQUEST, 0, AMRMA_WIRE_OK);
	out_built(b, sizeof(b), AMRMA_WIRE_REPLY, 0, AMRMA_WIRE_OK);
	out_built(b, sizeof(b), AMRMA_WIRE_ACK, 0, AMRMA_WIRE_OK);
	for (i = 1; i <= AMRMA_WIRE_MAX_BUNDLE - 1; i = i * 4 + 1)
		out_built(b, sizeof(b), i & 1 ? AMRMA_WIRE_REPLY : AMRMA_WIRE_REQUEST, i,
			  AMRMA_WIRE_OK);
	out_built(b, sizeof(b), AMRMA_WIRE_REQUEST, AMRMA_WIRE_MAX_BUNDLE - 1, AMRMA_WIRE_OK);

	/* rejected: one broken rule in a coalesced frame of 3 further messages */
#define BROKEN(reason, edit) do {						\
		len = build(b, sizeof(b), AMRMA_WIRE_REQUEST, 3);		\
		edit;								\
		seal(b, len);							\
		out("reject", reason, b, len);					\
	} while (0)
	BROKEN(AMRMA_WIRE_ERR_BAD_TYPE, b[s] = AMRMA_WIRE_ACK);
	BROKEN(AMRMA_WIRE_ERR_BAD_TYPE, b[s] = 0);
	BROKEN(AMRMA_WIRE_ERR_TOO_MANY_ARGS, b[s + 1] = AMRMA_WIRE_MAX_ARGS + 1);
	BROKEN(AMRMA_WIRE_ERR_BAD_LENGTH, b[s + 4] = 0; b[s + 5] = 200);	/* runs over */
	BROKEN(AMRMA_WIRE_ERR_BAD_LENGTH, b[s + 4] = 0xff);		/* over 9000 */
	BROKEN(AMRMA_WIRE_ERR_BAD_LENGTH, len += 1);			/* a trailing byte */
	BROKEN(AMRMA_WIRE_ERR_BAD_LENGTH, len -= 1);			/* cut inside the last */
	BROKEN(AMRMA_WIRE_ERR_BAD_LENGTH, len = s + 5);			/* half a header */
	BROKEN(AMRMA_WIRE_ERR_BAD_LENGTH, len = s);			/* MORE, nothing more */
	BROKEN(AMRMA_WIRE_ERR_BAD_HANDLER, b[s + 2] = 0xff; b[s + 3] = 0xff);	/* request */
	BROKEN(AMRMA_WIRE_ERR_BAD_HANDLER, b[s + 2] = 0x01; b[s + 3] = 0x00);	/* 256 */
	BROKEN(AMRMA_WIRE_ERR_BAD_FLAGS, amrma_wire_hdr_of(b)->flags |= 0x04);
	BROKEN(AMRMA_WIRE_ERR_BAD_VERSION, amrma_wire_hdr_of(b)->version = 2);
	BROKEN(AMRMA_WIRE_ERR_NOT_FOR_US, amrma_wire_hdr_of(b)->dst_node = RTE_BE16(3));
	BROKEN(AMRMA_WIRE_ERR_BAD_CTX, amrma_wire_hdr_of(b)->src_ctx = 0);
#undef BROKEN
	/* more than AMRMA_WIRE_MAX_BUNDLE messages */
	out_built(b, sizeof(b), AMRMA_WIRE_REQUEST, AMRMA_WIRE_MAX_BUNDLE,
		  AMRMA_WIRE_ERR_BAD_LENGTH);
	/* MORE on an ACK */
	len = build(b, sizeof(b), AMRMA_WIRE_ACK, 0);
	amrma_wire_sub_put(b + len, AMRMA_WIRE_REQUEST, 5, 0, 1, NULL, 0, NULL, 0);
	len += amrma_wire_sub_len(0, 0);
	amrma_wire_hdr_of(b)->flags |= AMRMA_WIRE_F_MORE;
	seal(b, len);
	out("reject", AMRMA_WIRE_ERR_BAD_FLAGS, b, len);
	/* a flipped bit in a further message's payload: only the checksum can tell */
	len = build(b, sizeof(b), AMRMA_WIRE_REQUEST, 3);
	seal(b, len);
	b[len - 2] ^= 0x10;
	out("reject", AMRMA_WIRE_ERR_BAD_UDP_CSUM, b, len);
	/* cut short: the IP length promises more than the buffer holds */
	len = build(b, sizeof(b), AMRMA_WIRE_REQUEST, 3);
	seal(b, len);
	out("reject", AMRMA_WIRE_ERR_TRUNCATED, b, len - 7);
	/* one-way SEND (added after the rest, so earlier files keep their numbers): alone,
	 * heading a coalesced frame, and without the handler it must name */
	out_built(b, sizeof(b), AMRMA_WIRE_SEND, 0, AMRMA_WIRE_OK);
	out_built(b, sizeof(b), AMRMA_WIRE_SEND, 5, AMRMA_WIRE_OK);
	len = build(b, sizeof(b), AMRMA_WIRE_SEND, 0);
	amrma_wire_hdr_of(b)->handler = RTE_BE16(AMRMA_WIRE_NO_HANDLER);
	seal(b, len);
	out("reject", AMRMA_WIRE_ERR_BAD_HANDLER, b, len);
	/* the first type past SEND */
	len = build(b, sizeof(b), AMRMA_WIRE_SEND, 0);
	amrma_wire_hdr_of(b)->type = AMRMA_WIRE_SEND + 1;
	seal(b, len);
	out("reject", AMRMA_WIRE_ERR_BAD_TYPE, b, len);
	/* a further message that is one-way and names no handler */
	len = build(b, sizeof(b), AMRMA_WIRE_REQUEST, 3);
	b[s] = AMRMA_WIRE_SEND;
	b[s + 2] = 0xff;
	b[s + 3] = 0xff;
	seal(b, len);
	out("reject", AMRMA_WIRE_ERR_BAD_HANDLER, b, len);
	printf("wrote %u frames to %s\n", seq_no, dir);
	return 0;
}
