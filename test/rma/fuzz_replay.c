/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Replays the RMA fuzz corpus (test/rma/corpus: seeds and the fuzzer's finds, crashers
 * fixed since among them) through the same harness: a violation aborts. An input during
 * which node 1 refused a message counts as rejected, and corpus_main() wants one at
 * least: the corpus must reach the handlers' refusals.
 */
#include "corpus.h"
#include "fuzz_target.h"
#include "rma_fuzz.h"

/* the nodes made anew every 200 inputs */
FUZZ_REPLAY(rma_fuzz, rma_fuzz_counts, "rma", 200)
