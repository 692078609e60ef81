/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Export/import handshake over a Unix socket and the importer's copy entry
 * points. The importer trusts nothing it receives: header fields are range
 * checked, the memfd must be sealed against shrinking and large enough, and
 * the DGSP passes the verifier with the exported region as its window.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "xmem_priv.h"

#define MAX_SEGS (UINT64_C(1) << 20)

static int
send_all(int sock, const uint8_t *b, size_t len)
{
	while (len > 0) {
		ssize_t n = send(sock, b, len, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		b += n;
		len -= (size_t)n;
	}
	return 0;
}

static int
recv_all(int sock, uint8_t *b, size_t len)
{
	while (len > 0) {
		ssize_t n = recv(sock, b, len, 0);

		if (n == 0)
			return -EPROTO;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		b += n;
		len -= (size_t)n;
	}
	return 0;
}

int
amrma_xmem_export_send(int sock, const struct amrma_xmem_export *e)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} cm;
	struct xmem_msg msg;
	struct msghdr mh;
	struct iovec iov;
	uint8_t *d;
	ssize_t dl, n;
	int rc, one = 1;

	if (e == NULL || e->prog == NULL ||
			(e->backend == AMRMA_XMEM_MEMFD && e->region == NULL) ||
			(e->backend != AMRMA_XMEM_MEMFD &&
			 e->backend != AMRMA_XMEM_PVM))
		return -EINVAL;
	/* The kernel then stamps our credentials on what we send. */
	if (setsockopt(sock, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) != 0)
		return -errno;
	dl = amrma_dgsp_serialize(e->prog, NULL, 0);
	if (dl < 0)
		return (int)dl;
	if ((size_t)dl > AMRMA_XMEM_MAX_DGSP)
		return -EMSGSIZE;
	d = malloc((size_t)dl);
	if (d == NULL)
		return -ENOMEM;
	amrma_dgsp_serialize(e->prog, d, (size_t)dl);
	memset(&msg, 0, sizeof(msg));
	msg.magic = XMEM_MSG_MAGIC;
	msg.version = XMEM_MSG_VERSION;
	msg.backend = (uint16_t)e->backend;
	msg.pid = (int32_t)getpid();
	msg.dgsp_len = (uint32_t)dl;
	if (e->backend == AMRMA_XMEM_MEMFD) {
		msg.base = (uint64_t)(uintptr_t)e->region->addr;
		msg.len = e->region->len;
		msg.seg = e->region->seg;
	} else {
		msg.base = e->base;
		msg.len = e->len;
	}
	msg.addr = e->addr;
	msg.count = e->count;
	memset(&mh, 0, sizeof(mh));
	iov.iov_base = &msg;
	iov.iov_len = sizeof(msg);
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	if (e->backend == AMRMA_XMEM_MEMFD) {
		memset(&cm, 0, sizeof(cm));
		mh.msg_control = cm.buf;
		mh.msg_controllen = sizeof(cm.buf);
		CMSG_FIRSTHDR(&mh)->cmsg_level = SOL_SOCKET;
		CMSG_FIRSTHDR(&mh)->cmsg_type = SCM_RIGHTS;
		CMSG_FIRSTHDR(&mh)->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(CMSG_FIRSTHDR(&mh)), &e->region->fd,
				sizeof(int));
	}
	do {
		n = sendmsg(sock, &mh, MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		rc = -errno;
	else
		rc = send_all(sock, (uint8_t *)&msg + n, sizeof(msg) - (size_t)n);
	if (rc == 0)
		rc = send_all(sock, d, (size_t)dl);
	free(d);
	return rc;
}

/*
 * Header, fd and the sender's kernel-verified pid (SCM_CREDENTIALS); the fd
 * is closed on any error. The pid is what process_vm will touch, so it must
 * come from the kernel, not from the message. The kernel installs every fd
 * the peer sent that fits the control buffer, so all but one are closed and
 * a message with more than one, or a truncated one, is refused.
 */
static int
recv_msg(int sock, struct xmem_msg *msg, int *fd, pid_t *peer)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int)) +
			CMSG_SPACE(sizeof(struct ucred))];
	} cm;
	struct cmsghdr *c;
	struct msghdr mh;
	struct iovec iov;
	struct ucred uc;
	int one = 1, nfd = 0, f;
	size_t i;
	ssize_t n;

	*fd = -1;
	*peer = 0;
	if (setsockopt(sock, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) != 0)
		return -errno;
	memset(&mh, 0, sizeof(mh));
	iov.iov_base = msg;
	iov.iov_len = sizeof(*msg);
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cm.buf;
	mh.msg_controllen = sizeof(cm.buf);
	do {
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	} while (n < 0 && errno == EINTR);
	if (n <= 0)
		return n == 0 ? -EPROTO : -errno;
	for (c = CMSG_FIRSTHDR(&mh); c != NULL; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET)
			continue;
		for (i = 0; c->cmsg_type == SCM_RIGHTS &&
				i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
			memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (nfd++ == 0)
				*fd = f;
			else
				close(f);
		}
		if (c->cmsg_type == SCM_CREDENTIALS &&
				c->cmsg_len == CMSG_LEN(sizeof(uc))) {
			memcpy(&uc, CMSG_DATA(c), sizeof(uc));
			*peer = uc.pid;
		}
	}
	if ((mh.msg_flags & MSG_CTRUNC) || nfd > 1) {
		if (*fd >= 0)
			close(*fd);
		*fd = -1;
		return -EPROTO;
	}
	return recv_all(sock, (uint8_t *)msg + n, sizeof(*msg) - (size_t)n);
}

/* Segments covering len; cannot wrap, unlike (len + seg - 1) / seg. */
static uint64_t
seg_count(uint64_t len, uint64_t seg)
{
	return len / seg + (len % seg != 0);
}

static int
check_msg(const struct xmem_msg *m, int fd)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	struct stat st;
	int seals;

	if (m->magic != XMEM_MSG_MAGIC || m->version != XMEM_MSG_VERSION ||
			m->dgsp_len > AMRMA_XMEM_MAX_DGSP || m->len == 0 ||
			m->base + m->len < m->base ||
			m->base + m->len > (uint64_t)INT64_MAX)
		return -EPROTO;
	if (m->backend == AMRMA_XMEM_PVM)
		return fd < 0 ? 0 : -EPROTO;
	/* seg bounded like base + len: seg_attach adds multiples of it. */
	if (m->backend != AMRMA_XMEM_MEMFD || fd < 0 || m->seg == 0 ||
			m->seg > (uint64_t)INT64_MAX || m->seg % pg != 0 ||
			m->base % pg != 0 || seg_count(m->len, m->seg) > MAX_SEGS)
		return -EPROTO;
	/* A shrinkable or short memfd could SIGBUS the importer. */
	seals = fcntl(fd, F_GET_SEALS);
	if (seals < 0 || !(seals & F_SEAL_SHRINK) || fstat(fd, &st) != 0 ||
			(uint64_t)st.st_size < m->len)
		return -EPROTO;
	return 0;
}

int
amrma_xmem_import_recv(int sock, const struct amrma_dgsp_limits *lim,
		struct amrma_xmem_import **out, enum amrma_dgsp_reason *why)
{
	struct amrma_dgsp_limits l;
	struct amrma_xmem_import *imp;
	enum amrma_dgsp_reason dummy;
	struct xmem_msg m;
	uint8_t *d = NULL;
	pid_t peer;
	int fd, rc;

	if (why == NULL)
		why = &dummy;
	*why = AMRMA_DGSP_OK;
	if (out == NULL)
		return -EINVAL;
	rc = recv_msg(sock, &m, &fd, &peer);
	if (rc == 0)
		rc = check_msg(&m, fd);
	/* The exporter must be who it says: process_vm targets that pid. */
	if (rc == 0 && (peer <= 0 || peer != m.pid))
		rc = -EPERM;
	if (rc == 0) {
		d = malloc(m.dgsp_len ? m.dgsp_len : 1);
		rc = d == NULL ? -ENOMEM : recv_all(sock, d, m.dgsp_len);
	}
	imp = rc == 0 ? calloc(1, sizeof(*imp)) : NULL;
	if (rc == 0 && imp == NULL)
		rc = -ENOMEM;
	if (rc != 0)
		goto fail;
	if (lim != NULL)
		l = *lim;
	else
		amrma_dgsp_limits_default(&l);
	/* Checked first: the window differences are signed. */
	if (m.addr > (uint64_t)INT64_MAX) {
		rc = -EPROTO;
		goto fail;
	}
	/* Window: the exported region, relative to the structure address. */
	l.check_window = true;
	l.count = m.count;
	l.win_lo = (int64_t)m.base - (int64_t)m.addr;
	l.win_hi = (int64_t)(m.base + m.len) - (int64_t)m.addr;
	rc = amrma_dgsp_load(d, m.dgsp_len, &l, &imp->prog, why);
	if (rc != 0)
		goto fail;
	imp->backend = (enum amrma_xmem_backend)m.backend;
	imp->pid = m.pid;
	imp->fd = fd;
	imp->base = m.base;
	imp->len = m.len;
	imp->seg = m.seg;
	imp->addr = m.addr;
	imp->count = m.count;
	if (imp->backend == AMRMA_XMEM_MEMFD) {
		imp->nseg = seg_count(m.len, m.seg);
		imp->maps = calloc(imp->nseg, sizeof(*imp->maps));
		if (imp->maps == NULL) {
			rc = -ENOMEM;
			goto fail;
		}
		xmem_memfd_ops(imp);
	}
	free(d);
	*out = imp;
	return 0;
fail:
	if (imp != NULL)
		amrma_dgsp_free(imp->prog);
	free(imp);
	free(d);
	if (fd >= 0)
		close(fd);
	return rc;
}

void
amrma_xmem_import_close(struct amrma_xmem_import *imp)
{
	if (imp == NULL)
		return;
	xmem_memfd_unmap(imp);
	if (imp->backend == AMRMA_XMEM_MEMFD && imp->fd >= 0)
		close(imp->fd);
	amrma_dgsp_free(imp->prog);
	free(imp);
}

enum amrma_xmem_backend
amrma_xmem_import_backend(const struct amrma_xmem_import *imp)
{
	return imp->backend;
}

uint64_t
amrma_xmem_import_total(const struct amrma_xmem_import *imp)
{
	struct amrma_dgsp_info pi;

	amrma_dgsp_get_info(imp->prog, &pi);
	return pi.size * imp->count;
}

const struct amrma_dgsrm_attach_ops *
amrma_xmem_import_ops(struct amrma_xmem_import *imp)
{
	return imp->backend == AMRMA_XMEM_MEMFD ? &imp->ops : NULL;
}

static void
master_side(const struct amrma_xmem_import *imp, struct amrma_dgsrm_side *s)
{
	s->prog = imp->prog;
	s->addr = imp->addr;
	s->count = imp->count;
}

int64_t
amrma_xmem_copy(struct amrma_xmem_import *imp,
		const struct amrma_dgsrm_side *local, enum amrma_dgsrm_mode mode,
		uint64_t off, uint64_t n)
{
	struct amrma_dgsrm_side ms;

	if (imp == NULL || local == NULL)
		return -EINVAL;
	master_side(imp, &ms);
	if (imp->backend == AMRMA_XMEM_PVM)
		return amrma_xmem_pvm_copy(imp->pid, &ms, local, mode, off, n);
	return amrma_dgsrm_direct(&ms, local, mode, &imp->ops, off, n);
}

int64_t
amrma_xmem_copy_staged(struct amrma_xmem_import *imp,
		const struct amrma_dgsrm_side *local, enum amrma_dgsrm_mode mode,
		void *stage, size_t stage_len, uint64_t off, uint64_t n)
{
	struct amrma_dgsrm_side ms;

	if (imp == NULL || local == NULL)
		return -EINVAL;
	master_side(imp, &ms);
	if (imp->backend == AMRMA_XMEM_PVM)
		return xmem_pvm_staged(imp->pid, &ms, local, mode, stage,
				stage_len, off, n);
	return amrma_dgsrm_staged(&ms, local, mode, &imp->ops, stage,
			stage_len, off, n);
}
