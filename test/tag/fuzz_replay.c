/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Replays the tag corpus (the fuzzer's finds) through the differential checker: engine
 * and model must agree on every input, or the checker aborts. An input during which the
 * engine refused a message (its bounded unexpected queue full) counts as rejected, and
 * corpus_main() wants at least one: the corpus must exercise that bound.
 */
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
	return corpus_main(argc, argv, "tag", check);
}
