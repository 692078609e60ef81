/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The reliability layer under a hostile peer that writes the channel fields of its
 * frames itself, driven by a byte string: the core of the chan_fuzz libFuzzer target and
 * of the chan_fuzz_corpus replay test (chan_fuzz.c says how an input is read and what is
 * checked). A violation aborts, with a line on stderr.
 */
#ifndef AMRMA_TEST_CHAN_FUZZ_H
#define AMRMA_TEST_CHAN_FUZZ_H

#include <stddef.h>
#include <stdint.h>

/** What one input did at the victim (node 1). */
struct chan_fuzz_counts {
	uint64_t frames;	/* frames the attacker injected */
	uint64_t refused;	/* of node 1's counters: frames and messages it turned down
				 * (stale epochs, windows, acks, tokens, handlers, peers) */
	uint64_t handled;	/* the attacker's messages whose handler ran at node 1 */
};

/** EAL (once), the nodes. Exits the process on failure. */
void chan_fuzz_init(const char *prefix);

/** Run one input: the attacker's script, the settling, the checks. */
void chan_fuzz_one(const uint8_t *data, size_t len, struct chan_fuzz_counts *c);

/** The nodes made anew (every so many inputs), checking that no mbuf stayed behind. */
void chan_fuzz_renew(void);

/** Tear everything down (mbufs checked as by chan_fuzz_renew()). */
void chan_fuzz_fini(void);

#endif
