/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PCAPGEN_FRAMES_H
#define PCAPGEN_FRAMES_H

/*
 * Catalogue of generated frames: "good" variants (valid traffic towards one receiver) and
 * "bad" variants, each of which must be rejected by amrma_wire_parse() with one known reason.
 */

#include <stdint.h>

#include "amrma_wire.h"

/* Largest frame built: a 9001-byte payload (over the limit on purpose) plus headers. */
#define PCAPGEN_MAX_FRAME	9216
/* MTU whose largest frames the good set includes. */
#define PCAPGEN_MTU		1500

/* What the sender and the receiver look like. */
struct pcapgen_cfg {
	struct amrma_wire_addr addr;
	uint16_t src_node;
	uint16_t dst_node;
	uint8_t nb_ctx;		/* receiver's contexts; the sender uses the same range */
	uint16_t handler;	/* handler of REQUESTs and explicit REPLYs */
	uint32_t src_epoch;	/* sender's incarnation, never 0 */
	uint32_t dst_epoch;	/* receiver's incarnation as known; 0 = unknown */
};

/* Classes of good frames, counted separately in the manifest. */
enum pcapgen_class {
	PCAPGEN_REQ_SHORT,	/* REQUEST, arguments only */
	PCAPGEN_REQ_MEDIUM,	/* REQUEST, arguments + payload */
	PCAPGEN_REPLY,
	PCAPGEN_ACK,
	PCAPGEN_CLASS_MAX
};

/* Generator state: deterministic from the seed. */
struct pcapgen_state {
	const struct pcapgen_cfg *cfg;
	uint64_t rng;
	uint32_t token;
	/* next seq per (src_ctx, dst_ctx) channel; only good frames consume one */
	uint32_t next_seq[AMRMA_WIRE_MAX_CTX][AMRMA_WIRE_MAX_CTX];
};

/* One built frame and the header fields it was built from. */
struct pcapgen_frame {
	uint8_t buf[PCAPGEN_MAX_FRAME];
	size_t len;
	struct amrma_wire_fields f;
	uint64_t args[AMRMA_WIRE_MAX_ARGS];
};

void pcapgen_state_init(struct pcapgen_state *st, const struct pcapgen_cfg *cfg,
		uint64_t seed);
uint64_t pcapgen_rand(struct pcapgen_state *st);

unsigned int pcapgen_nb_good(void);
enum pcapgen_class pcapgen_good_class(unsigned int v);
const char *pcapgen_class_name(enum pcapgen_class c);

unsigned int pcapgen_nb_bad(void);
enum amrma_wire_err pcapgen_bad_reason(unsigned int v);
const char *pcapgen_bad_name(unsigned int v);

/* Build good variant v (consumes a sequence number if sequenced). 0 or -errno. */
int pcapgen_build_good(struct pcapgen_state *st, unsigned int v, struct pcapgen_frame *fr);
/* Build bad variant v. 0 or -errno. */
int pcapgen_build_bad(struct pcapgen_state *st, unsigned int v, struct pcapgen_frame *fr);

#endif /* PCAPGEN_FRAMES_H */
