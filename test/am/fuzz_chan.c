/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: a hostile peer that writes the channel fields of its frames itself
 * (seq, ack, sack, epochs, tokens, types, handlers, flags, coalesced messages) against
 * node 1's reliability layer, with an honest node 2 beside it (chan_fuzz.c says how an
 * input is read and what is checked; the library is compiled in, so that libFuzzer sees
 * the edges of the channel code). Built with -Dfuzz=true and clang:
 *
 *   chan_fuzz -max_len=256 CORPUS_DIR test/am/corpus
 *
 * chan_fuzz_corpus replays test/am/corpus in meson test.
 */
#include "fuzz_target.h"
#include "chan_fuzz.h"

/* the nodes made anew every 1000 inputs */
FUZZ_TARGET(chan_fuzz, chan_fuzz_counts, 1024, 1000)
