/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef AMRMA_REGION_H
#define AMRMA_REGION_H

/**
 * @file
 * Memory regions and access keys: what a remote peer may read or write on this node.
 *
 * An application registers (address, length, permissions) and gets back a region handle and
 * a 64-bit access key, which it publishes to its peers. Every RMA request that arrives names
 * (key, offset, length) and is validated with amrma_region_check() before a byte moves.
 *
 * Remote addressing: requests carry an OFFSET into the region, not a virtual address.
 * Offsets never reveal this process's address layout to peers (ASLR stays useful), keep the
 * wire format independent of where the region was mapped (same key/offset works from any
 * process or after re-registration of a copy), and reduce validation to two overflow-free
 * comparisons against the region length instead of trusting an absolute pointer.
 *
 * Keys come from getrandom(2): 64 unguessable bits, never 0, unique within a table.
 *
 * Threading rules (single writer, many readers):
 * - amrma_region_table_create/free, amrma_region_register and amrma_region_deregister are
 *   called by ONE control thread at a time (the application thread); they are not
 *   thread-safe against each other.
 * - amrma_region_check, amrma_region_get, amrma_region_validate and amrma_region_put may run
 *   on any number of lcores concurrently with each other and with the writer: lookups are
 *   lock-free (rte_hash with RTE_HASH_EXTRA_FLAGS_RW_CONCURRENCY_LF).
 * - A successful check/get returns a HELD REFERENCE. While it is held the region's memory
 *   descriptor (address, length, permissions) stays valid even if the region is
 *   deregistered meanwhile; release it with amrma_region_put() when the operation is done.
 *   Deregistration invalidates the key for new lookups immediately; the descriptor is
 *   recycled only when its last reference is put. The registered memory itself belongs to
 *   the application: it may reuse or unmap it once the release callback given to
 *   amrma_region_deregister() ran (that callback runs on whichever thread put the last
 *   reference: possibly a context lcore, so keep it short and thread-safe).
 * - Descriptors live in an array allocated at table creation and never freed before the
 *   table, and every pointer obtained from the hash is re-validated under a reference
 *   (reference count > 0 and key unchanged), so a stale hash result can never grant access
 *   to another region.
 * - Hash key slots. rte_hash (lock-free mode) wants a deleted key's slot to be reused only
 *   once no reader can still be comparing against it. Two modes:
 *   - cfg.rcu set (RECOMMENDED when lookups run on other lcores than the control thread):
 *     rte_hash defers slot reuse until every reader registered on that QSBR variable has
 *     reported a quiescent state. Each lcore that looks keys up must then be registered
 *     and online on it and call rte_rcu_qsbr_quiescent() between polls (holding region
 *     references across that call is fine: references, not RCU, protect descriptors).
 *     If readers stall, registration can fail with -ENOSPC until they report.
 *   - cfg.rcu NULL: the slot is recycled at once. A reader preempted inside a lookup may
 *     then compare against a slot being rewritten; the outcome is a miss for a key that is
 *     being (de)registered concurrently or a descriptor that fails the re-check - never a
 *     wrong grant,
 *     never freed memory - but it is a data race on plain memory (ThreadSanitizer reports
 *     it). Fine for single-lcore use and tests; multi-lcore hosts should pass an RCU QSBR
 *     variable.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct rte_rcu_qsbr;

/** Remote peers may read (RMA get) from the region. */
#define AMRMA_REGION_READ	(1u << 0)
/** Remote peers may write (RMA put) to the region. */
#define AMRMA_REGION_WRITE	(1u << 1)
/** All valid permission bits. */
#define AMRMA_REGION_PERM_MASK	(AMRMA_REGION_READ | AMRMA_REGION_WRITE)

/** Per-node table of registered regions (opaque). */
struct amrma_region_table;

/** One registered region; also what a held reference points to (opaque). */
struct amrma_region;

/** Table creation parameters. */
struct amrma_region_table_config {
	const char *name;	/**< unique among rte_hash tables of the process */
	uint32_t capacity;	/**< maximum number of regions alive (registered or held) */
	int socket_id;		/**< NUMA node for all table memory (SOCKET_ID_ANY ok) */
	/**
	 * Optional RCU QSBR variable whose readers are the lcores calling lookups. NULL:
	 * key slots are recycled immediately (safe, see file comment).
	 */
	struct rte_rcu_qsbr *rcu;
};

/** Counters, summed over lcores on read. */
struct amrma_region_stats {
	uint64_t lookups;	/**< amrma_region_check/get calls */
	uint64_t bad_key;	/**< unknown or deregistered key */
	uint64_t out_of_range;	/**< offset/length beyond the region */
	uint64_t wrap;		/**< offset + length overflows 64 bits */
	uint64_t perm_denied;	/**< permission not granted by the region */
	uint32_t registered;	/**< regions currently registered (key valid) */
	uint32_t descriptors;	/**< descriptors in use: registered + deregistered-but-held */
};

/**
 * Create a region table. Its memory (descriptors, hash, free ring) is allocated once here,
 * on cfg->socket_id; the table never grows.
 *
 * @return the table, or NULL with rte_errno set (EINVAL, EEXIST, ENOMEM).
 */
struct amrma_region_table *
amrma_region_table_create(const struct amrma_region_table_config *cfg);

/**
 * Free a table. Regions still registered are deregistered first.
 *
 * @return 0, or -EBUSY (nothing freed) if some region still has held references.
 */
int amrma_region_table_free(struct amrma_region_table *t);

/**
 * Register [addr, addr + len) with permissions perm (AMRMA_REGION_READ|WRITE).
 * Control thread only.
 *
 * @param[out] region  the region handle, used for deregistration
 * @param[out] key     the access key to publish to peers (may be NULL: see amrma_region_key)
 * @return 0, -EINVAL (NULL addr, len 0, addr + len wraps, perm 0 or unknown bits),
 *   -ENOSPC (capacity descriptors in use), -EIO (no randomness available).
 */
int amrma_region_register(struct amrma_region_table *t, void *addr, size_t len,
			  uint32_t perm, struct amrma_region **region, uint64_t *key);

/** Called once when a deregistered region's last reference is gone (see deregister). */
typedef void (*amrma_region_release_cb_t)(void *arg, void *addr, size_t len);

/**
 * Deregister a region: its key is rejected by every lookup that starts after this returns.
 * Operations holding a reference keep the descriptor until they put it; when the last one
 * is put (or right here if none is held) `released` is called, after which the memory is
 * no longer touched through this region. The handle must not be used again by the caller
 * (the descriptor may be recycled). Control thread only.
 *
 * @param released  optional (NULL): called with (arg, addr, len) exactly once
 * @return 0 if released already ran (no operation held the region), 1 if it will run on
 *   the last amrma_region_put(), -EINVAL (NULL) or -ENOENT (already deregistered).
 */
int amrma_region_deregister(struct amrma_region_table *t, struct amrma_region *region,
			    amrma_region_release_cb_t released, void *arg);

/**
 * Validate an access and take a reference: key exists, perm is granted, offset + len does
 * not overflow and [offset, offset + len) lies within the region. len 0 is valid for any
 * offset <= region length (a zero-byte access still proves the key and the permission).
 * Any lcore, lock-free.
 *
 * @param[out] ptr  local address of byte `offset` of the region
 * @param[out] ref  held reference, to be released with amrma_region_put(); only set on
 *   success
 * @return 0, -ENOKEY (unknown or deregistered key), -EACCES (permission),
 *   -EOVERFLOW (offset + len wraps), -ERANGE (outside the region), -EINVAL (bad args).
 */
int amrma_region_check(struct amrma_region_table *t, uint64_t key, uint64_t offset,
		       uint64_t len, uint32_t perm, void **ptr, struct amrma_region **ref);

/**
 * Look a key up and take a reference, without range checks (e.g. an operation that will
 * validate each packet of a pipelined transfer with amrma_region_validate()).
 *
 * @return the held reference, or NULL with rte_errno = ENOKEY.
 */
struct amrma_region *amrma_region_get(struct amrma_region_table *t, uint64_t key);

/**
 * Validate (offset, len, perm) against a region the caller holds a reference on (no hash
 * lookup; same rules and error codes as amrma_region_check, and counted the same way, but
 * not as a lookup). Valid even after the region was deregistered.
 */
int amrma_region_validate(struct amrma_region_table *t, const struct amrma_region *ref,
			  uint64_t offset, uint64_t len, uint32_t perm, void **ptr);

/** Release a reference taken by amrma_region_check/get. Any lcore. */
void amrma_region_put(struct amrma_region_table *t, struct amrma_region *ref);

/**
 * Whether a held region is still registered. An operation holding a reference across
 * many accesses checks it per access, so that a deregistration stops the accesses that
 * follow it, as a lookup would.
 */
bool amrma_region_live(const struct amrma_region *r);

/** Access key a region was registered with (still readable after deregistration). */
uint64_t amrma_region_key(const struct amrma_region *r);
/** Local base address of a region. */
void *amrma_region_addr(const struct amrma_region *r);
/** Length in bytes of a region. */
size_t amrma_region_len(const struct amrma_region *r);
/** Permissions of a region. */
uint32_t amrma_region_perm(const struct amrma_region *r);

/** Read the counters (sum over lcores). */
void amrma_region_stats_get(const struct amrma_region_table *t, struct amrma_region_stats *s);

#ifdef __cplusplus
}
#endif

#endif /* AMRMA_REGION_H */
