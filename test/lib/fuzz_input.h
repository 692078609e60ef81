/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A fuzz input read front to back, for harnesses that decode it into steps. Reads past
 * the end give 0, so that every input means something. Pure C (no DPDK).
 */
#ifndef AMRMA_TEST_FUZZ_INPUT_H
#define AMRMA_TEST_FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>

struct fuzz_in {
	const uint8_t *p;
	size_t left;
};

static inline uint8_t
fuzz_u8(struct fuzz_in *in)
{
	if (in->left == 0)
		return 0;
	in->left--;
	return *in->p++;
}

/* little-endian */
static inline uint16_t
fuzz_u16(struct fuzz_in *in)
{
	uint16_t lo = fuzz_u8(in);

	return (uint16_t)(lo | fuzz_u8(in) << 8);
}

static inline uint32_t
fuzz_u32(struct fuzz_in *in)
{
	uint32_t lo = fuzz_u16(in);

	return lo | (uint32_t)fuzz_u16(in) << 16;
}

static inline uint64_t
fuzz_u64(struct fuzz_in *in)
{
	uint64_t v = 0;
	unsigned int i;

	for (i = 0; i < 8; i++)
		v |= (uint64_t)fuzz_u8(in) << (8 * i);
	return v;
}

#endif
