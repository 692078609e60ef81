/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Region table: rte_hash (key -> descriptor) for lock-free lookups and a fixed descriptor
 * array (type-stable: never freed before the table). Free descriptors sit on a list private
 * to the control thread; any lcore that puts a last reference pushes the descriptor on a
 * lock-free "released" stack, which the control thread takes whole with one exchange when
 * its list runs dry. Push-only plus take-all has no ABA problem (no concurrent pops).
 *
 * Descriptor life cycle, refcnt being the only arbiter:
 *   free (refcnt 0, key 0) -> registered (refcnt 1 + holders, key K)
 *   -> deregistered (key 0, refcnt = holders) -> free when the last holder puts.
 * A reader takes a reference only if refcnt != 0 (CAS), then re-reads the key: if it is
 * not the one it looked up, the descriptor was deregistered or recycled in between and the
 * reference is dropped again. All of refcnt/key use seq_cst so that "deregister returned"
 * and "reader saw key K after its increment" cannot both hold.
 */

#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/random.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_hash_crc.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_rcu_qsbr.h>

#include "amrma_region.h"

RTE_LOG_REGISTER(amrma_region_logtype, lib.amrma.region, NOTICE);
#define REGION_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, amrma_region_logtype, "region: " fmt "\n", ##__VA_ARGS__)

struct amrma_region {
	uint64_t key;		/* live key; 0 when deregistered or free (atomic) */
	uint32_t refcnt;	/* registration + holders; 0 = free (atomic) */
	uint32_t perm;
	uint64_t orig_key;	/* key it was registered with, for amrma_region_key() */
	uintptr_t addr;
	uint64_t len;
	struct amrma_region *next_free;	/* free list / released stack link */
	amrma_region_release_cb_t released;
	void *released_arg;
} __rte_cache_aligned;

/* Written by one lcore each (the shared last slot: by non-EAL threads, atomically). */
struct region_lcore_stats {
	uint64_t lookups;
	uint64_t bad_key;
	uint64_t out_of_range;
	uint64_t wrap;
	uint64_t perm_denied;
} __rte_cache_aligned;

struct amrma_region_table {
	struct rte_hash *hash;
	struct amrma_region *desc;
	struct amrma_region *free_list;	/* control thread only */
	struct amrma_region *released;	/* atomic: pushed by any thread */
	uint32_t capacity;
	uint32_t registered;		/* written by the control thread only */
	uint32_t descriptors;		/* atomic: decremented by the last put */
	bool rcu;
	struct region_lcore_stats stats[RTE_MAX_LCORE + 1];
};

enum stat_id { ST_LOOKUP, ST_BAD_KEY, ST_RANGE, ST_WRAP, ST_PERM };

static inline void
stat_inc(struct amrma_region_table *t, enum stat_id id)
{
	unsigned int lcore = rte_lcore_id();
	struct region_lcore_stats *s;
	uint64_t *c;

	s = &t->stats[lcore < RTE_MAX_LCORE ? lcore : RTE_MAX_LCORE];
	switch (id) {
	case ST_LOOKUP: c = &s->lookups; break;
	case ST_BAD_KEY: c = &s->bad_key; break;
	case ST_RANGE: c = &s->out_of_range; break;
	case ST_WRAP: c = &s->wrap; break;
	default: c = &s->perm_denied; break;
	}
	if (lcore < RTE_MAX_LCORE) /* sole writer: no locked instruction needed */
		__atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + 1,
				 __ATOMIC_RELAXED);
	else
		__atomic_fetch_add(c, 1, __ATOMIC_RELAXED);
}

static int
random_key(uint64_t *key)
{
	ssize_t n;

	do {
		n = getrandom(key, sizeof(*key), 0);
	} while (n < 0 && errno == EINTR);
	return n == (ssize_t)sizeof(*key) ? 0 : -EIO;
}

struct amrma_region_table *
amrma_region_table_create(const struct amrma_region_table_config *cfg)
{
	struct amrma_region_table *t = NULL;
	uint32_t i;

	if (cfg == NULL || cfg->name == NULL || cfg->capacity == 0 ||
	    cfg->capacity > (1u << 28)) {
		rte_errno = EINVAL;
		return NULL;
	}
	if (rte_hash_find_existing(cfg->name) != NULL) {
		rte_errno = EEXIST;
		return NULL;
	}
	t = rte_zmalloc_socket("amrma_region_table", sizeof(*t), RTE_CACHE_LINE_SIZE,
			       cfg->socket_id);
	if (t == NULL)
		goto nomem;
	t->capacity = cfg->capacity;
	t->desc = rte_zmalloc_socket("amrma_region_desc",
				     sizeof(*t->desc) * cfg->capacity,
				     RTE_CACHE_LINE_SIZE, cfg->socket_id);
	if (t->desc == NULL)
		goto nomem;
	for (i = cfg->capacity; i-- > 0;) {
		t->desc[i].next_free = t->free_list;
		t->free_list = &t->desc[i];
	}

	/*
	 * Twice the capacity in hash entries: cuckoo insertion never fails below our own
	 * limit (which is what -ENOSPC means to callers), and with RCU the slots of deleted
	 * keys waiting for a grace period do not eat into it.
	 */
	struct rte_hash_parameters hp = {
		.name = cfg->name,
		.entries = RTE_MAX(cfg->capacity * 2, 16u),
		.key_len = sizeof(uint64_t),
		.hash_func = rte_hash_crc,
		.socket_id = cfg->socket_id,
		.extra_flag = RTE_HASH_EXTRA_FLAGS_RW_CONCURRENCY_LF,
	};
	t->hash = rte_hash_create(&hp);
	if (t->hash == NULL)
		goto fail;
	if (cfg->rcu != NULL) {
		struct rte_hash_rcu_config rc = {
			.v = cfg->rcu,
			.mode = RTE_HASH_QSBR_MODE_DQ,
		};
		if (rte_hash_rcu_qsbr_add(t->hash, &rc) != 0)
			goto fail;
		t->rcu = true;
	}
	return t;

nomem:
	rte_errno = ENOMEM;
fail:
	i = rte_errno;
	if (t != NULL) {
		rte_hash_free(t->hash);
		rte_free(t->desc);
		rte_free(t);
	}
	REGION_LOG(ERR, "cannot create table %s: %s", cfg->name, rte_strerror(i));
	rte_errno = i;
	return NULL;
}

/* Last reference gone (refcnt reached 0): recycle the descriptor. Any thread. */
static void
region_release(struct amrma_region_table *t, struct amrma_region *r)
{
	amrma_region_release_cb_t cb = r->released;
	void *arg = r->released_arg;
	void *addr = (void *)r->addr;
	size_t len = r->len;
	struct amrma_region *head;

	r->released = NULL;
	r->released_arg = NULL;
	__atomic_fetch_sub(&t->descriptors, 1, __ATOMIC_RELEASE);
	if (cb != NULL)
		cb(arg, addr, len);
	head = __atomic_load_n(&t->released, __ATOMIC_RELAXED);
	do {
		r->next_free = head;
	} while (!__atomic_compare_exchange_n(&t->released, &head, r, true,
					      __ATOMIC_RELEASE, __ATOMIC_RELAXED));
}

/* Control thread: take a free descriptor, refilling from the released stack. */
static struct amrma_region *
desc_alloc(struct amrma_region_table *t)
{
	struct amrma_region *r = t->free_list;

	if (r == NULL)
		r = __atomic_exchange_n(&t->released, NULL, __ATOMIC_ACQUIRE);
	if (r != NULL)
		t->free_list = r->next_free;
	return r;
}

static void
desc_free(struct amrma_region_table *t, struct amrma_region *r)
{
	r->next_free = t->free_list;
	t->free_list = r;
}

void
amrma_region_put(struct amrma_region_table *t, struct amrma_region *ref)
{
	if (ref == NULL)
		return;
	if (__atomic_sub_fetch(&ref->refcnt, 1, __ATOMIC_SEQ_CST) == 0)
		region_release(t, ref);
}

int
amrma_region_register(struct amrma_region_table *t, void *addr, size_t len,
		      uint32_t perm, struct amrma_region **region, uint64_t *key)
{
	struct amrma_region *r;
	uint64_t k;
	int ret;

	if (t == NULL || region == NULL || addr == NULL || len == 0 ||
	    (uintptr_t)addr + len - 1 < (uintptr_t)addr ||
	    perm == 0 || (perm & ~AMRMA_REGION_PERM_MASK) != 0)
		return -EINVAL;
	r = desc_alloc(t);
	if (r == NULL)
		return -ENOSPC;

	/* Never 0 (means "no key"), never a key already in the table. */
	do {
		ret = random_key(&k);
		if (ret != 0) {
			desc_free(t, r);
			return ret;
		}
	} while (k == 0 || rte_hash_lookup(t->hash, &k) >= 0);

	r->perm = perm;
	r->addr = (uintptr_t)addr;
	r->len = len;
	r->orig_key = k;
	r->released = NULL;
	r->released_arg = NULL;
	__atomic_store_n(&r->key, k, __ATOMIC_SEQ_CST);
	__atomic_fetch_add(&t->descriptors, 1, __ATOMIC_RELAXED);
	/* refcnt 0 -> 1 publishes the fields above to readers that raced to this slot. */
	__atomic_store_n(&r->refcnt, 1, __ATOMIC_SEQ_CST);

	ret = rte_hash_add_key_data(t->hash, &k, r);
	if (ret != 0) {
		__atomic_store_n(&r->key, 0, __ATOMIC_SEQ_CST);
		amrma_region_put(t, r);
		return ret;	/* -ENOSPC: RCU readers have not released enough slots yet */
	}
	__atomic_store_n(&t->registered, t->registered + 1, __ATOMIC_RELAXED);
	*region = r;
	if (key != NULL)
		*key = k;
	return 0;
}

int
amrma_region_deregister(struct amrma_region_table *t, struct amrma_region *r,
			amrma_region_release_cb_t released, void *arg)
{
	uint64_t k;
	int32_t pos;

	if (t == NULL || r == NULL || r < t->desc || r >= t->desc + t->capacity)
		return -EINVAL;
	k = __atomic_load_n(&r->key, __ATOMIC_SEQ_CST);
	if (k == 0)
		return -ENOENT;

	pos = rte_hash_del_key(t->hash, &k);
	/* New lookups miss from here; stale hash results fail the key re-check below. */
	__atomic_store_n(&r->key, 0, __ATOMIC_SEQ_CST);
	/*
	 * Without RCU the key slot is recycled at once: see the file comment of
	 * amrma_region.h for why a racing reader is still safe. With RCU, rte_hash_del_key
	 * already queued it for reclamation after a grace period.
	 */
	if (pos >= 0 && !t->rcu)
		rte_hash_free_key_with_position(t->hash, pos);
	__atomic_store_n(&t->registered, t->registered - 1, __ATOMIC_RELAXED);

	r->released = released;
	r->released_arg = arg;
	/* The seq_cst decrement publishes released/arg to whoever puts last. */
	if (__atomic_sub_fetch(&r->refcnt, 1, __ATOMIC_SEQ_CST) == 0) {
		region_release(t, r);
		return 0;
	}
	return 1;
}

/* Take a reference on a descriptor found under `key`, if it still is that region. */
static struct amrma_region *
region_tryget(struct amrma_region_table *t, struct amrma_region *r, uint64_t key)
{
	uint32_t n = __atomic_load_n(&r->refcnt, __ATOMIC_RELAXED);

	do {
		if (n == 0)
			return NULL;
	} while (!__atomic_compare_exchange_n(&r->refcnt, &n, n + 1, true,
					      __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
	if (__atomic_load_n(&r->key, __ATOMIC_SEQ_CST) != key) {
		amrma_region_put(t, r);
		return NULL;
	}
	return r;
}

struct amrma_region *
amrma_region_get(struct amrma_region_table *t, uint64_t key)
{
	struct amrma_region *r = NULL;
	void *data;

	if (t == NULL) {
		rte_errno = EINVAL;
		return NULL;
	}
	stat_inc(t, ST_LOOKUP);
	if (key != 0 && rte_hash_lookup_data(t->hash, &key, &data) >= 0)
		r = region_tryget(t, data, key);
	if (r == NULL) {
		stat_inc(t, ST_BAD_KEY);
		rte_errno = ENOKEY;
	}
	return r;
}

int
amrma_region_validate(struct amrma_region_table *t, const struct amrma_region *r,
		      uint64_t offset, uint64_t len, uint32_t perm, void **ptr)
{
	if (t == NULL || r == NULL || ptr == NULL || perm == 0 ||
	    (perm & ~AMRMA_REGION_PERM_MASK) != 0)
		return -EINVAL;
	if ((r->perm & perm) != perm) {
		stat_inc(t, ST_PERM);
		return -EACCES;
	}
	/* Written so that nothing can overflow: offset + len is never computed. */
	if (len > UINT64_MAX - offset) {
		stat_inc(t, ST_WRAP);
		return -EOVERFLOW;
	}
	if (offset > r->len || len > r->len - offset) {
		stat_inc(t, ST_RANGE);
		return -ERANGE;
	}
	*ptr = (void *)(r->addr + (uintptr_t)offset);
	return 0;
}

int
amrma_region_check(struct amrma_region_table *t, uint64_t key, uint64_t offset,
		   uint64_t len, uint32_t perm, void **ptr, struct amrma_region **ref)
{
	struct amrma_region *r;
	int ret;

	if (t == NULL || ptr == NULL || ref == NULL)
		return -EINVAL;
	r = amrma_region_get(t, key);
	if (r == NULL)
		return -ENOKEY;
	ret = amrma_region_validate(t, r, offset, len, perm, ptr);
	if (ret != 0) {
		amrma_region_put(t, r);
		return ret;
	}
	*ref = r;
	return 0;
}

int
amrma_region_table_free(struct amrma_region_table *t)
{
	uint32_t i;

	if (t == NULL)
		return 0;
	/* Every descriptor in use must be registered and held by nobody else. */
	if (__atomic_load_n(&t->descriptors, __ATOMIC_ACQUIRE) != t->registered)
		return -EBUSY;
	for (i = 0; i < t->capacity; i++)
		if (__atomic_load_n(&t->desc[i].key, __ATOMIC_RELAXED) != 0 &&
		    __atomic_load_n(&t->desc[i].refcnt, __ATOMIC_ACQUIRE) != 1)
			return -EBUSY;
	for (i = 0; i < t->capacity; i++)
		if (__atomic_load_n(&t->desc[i].key, __ATOMIC_RELAXED) != 0)
			amrma_region_deregister(t, &t->desc[i], NULL, NULL);
	rte_hash_free(t->hash);
	rte_free(t->desc);
	rte_free(t);
	return 0;
}

bool
amrma_region_live(const struct amrma_region *r)
{
	return __atomic_load_n(&r->key, __ATOMIC_ACQUIRE) != 0;
}

uint64_t
amrma_region_key(const struct amrma_region *r)
{
	return r->orig_key;
}

void *
amrma_region_addr(const struct amrma_region *r)
{
	return (void *)r->addr;
}

size_t
amrma_region_len(const struct amrma_region *r)
{
	return r->len;
}

uint32_t
amrma_region_perm(const struct amrma_region *r)
{
	return r->perm;
}

void
amrma_region_stats_get(const struct amrma_region_table *t, struct amrma_region_stats *s)
{
	unsigned int i;

	memset(s, 0, sizeof(*s));
	for (i = 0; i <= RTE_MAX_LCORE; i++) {
		const struct region_lcore_stats *l = &t->stats[i];

		s->lookups += __atomic_load_n(&l->lookups, __ATOMIC_RELAXED);
		s->bad_key += __atomic_load_n(&l->bad_key, __ATOMIC_RELAXED);
		s->out_of_range += __atomic_load_n(&l->out_of_range, __ATOMIC_RELAXED);
		s->wrap += __atomic_load_n(&l->wrap, __ATOMIC_RELAXED);
		s->perm_denied += __atomic_load_n(&l->perm_denied, __ATOMIC_RELAXED);
	}
	s->registered = __atomic_load_n(&t->registered, __ATOMIC_RELAXED);
	s->descriptors = __atomic_load_n(&t->descriptors, __ATOMIC_RELAXED);
}
