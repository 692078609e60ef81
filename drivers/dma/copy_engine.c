/* SPDX-License-Identifier: BSD-3-Clause */
/* Copy engines: CPU and rte_dmadev. */

#include <errno.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_common.h>
#include <rte_dmadev.h>
#include <rte_log.h>
#include <rte_memory.h>
#include <rte_pause.h>

#include "amrma_dma.h"

RTE_LOG_REGISTER(amrma_dma_logtype, lib.amrma.dma, NOTICE);

static int
cpu_copy(struct amrma_copy_engine *e, void *dst, const void *src, uint32_t len)
{
	memcpy(dst, src, len);
	e->copies++;
	e->bytes += len;
	return 0;
}

static void
cpu_close(struct amrma_copy_engine *e)
{
	(void)e;
}

static const struct amrma_copy_ops cpu_ops = {
	.name = "cpu",
	.copy = cpu_copy,
	.close = cpu_close,
};

void
amrma_copy_cpu_init(struct amrma_copy_engine *e)
{
	memset(e, 0, sizeof(*e));
	e->ops = &cpu_ops;
	e->dev_id = -1;
}

/*
 * The IOVA of [p, p + len) for a device without SVA, or RTE_BAD_IOVA. Only memory EAL
 * knows has one (malloc'd memory is neither mapped for the device in VA mode nor pinned in
 * PA mode), taken from its memsegs (external memory has the IOVA it was registered with),
 * and only if IOVA-contiguous over the range: hugepages in PA mode need not be.
 */
static rte_iova_t
iova_of(const void *p, uint32_t len)
{
	struct rte_memseg_list *msl = rte_mem_virt2memseg_list(p);
	const struct rte_memseg *ms, *next;
	uint64_t end = (uintptr_t)p + len;

	if (msl == NULL)
		return RTE_BAD_IOVA;
	ms = rte_mem_virt2memseg(p, msl);
	if (ms == NULL || ms->iova == RTE_BAD_IOVA || ms->len == 0)
		return RTE_BAD_IOVA;
	for (next = ms; next->addr_64 + next->len < end; ) {
		rte_iova_t iova = next->iova + next->len;

		next = rte_mem_virt2memseg(RTE_PTR_ADD(next->addr, next->len), msl);
		if (next == NULL || next->iova != iova || next->len == 0)
			return RTE_BAD_IOVA;
	}
	return ms->iova + ((uintptr_t)p - ms->addr_64);
}

/* far beyond any copy: a device that has not answered by then is taken as hung */
#define DMA_TIMEOUT_MS 1000

/* Whether the wait *deadline times (0: not started) has gone on too long. */
static bool
timed_out(uint64_t *deadline)
{
	uint64_t now = rte_get_timer_cycles();

	if (*deadline == 0) {
		*deadline = now + rte_get_timer_hz() * DMA_TIMEOUT_MS / 1000;
		return false;
	}
	return now > *deadline;
}

/* Stop a hung device, so nothing it still holds lands later, and go on with the CPU. */
static int
dma_hung(struct amrma_copy_engine *e)
{
	rte_log(RTE_LOG_ERR, amrma_dma_logtype,
		"amrma_dma: dmadev %d completed no copy in %u ms: stopped, copies use the CPU\n",
		e->dev_id, DMA_TIMEOUT_MS);
	rte_dma_stop(e->dev_id);
	e->ops = &cpu_ops;
	e->errors++;
	return -ETIMEDOUT;
}

static int
dma_copy(struct amrma_copy_engine *e, void *dst, const void *src, uint32_t len)
{
	enum rte_dma_status_code status;
	uint64_t deadline = 0;
	rte_iova_t s, d;
	uint16_t last;
	int idx;

	if (len < e->min_offload)
		return cpu_copy(e, dst, src, len);
	if (e->sva) {
		s = (rte_iova_t)(uintptr_t)src;
		d = (rte_iova_t)(uintptr_t)dst;
	} else {
		s = iova_of(src, len);
		d = iova_of(dst, len);
		if (s == RTE_BAD_IOVA || d == RTE_BAD_IOVA)
			return cpu_copy(e, dst, src, len);
	}
	idx = rte_dma_copy(e->dev_id, e->vchan, s, d, len, RTE_DMA_OP_FLAG_SUBMIT);
	if (idx < 0) {
		e->errors++;
		return cpu_copy(e, dst, src, len);	/* ring full: do it ourselves */
	}
	/* placed-before-acknowledged: wait for this copy, the only one in flight. Its
	 * status is read with it: a failed copy would otherwise stay at the head of the
	 * ring, and every later one see has_error while its DMA still runs */
	while (rte_dma_completed_status(e->dev_id, e->vchan, 1, &last, &status) == 0) {
		if (timed_out(&deadline))
			return dma_hung(e);
		rte_pause();
	}
	if (status != RTE_DMA_STATUS_SUCCESSFUL) {
		e->errors++;
		return -EIO;
	}
	e->copies++;
	e->bytes += len;
	e->offloaded++;
	return 0;
}

static void
dma_close(struct amrma_copy_engine *e)
{
	rte_dma_stop(e->dev_id);
}

static const struct amrma_copy_ops dma_ops = {
	.name = "dmadev",
	.copy = dma_copy,
	.close = dma_close,
};

int
amrma_copy_dmadev_init(struct amrma_copy_engine *e, int16_t dev_id, uint16_t nb_desc,
		       uint32_t min_offload)
{
	struct rte_dma_conf conf = { .nb_vchans = 1 };
	struct rte_dma_vchan_conf vc = {
		.direction = RTE_DMA_DIR_MEM_TO_MEM,
		.nb_desc = nb_desc,
	};
	struct rte_dma_info info;
	uint32_t desc;
	int ret;

	if (!rte_dma_is_valid(dev_id))
		return -ENODEV;
	ret = rte_dma_info_get(dev_id, &info);
	if (ret != 0)
		return ret;
	if (!(info.dev_capa & RTE_DMA_CAPA_MEM_TO_MEM))
		return -ENOTSUP;
	/* a power of 2: drivers commonly take nothing else (dma_skeleton, ioat, idxd) */
	desc = rte_align32pow2(RTE_MAX(nb_desc, info.min_desc));
	if (desc > info.max_desc)
		desc = rte_align32prevpow2(info.max_desc);
	vc.nb_desc = (uint16_t)RTE_MAX(desc, info.min_desc);
	ret = rte_dma_configure(dev_id, &conf);
	if (ret == 0)
		ret = rte_dma_vchan_setup(dev_id, 0, &vc);
	if (ret == 0)
		ret = rte_dma_start(dev_id);
	if (ret != 0)
		return ret;
	memset(e, 0, sizeof(*e));
	e->ops = &dma_ops;
	e->dev_id = dev_id;
	e->vchan = 0;
	e->min_offload = min_offload;
	e->sva = (info.dev_capa & RTE_DMA_CAPA_SVA) != 0;
	rte_log(RTE_LOG_INFO, amrma_dma_logtype,
		"amrma_dma: copies of %u bytes and more offloaded to dmadev %d (%s)\n",
		min_offload, dev_id, info.dev_name ? info.dev_name : "?");
	return 0;
}

void
amrma_copy_close(struct amrma_copy_engine *e)
{
	if (e->ops != NULL)
		e->ops->close(e);
	e->ops = NULL;
}
