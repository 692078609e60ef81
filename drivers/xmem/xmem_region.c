/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Exportable memory: a sealed memfd mapped in the exporter. Sealing
 * against shrink means an importer's mapping can never SIGBUS.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "xmem_priv.h"

int
amrma_xmem_region_create(size_t len, size_t seg_size,
		struct amrma_xmem_region **out)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	struct amrma_xmem_region *r;
	int rc;

	if (out == NULL || len == 0)
		return -EINVAL;
	if (seg_size == 0)
		seg_size = AMRMA_XMEM_SEG_DEFAULT;
	if (seg_size % pg != 0)
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (r == NULL)
		return -ENOMEM;
	r->len = (len + pg - 1) / pg * pg;
	r->seg = seg_size;
	r->addr = MAP_FAILED;
	r->fd = memfd_create("amrma_xmem", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (r->fd < 0 || ftruncate(r->fd, (off_t)r->len) != 0 ||
			fcntl(r->fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW |
				F_SEAL_SEAL) != 0)
		goto fail;
	r->addr = mmap(NULL, r->len, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd,
			0);
	if (r->addr == MAP_FAILED)
		goto fail;
	*out = r;
	return 0;
fail:
	rc = -errno;
	amrma_xmem_region_free(r);
	return rc;
}

void *
amrma_xmem_region_addr(const struct amrma_xmem_region *r)
{
	return r->addr;
}

size_t
amrma_xmem_region_len(const struct amrma_xmem_region *r)
{
	return r->len;
}

void
amrma_xmem_region_free(struct amrma_xmem_region *r)
{
	if (r == NULL)
		return;
	if (r->addr != MAP_FAILED && r->addr != NULL)
		munmap(r->addr, r->len);
	if (r->fd >= 0)
		close(r->fd);
	free(r);
}
