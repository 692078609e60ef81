/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Cross-process DGS-RM: a forked exporter publishes a strided structure
 * (memfd region or plain memory for process_vm), the importer pulls it into
 * a differently shaped local structure and pushes new data back, direct and
 * staged, whole and in packet-sized pieces; the exporter checks what landed.
 * An export whose program reaches outside its region is refused, and so are
 * forged headers sent from this process (the kernel-stamped pid matches).
 */
#include <dirent.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "amrma_xmem.h"
#include "check.h"
#include "xmem_priv.h"	/* to forge a message */

#define COUNT 4

/*
 * UBSan only prints by default and meson test sets no UBSAN_OPTIONS: make a
 * report fail the test (the environment still overrides).
 */
const char *__ubsan_default_options(void);
const char *
__ubsan_default_options(void)
{
	return "halt_on_error=1:print_stacktrace=1";
}

struct layouts {
	struct pt *e, *l;		/* exported, local */
	int64_t *me, *ml;
	size_t n;
};

static uint8_t
f_pull(int64_t off)
{
	return (uint8_t)(off * 13 + 7);
}

static uint8_t
f_push(size_t i)
{
	return (uint8_t)(i * 29 + 3);
}

static void
make_layouts(struct layouts *ly)
{
	struct pt *i4 = pt_basic(4), *v;
	size_t n2;

	/* 64 x 3 ints every 5 ints, lb moved negative: 768 B per element. */
	v = pt_vector(64, 3, 5, i4);
	ly->e = pt_resized(v, -64, 64 * 5 * 4 + 64);
	/* 96 x 2 ints every 3 ints, negative stride: also 768 B. */
	ly->l = pt_vector(96, 2, -3, i4);
	assert_non_null(ly->e);
	assert_non_null(ly->l);
	assert_int_equal(amrma_dgsp_type_commit(ly->e->t), 0);
	assert_int_equal(amrma_dgsp_type_commit(ly->l->t), 0);
	ly->me = ref_bytemap(&ly->e->m, COUNT, &ly->n);
	ly->ml = ref_bytemap(&ly->l->m, COUNT, &n2);
	assert_int_equal(ly->n, n2);
	pt_free(v);
	pt_free(i4);
}

static void
free_layouts(struct layouts *ly)
{
	pt_free(ly->e);
	pt_free(ly->l);
	free(ly->me);
	free(ly->ml);
}

/* Exporter process: never returns. */
static void
exporter(int sock, enum amrma_xmem_backend be, const struct layouts *ly,
		bool hostile)
{
	struct amrma_xmem_region *r = NULL;
	struct amrma_xmem_export ex;
	uint8_t *mem, *data, cmd, ok;
	size_t len = 64 * 1024, i;

	if (be == AMRMA_XMEM_MEMFD) {
		if (amrma_xmem_region_create(len, 4096, &r) != 0)
			_exit(10);
		mem = amrma_xmem_region_addr(r);
	} else {
		mem = malloc(len);
		if (mem == NULL)
			_exit(10);
	}
	for (i = 0; i < len; i++)
		mem[i] = 0;
	data = mem + 4096;
	for (i = 0; i < ly->n; i++)
		data[ly->me[i]] = f_pull(ly->me[i]);
	memset(&ex, 0, sizeof(ex));
	ex.backend = be;
	ex.region = r;
	ex.base = (uint64_t)(uintptr_t)mem;
	/* Hostile: claim a region that ends before the data does. */
	ex.len = hostile ? 4096 + 100 : len;
	ex.prog = amrma_dgsp_type_program(ly->e->t);
	ex.addr = (uint64_t)(uintptr_t)data;
	ex.count = COUNT;
	if (amrma_xmem_export_send(sock, &ex) != 0)
		_exit(11);
	while (read(sock, &cmd, 1) == 1 && cmd == 'V') {
		ok = 1;
		for (i = 0; i < ly->n; i++)
			if (data[ly->me[i]] != f_push(i))
				ok = 0;
		if (write(sock, &ok, 1) != 1)
			_exit(12);
	}
	amrma_xmem_region_free(r);
	_exit(0);
}

static pid_t
spawn(int *sock, enum amrma_xmem_backend be, const struct layouts *ly,
		bool hostile)
{
	int sv[2];
	pid_t pid;

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(sv[0]);
		exporter(sv[1], be, ly, hostile);
	}
	close(sv[1]);
	*sock = sv[0];
	return pid;
}

static void
reap(int sock, pid_t pid)
{
	int st;

	close(sock);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

/*
 * Move all n packed bytes in calls of mtu bytes at most, direct (stage NULL) or staged
 * through stage_len bytes of stage; each call moves all it is asked to.
 */
static void
copy_by(struct amrma_xmem_import *imp, const struct amrma_dgsrm_side *loc,
	enum amrma_dgsrm_mode mode, size_t n, size_t mtu, uint8_t *stage, size_t stage_len)
{
	size_t off;

	for (off = 0; off < n; off += mtu) {
		size_t c = n - off < mtu ? n - off : mtu;
		int64_t r = stage == NULL ?
			amrma_xmem_copy(imp, loc, mode, off, c) :
			amrma_xmem_copy_staged(imp, loc, mode, stage, stage_len, off, c);

		assert_int_equal(r, (int64_t)c);
	}
}

static void
run_backend(enum amrma_xmem_backend be)
{
	struct amrma_xmem_import *imp = NULL;
	struct amrma_dgsrm_side loc;
	enum amrma_dgsp_reason why;
	struct layouts ly;
	struct tbuf lb;
	uint8_t stage[1000], ok, cmd = 'V';
	size_t i, mtu;
	int sock, pass;
	pid_t pid;

	make_layouts(&ly);
	pid = spawn(&sock, be, &ly, false);
	assert_int_equal(amrma_xmem_import_recv(sock, NULL, &imp, &why), 0);
	assert_int_equal(amrma_xmem_import_backend(imp), be);
	assert_int_equal(amrma_xmem_import_total(imp), ly.n);
	tbuf_alloc(&lb, ly.ml, ly.n, 16);
	loc = side_of(ly.l->t, lb.base, COUNT);
	for (pass = 0; pass < 4; pass++) {
		/* 0: direct whole, 1: direct packets, 2: staged, 3: packets staged */
		memset(lb.mem, 0, lb.len);
		mtu = pass & 1 ? 1000 : ly.n;
		copy_by(imp, &loc, AMRMA_DGSRM_PULL, ly.n, mtu, pass < 2 ? NULL : stage, 300);
		for (i = 0; i < ly.n; i++)
			assert_int_equal(lb.base[ly.ml[i]], f_pull(ly.me[i]));

		for (i = 0; i < ly.n; i++)
			lb.base[ly.ml[i]] = f_push(i);
		copy_by(imp, &loc, AMRMA_DGSRM_PUSH, ly.n, mtu, pass < 2 ? NULL : stage,
			sizeof(stage));
		assert_int_equal(write(sock, &cmd, 1), 1);
		assert_int_equal(read(sock, &ok, 1), 1);
		assert_int_equal(ok, 1);
		/* Restore the exporter's pull pattern for the next pass. */
		for (i = 0; i < ly.n; i++)
			lb.base[ly.ml[i]] = f_pull(ly.me[i]);
		assert_int_equal(amrma_xmem_copy(imp, &loc, AMRMA_DGSRM_PUSH, 0,
				ly.n), (int64_t)ly.n);
	}
	assert_int_equal(amrma_xmem_copy(imp, &loc, AMRMA_DGSRM_PULL, 1, ly.n),
			-ERANGE);
	amrma_xmem_import_close(imp);
	tbuf_free(&lb);
	reap(sock, pid);
	free_layouts(&ly);
}

static void
test_memfd(void **state)
{
	(void)state;
	run_backend(AMRMA_XMEM_MEMFD);
}

static void
test_pvm(void **state)
{
	(void)state;
	run_backend(AMRMA_XMEM_PVM);
}

static void
test_hostile_window(void **state)
{
	struct amrma_xmem_import *imp = NULL;
	enum amrma_dgsp_reason why = AMRMA_DGSP_OK;
	struct layouts ly;
	int sock;
	pid_t pid;

	(void)state;
	/* PVM exports declare their region; memfd ones carry the true size. */
	make_layouts(&ly);
	pid = spawn(&sock, AMRMA_XMEM_PVM, &ly, true);
	assert_int_equal(amrma_xmem_import_recv(sock, NULL, &imp, &why),
			-EINVAL);
	assert_int_equal(why, AMRMA_DGSP_E_WINDOW);
	assert_null(imp);
	reap(sock, pid);
	free_layouts(&ly);
}

/* A PVM export naming another process (here: the importer) is refused. */
static void
test_forged_pid(void **state)
{
	struct amrma_xmem_import *imp = NULL;
	enum amrma_dgsp_reason why;
	struct layouts ly;
	int sv[2], st;
	pid_t pid;

	(void)state;
	make_layouts(&ly);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct xmem_msg m;
		uint8_t d[4096];
		ssize_t dl = amrma_dgsp_serialize(
				amrma_dgsp_type_program(ly.e->t), d, sizeof(d));
		int one = 1;

		close(sv[0]);
		memset(&m, 0, sizeof(m));
		m.magic = XMEM_MSG_MAGIC;
		m.version = XMEM_MSG_VERSION;
		m.backend = AMRMA_XMEM_PVM;
		m.pid = (int32_t)getppid();
		m.dgsp_len = (uint32_t)dl;
		m.base = 0;
		m.len = (uint64_t)1 << 40;
		m.addr = (uint64_t)1 << 39;
		m.count = COUNT;
		setsockopt(sv[1], SOL_SOCKET, SO_PASSCRED, &one, sizeof(one));
		if (write(sv[1], &m, sizeof(m)) != (ssize_t)sizeof(m) ||
				write(sv[1], d, (size_t)dl) != dl)
			_exit(1);
		_exit(0);
	}
	close(sv[1]);
	assert_int_equal(amrma_xmem_import_recv(sv[0], NULL, &imp, &why),
			-EPERM);
	assert_null(imp);
	close(sv[0]);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	free_layouts(&ly);
}

#define FORGE_LEN 8192
#define FORGE_BASE UINT64_C(0x10000000)
#define FORGE_MAX_FDS 16

/* A sealed 8 KiB memfd, as amrma_xmem_region_create would make. */
static int
forge_memfd(void)
{
	int fd = memfd_create("test_xmem", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, FORGE_LEN), 0);
	assert_int_equal(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK), 0);
	return fd;
}

/* A well-formed header for one 16-byte element 4 KiB into the region. */
static void
forge_msg(struct xmem_msg *m, enum amrma_xmem_backend be, size_t dl)
{
	memset(m, 0, sizeof(*m));
	m->magic = XMEM_MSG_MAGIC;
	m->version = XMEM_MSG_VERSION;
	m->backend = (uint16_t)be;
	m->pid = (int32_t)getpid();
	m->dgsp_len = (uint32_t)dl;
	m->base = FORGE_BASE;
	m->len = FORGE_LEN;
	m->seg = be == AMRMA_XMEM_MEMFD ? 4096 : 0;
	m->addr = FORGE_BASE + 4096;
	m->count = 1;
}

/*
 * Send @m with @nfd copies of @fd in one SCM_RIGHTS message, then @dl bytes
 * of program, on a fresh socketpair, and import it in this process.
 */
static int
forged_import(const struct xmem_msg *m, const uint8_t *d, size_t dl, int fd,
		int nfd, struct amrma_xmem_import **imp)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int) * FORGE_MAX_FDS)];
	} cm;
	int fds[FORGE_MAX_FDS], sv[2], one = 1, i, rc;
	enum amrma_dgsp_reason why;
	struct cmsghdr *c;
	struct msghdr mh;
	struct iovec iov;

	assert_true(nfd >= 0 && nfd <= FORGE_MAX_FDS);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(setsockopt(sv[1], SOL_SOCKET, SO_PASSCRED, &one,
			sizeof(one)), 0);
	memset(&mh, 0, sizeof(mh));
	iov.iov_base = (void *)(uintptr_t)m;
	iov.iov_len = sizeof(*m);
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	if (nfd > 0) {
		for (i = 0; i < nfd; i++)
			fds[i] = fd;
		memset(&cm, 0, sizeof(cm));
		mh.msg_control = cm.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfd);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfd);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)nfd);
	}
	assert_int_equal(sendmsg(sv[1], &mh, 0), (ssize_t)sizeof(*m));
	assert_int_equal(write(sv[1], d, dl), (ssize_t)dl);
	*imp = NULL;
	rc = amrma_xmem_import_recv(sv[0], NULL, imp, &why);
	close(sv[0]);
	close(sv[1]);
	return rc;
}

/* Serialized program of one 16-byte basic type. */
static size_t
forge_prog(uint8_t *d, size_t cap, struct amrma_dgsp_type **t)
{
	ssize_t dl;

	assert_int_equal(amrma_dgsp_type_basic(16, t), 0);
	assert_int_equal(amrma_dgsp_type_commit(*t), 0);
	dl = amrma_dgsp_serialize(amrma_dgsp_type_program(*t), d, cap);
	assert_true(dl > 0 && (size_t)dl <= cap);
	return (size_t)dl;
}

/*
 * A segment size near 2^64 wrapped the segment count to 0: the import
 * succeeded with no segment table and the first attach overran it.
 */
static void
test_huge_seg(void **state)
{
	struct amrma_xmem_import *imp;
	struct amrma_dgsrm_side loc;
	struct amrma_dgsp_type *t;
	uint8_t d[256], got[16], want[16];
	struct xmem_msg m;
	size_t dl, i;
	int fd;

	(void)state;
	dl = forge_prog(d, sizeof(d), &t);
	fd = forge_memfd();
	forge_msg(&m, AMRMA_XMEM_MEMFD, dl);
	m.seg = UINT64_C(0xFFFFFFFFFFFFF000);
	assert_int_equal(forged_import(&m, d, dl, fd, 1, &imp), -EPROTO);
	assert_null(imp);
	m.seg = UINT64_C(1) << 63;
	assert_int_equal(forged_import(&m, d, dl, fd, 1, &imp), -EPROTO);
	assert_null(imp);

	/* A segment larger than the region is legal: one segment. */
	for (i = 0; i < sizeof(want); i++)
		want[i] = (uint8_t)(i * 7 + 1);
	assert_int_equal(pwrite(fd, want, sizeof(want), 4096),
			(ssize_t)sizeof(want));
	m.seg = UINT64_C(1) << 62;
	assert_int_equal(forged_import(&m, d, dl, fd, 1, &imp), 0);
	loc = side_of(t, got, 1);
	memset(got, 0, sizeof(got));
	assert_int_equal(amrma_xmem_copy(imp, &loc, AMRMA_DGSRM_PULL, 0, 16),
			16);
	assert_memory_equal(got, want, sizeof(want));
	amrma_xmem_import_close(imp);
	amrma_dgsp_type_free(t);
	close(fd);
}

static int
count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	assert_non_null(d);
	while (readdir(d) != NULL)
		n++;
	closedir(d);
	return n;
}

/*
 * Every fd the kernel installs on import is either kept or closed: extra
 * fds in one message, more than the control buffer holds (MSG_CTRUNC), and
 * an fd with a process_vm export.
 */
static void
test_fd_leak(void **state)
{
	static const int nfds[] = { 2, 3, FORGE_MAX_FDS };
	struct amrma_xmem_import *imp;
	struct amrma_dgsp_type *t;
	struct xmem_msg m;
	uint8_t d[256];
	int fd, before, rep;
	size_t dl, i;

	(void)state;
	dl = forge_prog(d, sizeof(d), &t);
	fd = forge_memfd();
	before = count_fds();
	for (rep = 0; rep < 3; rep++) {
		forge_msg(&m, AMRMA_XMEM_MEMFD, dl);
		for (i = 0; i < sizeof(nfds) / sizeof(nfds[0]); i++) {
			assert_int_equal(forged_import(&m, d, dl, fd, nfds[i],
					&imp), -EPROTO);
			assert_null(imp);
		}
		forge_msg(&m, AMRMA_XMEM_PVM, dl);
		assert_int_equal(forged_import(&m, d, dl, fd, 1, &imp),
				-EPROTO);
		assert_int_equal(count_fds(), before);
	}
	/* The well-formed import keeps its one fd until close. */
	forge_msg(&m, AMRMA_XMEM_MEMFD, dl);
	assert_int_equal(forged_import(&m, d, dl, fd, 1, &imp), 0);
	assert_int_equal(count_fds(), before + 1);
	amrma_xmem_import_close(imp);
	assert_int_equal(count_fds(), before);
	amrma_dgsp_type_free(t);
	close(fd);
}

/* A structure address past INT64_MAX is refused before any window math. */
static void
test_addr_overflow(void **state)
{
	struct amrma_xmem_import *imp;
	struct amrma_dgsp_type *t;
	struct xmem_msg m;
	uint8_t d[256];
	size_t dl;

	(void)state;
	dl = forge_prog(d, sizeof(d), &t);
	forge_msg(&m, AMRMA_XMEM_PVM, dl);
	m.addr = UINT64_C(1) << 63;
	assert_int_equal(forged_import(&m, d, dl, -1, 0, &imp), -EPROTO);
	assert_null(imp);
	m.addr = UINT64_MAX;
	assert_int_equal(forged_import(&m, d, dl, -1, 0, &imp), -EPROTO);
	assert_null(imp);
	amrma_dgsp_type_free(t);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_memfd),
		cmocka_unit_test(test_pvm),
		cmocka_unit_test(test_hostile_window),
		cmocka_unit_test(test_forged_pid),
		cmocka_unit_test(test_huge_seg),
		cmocka_unit_test(test_fd_leak),
		cmocka_unit_test(test_addr_overflow),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
