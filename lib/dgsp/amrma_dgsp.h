/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file amrma_dgsp.h
 * Datatypes, data gather/scatter programs (DGSP), the resumable data
 * gather/scatter machine (DGSM) and the redistribution machine (DGS-RM).
 *
 * Pure C, no DPDK. A datatype is built with MPI-like constructors, compiled
 * once into a DGSP (five instructions: COPY, MCOPY, GOSUB, ITERATE, CONTROL),
 * serialized into a portable byte string, and verified before use when read
 * from the wire. A DGSM walks the *packed stream* of a (buffer, count,
 * program) triple: byte X of the stream is the X-th data byte in typemap
 * order. It can start at any X in O(depth * log(width)) time.
 *
 * All functions return 0 (or a byte count) on success and a negative errno
 * value on failure unless documented otherwise.
 */
#ifndef AMRMA_DGSP_H
#define AMRMA_DGSP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Hard bound on DGSM call depth (stack frames); the verifier enforces it. */
#define AMRMA_DGSP_MAX_DEPTH 16
/** Bound on datatype nesting accepted by the constructors. */
#define AMRMA_DGSP_TYPE_MAX_DEPTH 64
/** Bound on any count/blocklength handed to a constructor. */
#define AMRMA_DGSP_MAX_COUNT (UINT64_C(1) << 40)
/** Serialized format version understood by this library. */
#define AMRMA_DGSP_VERSION_MAJOR 1
#define AMRMA_DGSP_VERSION_MINOR 0
/** Size of the fixed serialized header, in bytes. */
#define AMRMA_DGSP_HDR_LEN 40

/* ------------------------------------------------------------------ */
/* Datatypes                                                           */
/* ------------------------------------------------------------------ */

/** Opaque, reference-counted datatype. */
struct amrma_dgsp_type;

/** Array order for amrma_dgsp_type_subarray(). */
enum amrma_dgsp_order {
	AMRMA_DGSP_ORDER_C = 0,		/**< last dimension varies fastest */
	AMRMA_DGSP_ORDER_FORTRAN = 1,	/**< first dimension varies fastest */
};

/** MPI-style bounds of a datatype (all in bytes). */
struct amrma_dgsp_type_info {
	uint64_t size;		/**< data bytes in one element */
	int64_t lb;		/**< lower bound (honours resized markers) */
	int64_t extent;		/**< ub - lb, stride between elements */
	int64_t true_lb;	/**< lowest data byte offset */
	int64_t true_extent;	/**< highest data byte + 1 - true_lb */
	uint32_t depth;		/**< constructor nesting depth */
};

/** A basic (predefined-like) type: @p size contiguous bytes, lb 0, extent @p size. */
int amrma_dgsp_type_basic(size_t size, struct amrma_dgsp_type **out);
/** @p count consecutive copies of @p old. */
int amrma_dgsp_type_contiguous(uint64_t count, struct amrma_dgsp_type *old,
		struct amrma_dgsp_type **out);
/** @p count blocks of @p blocklen elements, block starts @p stride extents apart. */
int amrma_dgsp_type_vector(uint64_t count, uint64_t blocklen, int64_t stride,
		struct amrma_dgsp_type *old, struct amrma_dgsp_type **out);
/** As vector with @p stride in bytes. */
int amrma_dgsp_type_hvector(uint64_t count, uint64_t blocklen, int64_t stride,
		struct amrma_dgsp_type *old, struct amrma_dgsp_type **out);
/** Blocks of @p blocklens[i] elements at @p disps[i] extents of @p old. */
int amrma_dgsp_type_indexed(uint32_t count, const uint64_t *blocklens,
		const int64_t *disps, struct amrma_dgsp_type *old,
		struct amrma_dgsp_type **out);
/** As indexed with @p disps in bytes. */
int amrma_dgsp_type_hindexed(uint32_t count, const uint64_t *blocklens,
		const int64_t *disps, struct amrma_dgsp_type *old,
		struct amrma_dgsp_type **out);
/** Indexed with one block length for all blocks (displacements in extents). */
int amrma_dgsp_type_indexed_block(uint32_t count, uint64_t blocklen,
		const int64_t *disps, struct amrma_dgsp_type *old,
		struct amrma_dgsp_type **out);
/** Indexed with one block length for all blocks (displacements in bytes). */
int amrma_dgsp_type_hindexed_block(uint32_t count, uint64_t blocklen,
		const int64_t *disps, struct amrma_dgsp_type *old,
		struct amrma_dgsp_type **out);
/** General struct: block i is @p blocklens[i] of @p types[i] at byte @p disps[i]. */
int amrma_dgsp_type_struct(uint32_t count, const uint64_t *blocklens,
		const int64_t *disps, struct amrma_dgsp_type *const *types,
		struct amrma_dgsp_type **out);
/**
 * Subarray of an @p ndims array of @p old: lb 0, extent = whole array,
 * 1 <= subsizes[i], starts[i] + subsizes[i] <= sizes[i].
 */
int amrma_dgsp_type_subarray(uint32_t ndims, const uint64_t *sizes,
		const uint64_t *subsizes, const uint64_t *starts,
		enum amrma_dgsp_order order, struct amrma_dgsp_type *old,
		struct amrma_dgsp_type **out);
/** Same data, explicit lb and extent (extent must be >= 0). */
int amrma_dgsp_type_resized(struct amrma_dgsp_type *old, int64_t lb,
		int64_t extent, struct amrma_dgsp_type **out);
/** A new handle with the same typemap. */
int amrma_dgsp_type_dup(struct amrma_dgsp_type *old,
		struct amrma_dgsp_type **out);
/** Drop a reference; the type is freed with its cached program at zero. */
void amrma_dgsp_type_free(struct amrma_dgsp_type *t);
/** Read the MPI bounds of @p t. */
int amrma_dgsp_type_get_info(const struct amrma_dgsp_type *t,
		struct amrma_dgsp_type_info *info);
/** Compile @p t and cache the program with the type (idempotent). */
int amrma_dgsp_type_commit(struct amrma_dgsp_type *t);
/** The cached program of a committed type, or NULL. Owned by the type. */
const struct amrma_dgsp *amrma_dgsp_type_program(const struct amrma_dgsp_type *t);

/* ------------------------------------------------------------------ */
/* Programs                                                            */
/* ------------------------------------------------------------------ */

/** Opaque compiled/loaded program (immutable once built). */
struct amrma_dgsp;

/** DGSP opcodes (also the serialized opcode bytes). */
enum amrma_dgsp_op {
	AMRMA_DGSP_COPY = 1,	/**< off, len: one chunk */
	AMRMA_DGSP_MCOPY = 2,	/**< off, len, count, stride: count chunks */
	AMRMA_DGSP_GOSUB = 3,	/**< off, target: run a subroutine at base+off */
	AMRMA_DGSP_ITERATE = 4,	/**< count, stride: end of sub, run body count times */
	AMRMA_DGSP_CONTROL = 5,	/**< subop: RET ends a sub run once */
};

/** CONTROL sub-operations. */
enum amrma_dgsp_ctl {
	AMRMA_DGSP_CTL_RET = 0,
};

/** Why a program was rejected. */
enum amrma_dgsp_reason {
	AMRMA_DGSP_OK = 0,
	AMRMA_DGSP_E_TRUNCATED,		/**< input shorter than it claims */
	AMRMA_DGSP_E_MAGIC,		/**< not a DGSP */
	AMRMA_DGSP_E_VERSION,		/**< unsupported version */
	AMRMA_DGSP_E_FLAGS,		/**< unknown flag or nonzero reserved */
	AMRMA_DGSP_E_HEADER,		/**< bad header field (extent, counts) */
	AMRMA_DGSP_E_TOO_MANY_INSNS,	/**< instruction count over the limit */
	AMRMA_DGSP_E_OPCODE,		/**< unknown opcode */
	AMRMA_DGSP_E_VARINT,		/**< malformed or overlong operand */
	AMRMA_DGSP_E_CONTROL,		/**< unknown CONTROL sub-operation */
	AMRMA_DGSP_E_UNTERMINATED,	/**< last subroutine has no terminator */
	AMRMA_DGSP_E_TARGET,		/**< GOSUB target not a subroutine start */
	AMRMA_DGSP_E_RECURSION,		/**< GOSUB not strictly forward (cycles) */
	AMRMA_DGSP_E_ZERO_COUNT,	/**< MCOPY/ITERATE count of zero */
	AMRMA_DGSP_E_COUNT_LIMIT,	/**< count over limits.max_iter */
	AMRMA_DGSP_E_DEPTH_LIMIT,	/**< call depth over the limit */
	AMRMA_DGSP_E_WORK_LIMIT,	/**< total work over the limit */
	AMRMA_DGSP_E_OVERFLOW,		/**< arithmetic overflow in bounds */
	AMRMA_DGSP_E_SIZE_MISMATCH,	/**< header size != program size */
	AMRMA_DGSP_E_TRAILING,		/**< bytes after the program */
	AMRMA_DGSP_E_WINDOW,		/**< footprint outside the window */
	AMRMA_DGSP_E_NOMEM,		/**< allocation failed */
	AMRMA_DGSP_E_MAX,
};

/** Static name of a rejection reason. */
const char *amrma_dgsp_reason_str(enum amrma_dgsp_reason r);

/** Verifier limits for programs read from the wire. */
struct amrma_dgsp_limits {
	uint32_t max_insns;	/**< instructions in one program */
	uint32_t max_depth;	/**< call depth, <= AMRMA_DGSP_MAX_DEPTH */
	uint64_t max_iter;	/**< any MCOPY/ITERATE count */
	uint64_t max_work;	/**< chunks + calls for one use (count elements) */
	uint64_t max_bytes;	/**< packed bytes for one use */
	bool check_window;	/**< also check the footprint at load */
	uint64_t count;		/**< element count for the window/work check */
	int64_t win_lo;		/**< lowest byte offset allowed, from buffer */
	int64_t win_hi;		/**< one past the highest offset allowed */
};

/** Fill @p lim with conservative defaults (no window check). */
void amrma_dgsp_limits_default(struct amrma_dgsp_limits *lim);

/** Program description and granularity metadata (computed at build/load). */
struct amrma_dgsp_info {
	uint64_t size;		/**< bytes per run (one element) */
	int64_t lb;		/**< MPI lower bound */
	int64_t extent;		/**< element stride */
	int64_t true_lb;	/**< lowest byte touched by one element */
	int64_t true_ub;	/**< one past the highest byte of one element */
	uint64_t chunks;	/**< contiguous chunks per run */
	uint64_t avg_chunk;	/**< size / chunks (0 when empty) */
	uint64_t work;		/**< chunks + calls per run */
	uint32_t ninsns;	/**< instructions */
	uint32_t nsubs;		/**< subroutines, main included */
	uint32_t depth;		/**< max call depth */
	/**
	 * Chunk length when every chunk comes from an MCOPY of this one
	 * length (a regular layout), else 0. Two programs with the same
	 * nonzero value are copied pairwise by the direct DGS-RM.
	 */
	uint64_t mcopy_len;
};

/**
 * Compile @p t into a new program the caller frees. -E2BIG when the program would call
 * deeper than AMRMA_DGSP_MAX_DEPTH (types nest up to AMRMA_DGSP_TYPE_MAX_DEPTH), -EOVERFLOW
 * when a bound does not fit.
 */
int amrma_dgsp_compile(const struct amrma_dgsp_type *t, struct amrma_dgsp **out);
/** Free a program returned by compile or load. NULL is ignored. */
void amrma_dgsp_free(struct amrma_dgsp *p);
/** Describe @p p. */
void amrma_dgsp_get_info(const struct amrma_dgsp *p, struct amrma_dgsp_info *info);
/**
 * Serialize @p p into @p buf (may be NULL to ask the length).
 * @return bytes written/needed, -ENOSPC if @p len is too small.
 */
ssize_t amrma_dgsp_serialize(const struct amrma_dgsp *p, void *buf, size_t len);
/**
 * Decode and verify a serialized program. Nothing in @p buf is trusted.
 * @param why  reason when rejected (may be NULL)
 * @return 0, -EINVAL (rejected, see @p why) or -ENOMEM.
 */
int amrma_dgsp_load(const void *buf, size_t len,
		const struct amrma_dgsp_limits *lim, struct amrma_dgsp **out,
		enum amrma_dgsp_reason *why);
/**
 * Check one use of @p p: @p count elements, total work and bytes within
 * @p lim, and every byte touched within [@p win_lo, @p win_hi) relative to
 * the buffer address.
 * @return 0 or -EINVAL with @p why set.
 */
int amrma_dgsp_check_use(const struct amrma_dgsp *p, uint64_t count,
		int64_t win_lo, int64_t win_hi,
		const struct amrma_dgsp_limits *lim, enum amrma_dgsp_reason *why);
/** Build a program directly from decoded instructions (used by tests/tools). */
struct amrma_dgsp_insn {
	uint8_t op;		/**< enum amrma_dgsp_op */
	uint8_t ctl;		/**< CONTROL sub-operation */
	uint32_t target;	/**< GOSUB: instruction index of the callee */
	int64_t off;		/**< COPY/MCOPY/GOSUB displacement */
	uint64_t len;		/**< COPY/MCOPY chunk length */
	uint64_t count;		/**< MCOPY/ITERATE repetitions */
	int64_t stride;		/**< MCOPY/ITERATE stride */
};
/** Verify raw instructions (same checks as load) and build a program. */
int amrma_dgsp_from_insns(const struct amrma_dgsp_insn *ins, uint32_t n,
		int64_t lb, int64_t extent, const struct amrma_dgsp_limits *lim,
		struct amrma_dgsp **out, enum amrma_dgsp_reason *why);

/* ------------------------------------------------------------------ */
/* DGSM: resumable gather/scatter machine                              */
/* ------------------------------------------------------------------ */

/** One stack frame (a subroutine activation). */
struct amrma_dgsm_frame {
	uint32_t pc;		/**< current instruction */
	uint32_t sub;		/**< subroutine index */
	uint64_t iter;		/**< pass of the subroutine body */
	uint64_t base0;		/**< base of pass 0 */
	uint64_t base;		/**< base of the current pass */
};

/**
 * Machine state. Embed it anywhere; no allocation. Addresses are 64-bit
 * integers so a machine can walk another address space (DGS-RM master).
 */
struct amrma_dgsm {
	const struct amrma_dgsp *prog;
	uint64_t addr;		/**< buffer address */
	uint64_t count;		/**< elements */
	uint64_t total;		/**< packed bytes: count * size */
	uint64_t pos;		/**< packed offset of the next byte */
	uint64_t elem;		/**< current element */
	uint64_t k;		/**< MCOPY chunk index */
	uint64_t done;		/**< bytes consumed in the current chunk */
	int32_t depth;		/**< top frame index */
	/**
	 * Activations moving at least this many bytes write with
	 * non-temporal stores (as memcpy does for large copies), so a huge
	 * gather does not read the destination in first. Packet-sized
	 * activations never do. Set by init to AMRMA_DGSM_NT_DEFAULT.
	 */
	uint64_t nt_threshold;
	/** gathers of dense runs: source prefetched up to here (init and seek clear it) */
	uint64_t pf_cur;
	struct amrma_dgsm_frame f[AMRMA_DGSP_MAX_DEPTH];
};

/** Default amrma_dgsm::nt_threshold. */
#define AMRMA_DGSM_NT_DEFAULT (UINT64_C(8) << 20)

/** Start a machine over @p count elements of @p p at local buffer @p buf. */
int amrma_dgsm_init(struct amrma_dgsm *m, const struct amrma_dgsp *p,
		void *buf, uint64_t count);
/** As init with a raw (possibly foreign) address. */
int amrma_dgsm_init_addr(struct amrma_dgsm *m, const struct amrma_dgsp *p,
		uint64_t addr, uint64_t count);
/** Reposition at packed offset @p off (<= total) in O(depth*log width). */
int amrma_dgsm_seek(struct amrma_dgsm *m, uint64_t off);
/** Packed bytes left. */
static inline uint64_t
amrma_dgsm_left(const struct amrma_dgsm *m)
{
	return m->total - m->pos;
}
/** Gather up to @p n next bytes into @p dst. @return bytes copied. */
size_t amrma_dgsm_gather(struct amrma_dgsm *m, void *dst, size_t n);
/** Scatter up to @p n next bytes from @p src. @return bytes copied. */
size_t amrma_dgsm_scatter(struct amrma_dgsm *m, const void *src, size_t n);
/**
 * Gather the @p n bytes at packed offset @p off into @p dst (one packet).
 * Seeks only when the machine is not already at @p off.
 * @return bytes copied or -ERANGE if off > total.
 */
ssize_t amrma_dgsm_gather_at(struct amrma_dgsm *m, uint64_t off, void *dst,
		size_t n);
/** Scatter the @p n bytes that belong at packed offset @p off. */
ssize_t amrma_dgsm_scatter_at(struct amrma_dgsm *m, uint64_t off,
		const void *src, size_t n);
/**
 * Look at the current contiguous piece without consuming it.
 * @return 0, or -ENODATA at the end of the stream.
 */
int amrma_dgsm_peek(struct amrma_dgsm *m, uint64_t *addr, uint64_t *len);
/** Consume @p n bytes (n <= the length peek returned). */
void amrma_dgsm_advance(struct amrma_dgsm *m, uint64_t n);
/** Peek and consume at most @p max bytes. @return 0 or -ENODATA. */
int amrma_dgsm_next(struct amrma_dgsm *m, uint64_t max, uint64_t *addr,
		uint64_t *len);

/* ------------------------------------------------------------------ */
/* DGS-RM: redistribution, discontiguous to discontiguous              */
/* ------------------------------------------------------------------ */

/** Direction seen from the worker (local) side. */
enum amrma_dgsrm_mode {
	AMRMA_DGSRM_PULL = 0,	/**< master side is the source */
	AMRMA_DGSRM_PUSH = 1,	/**< master side is the destination */
};

/** One attached piece of the master's address space. */
struct amrma_dgsrm_seg {
	uint64_t lo;		/**< first master address covered */
	uint64_t hi;		/**< one past the last */
	int64_t reloc;		/**< local address = master address + reloc */
	void *cookie;		/**< backend state */
};

/**
 * Segment attach backend for the master machine. NULL ops mean the master
 * buffer is in this address space (relocation constant 0).
 */
struct amrma_dgsrm_attach_ops {
	/** Attach the segment holding master address @p maddr. */
	int (*attach)(void *arg, uint64_t maddr, struct amrma_dgsrm_seg *seg);
	/** Detach a segment attach() returned. */
	void (*detach)(void *arg, struct amrma_dgsrm_seg *seg);
	void *arg;
};

/** A (buffer, count, program) triple. */
struct amrma_dgsrm_side {
	const struct amrma_dgsp *prog;
	uint64_t addr;		/**< in the owner's address space */
	uint64_t count;
};

/** Staging-vs-direct heuristic thresholds (the seed's two tests). */
struct amrma_dgsrm_thresholds {
	uint64_t min_avg_chunk;	/**< master avg chunk <= this: stage */
	uint64_t min_bytes;	/**< transfer < this: stage */
};

/** Method chosen by the heuristic. */
enum amrma_dgsrm_method {
	AMRMA_DGSRM_STAGED = 0,
	AMRMA_DGSRM_DIRECT = 1,
};

/** Defaults measured with amrma-dgsp-bench (see docs/dgsp.md). */
void amrma_dgsrm_thresholds_default(struct amrma_dgsrm_thresholds *t);
/**
 * Choose staged or direct. Two regular programs with the same chunk length
 * (amrma_dgsp_info::mcopy_len; measured 1.2-1.7x faster direct at every
 * chunk size) go direct; otherwise the seed's rule: master
 * average chunk <= min_avg_chunk or nbytes < min_bytes stages. @p worker
 * may be NULL.
 */
enum amrma_dgsrm_method amrma_dgsrm_choose(const struct amrma_dgsp *master,
		const struct amrma_dgsp *worker, uint64_t nbytes,
		const struct amrma_dgsrm_thresholds *t);
/**
 * Direct copy of packed bytes [@p off, @p off + @p n) from master to worker
 * (pull) or worker to master (push), no intermediate buffer.
 * @return bytes moved or a negative errno.
 */
int64_t amrma_dgsrm_direct(const struct amrma_dgsrm_side *master,
		const struct amrma_dgsrm_side *worker, enum amrma_dgsrm_mode mode,
		const struct amrma_dgsrm_attach_ops *ops, uint64_t off, uint64_t n);
/** Same transfer through a contiguous staging buffer and two DGSMs. */
int64_t amrma_dgsrm_staged(const struct amrma_dgsrm_side *master,
		const struct amrma_dgsrm_side *worker, enum amrma_dgsrm_mode mode,
		const struct amrma_dgsrm_attach_ops *ops, void *stage,
		size_t stage_len, uint64_t off, uint64_t n);
/**
 * Heuristic dispatch: staged through @p stage when amrma_dgsrm_choose()
 * says so (or @p stage is NULL forces direct), direct otherwise.
 */
int64_t amrma_dgsrm_copy(const struct amrma_dgsrm_side *master,
		const struct amrma_dgsrm_side *worker, enum amrma_dgsrm_mode mode,
		const struct amrma_dgsrm_attach_ops *ops,
		const struct amrma_dgsrm_thresholds *t, void *stage,
		size_t stage_len, uint64_t off, uint64_t n);

#ifdef __cplusplus
}
#endif

#endif /* AMRMA_DGSP_H */
