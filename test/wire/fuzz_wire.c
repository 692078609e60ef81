/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer harness for amrma_wire_parse(), coalesced frames included: no input may crash
 * it, read outside the frame, or produce a view whose messages do not add up.
 * Built with -Dfuzz=true and clang; test/wire/fuzz_replay.c runs the corpus in meson test.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz_wire.h"

static const struct amrma_wire_rx_params rx_base = {
	.mac = { .addr_bytes = { 0x02, 0, 0, 0, 0, 2 } },
	.node_id = FUZZ_WIRE_NODE,
	.udp_base = FUZZ_WIRE_BASE,
	.nb_ctx = FUZZ_WIRE_NB_CTX,
	.require_csum = true,
};

static void
check_inside(const uint8_t *buf, size_t len, const uint8_t *p, size_t n)
{
	if (p < buf || p > buf + len || n > (size_t)(buf + len - p))
		abort();
}

/* Walk every message of an accepted frame and check the view against the input. */
static void
walk(const uint8_t *buf, size_t len, struct amrma_wire_view v)
{
	unsigned int msgs = 0, reqs = 0;

	if (v.hdr.type == AMRMA_WIRE_ACK) {
		if (v.nb_msgs != 0 || v.more_len != 0)
			abort();
		return;
	}
	for (;;) {
		if (v.hdr.type != AMRMA_WIRE_REQUEST && v.hdr.type != AMRMA_WIRE_REPLY &&
		    v.hdr.type != AMRMA_WIRE_SEND)
			abort();
		/* requests and one-way messages name a handler */
		if (v.hdr.type != AMRMA_WIRE_REPLY && v.hdr.handler >= AMRMA_WIRE_MAX_HANDLERS)
			abort();
		if (v.hdr.nargs > AMRMA_WIRE_MAX_ARGS || v.hdr.payload_len > AMRMA_WIRE_MAX_PAYLOAD)
			abort();
		check_inside(buf, len, v.args, 8u * v.hdr.nargs);
		check_inside(buf, len, v.payload, v.hdr.payload_len);
		msgs++;
		reqs += v.hdr.type == AMRMA_WIRE_REQUEST;
		if (v.more_len == 0)
			break;
		check_inside(buf, len, v.more, v.more_len);
		amrma_wire_next(&v);
	}
	if (msgs != v.nb_msgs || reqs != v.nb_req || msgs > AMRMA_WIRE_MAX_BUNDLE)
		abort();
}

enum amrma_wire_err
fuzz_wire_one(const uint8_t *data, size_t len)
{
	struct amrma_wire_rx_params rx = rx_base;
	struct amrma_wire_view v;
	enum amrma_wire_err err, err2;
	uint8_t *buf;

	/* the codec wants a 2-byte aligned frame, as mbuf data is; malloc'd memory is */
	buf = malloc(len ? len : 1);
	if (buf == NULL)
		abort();
	memcpy(buf, data, len);
	err = amrma_wire_parse(buf, len, &rx, &v);
	if (err >= AMRMA_WIRE_ERR__MAX)
		abort();
	if (err == AMRMA_WIRE_OK)
		walk(buf, len, v);
	rx.skip_csum = true;
	err2 = amrma_wire_parse(buf, len, &rx, &v);
	if (err2 == AMRMA_WIRE_OK)
		walk(buf, len, v);
	/* skipping checksums can only let more frames through */
	if (err == AMRMA_WIRE_OK && err2 != AMRMA_WIRE_OK)
		abort();
	free(buf);
	return err;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	fuzz_wire_one(data, len);
	return 0;
}
