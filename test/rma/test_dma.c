/* SPDX-License-Identifier: BSD-3-Clause */
/* Copy engines: the dmadev backend (dma_skeleton vdev) alone and as RMA placement. */
#include <dlfcn.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <rte_dmadev.h>
#include <rte_malloc.h>
#include <rte_memory.h>

#include "amrma_dma.h"
#include "amrma_rma.h"
#include "harness.h"
#include "rma_nodes.h"

static int16_t dma_id = -1;

static void
test_engine_copies(void **state)
{
	struct amrma_copy_engine e;
	uint8_t *a = malloc((1 << 20) + 64), *b = malloc((1 << 20) + 64);
	uint32_t lens[] = { 1, 7, 64, 1400, 4096, 65535, 1 << 20 };
	unsigned int i, k;

	(void)state;
	assert_true(dma_id >= 0);
	assert_int_equal(amrma_copy_dmadev_init(&e, dma_id, 64, 0), 0);
	for (i = 0; i < RTE_DIM(lens); i++) {
		for (k = 0; k < lens[i]; k++)
			a[k + 3] = (uint8_t)(k * 31 + i);
		memset(b, 0, lens[i] + 16);
		assert_int_equal(amrma_copy(&e, b + 5, a + 3, lens[i]), 0);
		assert_memory_equal(b + 5, a + 3, lens[i]);
		assert_int_equal(b[4], 0);
		assert_int_equal(b[5 + lens[i]], 0);
	}
	assert_int_equal(e.offloaded, RTE_DIM(lens));
	assert_int_equal(e.errors, 0);
	/* below min_offload the CPU does it */
	amrma_copy_close(&e);
	assert_int_equal(amrma_copy_dmadev_init(&e, dma_id, 64, 4096), 0);
	assert_int_equal(amrma_copy(&e, b, a, 100), 0);
	assert_int_equal(e.offloaded, 0);
	assert_int_equal(e.copies, 1);
	amrma_copy_close(&e);
	assert_int_equal(amrma_copy_dmadev_init(&e, 99, 64, 0), -ENODEV);
	free(a);
	free(b);
}

/* a vchan_setup with a descriptor count the driver cannot take (the skeleton: not a power of 2) */
static void
test_nb_desc_rounded(void **state)
{
	struct amrma_copy_engine e;
	uint8_t a[4096], b[4096];

	(void)state;
	memset(a, 0x5a, sizeof(a));
	assert_int_equal(amrma_copy_dmadev_init(&e, dma_id, 100, 0), 0);
	assert_int_equal(amrma_copy(&e, b, a, sizeof(a)), 0);
	assert_memory_equal(a, b, sizeof(a));
	assert_int_equal(e.offloaded, 1);
	amrma_copy_close(&e);
	assert_int_equal(amrma_copy_dmadev_init(&e, dma_id, 40000, 0), 0);
	amrma_copy_close(&e);
}

/*
 * A device that fails copies or stops answering: the skeleton's dataplane functions in
 * rte_dma_fp_objs[] wrapped. A failed copy stays at the head of the ring, as on real
 * devices: rte_dma_completed() reports has_error until rte_dma_completed_status() reads it.
 */
static struct rte_dma_fp_object real_fp;
static unsigned int fail_next;	/* copies to report as failed */
static bool fail_head;		/* a failed copy waits at the head of the ring */
static uint16_t fail_idx;
static bool hang;		/* no completion is ever reported */

static uint16_t
fake_completed(void *priv, uint16_t vchan, const uint16_t nb, uint16_t *last, bool *has_error)
{
	if (hang)
		return 0;
	if (!fail_head && fail_next > 0) {
		if (real_fp.completed(priv, vchan, 1, &fail_idx, has_error) == 0)
			return 0;
		fail_next--;
		fail_head = true;
	}
	if (fail_head) {
		*has_error = true;
		return 0;
	}
	return real_fp.completed(priv, vchan, nb, last, has_error);
}

static uint16_t
fake_completed_status(void *priv, uint16_t vchan, const uint16_t nb, uint16_t *last,
		      enum rte_dma_status_code *status)
{
	bool error = false;

	if (hang)
		return 0;
	if (!fail_head && fail_next > 0) {
		if (real_fp.completed(priv, vchan, 1, &fail_idx, &error) == 0)
			return 0;
		fail_next--;
		fail_head = true;
	}
	if (fail_head) {
		fail_head = false;
		*last = fail_idx;
		status[0] = RTE_DMA_STATUS_ERROR_UNKNOWN;
		return 1;
	}
	return real_fp.completed_status(priv, vchan, nb, last, status);
}

static void
fake_install(void)
{
	real_fp = rte_dma_fp_objs[dma_id];
	rte_dma_fp_objs[dma_id].completed = fake_completed;
	rte_dma_fp_objs[dma_id].completed_status = fake_completed_status;
}

static void
fake_remove(void)
{
	rte_dma_fp_objs[dma_id] = real_fp;
	fail_next = 0;
	fail_head = false;
	hang = false;
}

/* a failed copy is read off the ring: the next ones wait for their own completion */
static void
test_failed_copy_consumed(void **state)
{
	struct amrma_copy_engine e;
	uint8_t *a = malloc(65536), *b = malloc(65536);
	unsigned int i, k;

	(void)state;
	assert_int_equal(amrma_copy_dmadev_init(&e, dma_id, 64, 0), 0);
	fake_install();
	fail_next = 1;
	memset(a, 1, 65536);
	assert_int_equal(amrma_copy(&e, b, a, 65536), -EIO);
	assert_int_equal(e.errors, 1);
	for (i = 0; i < 4; i++) {
		for (k = 0; k < 65536; k++)
			a[k] = (uint8_t)(k * 13 + i);
		memset(b, 0, 65536);
		assert_int_equal(amrma_copy(&e, b, a, 65536), 0);
		assert_memory_equal(a, b, 65536);
	}
	assert_int_equal(e.errors, 1);
	assert_int_equal(e.offloaded, 4);
	amrma_copy_close(&e);
	fake_remove();
	free(a);
	free(b);
}

/* a device that never completes: the copy fails after the timeout, the device is stopped
 * (nothing lands later) and the engine goes on with the CPU */
static void
test_completion_timeout(void **state)
{
	struct amrma_copy_engine e;
	uint8_t a[8192], b[8192];

	(void)state;
	assert_int_equal(amrma_copy_dmadev_init(&e, dma_id, 64, 0), 0);
	fake_install();
	hang = true;
	memset(a, 7, sizeof(a));
	assert_int_equal(amrma_copy(&e, b, a, sizeof(a)), -ETIMEDOUT);
	assert_int_equal(e.errors, 1);
	memset(a, 9, sizeof(a));
	assert_int_equal(amrma_copy(&e, b, a, sizeof(a)), 0);
	assert_memory_equal(a, b, sizeof(a));
	assert_int_equal(e.offloaded, 0);
	assert_string_equal(e.ops->name, "cpu");
	amrma_copy_close(&e);
	fake_remove();
}

/*
 * A device without SVA takes IOVAs: the skeleton takes any address, so its capability is
 * hidden from the engine here. Wrapping the library's rte_dma_info_get() works because the
 * test executable's definition comes first in symbol lookup.
 */
static bool hide_sva;

int
rte_dma_info_get(int16_t dev_id, struct rte_dma_info *info)
{
	static int (*real)(int16_t, struct rte_dma_info *);
	int ret;

	if (real == NULL)
		*(void **)&real = dlsym(RTLD_NEXT, "rte_dma_info_get");
	ret = real(dev_id, info);
	if (ret == 0 && hide_sva)
		info->dev_capa &= ~RTE_DMA_CAPA_SVA;
	return ret;
}

/* only memory EAL knows, IOVA-contiguous over the copy, goes to a device without SVA */
static void
test_iova_without_sva(void **state)
{
	struct amrma_copy_engine e;
	uint8_t *heap = malloc(16384), *a, *b;
	struct rte_memseg *ms;
	size_t pg;
	rte_iova_t saved;
	unsigned int k;

	(void)state;
	a = rte_malloc(NULL, 4 * 65536, 65536);
	b = rte_malloc(NULL, 4 * 65536, 65536);
	assert_non_null(a);
	assert_non_null(b);
	for (k = 0; k < 4 * 65536; k++)
		a[k] = (uint8_t)(k * 7 + 1);
	hide_sva = true;
	assert_int_equal(amrma_copy_dmadev_init(&e, dma_id, 64, 0), 0);
	/* malloc'd memory has no IOVA (not in the IOMMU, not pinned): the CPU copies */
	assert_int_equal(amrma_copy(&e, heap, a, 16384), 0);
	assert_memory_equal(heap, a, 16384);
	assert_int_equal(amrma_copy(&e, b, heap, 16384), 0);
	assert_memory_equal(b, heap, 16384);
	assert_int_equal(e.offloaded, 0);
	assert_int_equal(e.copies, 2);
	/* EAL memory over several pages, IOVA-contiguous here (VA mode) */
	memset(b, 0, 4 * 65536);
	assert_int_equal(amrma_copy(&e, b + 3, a + 5, 3 * 65536), 0);
	assert_memory_equal(b + 3, a + 5, 3 * 65536);
	assert_int_equal(e.offloaded, 1);
	/* a page whose IOVA does not follow its predecessor's (PA mode): the CPU copies */
	ms = rte_mem_virt2memseg(a + 65536, NULL);
	assert_non_null(ms);
	pg = ms->len;
	saved = ms->iova;
	ms->iova += 1ull << 40;
	memset(b, 0, 4 * 65536);
	assert_int_equal(amrma_copy(&e, b, a + 65536 - pg / 2, pg), 0);
	assert_int_equal(amrma_copy(&e, b + pg, a + 65536 - pg, pg), 0);	/* the one before */
	ms->iova = saved;
	assert_memory_equal(b, a + 65536 - pg / 2, pg);
	assert_memory_equal(b + pg, a + 65536 - pg, pg);
	assert_int_equal(e.offloaded, 2);
	assert_int_equal(e.copies, 5);
	amrma_copy_close(&e);
	hide_sva = false;
	rte_free(a);
	rte_free(b);
	free(heap);
}

/* RMA puts and gets whose bytes land through the DMA engine on the target */
static void
test_rma_placement_by_dma(void **state)
{
	const uint32_t protos[] = { AMRMA_RMA_F_SHORT, AMRMA_RMA_F_PIPELINED,
				    AMRMA_RMA_F_RENDEZVOUS };
	struct amrma_copy_engine e;
	struct h_rma nodes;
	uint8_t *mem = aligned_alloc(4096, 4 << 20), *src = malloc(4 << 20);
	unsigned int i, p;

	(void)state;
	assert_int_equal(h_rma_create(&nodes, 2, 1, NULL, NULL, H_RMA_ALL), 0);
	assert_int_equal(amrma_copy_dmadev_init(&e, dma_id, 128, 0), 0);
	assert_int_equal(amrma_rma_set_copy_engine(h_ctx(&nodes.h, 1, 0), &e), 0);
	assert_int_equal(h_rma_register(&nodes, mem, 4 << 20,
					AMRMA_REGION_READ | AMRMA_REGION_WRITE), 0);
	for (i = 0; i < (4u << 20); i++)
		src[i] = (uint8_t)(i * 7 + (i >> 12));
	for (p = 0; p < RTE_DIM(protos); p++) {
		uint64_t len = protos[p] == AMRMA_RMA_F_SHORT ? 1000 : (3u << 20) + 11;
		amrma_rma_req_t req;
		int status = 0;

		memset(mem, 0, 4 << 20);
		assert_int_equal(amrma_rma_put(h_ctx(&nodes.h, 0, 0),
			(struct amrma_ep){ .node = 1 }, nodes.key, 13, src, len, protos[p], NULL,
			NULL, &req), 0);
		assert_int_equal(h_rma_wait(&nodes, h_ctx(&nodes.h, 0, 0), req, 60000, &status), 1);
		assert_int_equal(status, 0);
		assert_memory_equal(mem + 13, src, len);
		assert_int_equal(mem[12], 0);
		assert_int_equal(mem[13 + len], 0);
	}
	assert_true(e.offloaded > 2 * (3u << 20) / 1400);
	assert_int_equal(e.errors, 0);
	h_rma_destroy(&nodes);
	amrma_copy_close(&e);
	free(mem);
	free(src);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_engine_copies),
		cmocka_unit_test(test_rma_placement_by_dma),
		cmocka_unit_test(test_nb_desc_rounded),
		cmocka_unit_test(test_failed_copy_consumed),
		cmocka_unit_test(test_completion_timeout),
		cmocka_unit_test(test_iova_without_sva),
	};

	h_eal_init_vdev("amrma_test_dma", "dma_skeleton");
	dma_id = (int16_t)rte_dma_get_dev_id_by_name("dma_skeleton");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
