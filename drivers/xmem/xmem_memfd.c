/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Segment attach for the DGS-RM master: the segment holding a master
 * address is mapped from the exporter's memfd and described by its
 * relocation constant. Mappings are cached until the import closes, so
 * attach is one mmap per segment per import and detach costs nothing.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "xmem_priv.h"

static int
seg_attach(void *arg, uint64_t maddr, struct amrma_dgsrm_seg *s)
{
	struct amrma_xmem_import *imp = arg;
	uint64_t idx, lo, len;
	void *p;

	if (maddr < imp->base || maddr - imp->base >= imp->len)
		return -EFAULT;
	idx = (maddr - imp->base) / imp->seg;
	lo = imp->base + idx * imp->seg;
	len = imp->len - idx * imp->seg;
	if (len > imp->seg)
		len = imp->seg;
	p = imp->maps[idx];
	if (p == NULL) {
		/*
		 * No MAP_POPULATE: a small transfer would pay for the whole
		 * segment; pages fault in as the copy touches them.
		 */
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
				imp->fd, (off_t)(idx * imp->seg));
		if (p == MAP_FAILED)
			return -errno;
		imp->maps[idx] = p;
	}
	s->lo = lo;
	s->hi = lo + len;
	s->reloc = (int64_t)((uint64_t)(uintptr_t)p - lo);
	s->cookie = p;
	return 0;
}

static void
seg_detach(void *arg, struct amrma_dgsrm_seg *s)
{
	(void)arg;
	(void)s;	/* kept mapped: reused by the next attach */
}

void
xmem_memfd_ops(struct amrma_xmem_import *imp)
{
	imp->ops.attach = seg_attach;
	imp->ops.detach = seg_detach;
	imp->ops.arg = imp;
}

void
amrma_xmem_import_unmap(struct amrma_xmem_import *imp)
{
	uint64_t i, len;

	for (i = 0; imp->maps != NULL && i < imp->nseg; i++) {
		if (imp->maps[i] == NULL)
			continue;
		len = imp->len - i * imp->seg;
		munmap(imp->maps[i], len > imp->seg ? imp->seg : len);
		imp->maps[i] = NULL;
	}
}

void
xmem_memfd_unmap(struct amrma_xmem_import *imp)
{
	amrma_xmem_import_unmap(imp);
	free(imp->maps);
	imp->maps = NULL;
}
