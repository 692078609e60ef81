/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Replays the channel fuzz corpus (test/am/corpus: seeds and the fuzzer's finds) through
 * the same harness: a violation aborts. An input during which node 1 turned down a frame
 * or message of the attacker counts as rejected, and corpus_main() wants one at least:
 * the corpus must reach the channel's refusals.
 */
#include "corpus.h"
#include "fuzz_target.h"
#include "chan_fuzz.h"

/* the nodes made anew every 100 inputs */
FUZZ_REPLAY(chan_fuzz, chan_fuzz_counts, "chan", 100)
