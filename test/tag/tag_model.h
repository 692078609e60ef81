/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TAG_MODEL_H
#define TAG_MODEL_H

/*
 * Differential checker for the tag engine: decodes a byte string into posts (exact and
 * wildcard), arrivals, cancels and drains, runs them on a real engine and on a naive model
 * that scans plain arrays in order, and abort()s on the first disagreement. Shared by the
 * cmocka test (random bytes) and the libFuzzer harness (fuzzer bytes).
 */

#include <stddef.h>
#include <stdint.h>

struct tag_model_counts {
	unsigned long matched, queued, refused, cancelled, drained, purged;
};

/* Returns normally iff engine and model agreed on every step. */
void tag_model_run(const uint8_t *data, size_t len, struct tag_model_counts *counts);

#endif /* TAG_MODEL_H */
