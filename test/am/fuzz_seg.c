/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: a frame gets the same verdict in one segment as in several, through
 * a node's whole receive path (seg_diff.h; the library is compiled in, so that libFuzzer
 * sees the edges of parse_mbuf() and frame_udp_sum()). Each input is a frame as it is,
 * so the wire corpus seeds it:
 *
 *   seg_fuzz -max_len=9728 CORPUS_DIR test/wire/corpus
 *
 * Where the frame is cut follows from its bytes: three splits of 2-4 segments each, for
 * a pair of receivers that verify checksums and one that does not. A difference, or a
 * verdict in one segment that is not the codec's, aborts. Built with -Dfuzz=true and
 * clang; test_seg_verdict runs the same comparison in meson test.
 */
#include <stdlib.h>

#include "harness.h"
#include "seg_diff.h"

/* Receivers are made anew this often: the replies they hold for an ack never come. */
#define RENEW_EVERY	512u

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	RTE_SET_USED(argc);
	RTE_SET_USED(argv);
	h_eal_init("amrma_seg_fuzz");
	if (seg_rcv_init() != 0)
		seg_die("no receivers");
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	static unsigned int inputs;
	uint64_t rng = UINT64_C(0xcbf29ce484222325);
	unsigned int i, k, pair, left;
	size_t j;

	if (len > SEG_FRAME_MAX)
		return -1;	/* not kept in the corpus */
	if (++inputs % RENEW_EVERY == 0) {
		left = seg_rcv_fini();
		if (left != 0)
			seg_die("%u mbufs leaked", left);
		if (seg_rcv_init() != 0)
			seg_die("no receivers");
	}
	for (j = 0; j < len; j++)
		rng = (rng ^ data[j]) * UINT64_C(0x100000001b3);
	for (i = 0; i < 3; i++) {
		uint16_t cut[SEG_MAX_CUTS];
		uint8_t shift[SEG_MAX_CUTS + 1];
		unsigned int nb = seg_pick_cuts(&rng, (uint16_t)len, cut, shift);
		uint16_t q = seg_dst_queue(data, (uint32_t)len);

		for (pair = 0; pair < SEG_NB_PAIRS; pair++) {
			struct seg_result r;

			if (seg_diff(pair, data, (uint16_t)len, q, cut, nb, shift, &r))
				continue;
			seg_report(stderr, "input", pair, data, (uint16_t)len, cut, nb, shift,
				   &r, true);
			for (k = 0; k < nb; k++)
				fprintf(stderr, "cut %u at %u, next segment +%u\n", k, cut[k],
					shift[k + 1]);
			abort();
		}
	}
	return 0;
}
