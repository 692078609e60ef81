/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Replays the tag corpus (the fuzzer's finds) through the differential checker: engine
 * and model must agree on every input, or the checker aborts. An input during which the
 * engine refused a message (its bounded unexpected queue full) counts as rejected, so the
 * replay also proves that the corpus exercises that bound.
 */
#include <stdio.h>

#include "corpus.h"
#include "tag_model.h"

static enum corpus_verdict
check(const char *name, const uint8_t *data, size_t len)
{
	struct tag_model_counts c = { 0 };

	(void)name;
	tag_model_run(data, len, &c);
	return c.refused != 0 ? CORPUS_REJECTED : CORPUS_ACCEPTED;
}

int
main(int argc, char **argv)
{
	struct corpus_counts c;

	if (argc != 2) {
		fprintf(stderr, "usage: %s corpus-dir\n", argv[0]);
		return 2;
	}
	if (corpus_replay(argv[1], check, &c) != 0) {
		fprintf(stderr, "%s: cannot read %s\n", argv[0], argv[1]);
		return 1;
	}
	printf("tag corpus: %d inputs, engine and model agreed on all; %d of them filled the "
	       "unexpected queue, %d errors\n", c.files, c.rejected, c.errors);
	return c.errors == 0 && c.rejected > 0 ? 0 : 1;
}
