/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef AMRMA_EAL_RUNDIR_H
#define AMRMA_EAL_RUNDIR_H

/**
 * Remove this process's EAL runtime directory (/var/run/dpdk/<file-prefix>) at exit: EAL
 * leaves it behind even with --no-shconf. Call right after rte_eal_init(). Shared by the
 * applications and the tests.
 */
void eal_rundir_cleanup_at_exit(void);

#endif
