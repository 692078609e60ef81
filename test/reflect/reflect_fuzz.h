/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The reflection engine's handlers (REFLECT, NOTIFY, the striped send's RTS) under a
 * hostile peer, driven by a byte string: the core of the reflect_fuzz libFuzzer target
 * and of the reflect_fuzz_corpus replay test (reflect_fuzz.c says how an input is read
 * and what is checked). A violation aborts, with a line on stderr.
 */
#ifndef AMRMA_TEST_REFLECT_FUZZ_H
#define AMRMA_TEST_REFLECT_FUZZ_H

#include <stddef.h>
#include <stdint.h>

/** What one input did at node 1. */
struct reflect_fuzz_counts {
	uint64_t msgs;		/* messages the peer sent */
	uint64_t refused;	/* malformed, refused words, refused striped sends, full FIFOs */
	uint64_t taken;		/* notifications taken, words counted, striped receives */
};

/** EAL (once), the nodes, their RMA engines and node 1's regions. */
void reflect_fuzz_init(const char *prefix);

/** Run one input: fresh reflection engines, the peer's script and honest traffic, checks. */
void reflect_fuzz_one(const uint8_t *data, size_t len, struct reflect_fuzz_counts *c);

/** The nodes made anew (every so many inputs). */
void reflect_fuzz_renew(void);

/** Tear everything down. */
void reflect_fuzz_fini(void);

#endif
