/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The RMA protocol's handlers under a hostile peer, driven by a byte string: the core of
 * the rma_fuzz libFuzzer target and of the rma_fuzz_corpus replay test (rma_fuzz.c says
 * how an input is read and what is checked). A violation aborts, with a line on stderr.
 */
#ifndef AMRMA_TEST_RMA_FUZZ_H
#define AMRMA_TEST_RMA_FUZZ_H

#include <stddef.h>
#include <stdint.h>

/** What one input did at the target (node 1). */
struct rma_fuzz_counts {
	uint64_t msgs;		/* messages the peer sent */
	uint64_t refused;	/* of node 1's RMA counters: access errors, bad replies,
				 * refused programs, full queues and tables */
	uint64_t served;	/* bytes node 1 placed into or read from its regions */
	uint64_t ops;		/* operations node 1 started towards the peer */
};

/** EAL (once), the nodes, regions, types. 0, or exits the process. */
void rma_fuzz_init(const char *prefix);

/** Run one input: a fresh RMA engine at node 1, the peer's script, the checks. */
void rma_fuzz_one(const uint8_t *data, size_t len, struct rma_fuzz_counts *c);

/** The nodes made anew (every so many inputs), checking that no mbuf stayed behind. */
void rma_fuzz_renew(void);

/** Tear everything down (mbufs checked as by rma_fuzz_renew()). */
void rma_fuzz_fini(void);

#endif
