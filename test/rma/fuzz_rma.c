/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: a hostile peer's RMA messages reach node 1's handlers (rma_fuzz.c
 * says how an input is read and what is checked; the library is compiled in, so that
 * libFuzzer sees the handlers' edges). Built with -Dfuzz=true and clang:
 *
 *   rma_fuzz -max_len=512 CORPUS_DIR test/rma/corpus
 *
 * rma_fuzz_corpus replays test/rma/corpus in meson test.
 */
#include "fuzz_target.h"
#include "rma_fuzz.h"

/* the nodes made anew every 1000 inputs */
FUZZ_TARGET(rma_fuzz, rma_fuzz_counts, 4096, 1000)
