/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: a hostile peer's REFLECT, NOTIFY and RTS messages reach node 1's
 * handlers beside honest traffic (reflect_fuzz.c says how an input is read and what is
 * checked; the library is compiled in, so that libFuzzer sees the handlers' edges).
 * Built with -Dfuzz=true and clang:
 *
 *   reflect_fuzz -max_len=256 CORPUS_DIR test/reflect/corpus
 *
 * reflect_fuzz_corpus replays test/reflect/corpus in meson test.
 */
#include "fuzz_target.h"
#include "reflect_fuzz.h"

/* the nodes made anew every 500 inputs */
FUZZ_TARGET(reflect_fuzz, reflect_fuzz_counts, 1024, 500)
