/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Replay of a fuzz corpus directory as a normal test: every file goes through a
 * per-corpus check that knows the verdict the file must get (from its name, or from what
 * the input does, as for the tag engine's). Pure C (no DPDK), so the dgsp tests can use
 * it too.
 */
#ifndef AMRMA_TEST_CORPUS_H
#define AMRMA_TEST_CORPUS_H

#include <stddef.h>
#include <stdint.h>

enum corpus_verdict {
	CORPUS_UNCHECKED,	/* no verdict expected (a fuzzer find): ran, no crash */
	CORPUS_ACCEPTED,	/* expected to be accepted, and accepted */
	CORPUS_REJECTED,	/* expected to be rejected, and rejected for the expected reason */
	CORPUS_WRONG,		/* the verdict is not the expected one (the check said why) */
};

/** Judge one file (by its name or its content); print why when returning CORPUS_WRONG. */
typedef enum corpus_verdict (*corpus_check_t)(const char *name, const uint8_t *data,
					       size_t len);

struct corpus_counts {
	int files, accepted, rejected, errors;
};

/**
 * Run check over every file of dir (names starting with '.' skipped). Unreadable files
 * and wrong verdicts count as errors. Returns 0, or -1 if dir cannot be opened.
 */
int corpus_replay(const char *dir, corpus_check_t check, struct corpus_counts *c);

/**
 * main() of a replay test: `prog corpus-dir`. Prints the counts under the name what and
 * passes (0) when no file erred and at least one file was rejected as expected: a corpus
 * that checked no hostile input proves nothing. 1 fails, 2 usage.
 */
int corpus_main(int argc, char **argv, const char *what, corpus_check_t check);

#endif /* AMRMA_TEST_CORPUS_H */
