/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: a hostile peer's RMA messages reach node 1's handlers (rma_fuzz.c
 * says how an input is read and what is checked; the library is compiled in, so that
 * libFuzzer sees the handlers' edges). Built with -Dfuzz=true and clang:
 *
 *   rma_fuzz -max_len=512 CORPUS_DIR test/rma/corpus
 *
 * rma_fuzz_corpus replays test/rma/corpus in meson test.
 */
#include <stdlib.h>

#include "rma_fuzz.h"

/* The nodes are made anew this often: what an input leaves in them is bounded there. */
#define RENEW_EVERY	1000u

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	rma_fuzz_init("amrma_rma_fuzz");
	/* before EAL's own clean-up (registered earlier, run later): no leak reports of
	 * node 2's engine, which lives as long as the process */
	atexit(rma_fuzz_fini);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	static unsigned int inputs;
	struct rma_fuzz_counts c;

	if (len > 4096)
		return -1;	/* not kept in the corpus */
	if (++inputs % RENEW_EVERY == 0)
		rma_fuzz_renew();
	rma_fuzz_one(data, len, &c);
	return 0;
}
