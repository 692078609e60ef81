/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DGS-RM over process_vm_readv/writev. The master machine walks the remote
 * program, the worker the local one; each matched piece extends a remote
 * and a local iovec list (adjacent pieces merge) and the lists go to the
 * kernel IOVB entries at a time, so one system call moves many chunks.
 */
#include <errno.h>
#include <string.h>
#include <sys/uio.h>

#include "dgsp_priv.h"
#include "xmem_priv.h"

#define IOVB 1024	/* UIO_MAXIOV */

struct batch {
	struct iovec l[IOVB], r[IOVB];
	int nl, nr;
	size_t bytes;
};

static int
flush(pid_t pid, struct batch *b, enum amrma_dgsrm_mode mode)
{
	ssize_t n;

	if (b->bytes == 0)
		return 0;
	if (mode == AMRMA_DGSRM_PULL)
		n = process_vm_readv(pid, b->l, (unsigned long)b->nl, b->r,
				(unsigned long)b->nr, 0);
	else
		n = process_vm_writev(pid, b->l, (unsigned long)b->nl, b->r,
				(unsigned long)b->nr, 0);
	if (n < 0)
		return -errno;
	if ((size_t)n != b->bytes)
		return -EFAULT;	/* partial: some remote page went away */
	b->nl = 0;
	b->nr = 0;
	b->bytes = 0;
	return 0;
}

/* Append [a, a+len) to v; false when a new entry is needed but v is full. */
static bool
add(struct iovec *v, int *n, uint64_t a, uint64_t len)
{
	if (*n > 0 && (uint64_t)(uintptr_t)v[*n - 1].iov_base +
			v[*n - 1].iov_len == a) {
		v[*n - 1].iov_len += len;
		return true;
	}
	if (*n == IOVB)
		return false;
	v[*n].iov_base = (void *)(uintptr_t)a;
	v[*n].iov_len = len;
	(*n)++;
	return true;
}

/* Whether a piece at a still fits v (merges or a slot is free). */
static bool
fits(const struct iovec *v, int n, uint64_t a)
{
	return n < IOVB || (uint64_t)(uintptr_t)v[n - 1].iov_base +
		v[n - 1].iov_len == a;
}

int64_t
amrma_xmem_pvm_copy(pid_t pid, const struct amrma_dgsrm_side *remote,
		const struct amrma_dgsrm_side *local, enum amrma_dgsrm_mode mode,
		uint64_t off, uint64_t n)
{
	static __thread struct batch b;
	struct amrma_dgsm m, w;
	uint64_t left = n;
	int rc;

	rc = dgsrm_start(&m, &w, remote, local, off, n);
	if (rc != 0)
		return rc;
	b.nl = b.nr = 0;
	b.bytes = 0;
	while (left > 0) {
		uint64_t ra, rl, la, ll, piece;

		amrma_dgsm_peek(&m, &ra, &rl);
		amrma_dgsm_peek(&w, &la, &ll);
		piece = rl < ll ? rl : ll;
		if (piece > left)
			piece = left;
		if (!fits(b.r, b.nr, ra) || !fits(b.l, b.nl, la)) {
			rc = flush(pid, &b, mode);
			if (rc != 0)
				return rc;
		}
		add(b.r, &b.nr, ra, piece);
		add(b.l, &b.nl, la, piece);
		b.bytes += piece;
		amrma_dgsm_advance(&m, piece);
		amrma_dgsm_advance(&w, piece);
		left -= piece;
	}
	rc = flush(pid, &b, mode);
	return rc != 0 ? rc : (int64_t)n;
}

/* Remote layout <-> contiguous stage, in batches. */
static int
remote_xfer(pid_t pid, struct amrma_dgsm *m, struct batch *b, uint8_t *stage,
		uint64_t c, enum amrma_dgsrm_mode mode)
{
	uint64_t ra, rl, done = 0;
	int rc;

	b->nl = b->nr = 0;
	b->bytes = 0;
	while (done < c) {
		amrma_dgsm_peek(m, &ra, &rl);
		if (rl > c - done)
			rl = c - done;
		if (!add(b->r, &b->nr, ra, rl)) {
			b->l[0].iov_base = stage + done - b->bytes;
			b->l[0].iov_len = b->bytes;
			b->nl = 1;
			rc = flush(pid, b, mode);
			if (rc != 0)
				return rc;
			add(b->r, &b->nr, ra, rl);
		}
		b->bytes += rl;
		done += rl;
		amrma_dgsm_advance(m, rl);
	}
	b->l[0].iov_base = stage + done - b->bytes;
	b->l[0].iov_len = b->bytes;
	b->nl = 1;
	return flush(pid, b, mode);
}

int64_t
xmem_pvm_staged(pid_t pid, const struct amrma_dgsrm_side *remote,
		const struct amrma_dgsrm_side *local, enum amrma_dgsrm_mode mode,
		void *stage, size_t stage_len, uint64_t off, uint64_t n)
{
	static __thread struct batch b;
	struct amrma_dgsm m, w;
	uint64_t left = n;
	int rc;

	if (stage == NULL || stage_len == 0)
		return -EINVAL;
	rc = dgsrm_start(&m, &w, remote, local, off, n);
	while (rc == 0 && left > 0) {
		uint64_t c = left < stage_len ? left : stage_len;

		if (mode == AMRMA_DGSRM_PULL) {
			rc = remote_xfer(pid, &m, &b, stage, c, mode);
			amrma_dgsm_scatter(&w, stage, c);
		} else {
			amrma_dgsm_gather(&w, stage, c);
			rc = remote_xfer(pid, &m, &b, stage, c, mode);
		}
		left -= c;
	}
	return rc != 0 ? rc : (int64_t)n;
}
