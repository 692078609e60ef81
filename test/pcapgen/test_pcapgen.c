/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Runs amrma-pcapgen (path in argv[1]), reads its pcap back with an independent reader
 * and checks every frame against amrma_wire_parse() and the manifest.
 */

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>
#include <cmocka.h>

#include "amrma_wire.h"
#include "pcap_reader.h"

#define MAX_ARGV	32

static const char *pcapgen;
/* half of PATH_MAX leaves room for the file names appended to it */
static char tmpdir[PATH_MAX / 2];

/* A generator run: its options, output paths and what the receiver is. */
struct run {
	const char *opts[MAX_ARGV];
	char pcap[PATH_MAX];
	char manifest[PATH_MAX];
	struct amrma_wire_rx_params rx;
};

/* Run the generator with --out/--manifest plus opts; returns its exit status. */
static int
run_gen(const char *const *opts, const char *pcap, const char *manifest, bool quiet)
{
	const char *argv[MAX_ARGV + 6];
	int n = 0, status;
	pid_t pid;

	argv[n++] = pcapgen;
	argv[n++] = "--out";
	argv[n++] = pcap;
	if (manifest) {
		argv[n++] = "--manifest";
		argv[n++] = manifest;
	}
	while (*opts && n < MAX_ARGV + 5)
		argv[n++] = *opts++;
	argv[n] = NULL;
	pid = fork();
	if (pid == 0) {
		if (quiet) {
			int fd = open("/dev/null", O_WRONLY);

			if (fd >= 0)
				dup2(fd, STDERR_FILENO);
		}
		execv(pcapgen, (char *const *)argv);
		_exit(127);
	}
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static void
tmp_path(char *out, const char *name)
{
	snprintf(out, PATH_MAX, "%s/%s", tmpdir, name);
}

/* Value of "key": N on a manifest line; false if absent. */
static bool
json_num(const char *line, const char *key, long long *v)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\": ", key);
	p = strstr(line, pat);
	if (p == NULL)
		return false;
	*v = strtoll(p + strlen(pat), NULL, 0);
	return true;
}

static bool
json_str(const char *line, const char *key, char *out, size_t n)
{
	char pat[64];
	const char *p, *e;

	snprintf(pat, sizeof(pat), "\"%s\": \"", key);
	p = strstr(line, pat);
	if (p == NULL)
		return false;
	p += strlen(pat);
	e = strchr(p, '"');
	if (e == NULL || (size_t)(e - p) >= n)
		return false;
	memcpy(out, p, e - p);
	out[e - p] = '\0';
	return true;
}

static long long
field(const char *line, const char *key)
{
	long long v = -1;

	if (!json_num(line, key, &v))
		fail_msg("manifest line lacks %s: %s", key, line);
	return v;
}

/* Manifest as lines; records are the lines starting with {"i": */
struct manifest {
	char *text;
	char **rec;
	size_t nb_rec;
	const char *good_line;
	const char *bad_line;
	long long frames;
};

static void
manifest_load(const char *path, struct manifest *m)
{
	uint8_t *buf;
	size_t len, cap = 0;
	char *line, *save = NULL;

	memset(m, 0, sizeof(*m));
	assert_int_equal(pcap_read_file(path, &buf, &len), 0);
	m->text = realloc(buf, len + 1);
	assert_non_null(m->text);
	m->text[len] = '\0';
	for (line = strtok_r(m->text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "\"good\": {", 9))
			m->good_line = line;
		else if (!strncmp(line, "\"bad\": {", 8))
			m->bad_line = line;
		else if (!strncmp(line, "\"totals\": {", 11))
			m->frames = field(line, "frames");
		if (strncmp(line, "{\"i\": ", 6))
			continue;
		if (m->nb_rec == cap) {
			cap = cap ? 2 * cap : 64;
			m->rec = realloc(m->rec, cap * sizeof(*m->rec));
			assert_non_null(m->rec);
		}
		m->rec[m->nb_rec++] = line;
	}
	assert_non_null(m->good_line);
	assert_non_null(m->bad_line);
	assert_int_equal(m->frames, m->nb_rec);
}

static void
manifest_free(struct manifest *m)
{
	free(m->rec);
	free(m->text);
}

/* The decoded view must equal the fields the manifest says were generated. */
static void
check_good(const char *rec, const struct amrma_wire_view *v, size_t len)
{
	const char *p;
	unsigned int i;

	assert_int_equal(field(rec, "len"), len);
	assert_int_equal(field(rec, "type"), v->hdr.type);
	assert_int_equal(field(rec, "flags"), v->hdr.flags);
	assert_int_equal(field(rec, "nargs"), v->hdr.nargs);
	assert_int_equal(field(rec, "handler"), v->hdr.handler);
	assert_int_equal(field(rec, "src_ctx"), v->hdr.src_ctx);
	assert_int_equal(field(rec, "dst_ctx"), v->hdr.dst_ctx);
	assert_int_equal(field(rec, "src_node"), v->hdr.src_node);
	assert_int_equal(field(rec, "dst_node"), v->hdr.dst_node);
	assert_int_equal(field(rec, "seq"), v->hdr.seq);
	assert_int_equal(field(rec, "ack"), v->hdr.ack);
	assert_int_equal(field(rec, "sack"), v->hdr.sack);
	assert_int_equal(field(rec, "token"), v->hdr.token);
	assert_int_equal(field(rec, "payload_len"), v->hdr.payload_len);
	assert_int_equal(field(rec, "status"), v->hdr.status);
	assert_int_equal(field(rec, "src_epoch"), v->hdr.src_epoch);
	assert_int_equal(field(rec, "dst_epoch"), v->hdr.dst_epoch);
	assert_int_not_equal(v->hdr.src_epoch, 0);
	p = strstr(rec, "\"args\": [");
	assert_non_null(p);
	p += strlen("\"args\": [");
	for (i = 0; i < v->hdr.nargs; i++) {
		unsigned long long a;
		int n;

		assert_int_equal(sscanf(p, " \"0x%llx\"%n", &a, &n), 1);
		assert_true(a == amrma_wire_arg(v, i));
		p += n;
		if (*p == ',')
			p++;
	}
	assert_int_equal(*p, ']');
	/* sequenced frames carry seq; ACKs carry nothing else */
	if (v->hdr.type == AMRMA_WIRE_ACK) {
		assert_int_equal(v->hdr.seq, 0);
		assert_int_equal(v->hdr.token, 0);
		assert_int_equal(v->hdr.handler, AMRMA_WIRE_NO_HANDLER);
	}
}

struct tally {
	unsigned long good;
	unsigned long why[AMRMA_WIRE_ERR__MAX];
	unsigned long mtu_max;		/* good frames of exactly 1514 bytes */
	unsigned long empty_medium;	/* request_medium with payload 0 */
};

/* Every frame of the pcap through amrma_wire_parse(); all must match the manifest. */
static void
check_run(const struct run *r, struct tally *t)
{
	uint32_t next_seq[AMRMA_WIRE_MAX_CTX][AMRMA_WIRE_MAX_CTX] = { { 0 } };
	static uint8_t aligned[PCAP_READER_MAX_REC] __rte_aligned(RTE_CACHE_LINE_SIZE);
	struct amrma_wire_rx_params rx = r->rx;
	struct pcap_reader rd;
	struct manifest m;
	const uint8_t *frame;
	size_t caplen, origlen, i = 0;
	uint8_t *buf;
	size_t len;
	int rc;

	memset(t, 0, sizeof(*t));
	manifest_load(r->manifest, &m);
	assert_int_equal(pcap_read_file(r->pcap, &buf, &len), 0);
	assert_int_equal(pcap_reader_init(&rd, buf, len), 0);
	assert_int_equal(rd.linktype, 1);
	while ((rc = pcap_reader_next(&rd, &frame, &caplen, &origlen)) == 1) {
		struct amrma_wire_view v, v2;
		enum amrma_wire_err err, err2;
		char expect[32], variant[48];

		assert_true(i < m.nb_rec);
		assert_int_equal(field(m.rec[i], "i"), i);
		assert_int_equal(caplen, origlen);
		assert_true(json_str(m.rec[i], "expect", expect, sizeof(expect)));
		assert_true(json_str(m.rec[i], "variant", variant, sizeof(variant)));
		/* records sit at any byte offset; the codec wants an mbuf-like aligned start */
		assert_true(caplen <= sizeof(aligned));
		memcpy(aligned, frame, caplen);
		frame = aligned;
		rx.require_csum = false;
		err = amrma_wire_parse(frame, caplen, &rx, &v);
		/* no generated frame relies on a zero UDP checksum */
		rx.require_csum = true;
		err2 = amrma_wire_parse(frame, caplen, &rx, &v2);
		assert_int_equal(err, err2);
		if (strcmp(amrma_wire_err_name(err), expect))
			fail_msg("frame %zu (%s): parsed as %s, manifest says %s", i, variant,
				 amrma_wire_err_name(err), expect);
		if (err == AMRMA_WIRE_OK) {
			check_good(m.rec[i], &v, caplen);
			if (v.hdr.type != AMRMA_WIRE_ACK)
				assert_int_equal(v.hdr.seq,
						 next_seq[v.hdr.src_ctx][v.hdr.dst_ctx]++);
			t->good++;
			t->mtu_max += caplen == RTE_ETHER_HDR_LEN + 1500;
			t->empty_medium += !strcmp(variant, "request_medium") && !v.hdr.payload_len;
		} else {
			t->why[err]++;
		}
		i++;
	}
	assert_int_equal(rc, 0);
	assert_int_equal(i, m.nb_rec);
	for (i = AMRMA_WIRE_ERR_TRUNCATED; i < AMRMA_WIRE_ERR__MAX; i++)
		assert_int_equal(field(m.bad_line, amrma_wire_err_name(i)), t->why[i]);
	assert_int_equal(field(m.good_line, "request_short") + field(m.good_line,
			 "request_medium") + field(m.good_line, "reply") +
			 field(m.good_line, "ack"), t->good);
	free(buf);
	manifest_free(&m);
	unlink(r->pcap);
	unlink(r->manifest);
}

static void
run_init(struct run *r, const char *name)
{
	char n[64];

	memset(r, 0, sizeof(*r));
	snprintf(n, sizeof(n), "%s.pcap", name);
	tmp_path(r->pcap, n);
	snprintf(n, sizeof(n), "%s.json", name);
	tmp_path(r->manifest, n);
	/* the generator's defaults, which these tests also pass explicitly */
	r->rx.mac = (struct rte_ether_addr){{ 0x02, 0, 0, 0, 0, 0x02 }};
	r->rx.node_id = 2;
	r->rx.udp_base = 7000;
	r->rx.nb_ctx = 4;
}

static void
test_good(void **state)
{
	struct run r;
	struct tally t;

	(void)state;
	run_init(&r, "good");
	memcpy(r.opts, (const char *[]){ "--kind", "good", "--count", "45",
		"--dst-mac", "02:00:00:00:00:02", "--dst-node", "2", "--udp-base", "7000",
		"--nb-ctx", "4", NULL }, 13 * sizeof(char *));
	assert_int_equal(run_gen(r.opts, r.pcap, r.manifest, false), 0);
	check_run(&r, &t);
	assert_int_equal(t.good, 45);
	assert_true(t.mtu_max >= 2);
	assert_true(t.empty_medium >= 1);
}

static void
test_bad(void **state)
{
	struct run r;
	struct tally t;
	unsigned int i;

	(void)state;
	run_init(&r, "bad");
	r.opts[0] = "--kind";
	r.opts[1] = "bad";
	assert_int_equal(run_gen(r.opts, r.pcap, r.manifest, false), 0);
	check_run(&r, &t);
	assert_int_equal(t.good, 0);
	for (i = AMRMA_WIRE_ERR_TRUNCATED; i < AMRMA_WIRE_ERR__MAX; i++)
		if (t.why[i] == 0)
			fail_msg("no frame rejected as %s", amrma_wire_err_name(i));
}

static void
test_mixed(void **state)
{
	static const char *const opts[] = { "--kind", "mixed", "--count", "60", "--seed",
		"7", "--dst-mac", "02:aa:bb:cc:dd:ee", "--dst-node", "5", "--udp-base", "9000",
		"--nb-ctx", "2", "--handler", "200", "--src-epoch", "4000000000",
		"--dst-epoch", "77", NULL };
	char again[PATH_MAX], other[PATH_MAX];
	uint8_t *a, *b, *c;
	size_t la, lb, lc;
	struct run r;
	struct tally t;
	unsigned int i;

	(void)state;
	run_init(&r, "mixed");
	memcpy(r.opts, opts, sizeof(opts));
	r.rx.mac = (struct rte_ether_addr){{ 0x02, 0xaa, 0xbb, 0xcc, 0xdd, 0xee }};
	r.rx.node_id = 5;
	r.rx.udp_base = 9000;
	r.rx.nb_ctx = 2;
	assert_int_equal(run_gen(r.opts, r.pcap, r.manifest, false), 0);

	/* same options, same bytes; another seed, other bytes */
	tmp_path(again, "again.pcap");
	tmp_path(other, "other.pcap");
	assert_int_equal(run_gen(opts, again, NULL, true), 0);
	r.opts[5] = "8";
	assert_int_equal(run_gen(r.opts, other, NULL, true), 0);
	assert_int_equal(pcap_read_file(r.pcap, &a, &la), 0);
	assert_int_equal(pcap_read_file(again, &b, &lb), 0);
	assert_int_equal(pcap_read_file(other, &c, &lc), 0);
	assert_true(la == lb && !memcmp(a, b, la));
	assert_false(la == lc && !memcmp(a, c, la));
	free(a);
	free(b);
	free(c);
	unlink(again);
	unlink(other);

	check_run(&r, &t);
	assert_int_equal(t.good, 60);
	for (i = AMRMA_WIRE_ERR_TRUNCATED; i < AMRMA_WIRE_ERR__MAX; i++)
		assert_true(t.why[i] > 0);
}

/* A file cut anywhere must end cleanly or fail, never yield bytes past the cut. */
static void
test_reader_truncated(void **state)
{
	static const char *const opts[] = { "--count", "6", NULL };
	struct pcap_reader rd;
	const uint8_t *frame;
	size_t len, cut, caplen, origlen, full = 0;
	char path[PATH_MAX];
	uint8_t *buf, *copy;
	int rc;

	(void)state;
	tmp_path(path, "cut.pcap");
	assert_int_equal(run_gen(opts, path, NULL, true), 0);
	assert_int_equal(pcap_read_file(path, &buf, &len), 0);
	unlink(path);
	assert_int_equal(pcap_reader_init(&rd, buf, len), 0);
	while (pcap_reader_next(&rd, &frame, &caplen, &origlen) == 1)
		full++;
	assert_int_equal(full, 6);

	for (cut = 0; cut < len; cut++) {
		size_t n = 0;

		/* exact-size heap copy so a sanitizer catches any over-read */
		copy = malloc(cut ? cut : 1);
		assert_non_null(copy);
		memcpy(copy, buf, cut);
		if (pcap_reader_init(&rd, copy, cut) < 0) {
			assert_true(cut < 24);
			free(copy);
			continue;
		}
		while ((rc = pcap_reader_next(&rd, &frame, &caplen, &origlen)) == 1) {
			assert_true(frame + caplen <= copy + cut);
			n++;
		}
		assert_true(n < full);
		/* a clean end only on a record boundary */
		assert_true(rc == 0 ? rd.off == cut : rc == -EPROTO);
		free(copy);
	}

	/* hostile headers: unknown magic, record longer than the snaplen */
	copy = malloc(len);
	assert_non_null(copy);
	memcpy(copy, buf, len);
	copy[0] ^= 0xff;
	assert_int_equal(pcap_reader_init(&rd, copy, len), -EPROTO);
	memcpy(copy, buf, len);
	memset(copy + 24 + 8, 0xff, 4);
	assert_int_equal(pcap_reader_init(&rd, copy, len), 0);
	assert_int_equal(pcap_reader_next(&rd, &frame, &caplen, &origlen), -EPROTO);
	free(copy);
	free(buf);
}

static void
test_bad_options(void **state)
{
	static const char *const bad[][3] = {
		{ "--handler", "256", NULL }, { "--nb-ctx", "0", NULL },
		{ "--nb-ctx", "65", NULL }, { "--kind", "ugly", NULL },
		{ "--src-mac", "02:00:00:00:00", NULL }, { "--dst-mac", "zz:00:00:00:00:01", NULL },
		{ "--dst-ip", "10.0.0.256", NULL }, { "--udp-base", "0", NULL },
		{ "--udp-base", "65500", NULL }, { "--count", "-1", NULL },
		{ "--seed", "x", NULL }, { "--src-epoch", "0", NULL },
		{ "--dst-epoch", "4294967296", NULL }, { "--bogus", NULL, NULL },
	};
	char path[PATH_MAX];
	struct stat st;
	unsigned int i;

	(void)state;
	tmp_path(path, "opts.pcap");
	for (i = 0; i < RTE_DIM(bad); i++) {
		assert_int_equal(run_gen(bad[i], path, NULL, true), 2);
		assert_int_not_equal(stat(path, &st), 0);
	}
}

/* A failed assertion skips a test's unlink() calls: empty the directory here. */
static void
remove_tmpdir(void)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d = opendir(tmpdir);

	if (d != NULL) {
		while ((de = readdir(d)) != NULL) {
			if (de->d_name[0] == '.')
				continue;
			tmp_path(path, de->d_name);
			unlink(path);
		}
		closedir(d);
	}
	rmdir(tmpdir);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_mixed),
		cmocka_unit_test(test_reader_truncated),
		cmocka_unit_test(test_bad_options),
	};
	const char *t = getenv("TMPDIR");
	int rc;

	if (argc != 2) {
		fprintf(stderr, "usage: %s PATH-TO-amrma-pcapgen\n", argv[0]);
		return 1;
	}
	pcapgen = argv[1];
	rc = snprintf(tmpdir, sizeof(tmpdir), "%s/amrma-pcapgen-test.XXXXXX", t ? t : "/tmp");
	if (rc < 0 || (size_t)rc >= sizeof(tmpdir) || mkdtemp(tmpdir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	remove_tmpdir();
	return rc;
}
