/* SPDX-License-Identifier: BSD-3-Clause */
/* The wire-codec fuzz harness, shared by the libFuzzer build and the corpus replay. */
#ifndef AMRMA_FUZZ_WIRE_H
#define AMRMA_FUZZ_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "amrma_wire.h"

/* What the corpus frames are addressed to (mkcorpus builds them for it). */
#define FUZZ_WIRE_NODE	2
#define FUZZ_WIRE_BASE	7000
#define FUZZ_WIRE_NB_CTX 4

/*
 * Parse data as a frame (checksums required) and, whatever the verdict, again with
 * checksums skipped so random mutations reach the deeper checks. Every accepted frame is
 * walked message by message; a view that points outside the input, or counts that do not
 * match the walk, abort(). Returns the verdict of the checksummed parse.
 */
enum amrma_wire_err fuzz_wire_one(const uint8_t *data, size_t len);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

#endif
