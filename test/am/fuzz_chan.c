/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: a hostile peer that writes the channel fields of its frames itself
 * (seq, ack, sack, epochs, tokens, types, handlers, flags, coalesced messages) against
 * node 1's reliability layer, with an honest node 2 beside it (chan_fuzz.c says how an
 * input is read and what is checked; the library is compiled in, so that libFuzzer sees
 * the edges of the channel code). Built with -Dfuzz=true and clang:
 *
 *   chan_fuzz -max_len=256 CORPUS_DIR test/am/corpus
 *
 * chan_fuzz_corpus replays test/am/corpus in meson test.
 */
#include <stdlib.h>

#include "chan_fuzz.h"

/* The nodes are made anew this often: what an input leaves in them is bounded there. */
#define RENEW_EVERY	1000u

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	chan_fuzz_init("amrma_chan_fuzz");
	atexit(chan_fuzz_fini);	/* before EAL's clean-up, registered earlier */
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	static unsigned int inputs;
	struct chan_fuzz_counts c;

	if (len > 1024)
		return -1;	/* not kept in the corpus */
	if (++inputs % RENEW_EVERY == 0)
		chan_fuzz_renew();
	chan_fuzz_one(data, len, &c);
	return 0;
}
