/*
 * accel: what kind of memory a pointer is, and operations on device memory.
 *
 * The pml, the datatype engine and coll ask accel before touching a user
 * buffer; no other code calls CUDA (or any device API).  Components:
 *   host  always present: host memory, memcpy, base/op kernels;
 *   fake  an emulated device for tests: its memory is unmapped in the user's
 *         view (any host dereference faults), reached by accel through a
 *         second mapping; an IPC handle names the owner's memfd (pid, fd,
 *         inode), which the opener fetches through /proc or pidfd_getfd;
 *   cuda  libcuda loaded at run time (dlopen); device reduction kernels
 *         compiled by nvcc and embedded.
 * GPU support is lazy: nothing touches a device API until a device pointer is
 * seen or a parameter asks for it.  accel/README.md has the details.
 */
#ifndef ACCEL_ACCEL_H
#define ACCEL_ACCEL_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include "base/typekind.h"
#include "base/op.h"

typedef enum accel_mem_type {
    ACCEL_MEM_HOST = 0,     /* ordinary host memory: touch it directly */
    ACCEL_MEM_DEVICE = 1,   /* device memory: only through accel_* calls */
    ACCEL_MEM_MANAGED = 2,  /* unified memory: host access works but is slow */
} accel_mem_type_t;

typedef struct accel_mem_info {
    accel_mem_type_t type;
    int component;          /* index of the owning component (accel_component_name) */
    int device;             /* device ordinal */
    void *base;             /* start of the allocation containing the pointer */
    size_t size;            /* size of that allocation */
    uint64_t id;            /* process-wide id of the allocation: a new allocation at
                             * the same address has a new id (0 for host memory) */
} accel_mem_info_t;

typedef struct accel_stream accel_stream_t;   /* NULL means: synchronous */
typedef struct accel_event accel_event_t;

/* Opaque, fixed-size IPC handle that can be sent to another process of the
 * same node.  Its first 4 bytes name the component; CUDA's own handle is 64
 * bytes, hence 128. */
#define ACCEL_IPC_HANDLE_SIZE 128
typedef struct accel_ipc_handle {
    uint8_t bytes[ACCEL_IPC_HANDLE_SIZE];
} accel_ipc_handle_t;

/* Selects components (parameter accel: RAIL_ACCEL=host,fake / ^cuda); cheap,
 * touches no device.  Reference counted: each accel_init needs an accel_finalize. */
/* Register the parameters of accel and its components (idempotent). */
int accel_register_params(void);
int accel_init(void);
int accel_finalize(void);

/* Components compiled in, by index (the info tool lists them). */
int accel_component_count(void);
const char *accel_component_name(int component);
bool accel_component_active(int component);
int accel_component_index(const char *name);   /* -1 when not compiled in */

/* Nonzero while a device component (fake, cuda) is active.  Read only through
 * the inline functions below; hidden so the read is one PC-relative load. */
extern int accel_any_device_active __attribute__((visibility("hidden")));

/* Memory type of ptr (cached per allocation).  Host memory is the fast path:
 * when no device component is active this is a single predictable branch. */
accel_mem_type_t accel_memory_type_lookup(const void *ptr);
static inline accel_mem_type_t accel_memory_type(const void *ptr)
{
    if (__builtin_expect(!accel_any_device_active, 1))
        return ACCEL_MEM_HOST;
    return accel_memory_type_lookup(ptr);
}
static inline bool accel_is_device(const void *ptr)
{
    return accel_memory_type(ptr) != ACCEL_MEM_HOST;
}
/* Full description; for device memory the owner is asked again when the
 * cached entry may be stale (cuda: buffer id), so use it before IPC. */
int accel_memory_info(const void *ptr, accel_mem_info_t *info);

/* Copy between any two kinds of memory.  stream NULL: complete on return. */
int accel_copy(void *dst, const void *src, size_t len, accel_stream_t *stream);

/* dst[i] <- src[i] (len[i] bytes) for i < n: what n accel_copy calls give,
 * but where every buffer is device memory of one context (peers' buffers
 * opened by IPC too) one kernel does them all (cuda: up to
 * ACCEL_CUDA_COPY_MAX copies per launch, accel_cuda_copy_kernel_max bytes
 * at most; a launch costs what one cuMemcpyAsync does, and the copies of
 * one launch run side by side).  No two copies may overlap. */
int accel_copy_many(void *const *dst, const void *const *src, const size_t *len, int n,
                    accel_stream_t *stream);

/* inout = in op inout on memory of any type; device memory is reduced on the
 * device (fake: through its private mapping), never silently on a host copy.
 * MPI_ERR_OP when the kernel does not exist. */
int accel_reduce(rail_op_t op, rail_typekind_t tk, const void *in, void *inout, size_t count,
                 accel_stream_t *stream);

/* out = in[nin - 1] op (... op (in[1] op in[0])): what copying in[0] to
 * out and reducing in[1] .. in[nin - 1] into it one by one gives (out may
 * be in[0], no other input), but where every buffer is device memory of
 * out's context (peers' buffers opened by IPC too) one kernel reads each
 * input and writes out once (cuda: up to 8 inputs per launch); otherwise
 * exactly those steps. */
int accel_reduce_many(rail_op_t op, rail_typekind_t tk, const void *const *in, int nin,
                      void *out, size_t count, accel_stream_t *stream);
/* The same result in each of nout buffers: out[j] = in[nin - 1] op (...
 * op in[0]) for j < nout, out[0] computed as accel_reduce_many does and
 * the others copied from it once every input has been read; out[0] may
 * be in[0] and out[j] in[j] (in place at every process: one reads all
 * inputs and writes all results), no other overlap.  Where every buffer is
 * device memory of out[0]'s context one kernel writes every output (cuda:
 * up to 8 inputs and 8 outputs per launch). */
int accel_reduce_many_to(rail_op_t op, rail_typekind_t tk, const void *const *in, int nin,
                         void *const *out, int nout, size_t count, accel_stream_t *stream);

/* Page-locked host memory for staging device data (plain malloc on host, and
 * while the cuda driver has not been initialised by anyone). */
void *accel_alloc_host_pinned(size_t len);
void accel_free_host_pinned(void *ptr);

/* Device memory of the component that owns `like` (or the first device
 * component when like is NULL), for internal staging and tests.  Freed
 * buffers are kept for later requests (parameter accel_scratch_cache) and
 * released at accel_finalize. */
void *accel_alloc_device(size_t len, const void *like);
void accel_free_device(void *ptr);
/* MPI_T counter accel_ipc_reopened (tests read it too): opens that found
 * the allocation mapped already (see accel_ipc_handle_open_cached). */
extern uint64_t accel_count_ipc_reopened;

/* IPC: expose a device allocation to a peer on the same node.  The handle
 * names the whole allocation; *offset is ptr's offset inside it.  open maps
 * the allocation and returns its base (close it with accel_ipc_handle_close). */
int accel_ipc_handle_get(const void *ptr, accel_ipc_handle_t *handle, size_t *offset);
int accel_ipc_handle_open(const accel_ipc_handle_t *handle, void **base);
/* What accel_ipc_handle_open returns when this process has the allocation
 * mapped already (CUDA allows one mapping per allocation and context). */
#define ACCEL_IPC_MAPPED (-2)
int accel_ipc_handle_close(void *base);
/* Open through a process-wide cache of opened handles, holding the entry:
 * its mapping stays open until the caller's accel_ipc_handle_release(base)
 * (never accel_ipc_handle_close: idle entries are closed when evicted or at
 * accel_finalize).  When the allocation is mapped already under another
 * handle, the idle cached mappings are closed and it is opened again; if a
 * held one still maps it, ACCEL_IPC_MAPPED (another way this time, it is
 * not a lasting failure). */
int accel_ipc_handle_open_cached(const accel_ipc_handle_t *handle, void **base);
void accel_ipc_handle_release(void *base);
/* For tests: entries in the cache (and how many are held); the number of
 * entries kept while idle (default 64). */
int accel_ipc_cache_state(int *held);
extern int accel_ipc_cache_max;

/* Streams and events for asynchronous copies and reductions.  A stream may
 * carry work of several components (each gets its own queue, created on
 * first use); an event covers all of them.  A stream is used by one thread
 * at a time. */
#define ACCEL_EVENT_PENDING 1
int accel_stream_create(accel_stream_t **stream);
int accel_stream_destroy(accel_stream_t *stream);
int accel_stream_sync(accel_stream_t *stream);
int accel_event_record(accel_event_t **event, accel_stream_t *stream);
int accel_event_query(accel_event_t *event);   /* MPI_SUCCESS when done, else ACCEL_EVENT_PENDING */
int accel_event_destroy(accel_event_t *event);

#endif
