/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Replays the reflection fuzz corpus (test/reflect/corpus: seeds and the fuzzer's finds)
 * through the same harness: a violation aborts. An input during which node 1 refused a
 * message counts as rejected, and corpus_main() wants one at least: the corpus must
 * reach the handlers' refusals.
 */
#include "corpus.h"
#include "fuzz_target.h"
#include "reflect_fuzz.h"

/* the nodes made anew every 100 inputs */
FUZZ_REPLAY(reflect_fuzz, reflect_fuzz_counts, "reflect", 100)
