/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Replays the reflection fuzz corpus (test/reflect/corpus: seeds and the fuzzer's finds)
 * through the same harness: a violation aborts. An input during which node 1 refused a
 * message counts as rejected, and corpus_main() wants one at least: the corpus must
 * reach the handlers' refusals.
 */
#include "corpus.h"
#include "reflect_fuzz.h"

static unsigned int runs;

static enum corpus_verdict
check(const char *name, const uint8_t *data, size_t len)
{
	struct reflect_fuzz_counts c;

	(void)name;
	if (++runs % 100 == 0)
		reflect_fuzz_renew();
	reflect_fuzz_one(data, len, &c);
	return c.refused != 0 ? CORPUS_REJECTED : CORPUS_ACCEPTED;
}

int
main(int argc, char **argv)
{
	int ret;

	reflect_fuzz_init("amrma_reflect_fuzz_replay");
	ret = corpus_main(argc, argv, "reflect", check);
	reflect_fuzz_fini();
	return ret;
}
