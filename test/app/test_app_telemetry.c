/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The /amrma telemetry commands against a dataplane being torn down: they run on DPDK's
 * telemetry threads, so from the start of app_teardown() they must read nothing of the
 * node or the RMA engine. The library's destroy functions are wrapped (--wrap) to query
 * every command over the telemetry socket while each runs, before and after the frees.
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include <rte_eal.h>

#include "app.h"
#include "harness.h"

static struct app A;
static int tel_fd = -1;
static unsigned int wrapped;

void __real_amrma_rma_destroy(struct amrma_rma *rma);
void __real_amrma_node_destroy(struct amrma_node *node);
void __wrap_amrma_rma_destroy(struct amrma_rma *rma);
void __wrap_amrma_node_destroy(struct amrma_node *node);

static const char *const cmds[] = {
	"/amrma/stats", "/amrma/stats,0", "/amrma/contexts", "/amrma/peers", "/amrma/regions",
	"/amrma/rma", "/amrma/reflect",
};

/* One command; its reply (a JSON object) in buf. */
static void
tel_query(const char *cmd, char *buf, size_t len)
{
	ssize_t n;

	assert_int_equal(send(tel_fd, cmd, strlen(cmd), 0), (ssize_t)strlen(cmd));
	n = recv(tel_fd, buf, len - 1, 0);
	assert_true(n > 0);
	buf[n] = '\0';
}

/* Every command answers an empty object: nothing of the app is read. */
static void
assert_detached(void)
{
	char buf[4096], want[64];
	unsigned int i;

	for (i = 0; i < RTE_DIM(cmds); i++) {
		tel_query(cmds[i], buf, sizeof(buf));
		snprintf(want, sizeof(want), "{\"%.*s\":{}}", (int)strcspn(cmds[i], ","),
			 cmds[i]);
		if (strcmp(buf, want) != 0)
			fail_msg("%s during teardown: %s", cmds[i], buf);
	}
}

void
__wrap_amrma_rma_destroy(struct amrma_rma *rma)
{
	assert_detached();
	__real_amrma_rma_destroy(rma);
	assert_detached();	/* A.rma still names the freed engine here */
	wrapped++;
}

void
__wrap_amrma_node_destroy(struct amrma_node *node)
{
	assert_detached();
	__real_amrma_node_destroy(node);
	assert_detached();	/* and A.node the freed node */
	wrapped++;
}

static void
tel_connect(void)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	char buf[1024];

	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/dpdk_telemetry.v2",
		 rte_eal_get_runtime_dir());
	tel_fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	assert_true(tel_fd >= 0);
	assert_int_equal(connect(tel_fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	assert_true(recv(tel_fd, buf, sizeof(buf), 0) > 0);	/* the greeting */
}

static void
test_teardown_detaches(void **state)
{
	char path[] = "/tmp/amrma-tel-test.XXXXXX", err[256], buf[4096];
	FILE *f;
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fprintf(f, "[node]\nid = 1\nport = net_ring0\nip = 198.18.0.2\ncontexts = 1\n"
		"[peer.2]\nmac = 02:00:00:00:00:02\nip = 198.18.0.3\ncontexts = 1\n"
		"[workload]\nrole = target\n[region.data]\nsize = 65536\nperm = rw\n");
	fclose(f);
	assert_int_equal(app_config_load(&A.cfg, path, err, sizeof(err)), 0);
	unlink(path);
	assert_int_equal(app_setup(&A), 0);
	assert_int_equal(app_telemetry_init(&A), 0);
	tel_connect();
	/* attached: the commands read the node and the engine */
	tel_query("/amrma/contexts", buf, sizeof(buf));
	assert_non_null(strstr(buf, "\"node_id\":1"));
	tel_query("/amrma/regions", buf, sizeof(buf));
	assert_non_null(strstr(buf, "\"region0\""));
	app_teardown(&A);
	assert_int_equal(wrapped, 2);
	assert_detached();
	close(tel_fd);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_teardown_detaches),
	};

	h_eal_init_vdev("amrma_tel", "net_ring0");
	return cmocka_run_group_tests_name("app_telemetry", tests, NULL, NULL);
}
