/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: a hostile peer's REFLECT, NOTIFY and RTS messages reach node 1's
 * handlers beside honest traffic (reflect_fuzz.c says how an input is read and what is
 * checked; the library is compiled in, so that libFuzzer sees the handlers' edges).
 * Built with -Dfuzz=true and clang:
 *
 *   reflect_fuzz -max_len=256 CORPUS_DIR test/reflect/corpus
 *
 * reflect_fuzz_corpus replays test/reflect/corpus in meson test.
 */
#include <stdlib.h>

#include "reflect_fuzz.h"

/* The nodes are made anew this often: what an input leaves in them is bounded there. */
#define RENEW_EVERY	500u

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	reflect_fuzz_init("amrma_reflect_fuzz");
	atexit(reflect_fuzz_fini);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	static unsigned int inputs;
	struct reflect_fuzz_counts c;

	if (len > 1024)
		return -1;	/* not kept in the corpus */
	if (++inputs % RENEW_EVERY == 0)
		reflect_fuzz_renew();
	reflect_fuzz_one(data, len, &c);
	return 0;
}
