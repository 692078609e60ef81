/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Replays every file of the wire corpus through the fuzz harness. Names carry the
 * expected verdict: accept_*.bin must parse, reject_<reason>_<n>.bin must be rejected for
 * exactly that reason (amrma_wire_err_name()), anything else (fuzzer finds) must merely
 * not crash.
 */
#include <stdio.h>
#include <string.h>

#include "corpus.h"
#include "fuzz_wire.h"

/* "reject_bad_type_03.bin" -> "bad_type"; NULL for other names. */
static const char *
wanted_reason(const char *name, char *out, size_t cap)
{
	const char *start = name + strlen("reject_"), *end = strrchr(name, '_');
	size_t n;

	if (strncmp(name, "reject_", strlen("reject_")) != 0 || end == NULL || end <= start)
		return NULL;
	n = (size_t)(end - start);
	if (n >= cap)
		return NULL;
	memcpy(out, start, n);
	out[n] = '\0';
	return out;
}

static enum corpus_verdict
check(const char *name, const uint8_t *data, size_t len)
{
	enum amrma_wire_err got = fuzz_wire_one(data, len);
	char want[64];
	const char *reason = wanted_reason(name, want, sizeof(want));

	if (strncmp(name, "accept_", 7) == 0) {
		if (got != AMRMA_WIRE_OK) {
			fprintf(stderr, "%s: rejected (%s), expected to parse\n", name,
				amrma_wire_err_name(got));
			return CORPUS_WRONG;
		}
		return CORPUS_ACCEPTED;
	}
	if (reason != NULL) {
		if (strcmp(amrma_wire_err_name(got), reason) != 0) {
			fprintf(stderr, "%s: verdict %s, expected %s\n", name,
				amrma_wire_err_name(got), reason);
			return CORPUS_WRONG;
		}
		return CORPUS_REJECTED;
	}
	return CORPUS_UNCHECKED;
}

int
main(int argc, char **argv)
{
	return corpus_main(argc, argv, "wire", check);
}
