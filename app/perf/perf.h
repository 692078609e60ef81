/* SPDX-License-Identifier: BSD-3-Clause */
/* amrma-perf: shared declarations of the AM (main.c) and raw (raw.c) measurements. */
#ifndef AMRMA_PERF_H
#define AMRMA_PERF_H

#include <stdbool.h>
#include <stdint.h>

#include "app.h"

#define PERF_MAX_SIZES 16

enum perf_mode {
	PERF_SERVE,		/* AM echo target */
	PERF_RAW_SERVE,		/* swap MAC/IP/UDP and send every frame back */
	PERF_AM_LAT,		/* AM round trip, one request in flight */
	PERF_AM_RATE,		/* AM request/reply pairs per second, window in flight */
	PERF_RAW_ECHO,		/* raw UDP round trip against a raw-serve peer */
	PERF_RMA_LAT,		/* RMA put/get latency beside the AM round trip */
	PERF_RMA_BW,		/* RMA put/get bandwidth */
	PERF_RAW_PLACE,		/* receive frames, copy each payload into a region */
};

struct perf_opts {
	enum perf_mode mode;
	uint32_t sizes[PERF_MAX_SIZES];	/* latency: payload bytes per point */
	unsigned int nb_sizes;
	uint64_t iters;			/* latency: timed round trips per run and size */
	uint64_t warmup;		/* latency: untimed round trips before each run */
	unsigned int repeat;		/* runs per measurement; the median is reported */
	uint32_t window;		/* rate: requests in flight */
	uint32_t rate_size;		/* rate: payload bytes */
	uint64_t rate_count;		/* rate: requests per run */
	double duration_s;		/* serve: stop after this long; 0 = at SIGTERM */
	bool linger;			/* client: after the results, idle until SIGTERM */
	bool with_raw;			/* am-lat: raw echo run after each AM run */
	uint32_t rma_flags;		/* rma modes: forced protocol (0: by size) */
	bool memcpy_too;		/* rma-bw: memcpy of the same bytes after each run */
	uint8_t rma_ops;		/* rma-bw: bit 0 puts, bit 1 gets */
	char memif_mode[16];		/* "copy" / "zero-copy"; detected from devargs */
};

/** Median and p99 of v[0..n-1] (sorts v). */
void perf_summary(double *v, uint64_t n, double *median, double *p99);

/**
 * Mean of the middle half of v[0..n-1], sorted by perf_summary(). This VM's TSC moves in
 * 10 ns steps, so a median of round trips is a multiple of 10 ns (3 % of a raw echo);
 * the interquartile mean resolves smaller differences between two runs.
 */
double perf_iqm(const double *v, uint64_t n);

/**
 * Print one JSON result line: name, value (median of runs[]), unit, size (< 0: none),
 * mode, repeat, the per-run values and extra (already formatted JSON members or NULL).
 */
void perf_emit(const struct perf_opts *o, const char *name, const char *unit, int size,
	       double *runs, unsigned int nb_runs, const char *extra);

/** Frame bytes of an AM request with no arguments and len payload bytes. */
static inline uint32_t
perf_am_frame_len(uint32_t len)
{
	return (uint32_t)AMRMA_WIRE_HDR_LEN + len;
}

/* A raw frame to this UDP port switches a serving side from raw echo back to AM. */
#define PERF_RAW_SWITCH_PORT 9001

int perf_raw_serve(struct app *a, const struct perf_opts *o);
int perf_rma_lat(struct app *a, const struct perf_opts *o);
int perf_rma_bw(struct app *a, const struct perf_opts *o);
int perf_raw_echo(struct app *a, const struct perf_opts *o);
int perf_raw_place(struct app *a, const struct perf_opts *o);

/** Serving side: one burst of raw echo; sets *to_am when the switch frame passed. */
unsigned int perf_raw_poll(struct app *a, bool *to_am);

/** Client side of the raw echo. */
struct perf_raw;
struct perf_raw *perf_raw_new(struct app *a);
void perf_raw_free(struct perf_raw *e);
uint64_t perf_raw_lost(const struct perf_raw *e);
/** warmup + iters round trips of frames as long as an AM request of size; rtt[iters];
 *  their median, p99 and, unless iqm is NULL, interquartile mean (perf_iqm()). */
int perf_raw_run(struct perf_raw *e, uint32_t size, uint64_t warmup, uint64_t iters,
		 double *rtt, double *median, double *p99, double *iqm);
/** Ask a serving side that echoes raw frames to go back to AM. */
int perf_raw_switch_to_am(struct perf_raw *e);

#endif
