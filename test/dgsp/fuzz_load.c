/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer harness for the DGSP loader/verifier. Property: whatever the
 * bytes, load never crashes nor leaks, and a program it accepts runs
 * (gather, seek, scatter) entirely inside the verified window. The buffer
 * is exactly the window, so ASan catches any byte the verifier let through.
 */
#include <stdlib.h>
#include <string.h>

#include "cases.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

int
fuzz_one(const uint8_t *data, size_t len, enum amrma_dgsp_reason *why)
{
	struct amrma_dgsp_limits lim;
	struct amrma_dgsp *p = NULL;
	struct amrma_dgsm m;
	uint8_t *win, pkt[1500];
	uint64_t x;
	size_t i;

	fuzz_limits(&lim);
	if (amrma_dgsp_load(data, len, &lim, &p, why) != 0)
		return -1;
	win = calloc(1, 2 * FUZZ_WIN);
	if (win == NULL)
		abort();
	amrma_dgsm_init(&m, p, win + FUZZ_WIN, FUZZ_COUNT);
	while (amrma_dgsm_gather(&m, pkt, sizeof(pkt)) > 0)
		;
	/* Restarts at offsets taken from the input, then packet scatters. */
	for (i = 0; i + 8 <= len && i < 64; i += 8) {
		memcpy(&x, data + i, 8);
		x = m.total ? x % (m.total + 1) : 0;
		amrma_dgsm_gather_at(&m, x, pkt, sizeof(pkt));
		amrma_dgsm_scatter_at(&m, x, pkt, 100);
	}
	free(win);
	amrma_dgsp_free(p);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	enum amrma_dgsp_reason why;

	fuzz_one(data, len, &why);
	return 0;
}
