/* SPDX-License-Identifier: BSD-3-Clause */
/* Region table and access keys. Needs EAL (rte_hash, rte_malloc); no hugepages. */

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "eal_rundir.h"

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_memory.h>
#include <rte_rcu_qsbr.h>

#include "amrma_region.h"

static char buf_a[4096];
static char buf_b[8192];

/*
 * A table of capacity regions; with rcu, one whose key slots are reclaimed through a
 * fresh RCU QSBR variable of one reader (*rcu, for the caller to free).
 */
static struct amrma_region_table *
table_rcu(const char *name, uint32_t capacity, struct rte_rcu_qsbr **rcu)
{
	struct amrma_region_table_config cfg = {
		.name = name,
		.capacity = capacity,
		.socket_id = SOCKET_ID_ANY,
	};
	struct amrma_region_table *t;

	if (rcu != NULL) {
		*rcu = rte_zmalloc(NULL, rte_rcu_qsbr_get_memsize(1), RTE_CACHE_LINE_SIZE);
		assert_non_null(*rcu);
		assert_int_equal(rte_rcu_qsbr_init(*rcu, 1), 0);
		cfg.rcu = *rcu;
	}
	t = amrma_region_table_create(&cfg);
	assert_non_null(t);
	return t;
}

static struct amrma_region_table *
table(const char *name, uint32_t capacity)
{
	return table_rcu(name, capacity, NULL);
}

static void
test_create_invalid(void **state)
{
	struct amrma_region_table_config cfg = { .name = "t_inv", .capacity = 0,
						 .socket_id = SOCKET_ID_ANY };
	struct amrma_region_table *t;

	(void)state;
	assert_null(amrma_region_table_create(NULL));
	assert_null(amrma_region_table_create(&cfg));
	assert_int_equal(rte_errno, EINVAL);
	cfg.capacity = UINT32_MAX;
	assert_null(amrma_region_table_create(&cfg));
	assert_int_equal(rte_errno, EINVAL);
	cfg.capacity = 4;
	t = amrma_region_table_create(&cfg);
	assert_non_null(t);
	/* Names are unique (rte_hash registry). */
	assert_null(amrma_region_table_create(&cfg));
	assert_int_equal(rte_errno, EEXIST);
	assert_int_equal(amrma_region_table_free(t), 0);
	/* And reusable once freed. */
	t = amrma_region_table_create(&cfg);
	assert_non_null(t);
	assert_int_equal(amrma_region_table_free(t), 0);
}

static void
test_register_check(void **state)
{
	struct amrma_region_table *t = table("t_ok", 4);
	struct amrma_region *r, *ref, *ref2;
	struct amrma_region_stats st;
	uint64_t key;
	void *p;

	(void)state;
	assert_int_equal(amrma_region_register(t, buf_a, sizeof(buf_a),
					       AMRMA_REGION_READ | AMRMA_REGION_WRITE,
					       &r, &key), 0);
	assert_true(key != 0);
	assert_true(amrma_region_key(r) == key);
	assert_ptr_equal(amrma_region_addr(r), buf_a);
	assert_int_equal(amrma_region_len(r), sizeof(buf_a));
	assert_int_equal(amrma_region_perm(r), AMRMA_REGION_READ | AMRMA_REGION_WRITE);

	/* Whole region, read. */
	assert_int_equal(amrma_region_check(t, key, 0, sizeof(buf_a), AMRMA_REGION_READ,
					    &p, &ref), 0);
	assert_ptr_equal(p, buf_a);
	assert_ptr_equal(ref, r);
	/* A sub-range, write, with a second concurrent reference. */
	assert_int_equal(amrma_region_check(t, key, 100, 10, AMRMA_REGION_WRITE, &p, &ref2), 0);
	assert_ptr_equal(p, buf_a + 100);
	/* Last byte; read and write together. */
	assert_int_equal(amrma_region_validate(t, ref2, sizeof(buf_a) - 1, 1,
					       AMRMA_REGION_READ | AMRMA_REGION_WRITE, &p), 0);
	assert_ptr_equal(p, buf_a + sizeof(buf_a) - 1);
	amrma_region_put(t, ref);
	amrma_region_put(t, ref2);

	/* get/put without range check. */
	ref = amrma_region_get(t, key);
	assert_ptr_equal(ref, r);
	amrma_region_put(t, ref);
	amrma_region_put(t, NULL);

	amrma_region_stats_get(t, &st);
	assert_int_equal(st.lookups, 3);
	assert_int_equal(st.bad_key, 0);
	assert_int_equal(st.registered, 1);
	assert_int_equal(st.descriptors, 1);
	assert_int_equal(amrma_region_deregister(t, r, NULL, NULL), 0);
	assert_int_equal(amrma_region_table_free(t), 0);
}

static void
test_register_invalid(void **state)
{
	struct amrma_region_table *t = table("t_reginv", 4);
	struct amrma_region *r;
	uint64_t key;

	(void)state;
	assert_int_equal(amrma_region_register(t, NULL, 10, AMRMA_REGION_READ, &r, &key),
			 -EINVAL);
	assert_int_equal(amrma_region_register(t, buf_a, 0, AMRMA_REGION_READ, &r, &key),
			 -EINVAL);
	assert_int_equal(amrma_region_register(t, buf_a, 10, 0, &r, &key), -EINVAL);
	assert_int_equal(amrma_region_register(t, buf_a, 10, 1u << 5, &r, &key), -EINVAL);
	/* addr + len wraps the address space. */
	assert_int_equal(amrma_region_register(t, (void *)(UINTPTR_MAX - 10), 100,
					       AMRMA_REGION_READ, &r, &key), -EINVAL);
	assert_int_equal(amrma_region_register(t, buf_a, 10, AMRMA_REGION_READ, NULL, &key),
			 -EINVAL);
	assert_int_equal(amrma_region_deregister(t, NULL, NULL, NULL), -EINVAL);
	/* A pointer that is not one of the table's descriptors. */
	assert_int_equal(amrma_region_deregister(t, (struct amrma_region *)buf_a, NULL, NULL),
			 -EINVAL);
	assert_int_equal(amrma_region_table_free(t), 0);
}

static void
test_bad_key(void **state)
{
	struct amrma_region_table *t = table("t_badkey", 4);
	struct amrma_region *r, *ref = NULL;
	struct amrma_region_stats st;
	uint64_t key;
	void *p = NULL;

	(void)state;
	assert_int_equal(amrma_region_register(t, buf_a, sizeof(buf_a), AMRMA_REGION_READ,
					       &r, &key), 0);
	assert_int_equal(amrma_region_check(t, key ^ 1, 0, 1, AMRMA_REGION_READ, &p, &ref),
			 -ENOKEY);
	assert_int_equal(amrma_region_check(t, 0, 0, 1, AMRMA_REGION_READ, &p, &ref), -ENOKEY);
	assert_int_equal(amrma_region_check(t, ~key, 0, 1, AMRMA_REGION_READ, &p, &ref),
			 -ENOKEY);
	assert_null(amrma_region_get(t, key + 1));
	assert_int_equal(rte_errno, ENOKEY);
	/* Failures leave the outputs alone and take no reference. */
	assert_null(p);
	assert_null(ref);
	amrma_region_stats_get(t, &st);
	assert_int_equal(st.lookups, 4);
	assert_int_equal(st.bad_key, 4);
	assert_int_equal(amrma_region_table_free(t), 0);	/* deregisters r */
}

static void
test_range(void **state)
{
	struct amrma_region_table *t = table("t_range", 4);
	const uint64_t len = sizeof(buf_b);
	struct amrma_region *r, *ref;
	struct amrma_region_stats st;
	uint64_t key;
	void *p;

	(void)state;
	assert_int_equal(amrma_region_register(t, buf_b, len, AMRMA_REGION_READ, &r, &key), 0);
	/* Out of range. */
	assert_int_equal(amrma_region_check(t, key, 0, len + 1, AMRMA_REGION_READ, &p, &ref),
			 -ERANGE);
	assert_int_equal(amrma_region_check(t, key, len - 5, 10, AMRMA_REGION_READ, &p, &ref),
			 -ERANGE);
	assert_int_equal(amrma_region_check(t, key, len, 1, AMRMA_REGION_READ, &p, &ref),
			 -ERANGE);
	assert_int_equal(amrma_region_check(t, key, len + 1, 0, AMRMA_REGION_READ, &p, &ref),
			 -ERANGE);
	assert_int_equal(amrma_region_check(t, key, 1ull << 40, 1, AMRMA_REGION_READ, &p, &ref),
			 -ERANGE);

	/* Zero-length: valid anywhere inside or at the end, proves key and permission. */
	assert_int_equal(amrma_region_check(t, key, 0, 0, AMRMA_REGION_READ, &p, &ref), 0);
	assert_ptr_equal(p, buf_b);
	amrma_region_put(t, ref);
	assert_int_equal(amrma_region_check(t, key, len, 0, AMRMA_REGION_READ, &p, &ref), 0);
	assert_ptr_equal(p, buf_b + len);
	amrma_region_put(t, ref);
	assert_int_equal(amrma_region_check(t, key, 0, 0, AMRMA_REGION_WRITE, &p, &ref),
			 -EACCES);

	/* Wrap-around: offset + len overflows 64 bits; must not look "small". */
	assert_int_equal(amrma_region_check(t, key, UINT64_MAX - 5, 10, AMRMA_REGION_READ,
					    &p, &ref), -EOVERFLOW);
	assert_int_equal(amrma_region_check(t, key, 16, UINT64_MAX - 8, AMRMA_REGION_READ,
					    &p, &ref), -EOVERFLOW);
	assert_int_equal(amrma_region_check(t, key, UINT64_MAX, 1, AMRMA_REGION_READ, &p, &ref),
			 -EOVERFLOW);
	assert_int_equal(amrma_region_check(t, key, 1, UINT64_MAX, AMRMA_REGION_READ, &p, &ref),
			 -EOVERFLOW);
	/* No wrap, but far outside. */
	assert_int_equal(amrma_region_check(t, key, UINT64_MAX, 0, AMRMA_REGION_READ, &p, &ref),
			 -ERANGE);
	assert_int_equal(amrma_region_check(t, key, 0, UINT64_MAX, AMRMA_REGION_READ, &p, &ref),
			 -ERANGE);

	amrma_region_stats_get(t, &st);
	assert_int_equal(st.lookups, 14);
	assert_int_equal(st.out_of_range, 7);
	assert_int_equal(st.wrap, 4);
	assert_int_equal(st.perm_denied, 1);
	assert_int_equal(st.bad_key, 0);
	assert_int_equal(st.descriptors, 1);	/* no reference leaked by failures */
	assert_int_equal(amrma_region_table_free(t), 0);
}

static void
test_permission(void **state)
{
	struct amrma_region_table *t = table("t_perm", 4);
	struct amrma_region *ro, *wo, *ref;
	struct amrma_region_stats st;
	uint64_t kro, kwo;
	void *p;

	(void)state;
	assert_int_equal(amrma_region_register(t, buf_a, 64, AMRMA_REGION_READ, &ro, &kro), 0);
	assert_int_equal(amrma_region_register(t, buf_a + 64, 64, AMRMA_REGION_WRITE, &wo,
					       &kwo), 0);
	assert_true(kro != kwo);
	assert_int_equal(amrma_region_check(t, kro, 0, 8, AMRMA_REGION_WRITE, &p, &ref),
			 -EACCES);
	assert_int_equal(amrma_region_check(t, kro, 0, 8,
					    AMRMA_REGION_READ | AMRMA_REGION_WRITE, &p, &ref),
			 -EACCES);
	assert_int_equal(amrma_region_check(t, kwo, 0, 8, AMRMA_REGION_READ, &p, &ref),
			 -EACCES);
	assert_int_equal(amrma_region_check(t, kro, 0, 8, 0, &p, &ref), -EINVAL);
	assert_int_equal(amrma_region_check(t, kro, 0, 8, 1u << 7, &p, &ref), -EINVAL);
	assert_int_equal(amrma_region_check(t, kro, 0, 8, AMRMA_REGION_READ, &p, &ref), 0);
	assert_ptr_equal(p, buf_a);
	amrma_region_put(t, ref);
	assert_int_equal(amrma_region_check(t, kwo, 8, 8, AMRMA_REGION_WRITE, &p, &ref), 0);
	assert_ptr_equal(p, buf_a + 72);
	amrma_region_put(t, ref);
	amrma_region_stats_get(t, &st);
	assert_int_equal(st.perm_denied, 3);
	assert_int_equal(st.descriptors, 2);
	assert_int_equal(amrma_region_table_free(t), 0);
}

struct release_rec {
	int calls;
	void *addr;
	size_t len;
};

static void
release_cb(void *arg, void *addr, size_t len)
{
	struct release_rec *rr = arg;

	__atomic_fetch_add(&rr->calls, 1, __ATOMIC_RELAXED);
	rr->addr = addr;
	rr->len = len;
}

/* Deregistration rejects the key at once; a held reference keeps the descriptor alive. */
static void
test_deregister_held(void **state)
{
	struct amrma_region_table *t = table("t_dereg", 4);
	struct amrma_region *r, *ref, *ref2, *tmp;
	struct amrma_region_stats st;
	struct release_rec rr = { 0 };
	uint64_t key;
	void *p;

	(void)state;
	assert_int_equal(amrma_region_register(t, buf_b, sizeof(buf_b),
					       AMRMA_REGION_READ | AMRMA_REGION_WRITE,
					       &r, &key), 0);
	/* An in-flight operation holds a reference. */
	assert_int_equal(amrma_region_check(t, key, 0, 16, AMRMA_REGION_WRITE, &p, &ref), 0);
	ref2 = amrma_region_get(t, key);
	assert_non_null(ref2);
	assert_int_equal(amrma_region_table_free(t), -EBUSY);

	assert_int_equal(amrma_region_deregister(t, r, release_cb, &rr), 1);
	assert_int_equal(rr.calls, 0);
	/* New lookups fail immediately. */
	assert_int_equal(amrma_region_check(t, key, 0, 16, AMRMA_REGION_WRITE, &p, &tmp),
			 -ENOKEY);
	assert_null(amrma_region_get(t, key));
	assert_int_equal(amrma_region_deregister(t, r, release_cb, &rr), -ENOENT);
	/* The descriptor lives on for the holders: its fields and later packets' checks. */
	amrma_region_stats_get(t, &st);
	assert_int_equal(st.registered, 0);
	assert_int_equal(st.descriptors, 1);
	assert_ptr_equal(amrma_region_addr(ref), buf_b);
	assert_int_equal(amrma_region_len(ref), sizeof(buf_b));
	assert_true(amrma_region_key(ref) == key);
	assert_int_equal(amrma_region_validate(t, ref, 4096, 16, AMRMA_REGION_WRITE, &p), 0);
	assert_ptr_equal(p, buf_b + 4096);
	assert_int_equal(amrma_region_table_free(t), -EBUSY);

	amrma_region_put(t, ref);
	assert_int_equal(rr.calls, 0);
	amrma_region_stats_get(t, &st);
	assert_int_equal(st.descriptors, 1);
	amrma_region_put(t, ref2);
	/* Last put: released exactly once, with the region's memory. */
	assert_int_equal(rr.calls, 1);
	assert_ptr_equal(rr.addr, buf_b);
	assert_int_equal(rr.len, sizeof(buf_b));
	amrma_region_stats_get(t, &st);
	assert_int_equal(st.descriptors, 0);
	/* The key stays dead even after its descriptor is recycled. */
	assert_int_equal(amrma_region_register(t, buf_a, sizeof(buf_a), AMRMA_REGION_READ, &r,
					       NULL), 0);
	assert_true(amrma_region_key(r) != key);
	assert_null(amrma_region_get(t, key));

	/* No holder: released inside deregister. */
	assert_int_equal(amrma_region_deregister(t, r, release_cb, &rr), 0);
	assert_int_equal(rr.calls, 2);
	assert_ptr_equal(rr.addr, buf_a);
	assert_int_equal(amrma_region_table_free(t), 0);
}

/* Capacity is fixed; a deregistered-but-held region still occupies its descriptor. */
static void
test_capacity(void **state)
{
	enum { CAP = 7 };	/* not a power of 2: the free ring must round up */
	struct amrma_region_table *t = table("t_cap", CAP);
	struct amrma_region *r[CAP], *extra, *ref;
	uint64_t keys[CAP];
	void *p;
	int i;

	(void)state;
	for (i = 0; i < CAP; i++)
		assert_int_equal(amrma_region_register(t, buf_a + i * 8, 8, AMRMA_REGION_READ,
						       &r[i], &keys[i]), 0);
	assert_int_equal(amrma_region_register(t, buf_b, 8, AMRMA_REGION_READ, &extra, NULL),
			 -ENOSPC);
	assert_int_equal(amrma_region_check(t, keys[3], 0, 8, AMRMA_REGION_READ, &p, &ref), 0);
	assert_int_equal(amrma_region_deregister(t, r[3], NULL, NULL), 1);
	assert_int_equal(amrma_region_register(t, buf_b, 8, AMRMA_REGION_READ, &extra, NULL),
			 -ENOSPC);
	amrma_region_put(t, ref);
	assert_int_equal(amrma_region_register(t, buf_b, 8, AMRMA_REGION_READ, &extra, NULL), 0);
	/* All the others are still there. */
	for (i = 0; i < CAP; i++) {
		if (i == 3)
			continue;
		assert_int_equal(amrma_region_check(t, keys[i], 0, 8, AMRMA_REGION_READ, &p,
						    &ref), 0);
		assert_ptr_equal(p, buf_a + i * 8);
		amrma_region_put(t, ref);
	}
	assert_int_equal(amrma_region_table_free(t), 0);
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Keys are non-zero and distinct across many registrations (and re-registrations). */
static void
test_keys_distinct(void **state)
{
	enum { CAP = 512, ROUNDS = 4 };
	struct amrma_region_table *t = table("t_keys", CAP);
	static struct amrma_region *r[CAP];
	static uint64_t keys[CAP * ROUNDS];
	unsigned int bits_or = 0, i, j;
	uint64_t all_or = 0, all_and = UINT64_MAX;

	(void)state;
	for (j = 0; j < ROUNDS; j++) {
		for (i = 0; i < CAP; i++)
			assert_int_equal(amrma_region_register(t, buf_a + i, 1, AMRMA_REGION_READ,
							       &r[i], &keys[j * CAP + i]), 0);
		for (i = 0; i < CAP; i++)
			assert_int_equal(amrma_region_deregister(t, r[i], NULL, NULL), 0);
	}
	qsort(keys, CAP * ROUNDS, sizeof(keys[0]), cmp_u64);
	assert_true(keys[0] != 0);
	for (i = 1; i < CAP * ROUNDS; i++)
		assert_true(keys[i] != keys[i - 1]);
	/* Crude randomness sanity: every bit position is both set and clear somewhere. */
	for (i = 0; i < CAP * ROUNDS; i++) {
		all_or |= keys[i];
		all_and &= keys[i];
	}
	bits_or = __builtin_popcountll(all_or) + __builtin_popcountll(~all_and);
	assert_int_equal(bits_or, 128);
	assert_int_equal(amrma_region_table_free(t), 0);
}

/* With an RCU QSBR variable, deleted key slots are reclaimed after grace periods. */
static void
test_rcu_mode(void **state)
{
	struct amrma_region_table *t;
	struct amrma_region *r, *ref;
	struct rte_rcu_qsbr *v;
	uint64_t key, old = 0;
	void *p;
	int i;

	(void)state;
	t = table_rcu("t_rcu", 4, &v);
	/* Far more cycles than hash slots: reclamation must happen. */
	for (i = 0; i < 200; i++) {
		assert_int_equal(amrma_region_register(t, buf_a, 64, AMRMA_REGION_WRITE, &r,
						       &key), 0);
		assert_int_equal(amrma_region_check(t, key, 0, 64, AMRMA_REGION_WRITE, &p, &ref),
				 0);
		amrma_region_put(t, ref);
		if (old != 0)
			assert_null(amrma_region_get(t, old));
		assert_int_equal(amrma_region_deregister(t, r, NULL, NULL), 0);
		assert_null(amrma_region_get(t, key));
		old = key;
	}
	assert_int_equal(amrma_region_table_free(t), 0);
	rte_free(v);
}

/*
 * A reader thread checks keys while this thread registers and deregisters: every success
 * must hand back the region registered under that key, and every release must happen
 * exactly once. Run without RCU (key slots recycled at once) and with an RCU QSBR variable
 * the reader reports quiescent states on (what a multi-lcore host should do).
 */
#define NSLOT 4
static struct amrma_region_table *race_t;
static struct rte_rcu_qsbr *race_rcu;
static uint64_t race_keys[NSLOT];	/* atomic: currently or recently valid keys */
static uint64_t race_dead[NSLOT];	/* atomic: keys whose deregister has returned */
static bool race_stop;
static bool race_ready;		/* reader is online: the race can start */
static char race_buf[NSLOT][256];
static int race_released;

static void
race_release(void *arg, void *addr, size_t len)
{
	(void)arg;
	(void)addr;
	(void)len;
	__atomic_fetch_add(&race_released, 1, __ATOMIC_RELAXED);
}

static void *
race_reader(void *arg)
{
	unsigned long ok = 0, i = 0;
	struct amrma_region *ref;
	cpu_set_t all;
	void *p;

	(void)arg;
	/* EAL pinned the main thread (-l 0) and we inherited that: run anywhere instead. */
	CPU_ZERO(&all);
	for (i = 0; i < (unsigned long)sysconf(_SC_NPROCESSORS_ONLN) && i < CPU_SETSIZE; i++)
		CPU_SET(i, &all);
	pthread_setaffinity_np(pthread_self(), sizeof(all), &all);	/* best effort */
	i = 0;
	if (race_rcu != NULL) {
		rte_rcu_qsbr_thread_register(race_rcu, 0);
		rte_rcu_qsbr_thread_online(race_rcu, 0);
	}
	__atomic_store_n(&race_ready, true, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&race_stop, __ATOMIC_ACQUIRE)) {
		unsigned int s = i++ % NSLOT;
		uint64_t key = __atomic_load_n(&race_keys[s], __ATOMIC_ACQUIRE);

		uint64_t dead = __atomic_load_n(&race_dead[s], __ATOMIC_ACQUIRE);

		/* Deregistration returned before we read `dead`: the key must be refused. */
		if (dead != 0 &&
		    amrma_region_check(race_t, dead, 8, 16, AMRMA_REGION_READ, &p, &ref) != -ENOKEY)
			abort();
		if (amrma_region_check(race_t, key, 8, 16, AMRMA_REGION_READ, &p, &ref) == 0) {
			/* It is this key's region: key recorded, pointer inside its buffer. */
			if (amrma_region_key(ref) != key ||
			    (char *)p != (char *)amrma_region_addr(ref) + 8 ||
			    amrma_region_len(ref) != sizeof(race_buf[0]))
				abort();
			ok++;
			amrma_region_put(race_t, ref);
		}
		if (race_rcu != NULL)
			rte_rcu_qsbr_quiescent(race_rcu, 0);
	}
	if (race_rcu != NULL) {
		rte_rcu_qsbr_thread_offline(race_rcu, 0);
		rte_rcu_qsbr_thread_unregister(race_rcu, 0);
	}
	return (void *)ok;
}

static void
run_race(const char *name, bool rcu)
{
	struct amrma_region *r[NSLOT];
	struct amrma_region_stats st;
	pthread_t th;
	void *ok;
	int i, s, n = 0, ret, rounds;
	unsigned long waits = 0;

	race_rcu = NULL;
	race_t = table_rcu(name, NSLOT * 2, rcu ? &race_rcu : NULL);
	race_stop = false;
	race_ready = false;
	race_released = 0;
	memset(race_dead, 0, sizeof(race_dead));
	for (s = 0; s < NSLOT; s++) {
		assert_int_equal(amrma_region_register(race_t, race_buf[s], sizeof(race_buf[s]),
						       AMRMA_REGION_READ, &r[s], &race_keys[s]), 0);
		n++;
	}
	assert_int_equal(pthread_create(&th, NULL, race_reader, NULL), 0);
	while (!__atomic_load_n(&race_ready, __ATOMIC_ACQUIRE))
		usleep(100);
	/* Fewer rounds with RCU: each may wait for the reader to be scheduled. Under
	 * valgrind, which runs one thread at a time, a wait can last the reader's whole
	 * time slice (a run with another process busy on the CPU took 16 minutes). */
	rounds = rcu ? 5000 : 20000;
	if (getenv("AMRMA_UNDER_VALGRIND") != NULL)
		rounds /= 10;
	for (i = 0; i < rounds; i++) {
		uint64_t key;

		s = i % NSLOT;
		assert_true(amrma_region_deregister(race_t, r[s], race_release, NULL) >= 0);
		__atomic_store_n(&race_dead[s], race_keys[s], __ATOMIC_RELEASE);
		/* With RCU, hash slots come back only once the reader reported quiescence. */
		while ((ret = amrma_region_register(race_t, race_buf[s], sizeof(race_buf[s]),
						    AMRMA_REGION_READ, &r[s], &key)) == -ENOSPC &&
		       rcu) {
			waits++;
			usleep(20);	/* let the reader run even on a busy machine */
		}
		assert_int_equal(ret, 0);
		n++;
		__atomic_store_n(&race_keys[s], key, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&race_stop, true, __ATOMIC_RELEASE);
	assert_int_equal(pthread_join(th, &ok), 0);
	for (s = 0; s < NSLOT; s++)
		assert_true(amrma_region_deregister(race_t, r[s], race_release, NULL) >= 0);
	assert_int_equal(__atomic_load_n(&race_released, __ATOMIC_RELAXED), n);
	amrma_region_stats_get(race_t, &st);
	assert_int_equal(st.descriptors, 0);
	assert_int_equal(st.registered, 0);
	assert_true(st.lookups >= (uint64_t)(uintptr_t)ok);
	print_message("%s: reader made %lu successful checks in %" PRIu64
		      " lookups; writer waited %lu times for a grace period\n", name,
		      (unsigned long)(uintptr_t)ok, st.lookups, waits);
	assert_int_equal(amrma_region_table_free(race_t), 0);
	rte_free(race_rcu);
	race_rcu = NULL;
}

static void
test_concurrent_readers(void **state)
{
	(void)state;
	run_race("t_race", false);
}

static void
test_concurrent_readers_rcu(void **state)
{
	(void)state;
	run_race("t_race_rcu", true);
}

static int
eal_setup(void **state)
{
	/*
	 * --no-huge implies legacy memory, which --in-memory refuses: --no-shconf keeps the
	 * run free of shared files instead. The pid in the prefix lets runs overlap.
	 */
	static char pfx[64];
	char *argv[] = {
		"test_region", "--no-huge", "--no-pci", "--no-shconf", "-m", "128",
		"--file-prefix", pfx, "--log-level=lib.eal:error", "-l", "0",
	};

	(void)state;
	snprintf(pfx, sizeof(pfx), "amrma_test_rma_region_%d", (int)getpid());
	if (rte_eal_init(RTE_DIM(argv), argv) < 0)
		return -1;
	eal_rundir_cleanup_at_exit();	/* EAL leaves /var/run/dpdk/<prefix> behind */
	return 0;
}

static int
eal_teardown(void **state)
{
	(void)state;
	rte_eal_cleanup();
	return 0;
}

/* Optional argv[1]: a cmocka test-name filter (e.g. "*rcu*"). */
int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_invalid),
		cmocka_unit_test(test_register_check),
		cmocka_unit_test(test_register_invalid),
		cmocka_unit_test(test_bad_key),
		cmocka_unit_test(test_range),
		cmocka_unit_test(test_permission),
		cmocka_unit_test(test_deregister_held),
		cmocka_unit_test(test_capacity),
		cmocka_unit_test(test_keys_distinct),
		cmocka_unit_test(test_rcu_mode),
		cmocka_unit_test(test_concurrent_readers),
		cmocka_unit_test(test_concurrent_readers_rcu),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests_name("rma_region", tests, eal_setup, eal_teardown);
}
