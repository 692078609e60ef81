/* SPDX-License-Identifier: BSD-3-Clause */
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <rte_eal.h>

#include "eal_rundir.h"

static char runtime_dir[PATH_MAX];

static int
rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void
runtime_dir_remove(void)
{
	nftw(runtime_dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

void
eal_rundir_cleanup_at_exit(void)
{
	const char *d = rte_eal_get_runtime_dir();

	/* only a directory of our own below DPDK's run directory */
	if (d != NULL && strstr(d, "/dpdk/") != NULL) {
		snprintf(runtime_dir, sizeof(runtime_dir), "%s", d);
		atexit(runtime_dir_remove);
	}
}
