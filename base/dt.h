/*
 * Datatype engine: the memory layout of MPI datatypes, and pack / unpack of
 * any datatype, whole or in pieces, to host or (through a copy callback)
 * device memory.  Used by the pml, coll and the MPI_Type_* / MPI_Pack*
 * front end.  All displacements are in bytes, all counts are int64_t
 * (MPI_Count; MPI_Aint is the same type on our LP64 targets).
 *
 * DESCRIPTION.  A struct rail_dt is an immutable, refcounted tree that
 * mirrors the MPI constructors: predefined leaves (one per basic kind,
 * static, never freed; the MINLOC/MAXLOC pair kinds are static structs of
 * their two components, so MPI_DOUBLE_INT has size 12, extent 16 and 2 basic
 * elements) and contiguous / hvector / hindexed / hindexed_block / struct /
 * resized nodes that hold a reference on their children.  Each node caches
 * size, lb, extent, true_lb, true_extent, basic elements, alignment and
 * external32 size.  Bounds follow MPI-2+: resized sets sticky lb/ub markers
 * that propagate through every constructor (when a type map holds markers,
 * lb/ub come from the markers alone); without markers, lb/ub are the data
 * bounds, and a struct rounds its extent up to the largest alignment of its
 * members (the "epsilon" of the standard; other constructors keep the
 * padded extent of their old type).  hindexed and struct entries carry
 * prefix sums of packed bytes and basic elements, so get_elements locates a
 * byte offset in O(depth * log entries).
 *
 * PROGRAM.  rail_dt_commit compiles the tree into a program: a tree of
 * immutable nodes, each describing one instance of data relative to an
 * origin (node->disp is added first):
 *   BLOCK    len contiguous bytes
 *   STRIDED  count blocks of len bytes, stride apart       (leaf)
 *   BLKS     count blocks blk[i] = {disp, len}              (leaf)
 *   VEC      count instances of child, stride apart
 *   SEQ      count children sub[i] = {disp, child}          (struct-like)
 * The compiler normalises as it builds: empty parts vanish; count x BLOCK
 * of stride len is one BLOCK; a VEC of a BLOCK is a STRIDED; a VEC whose
 * stride tiles its child's repetitions (count x vector with extent =
 * count*stride) folds into one longer VEC or STRIDED; hindexed / struct
 * entries whose data is a few blocks are flattened into one BLKS with
 * adjacent blocks merged (type-map order is kept: only blocks that follow
 * each other in the type map and in memory merge), and a block list with
 * equal lengths and equal spacing becomes a STRIDED again (or a BLOCK);
 * SEQ entries that are the same child at equal spacing become a VEC; small
 * VECs of block lists are flattened.  Subtrees of committed children are
 * shared, not copied.  A program never nests deeper than RAIL_DT_MAX_DEPTH-1
 * (deeper parts are flattened to a BLKS), so a cursor needs no allocation.
 * Each node knows its packed size and each BLKS / SEQ entry the packed
 * bytes before it, so any packed offset is found in O(depth * log entries).
 * The inner loop of a STRIDED leaf moves fixed-size blocks (1..128 bytes)
 * with constant-size copies, so a vector of 64-byte blocks packs near memory
 * speed.
 *
 * CURSOR.  A rail_dt_cursor walks `count` elements of a committed type at
 * `buf` in type-map order: a stack of frames (node, origin address, index),
 * the top frame always a leaf, plus the byte offset inside the current
 * block.  pack / unpack / iov move forward from the current position and
 * may stop anywhere (inside an element, inside a basic element); seek
 * rebuilds the stack for any packed offset in O(depth * log entries).  The
 * cursor holds no pointer into itself, so it may be copied or moved while
 * idle, and it owns nothing (no fini).  When a leaf ends and its parent is a
 * VEC, only the leaf's origin moves (no pop/push), so arrays of small
 * structs stay cheap.  The user buffer is only ever reached through
 * addresses computed in uintptr_t (MPI_BOTTOM with absolute displacements
 * works).
 *
 * DEVICE MEMORY.  rail_dt_cursor_set_copy installs a copy function (the pml
 * passes an accel_copy wrapper for device buffers).  With it, the engine
 * never dereferences the user buffer: it exports (address, length) pieces,
 * merges pieces adjacent in memory, and calls copy(dst, src, len, ctx) once
 * per piece, for both the user side and the packed side.  A failing copy
 * stops the call: the cursor stays after the last byte copied and
 * rail_dt_cursor_status reports the callback's code.
 *
 * EXTERNAL32.  Sizes per the external32 table of MPI-4.1 (big-endian, IEEE;
 * long double and its complex are IEEE binary128, converted from the x87
 * 80-bit format; bool 1 byte; pair types as their two components; MPI_LONG
 * and MPI_UNSIGNED_LONG are 4 bytes: the front end gets them from
 * rail_dt_predefined_ext32(RAIL_TK_INT64 / UINT64, 4)).  Conversion walks
 * the type signature (run-length encoded) next to a native pack/unpack into
 * a small staging buffer, so it also works through a copy callback.
 *
 * Thread safety: a committed type is read-only and may be used by any number
 * of cursors and threads at once; retain / release are atomic; commit must
 * not race with other uses of the same type.
 */
#ifndef BASE_DT_H
#define BASE_DT_H

#include "base/rail.h"
#include "base/typekind.h"
#include <stdio.h>
#include <sys/uio.h>

/* ------------------------------------------------------------ description */

typedef enum rail_dt_combiner {
    RAIL_DT_PREDEFINED = 0,
    RAIL_DT_CONTIGUOUS,     /* count                                       */
    RAIL_DT_HVECTOR,        /* count, blocklen, stride                     */
    RAIL_DT_HINDEXED,       /* count, blocklens[], displs[]                */
    RAIL_DT_HINDEXED_BLOCK, /* count, blocklen, displs[]                   */
    RAIL_DT_STRUCT,         /* count, blocklens[], displs[], types[]       */
    RAIL_DT_RESIZED,        /* lb, extent                                  */
} rail_dt_combiner_t;

#define RAIL_DT_F_PREDEFINED 0x01 /* static: retain/release do nothing */
#define RAIL_DT_F_COMMITTED 0x02  /* has a program */
#define RAIL_DT_F_MARKERS 0x04    /* lb/ub come from sticky resized markers */
#define RAIL_DT_F_ONEBLOCK 0x08   /* committed; one element is one dense block */
#define RAIL_DT_F_CONTIG 0x10     /* ONEBLOCK and size == extent: n elements are
                                     n*size bytes at buf + true_lb */
#define RAIL_DT_F_NOEXT32 0x20    /* holds a kind without external32 form */

#define RAIL_DT_MAX_DEPTH 16 /* cursor frames; programs are at most this deep */

struct rail_dt_node;

/* Read-only for everyone but base/dt*.c; use the accessors below. */
struct rail_dt {
    int refcount;
    uint8_t combiner;        /* rail_dt_combiner_t */
    uint8_t flags;           /* RAIL_DT_F_* */
    uint16_t depth;          /* description depth: predefined 0 */
    rail_typekind_t tk;      /* predefined kind (pair kinds too), else NONE */
    int64_t size;            /* bytes of data in one element */
    int64_t lb, extent;      /* MPI_Type_get_extent */
    int64_t true_lb, true_extent;
    int64_t nelem;           /* basic elements in one element */
    int64_t ext32_size;      /* external32 bytes of one element */
    int64_t align;           /* largest alignment of the basic kinds */
    /* constructor arguments (see rail_dt_combiner_t) */
    int64_t count, blocklen, stride;
    const int64_t *blocklens, *displs;
    struct rail_dt *const *types;
    struct rail_dt *old;     /* all but struct and predefined */
    const int64_t *pre_bytes;  /* hindexed, struct: packed bytes before entry i */
    const int64_t *pre_elems;  /* struct: basic elements before entry i */
    /* program, after commit (NULL root: no data) */
    const struct rail_dt_node *root;
    void *arena;
};

/* Predefined type of a kind, or NULL (NONE, kinds this build lacks). */
struct rail_dt *rail_dt_predefined(rail_typekind_t tk);
/* Same kind with another external32 size: (INT64, 4) is MPI_LONG,
 * (UINT64, 4) MPI_UNSIGNED_LONG on LP64.  NULL for other combinations;
 * ext32_size equal to the default gives rail_dt_predefined(tk). */
struct rail_dt *rail_dt_predefined_ext32(rail_typekind_t tk, int64_t ext32_size);

struct rail_dt *rail_dt_retain(struct rail_dt *dt);
void rail_dt_release(struct rail_dt *dt); /* NULL allowed */

/* Constructors: MPI_ERR_COUNT for a negative count, MPI_ERR_ARG for a
 * negative block length or missing array, MPI_ERR_TYPE for a NULL type,
 * MPI_ERR_NO_MEM.  *out gets a new reference. */
int rail_dt_create_contiguous(int64_t count, struct rail_dt *old, struct rail_dt **out);
int rail_dt_create_hvector(int64_t count, int64_t blocklen, int64_t stride, struct rail_dt *old,
                           struct rail_dt **out);
int rail_dt_create_hindexed(int64_t count, const int64_t blocklens[], const int64_t displs[],
                            struct rail_dt *old, struct rail_dt **out);
int rail_dt_create_hindexed_block(int64_t count, int64_t blocklen, const int64_t displs[],
                                  struct rail_dt *old, struct rail_dt **out);
int rail_dt_create_struct(int64_t count, const int64_t blocklens[], const int64_t displs[],
                          struct rail_dt *const types[], struct rail_dt **out);
int rail_dt_create_resized(struct rail_dt *old, int64_t lb, int64_t extent, struct rail_dt **out);

/* Helpers in units of old's extent, built from the above. */
int rail_dt_create_vector(int64_t count, int64_t blocklen, int64_t stride, struct rail_dt *old,
                          struct rail_dt **out);
int rail_dt_create_indexed(int64_t count, const int64_t blocklens[], const int64_t displs[],
                           struct rail_dt *old, struct rail_dt **out);
int rail_dt_create_indexed_block(int64_t count, int64_t blocklen, const int64_t displs[],
                                 struct rail_dt *old, struct rail_dt **out);
/* MPI_Type_create_subarray; fortran_order: MPI_ORDER_FORTRAN. */
int rail_dt_create_subarray(int ndims, const int64_t sizes[], const int64_t subsizes[],
                            const int64_t starts[], bool fortran_order, struct rail_dt *old,
                            struct rail_dt **out);

/* Compile the program (idempotent). */
int rail_dt_commit(struct rail_dt *dt);

static inline int64_t rail_dt_size(const struct rail_dt *dt) { return dt->size; }
static inline int64_t rail_dt_lb(const struct rail_dt *dt) { return dt->lb; }
static inline int64_t rail_dt_extent(const struct rail_dt *dt) { return dt->extent; }
static inline int64_t rail_dt_true_lb(const struct rail_dt *dt) { return dt->true_lb; }
static inline int64_t rail_dt_true_extent(const struct rail_dt *dt) { return dt->true_extent; }
static inline int64_t rail_dt_nelem(const struct rail_dt *dt) { return dt->nelem; }
static inline bool rail_dt_is_committed(const struct rail_dt *dt)
{
    return dt->flags & RAIL_DT_F_COMMITTED;
}
/* count elements are count*size contiguous bytes (committed types only). */
static inline bool rail_dt_is_contig(const struct rail_dt *dt, int64_t count)
{
    return (dt->flags & RAIL_DT_F_CONTIG) || (count <= 1 && (dt->flags & RAIL_DT_F_ONEBLOCK));
}
/* Address of the data of count contiguous elements at buf, else NULL. */
static inline void *rail_dt_contig_ptr(const struct rail_dt *dt, int64_t count, const void *buf)
{
    if (!rail_dt_is_contig(dt, count))
        return NULL;
    return (void *)((uintptr_t)buf + (uintptr_t)dt->true_lb);
}

/* Basic elements wholly inside the first `bytes` bytes of packed data of
 * any number of elements (MPI_Get_elements); *exact (may be NULL) tells
 * whether `bytes` ends on a basic element boundary.  O(depth * log n). */
int64_t rail_dt_get_elements(const struct rail_dt *dt, int64_t bytes, bool *exact);

/* Print the description and the program (debugging, tests). */
void rail_dt_dump(const struct rail_dt *dt, FILE *out);

/* -------------------------------------------------------------- signature */

/* The type signature as runs of one predefined leaf (adjacent equal leaves
 * merged): a vector of a million ints is one run. */
struct rail_dt_sig_frame {
    const struct rail_dt *dt;     /* struct whose entries we walk, or NULL */
    const struct rail_dt *child;  /* type being repeated */
    int64_t idx, left;            /* struct entry, repetitions still to do */
};
struct rail_dt_sig_iter {
    int depth, cap;
    struct rail_dt_sig_frame *stack;
    const struct rail_dt *pend;   /* run read ahead while merging */
    int64_t pend_n;
    struct rail_dt_sig_frame inline_stack[8];
};

int rail_dt_sig_init(struct rail_dt_sig_iter *it, const struct rail_dt *dt, int64_t count);
void rail_dt_sig_fini(struct rail_dt_sig_iter *it);
/* Next run: *leaf is a predefined type (its ->tk the kind), *n >= 1. */
bool rail_dt_sig_next(struct rail_dt_sig_iter *it, const struct rail_dt **leaf, int64_t *n);
/* *match: the signature of (a, acount) is a prefix of (b, bcount) (equal
 * allowed), comparing kinds. */
int rail_dt_sig_match(const struct rail_dt *a, int64_t acount, const struct rail_dt *b,
                      int64_t bcount, bool *match);

/* ----------------------------------------------------------------- cursor */

enum rail_dt_op {
    RAIL_DT_OP_BLOCK, RAIL_DT_OP_STRIDED, RAIL_DT_OP_BLKS, RAIL_DT_OP_VEC, RAIL_DT_OP_SEQ,
};
struct rail_dt_blk {
    int64_t disp, len, prefix;    /* prefix: packed bytes before this block */
};
struct rail_dt_sub {
    int64_t disp, prefix;
    const struct rail_dt_node *child;
};
struct rail_dt_node {
    uint8_t op, depth;
    int64_t disp;                 /* added to the origin first */
    int64_t size;                 /* packed bytes of one instance */
    int64_t count;                /* blocks / instances / entries (BLOCK: 1) */
    int64_t stride;               /* STRIDED, VEC (BLOCK: len) */
    int64_t len;                  /* BLOCK, STRIDED: bytes per block */
    int64_t nblocks;              /* dense blocks in one instance (saturates) */
    union {
        const struct rail_dt_node *child;   /* VEC */
        const struct rail_dt_blk *blk;      /* BLKS */
        const struct rail_dt_sub *sub;      /* SEQ */
    };
};

typedef int (*rail_dt_copy_fn)(void *dst, const void *src, size_t len, void *ctx);

struct rail_dt_frame {
    const struct rail_dt_node *node;
    uintptr_t base;               /* origin of this instance, node->disp added */
    int64_t i;                    /* current child / block */
};

struct rail_dt_cursor {
    const struct rail_dt *dt;
    uintptr_t buf;
    int64_t count;
    size_t total;                 /* packed bytes of count elements */
    size_t pos;                   /* packed bytes already walked */
    int64_t off;                  /* bytes already walked in the current block */
    int depth;                    /* frames in use; 0 at the end */
    int status;                   /* first copy-callback failure */
    rail_dt_copy_fn copy;
    void *copy_ctx;
    struct rail_dt_node top;      /* count x dt, folded when it tiles */
    struct rail_dt_frame stack[RAIL_DT_MAX_DEPTH];
};

/* Position at packed offset 0 of count elements of a committed dt at buf
 * (buf is written by unpack).  MPI_ERR_TYPE (not committed), MPI_ERR_COUNT
 * (negative count). */
int rail_dt_cursor_init(struct rail_dt_cursor *cur, const struct rail_dt *dt, int64_t count,
                        const void *buf);
/* Reach the user buffer only through copy (NULL: plain memory access). */
void rail_dt_cursor_set_copy(struct rail_dt_cursor *cur, rail_dt_copy_fn copy, void *ctx);

/* Move up to max bytes; return the bytes moved (less only at the end, or
 * after a copy-callback failure). */
size_t rail_dt_pack(struct rail_dt_cursor *cur, void *dst, size_t max_bytes);
size_t rail_dt_unpack(struct rail_dt_cursor *cur, const void *src, size_t bytes);
/* Reposition at any packed offset (clamped to the total). */
void rail_dt_cursor_seek(struct rail_dt_cursor *cur, size_t packed_offset);
/* Export the next pieces of user memory as at most max_iov (address, length)
 * pairs, merging adjacent pieces, covering at most max_bytes; advance past
 * them and return the bytes covered (*n_iov: entries used). */
size_t rail_dt_cursor_iov(struct rail_dt_cursor *cur, struct iovec *iov, int max_iov,
                          size_t max_bytes, int *n_iov);

static inline size_t rail_dt_cursor_pos(const struct rail_dt_cursor *cur) { return cur->pos; }
static inline size_t rail_dt_cursor_total(const struct rail_dt_cursor *cur) { return cur->total; }
static inline size_t rail_dt_cursor_left(const struct rail_dt_cursor *cur)
{
    return cur->total - cur->pos;
}
static inline int rail_dt_cursor_status(const struct rail_dt_cursor *cur) { return cur->status; }

/* ---------------------------------------------------------- whole buffers */

/* Pack count elements into dst (dst_size bytes): MPI_ERR_TRUNCATE, with
 * what fits packed, when dst is too small.  *done may be NULL. */
int rail_dt_pack_all(const struct rail_dt *dt, int64_t count, const void *buf, void *dst,
                     size_t dst_size, size_t *done);
/* Unpack src_size bytes into count elements: fewer bytes than count*size is
 * fine (a short message); more gives MPI_ERR_TRUNCATE after unpacking what
 * fits. */
int rail_dt_unpack_all(const struct rail_dt *dt, int64_t count, void *buf, const void *src,
                       size_t src_size, size_t *done);
/* Type-to-type copy of min(src bytes, dst bytes) bytes; MPI_ERR_TRUNCATE
 * when the source holds more than the destination.  Contiguous on both
 * sides: one memcpy; otherwise no staging buffer. */
int rail_dt_copy(const struct rail_dt *dst_dt, int64_t dst_count, void *dst_buf,
                 const struct rail_dt *src_dt, int64_t src_count, const void *src_buf);

/* The same through a copy callback (for device memory on either side). */
int rail_dt_pack_all_cb(const struct rail_dt *dt, int64_t count, const void *buf, void *dst,
                        size_t dst_size, size_t *done, rail_dt_copy_fn copy, void *ctx);
int rail_dt_unpack_all_cb(const struct rail_dt *dt, int64_t count, void *buf, const void *src,
                          size_t src_size, size_t *done, rail_dt_copy_fn copy, void *ctx);
int rail_dt_copy_cb(const struct rail_dt *dst_dt, int64_t dst_count, void *dst_buf,
                    const struct rail_dt *src_dt, int64_t src_count, const void *src_buf,
                    rail_dt_copy_fn copy, void *ctx);

/* ------------------------------------------------------------- external32 */

/* Bytes of count elements in external32; MPI_ERR_TYPE when a kind has no
 * external32 form (e.g. float16 on a build without it). */
int rail_dt_external32_size(const struct rail_dt *dt, int64_t count, size_t *size);
/* MPI_Pack_external: write at out + *position (out_size bytes in all) and
 * advance *position; MPI_ERR_TRUNCATE (nothing written) when it does not
 * fit. */
int rail_dt_pack_external32(const struct rail_dt *dt, int64_t count, const void *buf, void *out,
                            size_t out_size, size_t *position);
/* MPI_Unpack_external: read from in + *position; MPI_ERR_TRUNCATE when
 * in_size - *position is shorter than the data. */
int rail_dt_unpack_external32(const struct rail_dt *dt, int64_t count, void *buf, const void *in,
                              size_t in_size, size_t *position);
int rail_dt_pack_external32_cb(const struct rail_dt *dt, int64_t count, const void *buf,
                               void *out, size_t out_size, size_t *position,
                               rail_dt_copy_fn copy, void *ctx);
int rail_dt_unpack_external32_cb(const struct rail_dt *dt, int64_t count, void *buf,
                                 const void *in, size_t in_size, size_t *position,
                                 rail_dt_copy_fn copy, void *ctx);

#endif
