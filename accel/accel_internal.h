/*
 * accel internals: the component table, the memory-type table (memtab) and
 * the local parameter readers.  Only accel/ includes this file.
 */
#ifndef ACCEL_ACCEL_INTERNAL_H
#define ACCEL_ACCEL_INTERNAL_H

#include "base/rail.h"
#include "base/log.h"
#include "accel/accel.h"

#define ACCEL_MAX_COMPONENTS 4

/* A known range of memory: a device allocation (fake, cuda) or pinned host
 * memory (cuda).  Entries never overlap; lookups are lock-free. */
typedef struct accel_range {
    uintptr_t base;
    size_t size;
    uint64_t id;            /* allocation id (cuda: buffer id; fake: counter) */
    void *cookie;           /* owner's data: fake allocation record, cuda context */
    int32_t device;
    uint8_t type;           /* accel_mem_type_t */
    uint8_t component;
} accel_range_t;

/* Insert r, dropping any entries it overlaps (stale cache entries). */
int accel_memtab_insert(const accel_range_t *r);
/* Remove the entry that starts at base; true (and *out) when there was one. */
bool accel_memtab_remove(uintptr_t base, accel_range_t *out);
/* Remove every entry of a component (finalize). */
void accel_memtab_remove_component(int component);
/* Entry containing addr; lock-free, no allocation, no system call. */
bool accel_memtab_find(uintptr_t addr, accel_range_t *out);
void accel_memtab_fini(void);
/* Fork handlers (writers hold a mutex). */
void accel_memtab_atfork_prepare(void);
void accel_memtab_atfork_parent(void);
void accel_memtab_atfork_child(void);

typedef struct accel_component accel_component_t;

/* A component.  Pointer arguments come with the memtab entry found for them
 * by the base (NULL for host memory), so a component never looks them up
 * again.  Streams are the component's own queue objects. */
struct accel_component {
    const char *name;
    char tag[4];            /* first bytes of this component's IPC handles */
    int priority;
    bool is_device;
    /* Ranges' cookies name the context that owns the memory (cuda): a kept
     * device temporary serves only requests of that context; otherwise only
     * the device ordinal must match. */
    bool cookie_is_context;
    /* Register the component's parameters (called at every accel_init for
     * every compiled-in component, selected or not, so the info tool lists
     * them). */
    void (*register_params)(void);
    /* MPI_SUCCESS when usable; otherwise *why says why (a static string). */
    int (*query)(int self_index, const char **why);
    void (*finalize)(void);
    /* Pointer not in the memtab: is it this component's?  May insert into
     * the memtab.  NULL: the memtab already knows all of its memory. */
    bool (*classify)(const void *ptr, accel_range_t *out);
    /* Refresh a cached entry before it is handed out (cuda buffer ids). */
    int (*revalidate)(const void *ptr, accel_range_t *r);
    int (*copy)(void *dst, const accel_range_t *dr, const void *src, const accel_range_t *sr,
                size_t len, void *stream);
    int (*reduce)(rail_op_t op, rail_typekind_t tk, const void *in, const accel_range_t *ir,
                  void *inout, const accel_range_t *or_, size_t count, void *stream);
    /* out[j] = in[nin - 1] op (... op in[0]) for j < nout, with every
     * pointer on the device of out[0]'s context (ir: the inputs' ranges,
     * or_: out[0]'s); out[0] may be in[0], out[j] in[j]; NULL: the base
     * does it as a copy, nin - 1 reductions and nout - 1 copies. */
    int (*reduce_many)(rail_op_t op, rail_typekind_t tk, const void *const *in,
                       const accel_range_t *ir, int nin, void *const *out, int nout,
                       const accel_range_t *or_, size_t count, void *stream);
    /* dst[i] <- src[i] for i < n (zero lengths skipped), every buffer
     * device memory of r's context; NULL, or MPI_ERR_UNSUPPORTED_OPERATION
     * from it: the base makes n copies. */
    int (*copy_many)(void *const *dst, const void *const *src, const size_t *len, int n,
                     const accel_range_t *r, void *stream);
    void *(*alloc)(size_t len, const accel_range_t *like);
    int (*free)(void *ptr, const accel_range_t *r);
    void *(*alloc_host_pinned)(size_t len);   /* NULL result: use malloc */
    int (*ipc_get)(const void *ptr, const accel_range_t *r, accel_ipc_handle_t *h, size_t *off);
    int (*ipc_open)(const accel_ipc_handle_t *h, void **base);
    int (*ipc_close)(void *base, const accel_range_t *r);
    int (*stream_create)(void **s);
    int (*stream_destroy)(void *s);
    int (*stream_sync)(void *s);
    int (*event_record)(void **ev, void *s);
    int (*event_query)(void *ev);
    int (*event_destroy)(void *ev);
};

extern const accel_component_t accel_host_component RAIL_HIDDEN;
extern const accel_component_t accel_fake_component RAIL_HIDDEN;
#ifdef RAIL_HAVE_CUDA
extern const accel_component_t accel_cuda_component RAIL_HIDDEN;
#endif

/* Index of a component in the table, or -1 when not compiled in / inactive. */
int accel_base_index(const char *name);
extern int accel_verbose RAIL_HIDDEN;

/* Make sure accel is initialised (for entry points that may come before
 * MPI_Init: MPIX_*).  The implicit reference is kept until exit. */
int accel_base_ensure_init(void);

#define ACCEL_VERBOSE(level, ...) RAIL_VERBOSE(accel_verbose, level, "accel: " __VA_ARGS__)

#endif
