/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Replays the channel fuzz corpus (test/am/corpus: seeds and the fuzzer's finds) through
 * the same harness: a violation aborts. An input during which node 1 turned down a frame
 * or message of the attacker counts as rejected, and corpus_main() wants one at least:
 * the corpus must reach the channel's refusals.
 */
#include "chan_fuzz.h"
#include "corpus.h"

static unsigned int runs;

static enum corpus_verdict
check(const char *name, const uint8_t *data, size_t len)
{
	struct chan_fuzz_counts c;

	(void)name;
	if (++runs % 100 == 0)
		chan_fuzz_renew();
	chan_fuzz_one(data, len, &c);
	return c.refused != 0 ? CORPUS_REJECTED : CORPUS_ACCEPTED;
}

int
main(int argc, char **argv)
{
	int ret;

	chan_fuzz_init("amrma_chan_fuzz_replay");
	ret = corpus_main(argc, argv, "chan", check);
	chan_fuzz_fini();
	return ret;
}
