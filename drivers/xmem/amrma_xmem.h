/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file amrma_xmem.h
 * Same-host cross-process memory for the DGS-RM (no DPDK).
 *
 * An exporter describes one application data structure to an importer over
 * a Unix socket: the exported region, the structure's address and count in
 * the exporter's address space, and its DGSP in wire form. The importer
 * verifies the DGSP (footprint inside the exported region) and then runs
 * the DGS-RM with the exporter's program on the master machine and its own
 * program on the worker machine, copying directly between the two layouts.
 *
 * Two backends:
 *  - AMRMA_XMEM_MEMFD: the region is a memfd the exporter allocated with
 *    amrma_xmem_region_create(); the fd travels with SCM_RIGHTS and the
 *    importer maps it one segment at a time, each with its relocation
 *    constant (mapped address - exporter address of the segment).
 *  - AMRMA_XMEM_PVM: any exporter memory; the importer moves bytes with
 *    process_vm_readv/writev (needs ptrace permission over the exporter),
 *    batching up to IOV_MAX chunks per system call.
 */
#ifndef AMRMA_XMEM_H
#define AMRMA_XMEM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "amrma_dgsp.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Transport between the two address spaces. */
enum amrma_xmem_backend {
	AMRMA_XMEM_MEMFD = 0,	/**< shared memfd, segment attach */
	AMRMA_XMEM_PVM = 1,	/**< process_vm_readv/writev */
};

/** Default backend (the faster one measured by amrma-dgsp-bench). */
#define AMRMA_XMEM_DEFAULT AMRMA_XMEM_MEMFD
/** Default attach segment size. */
#define AMRMA_XMEM_SEG_DEFAULT (UINT64_C(2) << 20)
/** Largest DGSP accepted in an export message. */
#define AMRMA_XMEM_MAX_DGSP (1u << 20)

/** Exportable memory (memfd backed, mapped in the exporter). */
struct amrma_xmem_region;

/**
 * Create @p len bytes of exportable memory.
 * @param seg_size attach granularity, a multiple of the page size (0: default)
 */
int amrma_xmem_region_create(size_t len, size_t seg_size,
		struct amrma_xmem_region **out);
/** Exporter-side address of the region. */
void *amrma_xmem_region_addr(const struct amrma_xmem_region *r);
/** Region length. */
size_t amrma_xmem_region_len(const struct amrma_xmem_region *r);
/** Unmap and close. Importers keep their own mappings until they close. */
void amrma_xmem_region_free(struct amrma_xmem_region *r);

/** What the exporter tells the importer. */
struct amrma_xmem_export {
	enum amrma_xmem_backend backend;
	const struct amrma_xmem_region *region;	/**< MEMFD: the region */
	uint64_t base;		/**< PVM: lowest exported address */
	uint64_t len;		/**< PVM: exported length */
	const struct amrma_dgsp *prog;	/**< layout of the data structure */
	uint64_t addr;		/**< data structure address (exporter space) */
	uint64_t count;		/**< elements */
};

/** Send an export description (and the memfd) on Unix socket @p sock. */
int amrma_xmem_export_send(int sock, const struct amrma_xmem_export *e);

/** Importer-side handle to an exported data structure. */
struct amrma_xmem_import;

/**
 * Receive an export from @p sock and verify its DGSP against @p lim (NULL:
 * defaults); the footprint must lie inside the exported region.
 * @return 0, -EINVAL (rejected, @p why says why), -EPROTO, -errno.
 */
int amrma_xmem_import_recv(int sock, const struct amrma_dgsp_limits *lim,
		struct amrma_xmem_import **out, enum amrma_dgsp_reason *why);
/** Drop all mappings and the handle. */
void amrma_xmem_import_close(struct amrma_xmem_import *imp);
/**
 * Drop the cached segment mappings (MEMFD); the next copy attaches again.
 * Bounds address space use and lets a benchmark measure cold attaches.
 */
void amrma_xmem_import_unmap(struct amrma_xmem_import *imp);
/** Backend the exporter chose. */
enum amrma_xmem_backend amrma_xmem_import_backend(
		const struct amrma_xmem_import *imp);
/** Packed bytes of the exported structure. */
uint64_t amrma_xmem_import_total(const struct amrma_xmem_import *imp);
/** Attach operations (MEMFD only; NULL for PVM). */
const struct amrma_dgsrm_attach_ops *amrma_xmem_import_ops(
		struct amrma_xmem_import *imp);

/**
 * Direct copy of packed bytes [@p off, @p off + @p n): PULL from the
 * exported structure into @p local, PUSH from @p local into it.
 * @return bytes moved or a negative errno.
 */
int64_t amrma_xmem_copy(struct amrma_xmem_import *imp,
		const struct amrma_dgsrm_side *local, enum amrma_dgsrm_mode mode,
		uint64_t off, uint64_t n);
/** Same through a local staging buffer (two copies). */
int64_t amrma_xmem_copy_staged(struct amrma_xmem_import *imp,
		const struct amrma_dgsrm_side *local, enum amrma_dgsrm_mode mode,
		void *stage, size_t stage_len, uint64_t off, uint64_t n);

/** process_vm_readv/writev DGS-RM between a remote and a local side. */
int64_t amrma_xmem_pvm_copy(pid_t pid, const struct amrma_dgsrm_side *remote,
		const struct amrma_dgsrm_side *local, enum amrma_dgsrm_mode mode,
		uint64_t off, uint64_t n);

#ifdef __cplusplus
}
#endif

#endif /* AMRMA_XMEM_H */
