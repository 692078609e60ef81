/* SPDX-License-Identifier: BSD-3-Clause */
/* Copy engines: the dmadev backend (dma_skeleton vdev) alone and as RMA placement. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <rte_dmadev.h>

#include "amrma_dma.h"
#include "amrma_rma.h"
#include "harness.h"

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

/* RMA puts and gets whose bytes land through the DMA engine on the target */
static void
test_rma_placement_by_dma(void **state)
{
	const uint32_t protos[] = { AMRMA_RMA_F_SHORT, AMRMA_RMA_F_PIPELINED,
				    AMRMA_RMA_F_RENDEZVOUS };
	struct amrma_copy_engine e;
	struct amrma_rma *r[2];
	struct amrma_region *reg;
	struct harness h;
	uint8_t *mem = aligned_alloc(4096, 4 << 20), *src = malloc(4 << 20);
	uint64_t key;
	unsigned int i, p;

	(void)state;
	assert_int_equal(h_create(&h, 2, 1, NULL), 0);
	for (i = 0; i < 2; i++)
		assert_int_equal(amrma_rma_create(h.n[i].node, NULL, &r[i]), 0);
	assert_int_equal(amrma_copy_dmadev_init(&e, dma_id, 128, 0), 0);
	assert_int_equal(amrma_rma_set_copy_engine(h_ctx(&h, 1, 0), &e), 0);
	assert_int_equal(amrma_region_register(amrma_rma_regions(r[1]), mem, 4 << 20,
		AMRMA_REGION_READ | AMRMA_REGION_WRITE, &reg, &key), 0);
	for (i = 0; i < (4u << 20); i++)
		src[i] = (uint8_t)(i * 7 + (i >> 12));
	for (p = 0; p < RTE_DIM(protos); p++) {
		uint64_t len = protos[p] == AMRMA_RMA_F_SHORT ? 1000 : (3u << 20) + 11;
		amrma_rma_req_t req;
		int status = 0;

		memset(mem, 0, 4 << 20);
		assert_int_equal(amrma_rma_put(h_ctx(&h, 0, 0), (struct amrma_ep){ .node = 1 },
			key, 13, src, len, protos[p], NULL, NULL, &req), 0);
		while (amrma_rma_test(h_ctx(&h, 0, 0), req, &status) == 0) {
			h_step(&h);
			amrma_rma_progress(r[0]);
			amrma_rma_progress(r[1]);
		}
		assert_int_equal(status, 0);
		assert_memory_equal(mem + 13, src, len);
		assert_int_equal(mem[12], 0);
		assert_int_equal(mem[13 + len], 0);
	}
	assert_true(e.offloaded > 2 * (3u << 20) / 1400);
	assert_int_equal(e.errors, 0);
	amrma_region_deregister(amrma_rma_regions(r[1]), reg, NULL, NULL);
	for (i = 0; i < 2; i++)
		amrma_rma_destroy(r[i]);
	amrma_copy_close(&e);
	h_destroy(&h);
	free(mem);
	free(src);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_engine_copies),
		cmocka_unit_test(test_rma_placement_by_dma),
	};

	h_eal_init_vdev("amrma_test_dma", "dma_skeleton");
	dma_id = (int16_t)rte_dma_get_dev_id_by_name("dma_skeleton");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
