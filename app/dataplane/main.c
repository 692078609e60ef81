/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * amrma-dataplane: one amrma node on one port, pinned with EAL's lcore options.
 * Layouts: compact (the main lcore polls every context: right for 2-core machines) or
 * production (one lcore per context). Roles: target/echo serve requests, initiator runs a
 * verifying echo load against a peer.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_pdump.h>

#include "app.h"

static struct app A;

static int
ctx_loop(void *arg)
{
	struct amrma_ctx *ctx = arg;
	struct amrma_idle idle = { .spin = A.cfg.idle_spin, .sleep_us = A.cfg.idle_sleep_us };

	/* the progress engine runs with the context it sends from */
	bool progress = amrma_ctx_index(ctx) == A.cfg.rma.progress_ctx && A.rma != NULL;

	while (!app_stop)
		amrma_idle_step(&idle, amrma_ctx_poll(ctx, 32) +
				(progress ? amrma_rma_progress(A.rma) : 0));
	return 0;
}

/* production layout: contexts [first, nb) each on their own worker lcore */
static int
launch_workers(uint16_t first)
{
	unsigned int lcore = rte_get_main_lcore();
	uint16_t i;

	for (i = first; i < amrma_node_nb_ctx(A.node); i++) {
		if (i < A.cfg.nb_ctx_lcore) {
			lcore = A.cfg.ctx_lcore[i];
		} else {
			lcore = rte_get_next_lcore(lcore, 1, 0);
		}
		if (lcore >= RTE_MAX_LCORE || !rte_lcore_is_enabled(lcore) ||
		    lcore == rte_get_main_lcore()) {
			fprintf(stderr, "context %u: no worker lcore (give EAL -l with one lcore "
				"per context plus the main one, or use layout = compact)\n", i);
			return -EINVAL;
		}
		if (rte_eal_remote_launch(ctx_loop, amrma_node_ctx(A.node, i), lcore) != 0)
			return -EBUSY;
		A.workers = true;
		printf("  context %u polled by lcore %u%s\n", i, lcore,
		       i == A.cfg.rma.progress_ctx ? " (with the RMA progress engine)" : "");
	}
	return 0;
}

/* stop the worker lcores and wait for them: the main lcore owns the whole node again */
static void
stop_workers(void)
{
	app_stop = 1;
	rte_eal_mp_wait_lcore();
	A.workers = false;
}

static int
serve(void)
{
	struct amrma_idle idle = { .spin = A.cfg.idle_spin, .sleep_us = A.cfg.idle_sleep_us };
	uint64_t end = A.cfg.duration_s > 0 ?
		rte_rdtsc() + (uint64_t)(A.cfg.duration_s * rte_get_tsc_hz()) : UINT64_MAX;
	int ret = 0;

	if (A.cfg.layout == LAYOUT_PRODUCTION) {
		ret = launch_workers(0);
		if (ret == 0)
			while (!app_stop && rte_rdtsc() < end)
				rte_delay_ms(10);
		stop_workers();
		return ret;
	}
	while (!app_stop && rte_rdtsc() < end)
		amrma_idle_step(&idle, amrma_node_poll(A.node, 32) + amrma_rma_progress(A.rma));
	return 0;
}

/* Notified puts: completions reflected by the target's engine, no code of its own. */
static int
reflect_initiate(struct amrma_ep dst)
{
	struct app_reflect_result r;
	int ret = app_reflect_load(&A, dst, A.cfg.count, &r);

	if (A.cfg.json)
		printf("{\"role\":\"reflect\",\"count\":%" PRIu64 ",\"verified\":%" PRIu64
		       ",\"bad\":%" PRIu64 ",\"min_size\":%" PRIu64 ",\"max_size\":%" PRIu64
		       ",\"us\":%.2f,\"reflects\":%" PRIu64 ",\"completions\":%" PRIu64
		       ",\"status\":%d}\n", r.count, r.verified, r.bad,
		       r.count ? r.min : 0, r.max, r.us, r.st.reflects_sent, r.st.completions, ret);
	else
		printf("reflect: %" PRIu64 "-%" PRIu64 " B x %" PRIu64 ", node %u reflected each "
		       "completion after the bytes landed: %" PRIu64 "/%" PRIu64 " verified, "
		       "%.1f us per put + notification%s\n", r.count ? r.min : 0, r.max, r.count,
		       dst.node, r.verified, r.count, r.us, ret ? " FAILED" : "");
	if (ret != 0)
		return ret;
	return r.verified == r.count && r.count != 0 ? 0 : -EIO;
}

/* Striped sends: the target splits each over its contexts, which pull in parallel. */
static int
stripe_initiate(struct amrma_ep dst)
{
	struct app_stripe_result r[APP_MAX_SIZES];
	struct amrma_rma_stats st;
	unsigned int n = 0, i, bad = 0;
	uint16_t q;
	int ret = app_stripe_load(&A, dst, A.cfg.count, r, &n);

	for (i = 0; i < n; i++) {
		if (r[i].verified != r[i].count || r[i].count == 0)
			bad++;
		if (A.cfg.json)
			printf("{\"role\":\"stripe\",\"size\":%" PRIu64 ",\"count\":%" PRIu64
			       ",\"verified\":%" PRIu64 ",\"status\":%d,\"us\":%.2f,"
			       "\"MBps\":%.1f}\n", r[i].size, r[i].count, r[i].verified,
			       r[i].status, r[i].us, r[i].mbps);
		else
			printf("stripe: %9" PRIu64 " B x %-5" PRIu64 " verified %" PRIu64 "/%"
			       PRIu64 " (crc32c on the target), %.1f us %.0f MB/s%s\n",
			       r[i].size, r[i].count, r[i].verified, r[i].count, r[i].us,
			       r[i].mbps, r[i].status ? " FAILED" : "");
	}
	/* the target's contexts pulled the portions from ours in turn */
	for (q = 0; q < amrma_node_nb_ctx(A.node); q++) {
		amrma_rma_stats_get(amrma_node_ctx(A.node, q), &st);
		if (A.cfg.json)
			printf("{\"role\":\"stripe_ctx\",\"ctx\":%u,\"served_bytes\":%" PRIu64
			       "}\n", q, st.served_get_bytes);
		else
			printf("stripe: our context %u served %" PRIu64 " bytes of portions\n", q,
			       st.served_get_bytes);
	}
	if (ret != 0)
		return ret;
	return bad == 0 ? 0 : -EIO;
}

static int
rma_initiate(void)
{
	struct amrma_ep dst = { .node = A.cfg.target, .ctx = A.cfg.target_ctx };
	struct app_rma_result r[APP_MAX_SIZES];
	struct amrma_rma_stats st;
	unsigned int n = 0, i, bad = 0;
	int ret;

	ret = app_rma_load(&A, amrma_node_ctx(A.node, 0), dst, A.cfg.count, r, &n);
	for (i = 0; i < n; i++) {
		if (r[i].verified != r[i].count)
			bad++;
		if (A.cfg.json)
			printf("{\"role\":\"rma\",\"size\":%" PRIu64 ",\"count\":%" PRIu64
			       ",\"verified\":%" PRIu64 ",\"mismatches\":%" PRIu64 ",\"status\":%d,"
			       "\"put_MBps\":%.1f,\"get_MBps\":%.1f,"
			       "\"put_us\":%.2f,\"get_us\":%.2f}\n",
			       r[i].size, r[i].count, r[i].verified, r[i].mismatches, r[i].status,
			       r[i].put_mbps, r[i].get_mbps, r[i].put_us, r[i].get_us);
		else
			printf("rma: %9" PRIu64 " B x %-5" PRIu64 " put+get verified %" PRIu64
			       "/%" PRIu64 " (crc32c on both sides), put %.1f us %.0f MB/s, "
			       "get %.1f us %.0f MB/s%s\n", r[i].size, r[i].count, r[i].verified,
			       r[i].count, r[i].put_us, r[i].put_mbps, r[i].get_us, r[i].get_mbps,
			       r[i].status ? " FAILED" : "");
	}
	/* how the data left: attached in place (EAL memory) or copied into frames */
	amrma_rma_stats_get(amrma_node_ctx(A.node, 0), &st);
	if (A.cfg.json)
		printf("{\"role\":\"rma_chunks\",\"chunks\":%" PRIu64
		       ",\"zero_copy\":%" PRIu64 "}\n", st.chunks, st.zero_copy_chunks);
	else
		printf("rma: %" PRIu64 " RMA packets sent, %" PRIu64 " of them zero-copy\n",
		       st.chunks, st.zero_copy_chunks);
	if (ret != 0)
		return ret;
	ret = reflect_initiate(dst);
	if (ret == 0)
		ret = stripe_initiate(dst);
	if (ret != 0)
		return ret;
	return bad == 0 ? 0 : -EIO;
}

static int
initiate(void)
{
	struct amrma_ep dst = { .node = A.cfg.target, .ctx = A.cfg.target_ctx };
	struct app_load_result r = { 0 };
	struct amrma_am_stats st;
	int ret;

	if (A.cfg.layout == LAYOUT_PRODUCTION && launch_workers(1) != 0) {
		stop_workers();
		return -EINVAL;
	}
	ret = app_am_load(&A, amrma_node_ctx(A.node, 0), dst, A.cfg.count, A.cfg.window,
			  A.cfg.size, A.cfg.progress_s, &r);
	if (A.cfg.layout == LAYOUT_PRODUCTION)
		stop_workers();
	amrma_node_stats_get(A.node, &st);
	if (A.cfg.json) {
		printf("{\"role\":\"initiator\",\"count\":%" PRIu64 ",\"completed\":%" PRIu64
		       ",\"verified\":%" PRIu64 ",\"errors\":%" PRIu64 ",\"size\":%u,"
		       "\"window\":%u,\"seconds\":%.6f,\"rate\":%.1f,\"rtt_median_us\":%.3f,"
		       "\"rtt_p99_us\":%.3f,\"retransmits\":%" PRIu64 "}\n",
		       A.cfg.count, r.completed, r.verified, r.errors, A.cfg.size, A.cfg.window,
		       r.seconds, r.completed / r.seconds, r.rtt_median_us, r.rtt_p99_us,
		       st.retransmits);
	} else {
		printf("initiator: %" PRIu64 "/%" PRIu64 " echo requests verified "
		       "(%u B payload, window %u, %" PRIu64 " errors) in %.3f s\n",
		       r.verified, A.cfg.count, A.cfg.size, A.cfg.window, r.errors, r.seconds);
		printf("initiator: %.0f requests/s, round trip median %.1f us, p99 %.1f us, "
		       "%" PRIu64 " retransmits\n", r.completed / r.seconds, r.rtt_median_us,
		       r.rtt_p99_us, st.retransmits);
	}
	if (ret != 0)
		return ret;
	return (r.verified == A.cfg.count && r.errors == 0) ? 0 : -EIO;
}

/*
 * Settle, then tell the peers that we leave: over net_memif they stop polling the port
 * before we close it (amrma_node_leave()).
 */
static void
leave(void)
{
	int ret;

	if (app_settle(&A, 0.5) != 0)
		printf("amrma-dataplane: operations or frames still unacknowledged at exit\n");
	ret = amrma_node_leave(A.node, 500000);
	if (ret != 0)
		printf("amrma-dataplane: leaving: %s\n", strerror(-ret));
}

int
main(int argc, char **argv)
{
	char err[512], mac[RTE_ETHER_ADDR_FMT_SIZE];
	int ret;

	ret = rte_eal_init(argc, argv);
	if (ret < 0) {
		fprintf(stderr, "amrma-dataplane: EAL init failed\n");
		return 1;
	}
	argc -= ret;
	argv += ret;
	eal_rundir_cleanup_at_exit();
	app_config_load(&A.cfg, NULL, err, sizeof(err));
	ret = app_config_args(&A.cfg, argc, argv, err, sizeof(err));
	if (ret != 0) {
		if (ret > 0) {
			app_config_usage("amrma-dataplane");
			return 0;
		}
		fprintf(stderr, "amrma-dataplane: %s\n", err);
		return 2;
	}
	app_signals();
	if (rte_pdump_init() != 0)
		printf("note: packet capture (rte_pdump) unavailable in this EAL mode\n");
	ret = app_setup(&A);
	if (ret != 0)
		return 1;
	app_telemetry_init(&A);
	rte_ether_format_addr(mac, sizeof(mac), &A.dev.mac);
	printf("amrma-dataplane: node %u (%s) port %u %s, %u context(s), %s layout, "
	       "main lcore %u, udp checksums %s\n", A.cfg.node.node_id, app_role_names[A.cfg.role],
	       A.port_id, mac, A.cfg.node.nb_ctx,
	       A.cfg.layout == LAYOUT_COMPACT ? "compact" : "production", rte_lcore_id(),
	       amrma_node_csum(A.node) ? "on" : "off");
	fflush(stdout);

	if (A.cfg.role == ROLE_INITIATOR)
		ret = initiate();
	else if (A.cfg.role == ROLE_RMA)
		ret = rma_initiate();
	else
		ret = serve();
	leave();
	printf("node %u counters:\n", A.cfg.node.node_id);
	app_print_stats(A.node, "  ");
	app_teardown(&A);
	rte_pdump_uninit();
	rte_eal_cleanup();
	return ret == 0 ? 0 : 1;
}
