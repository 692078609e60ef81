/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The libFuzzer entry points of a harness over live nodes, and its corpus replay,
 * written once. The harness
 * NAME provides NAME_init(prefix), NAME_fini(void), NAME_renew(void) and
 * NAME_one(data, len, struct COUNTS *). Inputs longer than max_len are not run (and not
 * kept in the corpus); the nodes are made anew every `renew` inputs, so that what an
 * input leaves in them stays bounded.
 */
#ifndef AMRMA_TEST_FUZZ_TARGET_H
#define AMRMA_TEST_FUZZ_TARGET_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#define FUZZ_TARGET(NAME, COUNTS, max_len, renew)					\
int LLVMFuzzerInitialize(int *argc, char ***argv);					\
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);				\
											\
int											\
LLVMFuzzerInitialize(int *argc, char ***argv)						\
{											\
	(void)argc;									\
	(void)argv;									\
	NAME##_init("amrma_" #NAME);							\
	atexit(NAME##_fini);	/* before EAL's clean-up, registered earlier */		\
	return 0;									\
}											\
											\
int											\
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)					\
{											\
	static unsigned int inputs;							\
	struct COUNTS c;								\
											\
	if (len > (max_len))								\
		return -1;								\
	if (++inputs % (renew) == 0)							\
		NAME##_renew();								\
	NAME##_one(data, len, &c);							\
	return 0;									\
}

/*
 * The corpus replay of the same harness, for meson test: main() runs every file through
 * NAME_one() (the nodes made anew every `renew` inputs) with corpus_main(), which wants
 * some inputs accepted and some rejected; an input counts as rejected when the harness
 * counted a refusal (COUNTS.refused != 0). Include "corpus.h" first.
 */
#define FUZZ_REPLAY(NAME, COUNTS, corpus_name, renew)					\
static enum corpus_verdict								\
NAME##_replay_check(const char *name, const uint8_t *data, size_t len)			\
{											\
	static unsigned int runs;							\
	struct COUNTS c;								\
											\
	(void)name;									\
	if (++runs % (renew) == 0)							\
		NAME##_renew();								\
	NAME##_one(data, len, &c);							\
	return c.refused != 0 ? CORPUS_REJECTED : CORPUS_ACCEPTED;			\
}											\
											\
int											\
main(int argc, char **argv)								\
{											\
	int ret;									\
											\
	NAME##_init("amrma_" #NAME "_replay");						\
	ret = corpus_main(argc, argv, corpus_name, NAME##_replay_check);		\
	NAME##_fini();									\
	return ret;									\
}

#endif
