/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer entry: the fuzzer's bytes drive the differential checker. */
#include <stddef.h>
#include <stdint.h>

#include "tag_model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct tag_model_counts c;

	tag_model_run(data, len, &c);
	return 0;
}
