/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * amrma-perf: measurements for scripts/bench.sh. Two processes share one link (net_memif):
 * one serves (AM echo, or raw frame echo), the other measures AM round-trip latency, AM
 * message rate, or the raw echo round trip, and prints JSON lines on stdout.
 *
 * Every measurement runs `repeat` times in the same process; the reported value is the
 * median of the runs and the runs are listed too. scripts/bench.sh runs --repeat 1 per
 * process instead, in rounds interleaved with the raw echo, and takes the median over them.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_dev.h>
#include <rte_devargs.h>
#include <rte_eal.h>
#include <rte_ethdev.h>

#include "perf.h"

/* handler indices of the lean perf echo (the app's APP_H_ECHO checksums every byte) */
enum {
	PERF_H_ECHO = 16,	/* request: reply with the same payload */
	PERF_H_ECHO_REPLY = 17,	/* reply: record the length that came back */
	PERF_H_RAW = 18,	/* request: serve raw echo until a switch frame (see perf.h) */
};

/* serving side: echoing raw frames instead of polling the AM node */
static bool serve_raw;

static struct app A;

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

void
perf_summary(double *v, uint64_t n, double *median, double *p99)
{
	if (n == 0) {
		*median = *p99 = 0;
		return;
	}
	qsort(v, n, sizeof(*v), cmp_double);
	*median = v[n / 2];
	*p99 = v[RTE_MIN(n - 1, (n * 99) / 100)];
}

double
perf_iqm(const double *v, uint64_t n)
{
	uint64_t i, lo = n / 4, hi = n - n / 4;
	double sum = 0;

	if (hi <= lo)
		return n != 0 ? v[n / 2] : 0;
	for (i = lo; i < hi; i++)
		sum += v[i];
	return sum / (double)(hi - lo);
}

/* rates as integers, times with ns resolution: no exponents in the JSON */
static void
print_num(double v)
{
	printf(v >= 1000 ? "%.0f" : "%.4g", v);
}

void
perf_emit(const struct perf_opts *o, const char *name, const char *unit, int size,
	  double *runs, unsigned int nb_runs, const char *extra)
{
	double sorted[64], med, p99;
	unsigned int i, n = RTE_MIN(nb_runs, RTE_DIM(sorted));

	memcpy(sorted, runs, n * sizeof(*runs));
	perf_summary(sorted, n, &med, &p99);
	bool am = strncmp(name, "am_", 3) == 0 || strncmp(name, "rma_", 4) == 0;

	printf("{\"name\":\"%s%s%s\",\"value\":", name,
	       !am || A.cfg.node.csum == AMRMA_CSUM_AUTO ? "" :
	       A.cfg.node.csum == AMRMA_CSUM_ON ? "_csum" : "_nocsum",
	       am && A.cfg.node.coalesce_frame == 0 ? "_nocoalesce" : "");
	print_num(med);
	printf(",\"unit\":\"%s\"", unit);
	if (size >= 0)
		printf(",\"size\":%d", size);
	printf(",\"mode\":\"%s\",", o->memif_mode);
	if (am && A.node != NULL)
		printf("\"csum\":%s,", amrma_node_csum(A.node) ? "true" : "false");
	printf("\"repeat\":%u,\"stat\":\"median of runs\",\"runs\":[", n);
	for (i = 0; i < n; i++) {
		printf("%s", i ? "," : "");
		print_num(runs[i]);
	}
	printf("]%s%s,\"tool\":\"amrma-perf\"}\n", extra ? "," : "", extra ? extra : "");
	fflush(stdout);
}

/* ---- AM echo: target side ---- */

static int
perf_echo(struct amrma_ctx *ctx, amrma_am_token_t tok, const struct amrma_am_msg *msg,
	  void *arg)
{
	(void)arg;
	return amrma_am_reply(ctx, tok, PERF_H_ECHO_REPLY, NULL, 0, msg->payload, msg->len, 0);
}

struct lat_op {
	uint32_t got_len;
	int status;
	bool done;
	uint64_t done_tsc;	/* when the completion callback ran */
};

static int
perf_echo_reply(struct amrma_ctx *ctx, amrma_am_token_t tok, const struct amrma_am_msg *msg,
		void *arg)
{
	struct lat_op *op = msg->op_arg;

	(void)ctx;
	(void)tok;
	(void)arg;
	if (op != NULL)
		op->got_len = msg->len;
	return 0;
}

static void
lat_done(struct amrma_ctx *ctx, void *arg, int status)
{
	struct lat_op *op = arg;

	(void)ctx;
	op->done_tsc = rte_rdtsc();
	op->status = status;
	op->done = true;
}

static int
perf_raw_mode(struct amrma_ctx *ctx, amrma_am_token_t tok, const struct amrma_am_msg *msg,
	      void *arg)
{
	(void)ctx;
	(void)tok;
	(void)msg;
	(void)arg;
	/* the automatic reply leaves with this poll; the next loop turn echoes raw frames */
	serve_raw = true;
	return 0;
}

/*
 * AM echo target. On request (PERF_H_RAW) it echoes raw frames instead, until a raw frame
 * to PERF_RAW_SWITCH_PORT: the client alternates AM and raw runs against one server over
 * one link, seconds apart, so both see the same machine.
 */
static int
serve(const struct perf_opts *o)
{
	struct amrma_ctx *ctx = amrma_node_ctx(A.node, 0);
	struct amrma_idle idle = { .spin = A.cfg.idle_spin, .sleep_us = A.cfg.idle_sleep_us };
	uint64_t end = o->duration_s > 0 ?
		rte_rdtsc() + (uint64_t)(o->duration_s * rte_get_tsc_hz()) : UINT64_MAX;

	/* no clock read per poll unless a duration is set: rdtsc is slow on VMs */
	while (!app_stop && (end == UINT64_MAX || rte_rdtsc() < end)) {
		if (serve_raw) {
			bool to_am = false;

			amrma_idle_step(&idle, (int)perf_raw_poll(&A, &to_am));
			if (to_am)
				serve_raw = false;
		} else {
			amrma_idle_step(&idle, amrma_ctx_poll(ctx, 32) +
					amrma_rma_progress(A.rma));
		}
	}
	return 0;
}

/* client: have the server echo raw frames; drain our acks first */
static int
switch_to_raw(struct amrma_ctx *ctx, struct amrma_ep dst)
{
	struct lat_op op = { 0 };
	uint64_t end;
	int ret;

	while ((ret = amrma_am_request(ctx, dst, PERF_H_RAW, NULL, 0, NULL, 0, lat_done,
				       &op)) == -EAGAIN || ret == -ENOBUFS)
		amrma_ctx_poll(ctx, 32);
	if (ret != 0)
		return ret;
	while (!op.done && !app_stop)
		amrma_ctx_poll(ctx, 32);
	/* what the server sends from now on is raw echo; give delayed acks time to leave */
	end = rte_rdtsc() + rte_get_tsc_hz() / 5000;
	while (rte_rdtsc() < end)
		amrma_ctx_poll(ctx, 32);
	return op.status;
}

/* ---- AM latency ---- */

/* where an initiator's round trip goes: the request call, and the poll that completes it;
 * measured on one round trip in LAT_SPLIT_EVERY, which is then not a latency sample */
#define LAT_SPLIT_EVERY 8
struct lat_split {
	uint64_t req_cycles, last_poll_cycles;
};

/*
 * One request in flight: issue, poll until its done callback ran. Returns cycles or 0.
 * With ls, also the split of the initiator's part; its clock reads lengthen the round
 * trip, so the caller keeps those round trips out of the latency samples.
 */
static uint64_t
am_round_trip(struct amrma_ctx *ctx, struct amrma_ep dst, const uint8_t *buf, uint32_t size,
	      uint64_t *errors, struct lat_split *ls)
{
	struct lat_op op = { 0 };
	uint64_t t0, t1, tp = 0;
	int ret;

	t0 = rte_rdtsc();
	while ((ret = amrma_am_request(ctx, dst, PERF_H_ECHO, NULL, 0, buf, (uint16_t)size,
				       lat_done, &op)) == -EAGAIN || ret == -ENOBUFS) {
		amrma_ctx_poll(ctx, 32);
		if (app_stop)
			return 0;
	}
	if (ret != 0) {
		fprintf(stderr, "amrma-perf: request: %s\n", strerror(-ret));
		(*errors)++;
		app_stop = 1;
		return 0;
	}
	if (ls == NULL) {
		while (!op.done)
			amrma_ctx_poll(ctx, 32);
	} else {
		t1 = rte_rdtsc();
		ls->req_cycles = t1 - t0;
		while (!op.done) {
			tp = rte_rdtsc();
			amrma_ctx_poll(ctx, 32);
		}
		t1 = rte_rdtsc();
		ls->last_poll_cycles = t1 - tp;
	}
	/* the round trip ends when the completion callback runs, as the raw echo ends
	 * when its frame is back; the rest of that poll is not part of it */
	t0 = op.done_tsc - t0;
	if (op.status != 0 || op.got_len != size) {
		(*errors)++;
		return 0;
	}
	return t0;
}

/*
 * What one empty poll costs, amrma's and the bare ethdev RX burst the raw echo spins on:
 * a frame waits on average half a poll before it is seen, on both sides of a round trip.
 * Measured while the link is quiet (the server waits for our next request).
 */
#define IDLE_POLLS 200000u
static void
idle_poll_cost(struct amrma_ctx *ctx, double *am_ns, double *raw_ns)
{
	double ns = 1e9 / (double)rte_get_tsc_hz();
	struct rte_mbuf *pkts[32];
	uint64_t t0, t1, t2;
	unsigned int i, seen = 0;

	t0 = rte_rdtsc();
	for (i = 0; i < IDLE_POLLS; i++)
		amrma_ctx_poll(ctx, 32);
	t1 = rte_rdtsc();
	for (i = 0; i < IDLE_POLLS; i++) {
		uint16_t n = rte_eth_rx_burst(A.port_id, 0, pkts, RTE_DIM(pkts));

		/* a late frame (an ack) is dropped here; the protocol resends what matters */
		if (unlikely(n != 0)) {
			seen += n;
			rte_pktmbuf_free_bulk(pkts, n);
		}
	}
	t2 = rte_rdtsc();
	*am_ns = (double)(t1 - t0) * ns / IDLE_POLLS;
	*raw_ns = (double)(t2 - t1) * ns / IDLE_POLLS;
	if (seen != 0)
		fprintf(stderr, "amrma-perf: %u frames arrived during the idle-poll timing\n",
			seen);
}

static int
am_lat(const struct perf_opts *o)
{
	struct amrma_ctx *ctx = amrma_node_ctx(A.node, 0);
	struct amrma_ep dst = { .node = A.cfg.target, .ctx = 0 };
	double us = 1e6 / (double)rte_get_tsc_hz();
	double *rtt = calloc(o->iters, sizeof(*rtt));
	double *req = calloc(o->iters, sizeof(*req)), *rxp = calloc(o->iters, sizeof(*rxp));
	double med[64], p99[64], req_med[64], rxp_med[64], unused;
	double raw_med[64], raw_p99[64], idle_am[64], idle_raw[64], iqm[64], raw_iqm[64];
	struct perf_raw *raw = o->with_raw ? perf_raw_new(&A) : NULL;
	struct lat_split ls;
	uint8_t buf[AMRMA_WIRE_MAX_PAYLOAD];
	unsigned int s, r;
	uint64_t i, errors = 0;
	char extra[256];

	if (rtt == NULL || req == NULL || rxp == NULL || (o->with_raw && raw == NULL)) {
		free(rtt);
		free(req);
		free(rxp);
		perf_raw_free(raw);
		return -ENOMEM;
	}
	memset(buf, 0xa5, sizeof(buf));
	for (s = 0; s < o->nb_sizes && !app_stop; s++) {
		uint32_t size = o->sizes[s];

		if (size > amrma_am_max_payload(ctx, 0)) {
			fprintf(stderr, "amrma-perf: size %u above the port's AM payload "
				"limit %u\n", size, amrma_am_max_payload(ctx, 0));
			free(rtt);
			free(req);
			free(rxp);
			perf_raw_free(raw);
			return -EMSGSIZE;
		}
		for (r = 0; r < o->repeat && !app_stop; r++) {
			uint64_t n = 0;

			uint64_t ns = 0;

			for (i = 0; i < o->warmup && !app_stop; i++)
				am_round_trip(ctx, dst, buf, size, &errors, NULL);
			idle_poll_cost(ctx, &idle_am[r], &idle_raw[r]);
			for (i = 0; i < o->iters && !app_stop; i++) {
				/* one round trip in LAT_SPLIT_EVERY measures the split only */
				bool split = i % LAT_SPLIT_EVERY == 0;
				uint64_t c = am_round_trip(ctx, dst, buf, size, &errors,
							   split ? &ls : NULL);

				if (c != 0 && split) {
					req[ns] = (double)ls.req_cycles * us;
					rxp[ns++] = (double)ls.last_poll_cycles * us;
				} else if (c != 0) {
					rtt[n++] = (double)c * us;
				}
			}
			perf_summary(rtt, n, &med[r], &p99[r]);
			iqm[r] = perf_iqm(rtt, n);
			perf_summary(req, ns, &req_med[r], &unused);
			perf_summary(rxp, ns, &rxp_med[r], &unused);
			fprintf(stderr, "am-lat size %u run %u: median %.3f us, p99 %.3f us\n",
				size, r, med[r], p99[r]);
			if (raw != NULL && !app_stop) {
				/* the same round trip without amrma, right after, same link */
				if (switch_to_raw(ctx, dst) != 0 ||
				    perf_raw_run(raw, size, o->warmup, o->iters, rtt, &raw_med[r],
						 &raw_p99[r], &raw_iqm[r]) != 0 ||
				    perf_raw_switch_to_am(raw) != 0) {
					fprintf(stderr, "amrma-perf: raw echo interleave failed\n");
					errors++;
					app_stop = 1;
					break;
				}
				fprintf(stderr, "raw-echo size %u run %u: median %.3f us, "
					"p99 %.3f us\n", size, r, raw_med[r], raw_p99[r]);
			}
		}
		if (app_stop)
			break;
		/* initiator-local parts (medians): the request call, and the poll that received
		 * the reply and ran its handler; the rest is link and target */
		perf_summary(req_med, r, &req_med[0], &unused);
		perf_summary(rxp_med, r, &rxp_med[0], &unused);
		perf_summary(idle_am, r, &idle_am[0], &unused);
		perf_summary(idle_raw, r, &idle_raw[0], &unused);
		snprintf(extra, sizeof(extra), "\"iters\":%" PRIu64 ",\"frame\":%u,"
			 "\"errors\":%" PRIu64 ",\"req_call_us\":%.3f,\"reply_poll_us\":%.3f,"
			 "\"idle_poll_ns\":%.1f,\"raw_idle_poll_ns\":%.1f",
			 o->iters, perf_am_frame_len(size), errors, req_med[0], rxp_med[0],
			 idle_am[0], idle_raw[0]);
		perf_emit(o, "am_rtt_median", "us", (int)size, med, r, extra);
		perf_emit(o, "am_rtt_p99", "us", (int)size, p99, r, extra);
		perf_emit(o, "am_rtt_iqm", "us", (int)size, iqm, r, extra);
		if (raw != NULL) {
			snprintf(extra, sizeof(extra), "\"iters\":%" PRIu64 ",\"frame\":%u,"
				 "\"lost\":%" PRIu64 ",\"interleaved\":true", o->iters,
				 perf_am_frame_len(size), perf_raw_lost(raw));
			perf_emit(o, "raw_echo_rtt_median", "us", (int)size, raw_med, r, extra);
			perf_emit(o, "raw_echo_rtt_p99", "us", (int)size, raw_p99, r, extra);
			perf_emit(o, "raw_echo_rtt_iqm", "us", (int)size, raw_iqm, r, extra);
		}
	}
	free(rtt);
	free(req);
	free(rxp);
	perf_raw_free(raw);
	return errors == 0 && !app_stop ? 0 : -EIO;
}

/* ---- AM rate ---- */

struct rate_state {
	uint64_t completed, errors;
	uint64_t polls, idle_polls;	/* idle share: is the initiator CPU-bound? */
	uint32_t nb_free;
	struct lat_op *ops;
	uint32_t *free;
	uint32_t size;
};

static struct rate_state RS;

static void
rate_done(struct amrma_ctx *ctx, void *arg, int status)
{
	struct lat_op *op = arg;

	(void)ctx;
	if (status != 0 || op->got_len != RS.size)
		RS.errors++;
	RS.completed++;
	RS.free[RS.nb_free++] = (uint32_t)(op - RS.ops);
}

/* count requests with window in flight; returns seconds */
static double
am_rate_run(struct amrma_ctx *ctx, struct amrma_ep dst, const uint8_t *buf, uint64_t count,
	    uint32_t window)
{
	uint64_t issued = 0, t0;
	uint32_t i;

	RS.completed = 0;
	RS.polls = RS.idle_polls = 0;
	RS.nb_free = 0;
	for (i = 0; i < window; i++)
		RS.free[RS.nb_free++] = window - 1 - i;
	t0 = rte_rdtsc();
	while (RS.completed < count && !app_stop) {
		while (issued < count && RS.nb_free > 0) {
			struct lat_op *op = &RS.ops[RS.free[RS.nb_free - 1]];
			int ret;

			op->got_len = UINT32_MAX;
			ret = amrma_am_request(ctx, dst, PERF_H_ECHO, NULL, 0, buf,
					       (uint16_t)RS.size, rate_done, op);
			if (ret == -EAGAIN || ret == -ENOBUFS)
				break;
			if (ret != 0) {
				fprintf(stderr, "amrma-perf: request: %s\n", strerror(-ret));
				app_stop = 1;
				break;
			}
			RS.nb_free--;
			issued++;
		}
		RS.polls++;
		if (amrma_ctx_poll(ctx, 32) == 0)
			RS.idle_polls++;
	}
	return (double)(rte_rdtsc() - t0) / (double)rte_get_tsc_hz();
}

static int
am_rate(const struct perf_opts *o)
{
	struct amrma_ctx *ctx = amrma_node_ctx(A.node, 0);
	struct amrma_ep dst = { .node = A.cfg.target, .ctx = 0 };
	static uint8_t buf[AMRMA_WIRE_MAX_PAYLOAD];
	double rate[64], idle[64];
	unsigned int r;
	char extra[256];

	if (o->rate_size > amrma_am_max_payload(ctx, 0))
		return -EMSGSIZE;
	RS.size = o->rate_size;
	RS.ops = calloc(o->window, sizeof(*RS.ops));
	RS.free = calloc(o->window, sizeof(*RS.free));
	if (RS.ops == NULL || RS.free == NULL)
		return -ENOMEM;
	memset(buf, 0x5a, sizeof(buf));
	/* warm-up: caches, the peer's channel state, the RTO estimate */
	am_rate_run(ctx, dst, buf, RTE_MAX(o->rate_count / 10, (uint64_t)o->window), o->window);
	for (r = 0; r < o->repeat && !app_stop; r++) {
		double sec = am_rate_run(ctx, dst, buf, o->rate_count, o->window);

		rate[r] = (double)RS.completed / sec;
		idle[r] = RS.polls ? (double)RS.idle_polls / (double)RS.polls : 0;
		fprintf(stderr, "am-rate size %u window %u run %u: %.0f msg/s, %.1f polls/msg, "
			"%.0f%% of polls idle\n", o->rate_size, o->window, r, rate[r],
			(double)RS.polls / (double)RTE_MAX(RS.completed, (uint64_t)1),
			100 * idle[r]);
	}
	if (!app_stop) {
		struct amrma_am_stats st;
		double idle_med, unused;

		amrma_ctx_stats_get(ctx, &st);
		perf_summary(idle, r, &idle_med, &unused);
		snprintf(extra, sizeof(extra), "\"window\":%u,\"count\":%" PRIu64 ",\"frame\":%u,"
			 "\"errors\":%" PRIu64 ",\"retransmits\":%" PRIu64 ",\"idle_polls\":%.3f",
			 o->window, o->rate_count, perf_am_frame_len(o->rate_size), RS.errors,
			 st.retransmits, idle_med);
		perf_emit(o, "am_rate", "msg/s", (int)o->rate_size, rate, r, extra);
	}
	/* nothing may refer to RS.ops after this */
	while (amrma_ctx_outstanding(ctx) != 0)
		amrma_ctx_poll(ctx, 32);
	free(RS.ops);
	free(RS.free);
	return RS.errors == 0 && !app_stop ? 0 : -EIO;
}

/* ---- options and setup ---- */

static void
usage(void)
{
	fprintf(stderr,
		"usage: amrma-perf [EAL options] -- --mode MODE [options]\n"
		"  --mode M          serve | raw-serve | am-lat | am-rate | raw-echo | rma-lat |\n"
		"                    rma-bw (the serving side exposes a 160 MiB region) |\n"
		"                    raw-place (receive frames from a generator and copy each\n"
		"                    one's UDP payload into a 2 MiB region: a put's ceiling)\n"
		"  --proto P         rma modes: auto | short | pipelined | rendezvous\n"
		"  --port NAME       ethdev name or id (default net_memif0)\n"
		"  --node-id N       0 for the serving side (default), 1 for the client\n"
		"                    (the client modes default to 1); MAC 02:00:00:00:00:0<N+1>\n"
		"  --peer-mac MAC    the peer's MAC (default from its node id)\n"
		"  --sizes LIST      latency payload sizes (default 8,64,256,1024,1400)\n"
		"  --iters N         timed round trips per run and size (default 20000)\n"
		"  --warmup N        untimed round trips before each run (default 2000)\n"
		"  --repeat N        runs per measurement, median reported (default 5)\n"
		"  --window N        am-rate: requests in flight (default 32)\n"
		"  --size N          am-rate: payload bytes (default 64)\n"
		"  --count N         am-rate: requests per run (default 500000)\n"
		"  --duration S      serve modes: stop after S seconds (default: at SIGTERM)\n"
		"  --memif-mode M    label for the JSON (default: copy, or zero-copy when the\n"
		"                    port's devargs say zero-copy=yes)\n"
		"  --idle-sleep US   back off when idle (only for shared CPUs)\n"
		"  --csum auto|on|off  UDP checksums on AM frames, the same on both sides\n"
		"                    (default auto: off over memif; on and off add the suffix\n"
		"                    _csum or _nocsum to result names)\n"
		"  --coalesce BYTES  largest frame small messages to one peer share (default\n"
		"                    1514; 0: one message per frame, result names get the\n"
		"                    suffix _nocoalesce)\n"
		"  --rto-us US       first retransmit timeout (raise it under valgrind)\n"
		"  --quick           smoke-test sizes: 2000 iters, 200 warm-up, 2 runs\n"
		"  --ops put|get|both  rma-bw: which operations run (default both; one alone\n"
		"                    profiles one direction of the data)\n"
		"  --memcpy          rma-bw: after each run, memcpy the same bytes the same way\n"
		"                    (two buffers of the size in turn), emitted as memcpy_bw\n"
		"  --with-raw        am-lat: after each AM run, the raw echo of the same size\n"
		"                    against the same server (serve mode), emitted as\n"
		"                    raw_echo_rtt_*; AM and raw run i are seconds apart\n"
		"  --linger          client: after the results print \"amrma-perf: done\" on\n"
		"                    stderr and wait for SIGTERM without polling, so the server\n"
		"                    can be stopped first (net_memif can crash a side that\n"
		"                    polls while its peer disconnects)\n");
}

static int
parse_sizes(const char *s, struct perf_opts *o)
{
	/* K/M suffixes for the RMA sizes; AM modes skip what exceeds a frame */
	uint64_t v[PERF_MAX_SIZES];
	int i, n = app_parse_list(s, v, PERF_MAX_SIZES, UINT64_C(1) << 30, true);

	if (n < 0)
		return n;
	for (i = 0; i < n; i++)
		o->sizes[i] = (uint32_t)v[i];
	o->nb_sizes = (unsigned int)n;
	return 0;
}

static int
parse_mode(const char *s, enum perf_mode *m)
{
	static const char *const names[] = {
		[PERF_SERVE] = "serve", [PERF_RAW_SERVE] = "raw-serve",
		[PERF_AM_LAT] = "am-lat", [PERF_AM_RATE] = "am-rate",
		[PERF_RAW_ECHO] = "raw-echo", [PERF_RMA_LAT] = "rma-lat", [PERF_RMA_BW] = "rma-bw",
		[PERF_RAW_PLACE] = "raw-place",
	};
	int i = app_name_index(s, names, RTE_DIM(names));

	if (i < 0)
		return -EINVAL;
	*m = (enum perf_mode)i;
	return 0;
}

static int
parse_args(int argc, char **argv, struct perf_opts *o, int *node_id, char *peer_mac,
	   size_t mac_len)
{
	static const struct option opts[] = {
		{ "mode", required_argument, NULL, 'm' },
		{ "proto", required_argument, NULL, 'Q' },
		{ "port", required_argument, NULL, 'P' },
		{ "node-id", required_argument, NULL, 'n' },
		{ "peer-mac", required_argument, NULL, 'M' },
		{ "sizes", required_argument, NULL, 'S' },
		{ "iters", required_argument, NULL, 'I' },
		{ "warmup", required_argument, NULL, 'W' },
		{ "repeat", required_argument, NULL, 'r' },
		{ "window", required_argument, NULL, 'w' },
		{ "size", required_argument, NULL, 's' },
		{ "count", required_argument, NULL, 'c' },
		{ "duration", required_argument, NULL, 'd' },
		{ "memif-mode", required_argument, NULL, 'z' },
		{ "idle-sleep", required_argument, NULL, 'i' },
		{ "rto-us", required_argument, NULL, 'R' },
		{ "csum", required_argument, NULL, 'C' },
		{ "coalesce", required_argument, NULL, 'K' },
		{ "quick", no_argument, NULL, 'q' },
		{ "linger", no_argument, NULL, 'L' },
		{ "with-raw", no_argument, NULL, 'X' },
		{ "memcpy", no_argument, NULL, 'Y' },
		{ "ops", required_argument, NULL, 'O' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool have_mode = false;
	int opt, li = 0;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "", opts, &li)) != -1) {
		switch (opt) {
		case 'Q':
			o->rma_flags = strcmp(optarg, "short") == 0 ? AMRMA_RMA_F_SHORT :
				strcmp(optarg, "pipelined") == 0 ? AMRMA_RMA_F_PIPELINED :
				strcmp(optarg, "pipelined-copy") == 0 ?
				AMRMA_RMA_F_PIPELINED | AMRMA_RMA_F_COPY :
				strcmp(optarg, "rendezvous") == 0 ? AMRMA_RMA_F_RENDEZVOUS : 0;
			break;
		case 'm':
			if (parse_mode(optarg, &o->mode) != 0)
				goto bad;
			have_mode = true;
			break;
		case 'P':
			snprintf(A.cfg.port, sizeof(A.cfg.port), "%s", optarg);
			break;
		case 'n':
			APP_OPT_NUM(0, 1, *node_id, bad);
			break;
		case 'M':
			snprintf(peer_mac, mac_len, "%s", optarg);
			break;
		case 'S':
			if (parse_sizes(optarg, o) != 0)
				goto bad;
			break;
		case 'I':
			APP_OPT_NUM(1, UINT64_MAX, o->iters, bad);
			break;
		case 'W':
			APP_OPT_NUM(0, UINT64_MAX, o->warmup, bad);
			break;
		case 'r':
			/* per-run results live in arrays of 64 */
			APP_OPT_NUM(1, 64, o->repeat, bad);
			break;
		case 'w':
			APP_OPT_NUM(1, 65535, o->window, bad);
			break;
		case 's':
			APP_OPT_NUM(0, AMRMA_WIRE_MAX_PAYLOAD, o->rate_size, bad);
			break;
		case 'c':
			APP_OPT_NUM(1, UINT64_MAX, o->rate_count, bad);
			break;
		case 'd':
			if (app_parse_seconds(optarg, &o->duration_s) != 0)
				goto bad;
			break;
		case 'z':
			if (strcmp(optarg, "copy") != 0 && strcmp(optarg, "zero-copy") != 0)
				goto bad;
			snprintf(o->memif_mode, sizeof(o->memif_mode), "%s", optarg);
			break;
		case 'i':
			APP_OPT_NUM(0, 1000000, A.cfg.idle_sleep_us, bad);
			A.cfg.idle_spin = 1000;
			break;
		case 'R':
			/* the bounds of [am] rto_us */
			APP_OPT_NUM(10, 10000000, A.cfg.node.rto_us, bad);
			A.cfg.node.rto_max_us = RTE_MAX(A.cfg.node.rto_max_us,
							32 * A.cfg.node.rto_us);
			break;
		case 'C':
			if (app_csum_parse(optarg, &A.cfg.node.csum) != 0)
				goto bad;
			break;
		case 'K':
			APP_OPT_NUM(0, 9014, A.cfg.node.coalesce_frame, bad);
			break;
		case 'q':
			o->iters = 2000;
			o->warmup = 200;
			o->repeat = 2;
			o->rate_count = 20000;
			break;
		case 'L':
			o->linger = true;
			break;
		case 'X':
			o->with_raw = true;
			break;
		case 'Y':
			o->memcpy_too = true;
			break;
		case 'O':
			o->rma_ops = strcmp(optarg, "put") == 0 ? 1 :
				     strcmp(optarg, "get") == 0 ? 2 :
				     strcmp(optarg, "both") == 0 ? 3 : 0;
			if (o->rma_ops == 0) {
				usage();
				return -EINVAL;
			}
			break;
		case 'h':
			usage();
			return 1;
		default:
			usage();
			return -EINVAL;
		}
	}
	if (!have_mode || optind != argc) {
		usage();
		return -EINVAL;
	}
	return 0;
bad:
	fprintf(stderr, "amrma-perf: bad value '%s' for --%s\n", optarg, opts[li].name);
	return -EINVAL;
}

static void
print_counter(const char *name, uint64_t v, void *arg)
{
	(void)arg;
	if (v != 0)
		fprintf(stderr, "  %-28s %" PRIu64 "\n", name, v);
}

/* "zero-copy" when the port was created with zero-copy=yes (net_memif client) */
static void
detect_memif_mode(struct perf_opts *o)
{
	struct rte_eth_dev_info info;
	const struct rte_devargs *da;

	if (o->memif_mode[0] != '\0')
		return;
	snprintf(o->memif_mode, sizeof(o->memif_mode), "copy");
	if (rte_eth_dev_info_get(A.port_id, &info) != 0 || info.device == NULL)
		return;
	da = rte_dev_devargs(info.device);
	if (da != NULL && da->args != NULL && strstr(da->args, "zero-copy=yes") != NULL)
		snprintf(o->memif_mode, sizeof(o->memif_mode), "zero-copy");
}

int
main(int argc, char **argv)
{
	struct perf_opts o = {
		.sizes = { 8, 64, 256, 1024, 1400 }, .nb_sizes = 5,
		.iters = 20000, .warmup = 2000, .repeat = 5, .rma_ops = 3,
		.window = 32, .rate_size = 64, .rate_count = 500000,
	};
	char err[256], peer_mac[RTE_ETHER_ADDR_FMT_SIZE] = "";
	struct app_peer *p;
	int ret, node_id = -1, peer;
	bool serving;

	ret = rte_eal_init(argc, argv);
	if (ret < 0) {
		fprintf(stderr, "amrma-perf: EAL init failed\n");
		return 1;
	}
	argc -= ret;
	argv += ret;
	eal_rundir_cleanup_at_exit();
	app_config_load(&A.cfg, NULL, err, sizeof(err));
	snprintf(A.cfg.port, sizeof(A.cfg.port), "net_memif0");
	ret = parse_args(argc, argv, &o, &node_id, peer_mac, sizeof(peer_mac));
	if (ret != 0)
		return ret > 0 ? 0 : 2;
	serving = o.mode == PERF_SERVE || o.mode == PERF_RAW_SERVE || o.mode == PERF_RAW_PLACE;
	if (node_id < 0)
		node_id = serving ? 0 : 1;
	peer = 1 - node_id;
	/* two fixed nodes: id N has MAC 02:00:00:00:00:0<N+1> and IP 198.18.0.<N+1> */
	A.cfg.node.node_id = (uint16_t)node_id;
	A.cfg.node.ip = rte_cpu_to_be_32((198u << 24) | (18u << 16) | (uint32_t)(node_id + 1));
	A.cfg.role = serving ? ROLE_TARGET : ROLE_INITIATOR;
	A.cfg.target = (uint16_t)peer;
	p = &A.cfg.peer[A.cfg.nb_peer++];
	p->id = (uint16_t)peer;
	p->ip = rte_cpu_to_be_32((198u << 24) | (18u << 16) | (uint32_t)(peer + 1));
	p->nb_ctx = 1;
	if (peer_mac[0] != '\0') {
		if (rte_ether_unformat_addr(peer_mac, &p->mac) != 0) {
			fprintf(stderr, "amrma-perf: bad --peer-mac '%s'\n", peer_mac);
			return 2;
		}
	} else {
		struct rte_ether_addr m = {{ 0x02, 0, 0, 0, 0, (uint8_t)(peer + 1) }};

		p->mac = m;
	}
	if (o.mode == PERF_SERVE) {
		/* a region for the RMA modes: two operations of up to 64 MiB side by side */
		struct app_region *r = &A.cfg.region[A.cfg.nb_region++];

		snprintf(r->name, sizeof(r->name), "bench");
		r->size = UINT64_C(160) << 20;
		r->perm = AMRMA_REGION_READ | AMRMA_REGION_WRITE;
		A.cfg.node.nb_mbufs = RTE_MAX(A.cfg.node.nb_mbufs, 16383u);
	}
	app_signals();
	if (app_setup(&A) != 0)
		return 1;
	amrma_am_register(A.node, PERF_H_ECHO, perf_echo, NULL);
	amrma_am_register(A.node, PERF_H_ECHO_REPLY, perf_echo_reply, NULL);
	amrma_am_register(A.node, PERF_H_RAW, perf_raw_mode, NULL);
	detect_memif_mode(&o);
	/* the banner is what scripts wait for before starting the memif client */
	fprintf(stderr, "amrma-perf: node %u ready on port %u (%s), memif mode %s, lcore %u\n",
		node_id, A.port_id, A.cfg.port, o.memif_mode, rte_lcore_id());

	switch (o.mode) {
	case PERF_SERVE:
		ret = serve(&o);
		break;
	case PERF_RAW_SERVE:
		ret = perf_raw_serve(&A, &o);
		break;
	case PERF_AM_LAT:
		ret = am_lat(&o);
		break;
	case PERF_AM_RATE:
		ret = am_rate(&o);
		break;
	case PERF_RAW_ECHO:
		ret = perf_raw_echo(&A, &o);
		break;
	case PERF_RMA_LAT:
		ret = perf_rma_lat(&A, &o);
		break;
	case PERF_RMA_BW:
		ret = perf_rma_bw(&A, &o);
		break;
	case PERF_RAW_PLACE:
		ret = perf_raw_place(&A, &o);
		break;
	}
	if (o.linger && !serving) {
		/* no polling from here: the memif PMD of DPDK 22.11 may touch the peer's
		 * unmapped regions if a poll races with the peer's disconnect */
		fprintf(stderr, "amrma-perf: done\n");
		while (!app_stop)
			usleep(10000);
	}
	if (o.mode == PERF_SERVE || o.mode == PERF_AM_LAT || o.mode == PERF_AM_RATE) {
		struct amrma_am_stats st;

		/* stderr: stdout carries JSON lines only */
		fprintf(stderr, "node %u counters:\n", node_id);
		amrma_node_stats_get(A.node, &st);
		amrma_am_stats_foreach(&st, print_counter, NULL);
	}
	app_teardown(&A);
	rte_eal_cleanup();
	if (ret != 0)
		fprintf(stderr, "amrma-perf: %s\n", strerror(-ret));
	return ret == 0 ? 0 : 1;
}
