/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef XMEM_PRIV_H
#define XMEM_PRIV_H

#include "amrma_xmem.h"

struct amrma_xmem_region {
	int fd;
	void *addr;
	size_t len;		/* page rounded */
	size_t seg;
};

/* Wire message ahead of the DGSP bytes (same host: native layout). */
#define XMEM_MSG_MAGIC 0x584d454du	/* "XMEM" */
#define XMEM_MSG_VERSION 1

struct xmem_msg {
	uint32_t magic;
	uint16_t version;
	uint16_t backend;
	int32_t pid;
	uint32_t dgsp_len;
	uint64_t base, len, seg;
	uint64_t addr, count;
};

struct amrma_xmem_import {
	enum amrma_xmem_backend backend;
	pid_t pid;
	int fd;
	uint64_t base, len, seg;
	struct amrma_dgsp *prog;
	uint64_t addr, count;
	void **maps;		/* MEMFD: lazily mapped segments */
	uint64_t nseg;
	struct amrma_dgsrm_attach_ops ops;
};

/* memfd segment attach ops for imp (xmem_memfd.c). */
#define XMEM_INTERNAL __attribute__((visibility("hidden")))

XMEM_INTERNAL void xmem_memfd_ops(struct amrma_xmem_import *imp);
XMEM_INTERNAL void xmem_memfd_unmap(struct amrma_xmem_import *imp);

/* process_vm staged transfer (xmem_pvm.c). */
XMEM_INTERNAL int64_t xmem_pvm_staged(pid_t pid, const struct amrma_dgsrm_side *remote,
		const struct amrma_dgsrm_side *local, enum amrma_dgsrm_mode mode,
		void *stage, size_t stage_len, uint64_t off, uint64_t n);

#endif
