/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * raw-place: the ceiling of an RMA put over this link. Frames from a generator (testpmd
 * txonly) are received and each one's UDP payload is copied into a region, as the target
 * of a put must do at least once per byte, with nothing else: no parsing beyond the
 * headers' lengths, no protocol, no acknowledgement. Its rate beside testpmd's rxonly rate
 * on the same link says how much of the raw goodput is left for any put once the link's
 * own copies and the placement copy share the receiving CPU.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "perf.h"

/* the working set of the bandwidth runs at 1 MiB: two operations side by side */
#define PLACE_REGION_BYTES (UINT64_C(2) << 20)
#define PLACE_MAX_SAMPLES 64	/* perf_emit() takes up to 64 runs */

/* copy the payload after the Ethernet/IPv4/UDP headers, across segments */
static uint32_t
place_frame(const struct rte_mbuf *m, uint8_t *region, uint64_t *cursor)
{
	uint32_t skip = AMRMA_WIRE_L2L4_LEN, placed = 0;

	if (m->pkt_len <= skip)
		return 0;
	if (*cursor + (m->pkt_len - skip) > PLACE_REGION_BYTES)
		*cursor = 0;
	for (; m != NULL; m = m->next) {
		uint32_t len = m->data_len;

		if (len <= skip) {
			skip -= len;
			continue;
		}
		memcpy(region + *cursor + placed, rte_pktmbuf_mtod_offset(m, uint8_t *, skip),
		       len - skip);
		placed += len - skip;
		skip = 0;
	}
	*cursor += placed;
	return placed;
}

int
perf_raw_place(struct app *a, const struct perf_opts *o)
{
	struct amrma_idle idle = { .spin = a->cfg.idle_spin, .sleep_us = a->cfg.idle_sleep_us };
	uint64_t hz = rte_get_tsc_hz(), end, last, frames = 0, total = 0, bytes = 0, cursor = 0;
	uint8_t *region = rte_malloc(NULL, PLACE_REGION_BYTES, 4096);
	double *pps = calloc(PLACE_MAX_SAMPLES, sizeof(*pps));
	unsigned int nb = 0, first;
	uint32_t frame = 0;
	char extra[192];

	if (region == NULL || pps == NULL) {
		rte_free(region);
		free(pps);
		return -ENOMEM;
	}
	memset(region, 0, PLACE_REGION_BYTES);	/* fault it in before the clock starts */
	last = rte_rdtsc();
	end = o->duration_s > 0 ? last + (uint64_t)(o->duration_s * (double)hz) : UINT64_MAX;
	while (!app_stop) {
		struct rte_mbuf *pkts[32];
		uint16_t n = rte_eth_rx_burst(a->port_id, 0, pkts, RTE_DIM(pkts)), i;
		uint64_t now;

		for (i = 0; i < n; i++) {
			uint32_t p = place_frame(pkts[i], region, &cursor);

			if (p != 0) {
				frames++;
				bytes += p;
				frame = pkts[i]->pkt_len;
			}
		}
		rte_pktmbuf_free_bulk(pkts, n);
		amrma_idle_step(&idle, (int)n);
		now = rte_rdtsc();
		if (now - last >= hz) {
			/* one sample a second, once frames flow */
			if ((frames != 0 || nb != 0) && nb < PLACE_MAX_SAMPLES)
				pps[nb++] = (double)frames * (double)hz / (double)(now - last);
			total += frames;
			frames = 0;
			last = now;
		}
		if (now >= end)
			break;
	}
	total += frames;
	fprintf(stderr, "raw-place: %" PRIu64 " frames, %" PRIu64 " payload bytes placed, "
		"%u samples\n", total, bytes, nb);
	/* the first sample covers the link coming up and the last one the generator
	 * stopping: drop both when there are enough */
	first = nb > 3 ? 1 : 0;
	if (nb > 3)
		nb--;
	if (nb > first) {
		snprintf(extra, sizeof(extra), "\"frame\":%u,\"frames\":%" PRIu64
			 ",\"placed_bytes\":%" PRIu64 ",\"region\":%" PRIu64, frame, total,
			 bytes, PLACE_REGION_BYTES);
		perf_emit(o, "raw_place_pps", "pps",
			  frame > AMRMA_WIRE_L2L4_LEN ? (int)(frame - AMRMA_WIRE_L2L4_LEN) : 0,
			  pps + first, nb - first, extra);
	}
	rte_free(region);
	free(pps);
	return nb > first ? 0 : -ENODATA;
}
