/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef AMRMA_DMA_H
#define AMRMA_DMA_H

/**
 * @file
 * Copy engines: how received bytes land in memory. One small ops table with two backends:
 * the CPU (memcpy) and a DMA device through rte_dmadev (offload). An engine is used by one
 * lcore (a dmadev virtual channel is single-producer), so give each context its own.
 *
 * The dmadev backend is synchronous in this version: it submits the copy and polls for its
 * completion before returning, because an RMA packet is acknowledged as placed as soon as
 * its handler returns. Copies shorter than min_offload bytes stay on the CPU, where they
 * are cheaper than a descriptor round trip. A copy the device reports failed returns -EIO;
 * one it has not completed after a second stops the device (so nothing lands later): that
 * copy returns -ETIMEDOUT and the engine goes on with the CPU.
 *
 * A device with RTE_DMA_CAPA_SVA is given virtual addresses. Any other is given IOVAs, which
 * only memory EAL knows has (rte_malloc, mempools, registered external memory), and only
 * where the copy's range is IOVA-contiguous: copies from or to other memory (malloc'd,
 * whose pages the device cannot reach), or across pages whose IOVAs do not follow each
 * other (hugepages in PA mode), are done by the CPU.
 */

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct amrma_copy_engine;

/** A copy engine's operations (the CPU's, a dmadev's, or a test's). */
struct amrma_copy_ops {
	const char *name;
	/** Copy len bytes; returns 0 or a negative errno (the bytes are then not placed). */
	int (*copy)(struct amrma_copy_engine *e, void *dst, const void *src, uint32_t len);
	void (*close)(struct amrma_copy_engine *e);	/**< release the device, if any */
};

/** A copy engine that places RX data: amrma_copy_cpu_init() or amrma_copy_dmadev_init(). */
struct amrma_copy_engine {
	const struct amrma_copy_ops *ops;
	int16_t dev_id;			/**< dmadev, or -1 */
	uint16_t vchan;
	uint32_t min_offload;		/**< shorter copies use the CPU */
	bool sva;			/**< the device takes virtual addresses
					 *   (RTE_DMA_CAPA_SVA): any memory goes */
	uint64_t copies;		/**< copies done */
	uint64_t bytes;
	uint64_t offloaded;		/**< of which by the DMA device */
	uint64_t errors;
};

/** A CPU engine (always available). */
void amrma_copy_cpu_init(struct amrma_copy_engine *e);

/**
 * Configure and start dmadev dev_id with one memory-to-memory virtual channel of nb_desc
 * descriptors, rounded up to a power of 2 within the device's limits, and make e use it.
 * @return 0, -ENODEV, -ENOTSUP (no mem-to-mem capability) or the dmadev error.
 */
int amrma_copy_dmadev_init(struct amrma_copy_engine *e, int16_t dev_id, uint16_t nb_desc,
			   uint32_t min_offload);

static inline int
amrma_copy(struct amrma_copy_engine *e, void *dst, const void *src, uint32_t len)
{
	return e->ops->copy(e, dst, src, len);
}

/** Stop the device (dmadev) and make e unusable. */
void amrma_copy_close(struct amrma_copy_engine *e);

#ifdef __cplusplus
}
#endif

#endif /* AMRMA_DMA_H */
