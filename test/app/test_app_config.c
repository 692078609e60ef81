/* SPDX-License-Identifier: BSD-3-Clause */
/* The apps' configuration: the shared number parsers, the INI file and the options. */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "app_config.h"

static void
test_list_ok(void **state)
{
	uint64_t v[4];

	(void)state;
	assert_int_equal(app_parse_list("1,7 1400", v, 4, 1u << 20, false), 3);
	assert_true(v[0] == 1 && v[1] == 7 && v[2] == 1400);
	assert_int_equal(app_parse_list("4K, 2m,0", v, 4, 1u << 30, true), 3);
	assert_true(v[0] == 4096 && v[1] == 2u << 20 && v[2] == 0);
	/* the limit itself is allowed, with or without a suffix */
	assert_int_equal(app_parse_list("1M", v, 4, 1u << 20, true), 1);
	assert_true(v[0] == 1u << 20);
	assert_int_equal(app_parse_list("63", v, 4, 63, false), 1);
}

static void
test_list_rejects(void **state)
{
	static const char *const bad[] = {
		"", ",", " , ", "x", "1,x", "1.5", "-1", "0x10", "64",	/* 64 > max */
		"4K",				/* no suffixes here */
		"1,2,3,4,5",			/* more than cap */
		"99999999999999999999999",	/* overflows strtoull */
	};
	char huge[400];
	uint64_t v[4];
	unsigned int i;

	(void)state;
	for (i = 0; i < RTE_DIM(bad); i++)
		assert_int_equal(app_parse_list(bad[i], v, 4, 63, false), -EINVAL);
	/* a suffix must not wrap the value around (2^44 M = 2^64) */
	assert_int_equal(app_parse_list("17592186044416M", v, 4, UINT64_MAX, true), -EINVAL);
	assert_int_equal(app_parse_list("2K", v, 4, 2047, true), -EINVAL);
	/* too long to be a list we would have cut short */
	memset(huge, '1', sizeof(huge) - 1);
	huge[sizeof(huge) - 1] = '\0';
	assert_int_equal(app_parse_list(huge, v, 4, UINT64_MAX, false), -EINVAL);
}

/* Write an INI file made of the node section plus extra, load it; returns the result. */
static int
load(struct app_config *cfg, const char *extra, char *err, size_t errlen)
{
	char path[] = "/tmp/amrma_test_cfg_XXXXXX";
	int fd = mkstemp(path), ret;
	FILE *f;

	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fprintf(f, "[node]\nid = 0\nip = 198.18.0.1\ncontexts = 3\n%s", extra);
	fclose(f);
	ret = app_config_load(cfg, path, err, errlen);
	unlink(path);
	return ret;
}

static void
test_ini_lists(void **state)
{
	struct app_config cfg;
	char err[256];

	(void)state;
	assert_int_equal(load(&cfg, "lcores = 1, 2,3\n[workload]\nsizes = 8,64K,1M\n",
			      err, sizeof(err)), 0);
	assert_int_equal(cfg.nb_ctx_lcore, 3);
	assert_true(cfg.ctx_lcore[0] == 1 && cfg.ctx_lcore[1] == 2 && cfg.ctx_lcore[2] == 3);
	assert_int_equal(cfg.nb_sizes, 3);
	assert_true(cfg.sizes[0] == 8 && cfg.sizes[1] == 65536 && cfg.sizes[2] == 1u << 20);

	assert_int_equal(load(&cfg, "[workload]\nregion = 1\n", err, sizeof(err)), 0);
	assert_int_equal(cfg.target_region, 1);
	assert_int_not_equal(load(&cfg, "[workload]\nregion = 8\n", err, sizeof(err)), 0);
	assert_non_null(strstr(err, "region"));

	assert_int_not_equal(load(&cfg, "lcores = 1,K\n", err, sizeof(err)), 0);
	assert_non_null(strstr(err, "lcores"));
	assert_int_not_equal(load(&cfg, "[workload]\nsizes = 8,8G\n", err, sizeof(err)), 0);
	assert_non_null(strstr(err, "sizes"));
}

static void
test_number(void **state)
{
	uint64_t x = 7;
	double d;

	(void)state;
	assert_int_equal(app_parse_u64("0x10", 0, 100, &x), 0);
	assert_true(x == 16);
	assert_int_equal(app_parse_u64("100", 0, 100, &x), 0);
	assert_true(x == 100);
	assert_int_equal(app_parse_u64("101", 0, 100, &x), -ERANGE);
	assert_int_equal(app_parse_u64("0", 1, 100, &x), -ERANGE);
	assert_int_equal(app_parse_u64("4294967297", 1, 64, &x), -ERANGE);	/* 2^32 + 1 */
	assert_int_equal(app_parse_u64("", 0, 100, &x), -EINVAL);
	assert_int_equal(app_parse_u64("12ab", 0, 100, &x), -EINVAL);
	assert_int_equal(app_parse_u64("-1", 0, UINT64_MAX, &x), -EINVAL);
	assert_int_equal(app_parse_u64("18446744073709551616", 0, UINT64_MAX, &x), -EINVAL);
	assert_true(x == 100);	/* untouched on failure */

	assert_int_equal(app_parse_seconds("1.5", &d), 0);
	assert_true(d == 1.5);
	assert_int_equal(app_parse_seconds("-1", &d), -EINVAL);
	assert_int_equal(app_parse_seconds("nan", &d), -EINVAL);
	assert_int_equal(app_parse_seconds("2s", &d), -EINVAL);
	assert_int_equal(app_parse_seconds("", &d), -EINVAL);
}

/* Command-line options: the same bounds as the keys in the file. */
static int
args(struct app_config *cfg, const char *opt, const char *val)
{
	char prog[] = "amrma-dataplane", o[64], v[64], err[256];
	char *argv[] = { prog, o, v, NULL };

	snprintf(o, sizeof(o), "%s", opt);
	snprintf(v, sizeof(v), "%s", val);
	assert_int_equal(load(cfg, "", err, sizeof(err)), 0);	/* defaults + a node */
	return app_config_args(cfg, 3, argv, err, sizeof(err));
}

static void
test_options(void **state)
{
	struct app_config cfg;

	(void)state;
	assert_int_equal(args(&cfg, "--window", "64"), 0);
	assert_int_equal(cfg.window, 64);
	assert_int_equal(args(&cfg, "--rndv-threshold", "256K"), 0);
	assert_true(cfg.rma.rndv_threshold == 262144 && cfg.rma.rndv_put_threshold == 262144);
	assert_int_equal(args(&cfg, "--duration", "2.5"), 0);
	assert_true(cfg.duration_s == 2.5);
	assert_int_equal(args(&cfg, "--region", "7"), 0);
	assert_int_equal(cfg.target_region, 7);

	assert_int_equal(args(&cfg, "--window", "0"), -EINVAL);
	assert_int_equal(args(&cfg, "--window", "65536"), -EINVAL);
	assert_int_equal(args(&cfg, "--count", "0"), -EINVAL);
	assert_int_equal(args(&cfg, "--count", "ten"), -EINVAL);
	assert_int_equal(args(&cfg, "--size", "100000"), -EINVAL);
	assert_int_equal(args(&cfg, "--node-id", "x"), -EINVAL);
	assert_int_equal(args(&cfg, "--rndv-threshold", "1,2"), -EINVAL);
	assert_int_equal(args(&cfg, "--duration", "-3"), -EINVAL);
	assert_int_equal(args(&cfg, "--idle-sleep", "2000000"), -EINVAL);
	assert_int_equal(args(&cfg, "--region", "8"), -EINVAL);	/* APP_MAX_REGIONS */
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_list_ok),
		cmocka_unit_test(test_list_rejects),
		cmocka_unit_test(test_ini_lists),
		cmocka_unit_test(test_number),
		cmocka_unit_test(test_options),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
