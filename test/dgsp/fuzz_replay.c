/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Replays every file of the corpus directory through the fuzz harness.
 * Names carry the expected verdict: bad_<reason>_<n>.dgsp must be rejected
 * for exactly that reason, good_*.dgsp must be accepted, anything else
 * (fuzzer finds) must merely not crash.
 */
#include <stdio.h>
#include <string.h>

#include "cases.h"
#include "corpus.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

static enum corpus_verdict
check(const char *name, const uint8_t *data, size_t len)
{
	enum amrma_dgsp_reason want, got = AMRMA_DGSP_OK;
	int rc;

	LLVMFuzzerTestOneInput(data, len);
	rc = fuzz_one(data, len, &got);
	if (strncmp(name, "bad_", 4) == 0) {
		const char *tok = name + 4;
		const char *end = strchr(tok, '_');

		if (end == NULL || case_reason(tok, (size_t)(end - tok), &want)) {
			fprintf(stderr, "%s: bad name\n", name);
			return CORPUS_WRONG;
		}
		if (rc == 0 || got != want) {
			fprintf(stderr, "%s: got %s, want %s\n", name,
				amrma_dgsp_reason_str(got), amrma_dgsp_reason_str(want));
			return CORPUS_WRONG;
		}
		return CORPUS_REJECTED;
	}
	if (strncmp(name, "good_", 5) == 0) {
		if (rc != 0) {
			fprintf(stderr, "%s: rejected: %s\n", name,
				amrma_dgsp_reason_str(got));
			return CORPUS_WRONG;
		}
		return CORPUS_ACCEPTED;
	}
	return CORPUS_UNCHECKED;
}

int
main(int argc, char **argv)
{
	return corpus_main(argc, argv, "dgsp", check);
}
