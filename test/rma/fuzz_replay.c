/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Replays the RMA fuzz corpus (test/rma/corpus: seeds and the fuzzer's finds, crashers
 * fixed since among them) through the same harness: a violation aborts. An input during
 * which node 1 refused a message counts as rejected, and corpus_main() wants one at
 * least: the corpus must reach the handlers' refusals.
 */
#include "corpus.h"
#include "rma_fuzz.h"

static unsigned int runs;

static enum corpus_verdict
check(const char *name, const uint8_t *data, size_t len)
{
	struct rma_fuzz_counts c;

	(void)name;
	if (++runs % 200 == 0)
		rma_fuzz_renew();
	rma_fuzz_one(data, len, &c);
	return c.refused != 0 ? CORPUS_REJECTED : CORPUS_ACCEPTED;
}

int
main(int argc, char **argv)
{
	int ret;

	rma_fuzz_init("amrma_rma_fuzz_replay");
	ret = corpus_main(argc, argv, "rma", check);
	rma_fuzz_fini();
	return ret;
}
